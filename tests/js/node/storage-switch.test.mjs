// The Node sql.js driver's journal as the product uses it (openNodeEngine, storage "sql.js"):
// a torn last record is dropped without losing an acknowledged turn, a corrupt record fails the
// open with an error naming the journal and changes nothing, and switching the same dbPath to
// node:sqlite folds the journal in so every message is kept (or, while a sql.js process still
// holds the file, refuses with what to do).
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { appendFileSync, copyFileSync, existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { test } from "node:test";
import { PKG, STORAGES, query, tempDir } from "../support.mjs";

const { openNodeEngine } = await import(new URL("shim/node/engine.js", PKG));
const { createContextEngine } = await import(new URL("shim/engine/context-engine.js", PKG));
const { foldJournal, journalPath, readJournal } = await import(new URL("shim/node/journal-file.js", PKG));
const SQL = await createRequire(import.meta.url)("sql.js")();
const child = new URL("../storage-switch-child.mjs", import.meta.url).pathname;

/** Runs the child to completion: turns [from, to) through `storage`. */
function write(dbPath, storage, from, to, checkpointBytes = 1 << 30) {
  const run = spawnSync(process.execPath, [child, dbPath, storage, String(from), String(to), String(checkpointBytes)], { encoding: "utf8" });
  assert.equal(run.status, 0, `writer failed: ${run.stderr}`);
  assert.equal(run.stdout.split("\n").filter((l) => l.startsWith("ack ")).length, to - from);
}

/** The answers stored, in order, as the engine sees the database. */
const answers = async (dbPath) => (await query(dbPath, "SELECT t.content FROM messages m JOIN messages_text t ON t.rowid = m.id WHERE m.role = 'assistant' ORDER BY m.seq")).map(([c]) => c);
const expected = (n) => Array.from({ length: n }, (_, i) => `switch answer ${i}`);

/** Messages in the snapshot file alone, ignoring the journal. */
function snapshotOnly(dbPath) {
  const db = new SQL.Database(readFileSync(dbPath));
  try {
    return db.exec("SELECT COUNT(*) FROM messages")[0].values[0][0];
  } finally {
    db.close();
  }
}

const engineOn = (dbPath, storage) => createContextEngine(() => openNodeEngine(dbPath, { storage }));
const commit = (engine, i) => engine.commitTurn({ sessionId: "s", sessionKey: "switch", advancementKey: `t${i}`, messages: [
  { role: "user", content: `switch turn ${i}`, timestamp: 10 * i },
  { role: "assistant", content: [{ type: "text", text: `switch answer ${i}` }], timestamp: 10 * i + 1 },
] });

test("sql.js: each acknowledged turn is in the journal, not in a rewritten file", () => {
  const dbPath = join(tempDir("sqljs-journal"), "db.sqlite");
  write(dbPath, "sql.js", 0, 3);
  const size = statSync(dbPath).size;
  write(dbPath, "sql.js", 3, 8);
  assert.equal(statSync(dbPath).size, size, "no checkpoint below the threshold");
  assert.equal(readJournal(journalPath(dbPath)).entries.length >= 8, true, "every turn was journaled");
});

test("sql.js: a torn last journal record is dropped; every acknowledged turn survives and writing goes on", async () => {
  const dbPath = join(tempDir("sqljs-torn"), "db.sqlite");
  write(dbPath, "sql.js", 0, 6);
  const jpath = journalPath(dbPath);
  const intact = readFileSync(jpath);
  // The crash: a 7th record's append cut in the middle (header and half its payload).
  const record = intact.subarray(readJournal(jpath).end - 200);
  appendFileSync(jpath, Buffer.concat([Buffer.from([200, 1, 0, 0]), record.subarray(0, 100)]));
  assert.deepEqual(await answers(dbPath), expected(6), "a reader sees every acknowledged turn");
  const engine = engineOn(dbPath, "sql.js");
  await commit(engine, 6);
  assert.deepEqual(await answers(dbPath), expected(7), "the open cut the tail and appended after it");
  assert.deepEqual(readFileSync(jpath).subarray(0, intact.length), intact, "the intact records were kept as they were");
});

test("sql.js: a corrupt journal record fails the open with the journal's name and changes nothing", async () => {
  const dbPath = join(tempDir("sqljs-corrupt"), "db.sqlite");
  write(dbPath, "sql.js", 0, 5);
  const jpath = journalPath(dbPath);
  const bytes = readFileSync(jpath);
  bytes[30] ^= 0xff; // inside the first record, with four more records after it
  writeFileSync(jpath, bytes);
  const snapshot = readFileSync(dbPath);
  for (const storage of STORAGES) {
    await assert.rejects(openNodeEngine(dbPath, { storage }), (err) => {
      assert.match(err.message, /journal .*db\.sqlite\.lwjournal is corrupt at byte 8 \(record 1 fails its checksum/);
      assert.match(err.message, /nothing was changed/);
      return true;
    }, storage);
  }
  assert.deepEqual(readFileSync(jpath), bytes, "the journal is left as it was");
  assert.deepEqual(readFileSync(dbPath), snapshot, "the database file is left as it was");
});

if (STORAGES.includes("node:sqlite")) {
  test("switching storage from sql.js to node:sqlite on the same dbPath keeps every message", async () => {
    const dbPath = join(tempDir("switch"), "db.sqlite");
    // Small checkpoints first (turns in the snapshot), then large ones (the newest turns are
    // in the journal only).
    write(dbPath, "sql.js", 0, 24, 10_000);
    assert.ok(readJournal(journalPath(dbPath)).generation >= 2, "checkpoints happened");
    write(dbPath, "sql.js", 24, 30);
    const journaled = readJournal(journalPath(dbPath)).entries.length;
    assert.ok(journaled >= 6 && snapshotOnly(dbPath) <= 48, `the newest turns are in the journal only (${journaled} entries)`);
    const engine = engineOn(dbPath, "node:sqlite");
    await commit(engine, 30);
    assert.equal(existsSync(journalPath(dbPath)), false, "the journal was folded in and removed");
    assert.deepEqual(await answers(dbPath), expected(31), "node:sqlite sees every sql.js turn, then its own");
    const [[integrity]] = await query(dbPath, "PRAGMA integrity_check");
    assert.equal(integrity, "ok");
  });

  test("a crash inside the fold (file written, journal not yet removed) neither loses nor repeats a turn", async () => {
    const dir = tempDir("switch-fold-crash");
    const dbPath = join(dir, "db.sqlite");
    write(dbPath, "sql.js", 0, 12);
    copyFileSync(journalPath(dbPath), join(dir, "journal-before-fold"));
    assert.equal(foldJournal(SQL, dbPath), true, "the journal held turns to fold in");
    assert.equal(snapshotOnly(dbPath), 24, "the fold wrote every turn into the file");
    // The crash: the journal is still there, one generation behind the file now.
    copyFileSync(join(dir, "journal-before-fold"), journalPath(dbPath));
    const engine = engineOn(dbPath, "node:sqlite");
    await commit(engine, 12);
    assert.equal(existsSync(journalPath(dbPath)), false);
    assert.deepEqual(await answers(dbPath), expected(13), "every turn once: the stale journal was not applied again");
  });

  test("node:sqlite refuses a dbPath a sql.js process still holds, naming it and saying what to do", { timeout: 60_000 }, async () => {
    const dbPath = join(tempDir("switch-held"), "db.sqlite");
    const holder = spawn(process.execPath, [child, dbPath, "sql.js", "0", "2", String(1 << 30), "hold"], { stdio: ["ignore", "pipe", "inherit"] });
    try {
      await new Promise((resolve) => holder.stdout.on("data", (d) => String(d).includes("holding") && resolve()));
      await assert.rejects(openNodeEngine(dbPath, { storage: "node:sqlite" }),
        new RegExp(`open with storage "sql\\.js" in another process \\(pid ${holder.pid}\\); stop that process, then open it with "node:sqlite"`));
      assert.ok(readJournal(journalPath(dbPath)).entries.length > 0, "the journal was not touched");
    } finally {
      holder.kill("SIGKILL");
      await new Promise((resolve) => holder.once("exit", resolve));
    }
    // Once the holder is gone (killed, its lock stale) the switch folds its acknowledged turns in.
    await commit(engineOn(dbPath, "node:sqlite"), 2);
    assert.deepEqual(await answers(dbPath), expected(3));
  });
}
