// The statement journal behind openBrowserEngine (js-shim/engine/journal.js), in Node on sql.js: a
// snapshot plus the journaled transactions after it rebuilds exactly the live database, through
// turns, compactions, rejected input, duplicates and checkpoints; reads journal nothing; a
// failed write makes the next save a full snapshot, so the journal never has a gap.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { test } from "node:test";

const require = createRequire(import.meta.url);
const pkg = new URL("../../dist/pkg/", import.meta.url);
const { initSync } = await import(new URL("wasm/lossless_wasm.js", pkg));
const { createHandle } = await import(new URL("shim/engine/handle.js", pkg));
const { createContextEngine } = await import(new URL("shim/engine/context-engine.js", pkg));
const { journalPersister, replay } = await import(new URL("shim/engine/journal.js", pkg));
initSync({ module: readFileSync(new URL("wasm/lossless_wasm_bg.wasm", pkg)) });
const SQL = await require("sql.js")();

const session = { sessionId: "s", sessionKey: "k" };
const turn = (i) => [
  { role: "user", content: `request ${i}: fix bug ${i} ${"detail ".repeat(20)}`, timestamp: 1000 + i * 10 },
  { role: "assistant", content: [{ type: "text", text: `fixed ${i} ${"because ".repeat(20)}` }], timestamp: 1001 + i * 10 },
];

/** Every row of every table, in storage order. */
function dump(db) {
  const tables = db.exec("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")[0].values.map(([n]) => n);
  return Object.fromEntries(tables.map((t) => [t, db.exec(`SELECT * FROM "${t}"`)[0]?.values ?? []]));
}

/** An engine over a journaled database whose storage is two plain arrays. */
function journaled({ failAppendAt } = {}) {
  const raw = new SQL.Database();
  const stored = { snapshot: undefined, entries: [], checkpoints: 0, appends: 0, nextSeq: 1 };
  const persister = journalPersister({
    db: raw,
    minCheckpointBytes: 40_000,
    append(seq, list) {
      stored.appends++;
      if (stored.appends === failAppendAt) throw new Error("disk full (simulated)");
      assert.equal(seq, stored.nextSeq, "entries arrive in sequence, with no gap");
      stored.entries.push(...list);
      stored.nextSeq += list.length;
    },
    checkpoint(bytes) {
      stored.snapshot = bytes;
      stored.entries = [];
      stored.checkpoints++;
    },
  });
  const handle = createHandle({ db: persister.db, config: { freshTailCount: 4, leafChunkTokens: 400 }, persist: persister.persist });
  return { raw, stored, handle, engine: createContextEngine(async () => handle) };
}

function rebuild(stored) {
  const db = new SQL.Database(stored.snapshot);
  replay(db, stored.entries);
  return db;
}

test("a snapshot plus its journal rebuilds the live database exactly, across compactions and checkpoints", async () => {
  const { raw, stored, engine } = journaled();
  let journaledAfterCheckpoint = false;
  for (let i = 0; i < 60; i++) {
    assert.equal((await engine.commitTurn({ ...session, advancementKey: `t${i}`, messages: turn(i) })).status, "committed");
    await engine.maintain(session);
    if (i % 10 === 5) {
      await assert.rejects(engine.ingest({ ...session, message: { role: "user", content: [{ type: "hologram" }] } }), /content\[0\]\.type/);
      assert.equal((await engine.commitTurn({ ...session, advancementKey: `t${i}`, messages: turn(i) })).status, "duplicate");
    }
    // After every acknowledged call, what is stored is the whole database.
    assert.deepEqual(dump(rebuild(stored)), dump(raw), `after turn ${i}`);
    journaledAfterCheckpoint ||= stored.checkpoints >= 2 && stored.entries.length > 0;
  }
  assert.ok(stored.checkpoints >= 2, `checkpoints happened (${stored.checkpoints})`);
  assert.ok(journaledAfterCheckpoint, "and transactions were journaled on top of a later snapshot");
  const summaries = raw.exec("SELECT COUNT(*) FROM summaries")[0].values[0][0];
  assert.ok(summaries > 0, "compaction wrote summaries");
  assert.deepEqual(dump(rebuild(stored)), dump(raw));
});

test("reads journal nothing (the first search journals the indexing of the messages waiting for it)", async () => {
  const { stored, engine, handle } = journaled();
  await engine.commitTurn({ ...session, advancementKey: "t0", messages: turn(0) });
  const committed = stored.entries.length;
  assert.ok((await engine.search({ ...session, pattern: "request" })).length > 0, "the search finds the turn's messages");
  assert.equal(stored.entries.length, committed + 1, "indexing the waiting messages is one journaled transaction");
  const before = { entries: stored.entries.length, checkpoints: stored.checkpoints };
  await engine.assemble({ ...session, messages: [], tokenBudget: 1000 });
  await engine.search({ ...session, pattern: "request" });
  await handle.call("describe", session);
  await handle.call("compactionEvents", session);
  assert.deepEqual({ entries: stored.entries.length, checkpoints: stored.checkpoints }, before);
});

test("after a failed journal write the next save is a full snapshot, so no transaction is lost", async () => {
  const { raw, stored, engine } = journaled({ failAppendAt: 3 });
  await engine.commitTurn({ ...session, advancementKey: "t0", messages: turn(0) });
  await engine.commitTurn({ ...session, advancementKey: "t1", messages: turn(1) });
  await assert.rejects(engine.commitTurn({ ...session, advancementKey: "t2", messages: turn(2) }), /disk full/);
  const checkpoints = stored.checkpoints;
  await engine.commitTurn({ ...session, advancementKey: "t3", messages: turn(3) });
  assert.equal(stored.checkpoints, checkpoints + 1, "the save after the failure wrote a snapshot");
  const db = rebuild(stored);
  assert.equal(db.exec("SELECT COUNT(*) FROM messages")[0].values[0][0], 8, "turn 2, whose journal write failed, is in the snapshot");
  assert.deepEqual(dump(db), dump(raw));
});

test("a journal that does not belong to its snapshot is refused, leaving the database unchanged", () => {
  const db = new SQL.Database();
  db.exec("CREATE TABLE t (x INTEGER PRIMARY KEY)");
  assert.throws(() => replay(db, [[["INSERT INTO t (x) VALUES (?1)", [1]]], [["INSERT INTO missing (x) VALUES (?1)", [2]]]]), /journal entry 2 of 2 does not apply/);
  assert.deepEqual(db.exec("SELECT x FROM t")[0].values, [[1]]);
});
