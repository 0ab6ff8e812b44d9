// After-turn upkeep in `maintain` (engine/handle.js housekeep): a turn's messages wait for the
// search index and `maintain` indexes them once a batch has gathered, while a search finds them
// either way; on node:sqlite, every CHECKPOINT_EVERY-th maintain copies the WAL into the database
// file (a commit inside a turn no longer does it). Also the node:sqlite driver's one-call
// `run`/`all`, which the engine prefers to bind/step/get/reset. Default config throughout.
import assert from "node:assert/strict";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { PKG, STORAGES, query, tempDir, user } from "../support.mjs";

const { openNodeEngine } = await import(new URL("shim/node/engine.js", PKG));
const { createContextEngine } = await import(new URL("shim/engine/context-engine.js", PKG));
const { NodeSqliteDatabase, CHECKPOINT_EVERY, WAL_KEEP_BYTES, AUTOCHECKPOINT_PAGES } = await import(new URL("shim/node/sqlite.js", PKG));

const INDEX_BATCH = 64;
const session = { sessionId: "s", sessionKey: "agent:main:housekeeping" };

function plugin(dbPath, storage) {
  return createContextEngine(() => openNodeEngine(dbPath, { storage }));
}

async function waiting(dbPath) {
  const [[n]] = await query(dbPath, "SELECT (SELECT COALESCE(MAX(id), 0) FROM messages) - indexed_through FROM messages_fts_progress");
  return n;
}

for (const storage of STORAGES) {
  describe(`search indexing in maintain [${storage}]`, () => {
    test("messages wait until a batch has gathered, maintain indexes it, search finds them meanwhile", async () => {
      const dbPath = join(tempDir(`housekeeping-index-${storage.replace(":", "-")}`), "db.sqlite");
      const engine = plugin(dbPath, storage);
      const history = [];
      for (let n = 1; n < INDEX_BATCH; n++) {
        history.push(user(`turn ${n} mentions quasar${n}`));
        await engine.afterTurn({ ...session, messages: history, prePromptMessageCount: n - 1 });
        await engine.maintain({ ...session });
      }
      assert.equal(await waiting(dbPath), INDEX_BATCH - 1, "fewer than a batch wait");
      history.push(user(`turn ${INDEX_BATCH} mentions quasar${INDEX_BATCH}`));
      await engine.afterTurn({ ...session, messages: history, prePromptMessageCount: INDEX_BATCH - 1 });
      assert.equal(await waiting(dbPath), INDEX_BATCH, "afterTurn leaves indexing to maintain");
      const { reason } = await engine.maintain({ ...session });
      assert.doesNotMatch(reason, /upkeep failed/);
      assert.equal(await waiting(dbPath), 0, "maintain indexed the batch");
      // A message that waits is still found: the search indexes what waits first.
      history.push(user("a late word: pulsar"));
      await engine.afterTurn({ ...session, messages: history, prePromptMessageCount: INDEX_BATCH });
      assert.equal(await waiting(dbPath), 1);
      const hits = await engine.search({ ...session, pattern: "pulsar" });
      assert.equal(hits.length, 1);
      assert.equal((await engine.search({ ...session, pattern: "quasar7" })).length, 1);
      assert.equal(await waiting(dbPath), 0);
      const [[integrity]] = await query(dbPath, "PRAGMA integrity_check");
      assert.equal(integrity, "ok");
    });
  });
}

