// The statement journal on files (js-shim/node/journal-file.js), the incremental persistence for the
// Node sql.js fallback: reopening replays exactly what was committed; a torn tail and a stale
// journal (a crash inside a checkpoint) are recognised; and a writer killed with SIGKILL at
// random points loses no acknowledged turn.
import assert from "node:assert/strict";
import { appendFileSync, copyFileSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { test } from "node:test";
import { runUntilKilled } from "../kill-harness.mjs";
import { PKG, tempDir } from "../support.mjs";

const { initSync } = await import(new URL("wasm/lossless_wasm.js", PKG));
const { createHandle } = await import(new URL("shim/engine/handle.js", PKG));
const { createContextEngine } = await import(new URL("shim/engine/context-engine.js", PKG));
const { openJournaledFile, journalPath, readJournal, crc32Fallback } = await import(new URL("shim/node/journal-file.js", PKG));
initSync({ module: readFileSync(new URL("wasm/lossless_wasm_bg.wasm", PKG)) });
const SQL = await createRequire(import.meta.url)("sql.js")();
const session = { sessionId: "s", sessionKey: "k" };
const turn = (i) => [
  { role: "user", content: `turn ${i} ${"payload ".repeat(30)}`, timestamp: 10 * i },
  { role: "assistant", content: [{ type: "text", text: `answer ${i}` }], timestamp: 10 * i + 1 },
];

function open(path, checkpointBytes = 30_000) {
  const file = openJournaledFile(SQL, path, { checkpointBytes });
  const handle = createHandle({ db: file.db, persist: file.persist });
  return { file, engine: createContextEngine(async () => handle) };
}

/** The stored messages, read the way the engine will: snapshot plus journal. */
function contents(path) {
  const { file } = open(path);
  const rows = file.db.prepare("SELECT t.content FROM messages m JOIN messages_text t ON t.rowid = m.id ORDER BY m.seq");
  const out = [];
  while (rows.step()) out.push(rows.get()[0]);
  rows.free();
  const integrity = file.db.prepare("PRAGMA integrity_check");
  integrity.step();
  const ok = integrity.get()[0];
  integrity.free();
  file.close();
  return { messages: out, integrity: ok };
}

test("reopening replays every committed turn, across checkpoints", async () => {
  const path = join(tempDir("journal-file"), "db.sqlite");
  const { file, engine } = open(path);
  let i = 0;
  // At least 40 turns, and end with some turns journaled after the last checkpoint.
  for (; i < 40 || readJournal(journalPath(path)).entries.length === 0; i++) {
    await engine.commitTurn({ ...session, advancementKey: `t${i}`, messages: turn(i) });
  }
  file.close();
  const journal = readJournal(journalPath(path));
  assert.ok(journal.generation >= 2, `checkpoints happened (generation ${journal.generation})`);
  assert.ok(journal.entries.length > 0, "turns since the last checkpoint are in the journal only");
  const { messages, integrity } = contents(path);
  assert.equal(integrity, "ok");
  assert.equal(messages.length, 2 * i);
  assert.equal(messages.at(-1), `answer ${i - 1}`);
});

test("a torn record at the end of the journal is cut off and the intact ones are kept", async () => {
  const path = join(tempDir("journal-torn"), "db.sqlite");
  const { file, engine } = open(path, 1 << 30);
  for (let i = 0; i < 5; i++) await engine.commitTurn({ ...session, advancementKey: `t${i}`, messages: turn(i) });
  file.close();
  const size = statSync(journalPath(path)).size;
  appendFileSync(journalPath(path), Buffer.from([200, 0, 0, 0, 1, 2, 3, 4, 5, 6]));
  assert.equal(contents(path).messages.length, 10);
  assert.equal(statSync(journalPath(path)).size, size, "the torn tail was removed on open");
  const again = open(path, 1 << 30);
  await again.engine.commitTurn({ ...session, advancementKey: "t5", messages: turn(5) });
  again.file.close();
  assert.equal(contents(path).messages.length, 12, "appends after the cut are read back");
});

test("a journal older than its snapshot (a crash inside a checkpoint) is ignored, not applied twice", async () => {
  const dir = tempDir("journal-stale");
  const path = join(dir, "db.sqlite");
  const { file, engine } = open(path, 1);
  const generation = () => readJournal(journalPath(path)).generation;
  const first = generation();
  let i = 0;
  // Commit until a turn's save is a checkpoint, keeping the journal as it was just before it.
  for (; generation() === first; i++) {
    copyFileSync(journalPath(path), join(dir, "old-journal"));
    await engine.commitTurn({ ...session, advancementKey: `t${i}`, messages: turn(i) });
  }
  file.close();
  assert.ok(i > 1, "some turns were journaled before the checkpoint");
  // The crash: the new snapshot was written, the journal was not yet replaced.
  copyFileSync(join(dir, "old-journal"), journalPath(path));
  const { messages, integrity } = contents(path);
  assert.equal(integrity, "ok");
  assert.equal(messages.length, 2 * i, "every turn once: the stale journal was not replayed on top");
});

test("the CRC-32 used on Nodes without zlib.crc32 is zlib's CRC-32", async () => {
  const { crc32 } = await import("node:zlib");
  assert.equal(crc32Fallback(Buffer.from("123456789")), 0xcbf43926, "the standard check value");
  for (let n = 0; n < 2000; n += 97) {
    const bytes = Buffer.from(Array.from({ length: n }, (_, i) => (i * 131 + n) & 0xff));
    assert.equal(crc32Fallback(bytes), crc32(bytes), `${n} bytes`);
  }
});

const journalWriter = new URL("../journal-file-writer.mjs", import.meta.url).pathname;
const killedAcks = async (path, start, delayMs) => (await runUntilKilled(journalWriter, [path, String(start)], delayMs)).acks.map(Number);

test("SIGKILL at random points loses no acknowledged turn", { timeout: 300_000 }, async () => {
  const path = join(tempDir("journal-crash"), "db.sqlite");
  let stored = 0;
  let acked = 0;
  for (let run = 0; run < 15; run++) {
    const acks = await killedAcks(path, stored, Math.floor(Math.random() * 400));
    acked += acks.length;
    const { messages, integrity } = contents(path);
    assert.equal(integrity, "ok", `integrity after kill ${run}`);
    assert.equal(messages.length % 2, 0, `no half-stored turn after kill ${run}`);
    const turns = messages.length / 2;
    const highest = acks.length ? Math.max(...acks) : stored - 1;
    assert.ok(turns >= highest + 1, `kill ${run}: ${turns} turns stored, turn ${highest} was acknowledged`);
    for (let i = 0; i < turns; i++) assert.equal(messages[2 * i + 1], `journal answer ${i}`, `kill ${run}: turn ${i} in place`);
    stored = turns;
  }
  assert.ok(acked > 15, `the writer got turns acknowledged (${acked})`);
});