describe("WAL checkpoints in maintain [node:sqlite]", { skip: !STORAGES.includes("node:sqlite") && "this Node has no node:sqlite" }, () => {
  test(`every ${CHECKPOINT_EVERY}th maintain copies the WAL into the database file`, async () => {
    const dbPath = join(tempDir("housekeeping-wal"), "db.sqlite");
    const engine = plugin(dbPath, "node:sqlite");
    const history = [];
    const turn = async () => {
      history.push(user(`message ${history.length}`));
      await engine.afterTurn({ ...session, messages: history, prePromptMessageCount: history.length - 1 });
      await engine.maintain({ ...session });
    };
    // The database's size as SQLite sees it (WAL included) against the bytes in the file itself.
    const pages = async () => (await query(dbPath, "PRAGMA page_count"))[0][0] * 4096;
    for (let n = 1; n < CHECKPOINT_EVERY; n++) await turn();
    assert.ok(statSync(dbPath).size < (await pages()), "before the checkpoint the file lags the WAL");
    await turn();
    assert.equal(statSync(dbPath).size, await pages(), "the checkpoint wrote every page into the file");
  });

  test("the checkpointing maintain starts the WAL over, so the next turn's commit does not pay for it", async () => {
    const dbPath = join(tempDir("housekeeping-wal-restart"), "db.sqlite");
    const engine = plugin(dbPath, "node:sqlite");
    const history = [];
    const afterTurn = () => {
      history.push(user(`message ${history.length}`));
      return engine.afterTurn({ ...session, messages: history, prePromptMessageCount: history.length - 1 });
    };
    // A new WAL gets new salts in its header (bytes 16-23); frames appended keep them.
    const salts = () => readFileSync(`${dbPath}-wal`).subarray(16, 24).toString("hex");
    for (let n = 1; n < CHECKPOINT_EVERY; n++) {
      await afterTurn();
      await engine.maintain({ ...session });
    }
    await afterTurn();
    const before = salts();
    await engine.maintain({ ...session });
    const restarted = salts();
    assert.notEqual(restarted, before, "maintain started the WAL over after checkpointing it");
    await afterTurn();
    assert.equal(salts(), restarted, "the turn appended to the WAL maintain started");
    assert.equal((await query(dbPath, "SELECT COUNT(*) FROM messages"))[0][0], CHECKPOINT_EVERY + 1);
  });

  test("a WAL grown by a large import shrinks back when it starts over", async () => {
    const dbPath = join(tempDir("housekeeping-wal-size"), "db.sqlite");
    const engine = plugin(dbPath, "node:sqlite");
    // ~3 MiB of messages in one transaction: a WAL several times the size it keeps.
    const history = Array.from({ length: 300 }, (_, n) => user(`import ${n}: ${"lorem ipsum dolor ".repeat(550)}`));
    await engine.bootstrap({ ...session, messages: history });
    const walBytes = () => statSync(`${dbPath}-wal`).size;
    assert.ok(walBytes() > 2 * WAL_KEEP_BYTES, `the import wrote a large WAL (${walBytes()} bytes)`);
    for (let n = 0; n < CHECKPOINT_EVERY; n++) {
      history.push(user(`message ${history.length}`));
      await engine.afterTurn({ ...session, messages: history, prePromptMessageCount: history.length - 1 });
      await engine.maintain({ ...session });
    }
    assert.ok(walBytes() <= WAL_KEEP_BYTES, `the WAL file shrank to at most ${WAL_KEEP_BYTES} bytes (${walBytes()})`);
    assert.equal((await query(dbPath, "SELECT COUNT(*) FROM messages"))[0][0], 300 + CHECKPOINT_EVERY);
    assert.equal((await query(dbPath, "PRAGMA integrity_check"))[0][0], "ok");
  });

  test("an import past the autocheckpoint size leaves the WAL shrunk when it returns", async () => {
    const dbPath = join(tempDir("housekeeping-wal-bulk"), "db.sqlite");
    const engine = plugin(dbPath, "node:sqlite");
    // ~20 MiB in one transaction: more than AUTOCHECKPOINT_PAGES pages of WAL.
    const history = Array.from({ length: 500 }, (_, n) => user(`import ${n}: ${"sit amet consectetur ".repeat(2000)}`));
    const { importedMessages } = await engine.bootstrap({ ...session, messages: history });
    assert.equal(importedMessages, 500);
    const walBytes = statSync(`${dbPath}-wal`).size;
    assert.ok(walBytes <= WAL_KEEP_BYTES, `the WAL file is at most ${WAL_KEEP_BYTES} bytes after the import (${walBytes})`);
    assert.ok(statSync(dbPath).size > AUTOCHECKPOINT_PAGES * 4096, "the import is in the database file");
    assert.equal((await query(dbPath, "SELECT COUNT(*) FROM messages"))[0][0], 500);
  });
});

describe("node:sqlite statements run at once", { skip: !STORAGES.includes("node:sqlite") && "this Node has no node:sqlite" }, () => {
  test("run and all bind values, return rows as arrays, reset a half-read statement, and throw SQLite's errors", () => {
    const db = new NodeSqliteDatabase(join(tempDir("housekeeping-run-all"), "db.sqlite"));
    db.exec("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT, b BLOB)");
    const insert = db.prepare("INSERT INTO t (k, v, b) VALUES (?, ?, ?)");
    assert.equal(insert.run([1, "one", new Uint8Array([1, 2])]), true);
    insert.run([2, "two", null]);
    const select = db.prepare("SELECT k, v, b FROM t ORDER BY k");
    assert.deepEqual(select.all([]), [[1, "one", new Uint8Array([1, 2])], [2, "two", null]]);
    // Half-read through step, then all: starts over.
    select.bind([]);
    assert.equal(select.step(), true);
    assert.deepEqual(select.all([]).map((r) => r[0]), [1, 2]);
    assert.throws(() => insert.run([1, "again", null]), /UNIQUE constraint failed/);
    assert.deepEqual(db.prepare("SELECT v FROM t WHERE k = ?").all([9]), []);
    db.close();
  });
});
