// Config `durability` on the node:sqlite driver: the engine's own connection runs with
// PRAGMA synchronous NORMAL (1) by default and FULL (2) with "full"; an invalid value is an error
// naming the key and its values, raised before any file is created. The crash test
// (durability.test.mjs) shows what each setting keeps when the process is killed.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { PKG, STORAGES, tempDir, user } from "../support.mjs";

const { openNodeEngine } = await import(new URL("shim/node/engine.js", PKG));
const { NodeSqliteDatabase } = await import(new URL("shim/node/sqlite.js", PKG));
const { createContextEngine } = await import(new URL("shim/engine/context-engine.js", PKG));
const { openEngine } = await import(new URL("shim/library.js", PKG));

const NORMAL = 1;
const FULL = 2;
const dbIn = (name) => join(tempDir(`durability-config-${name}`), "db.sqlite");
const namesTheKey = (err) => {
  assert.match(err.message, /invalid config `durability`/);
  assert.match(err.message, /"normal", "full"/);
  return true;
};

describe("durability on node:sqlite", { skip: !STORAGES.includes("node:sqlite") && "this Node has no node:sqlite" }, () => {
  test("the default config opens the engine's connection with synchronous = NORMAL", async () => {
    const dbPath = dbIn("default");
    const handle = await openNodeEngine(dbPath, { storage: "node:sqlite" });
    assert.equal(handle.storage, "node:sqlite");
    assert.equal(handle.synchronous(), NORMAL);
    // And it stores turns as before.
    const engine = createContextEngine(() => openNodeEngine(dbPath, { storage: "node:sqlite" }));
    await engine.afterTurn({ sessionId: "s", sessionKey: "k", messages: [user("hello")], prePromptMessageCount: 0 });
    assert.equal((await engine.assemble({ sessionId: "s", sessionKey: "k", messages: [] })).messages.length, 1);
  });

  test("durability \"normal\" is NORMAL and \"full\" is FULL", async () => {
    assert.equal((await openNodeEngine(dbIn("normal"), { storage: "node:sqlite", durability: "normal" })).synchronous(), NORMAL);
    assert.equal((await openNodeEngine(dbIn("full"), { storage: "node:sqlite", durability: "full" })).synchronous(), FULL);
  });

  test("storage auto picks node:sqlite here and takes durability too", async () => {
    const handle = await openNodeEngine(dbIn("auto-full"), { durability: "full" });
    assert.equal(handle.storage, "node:sqlite");
    assert.equal(handle.synchronous(), FULL);
  });

  test("the driver on its own defaults to NORMAL and rejects an invalid durability before creating the file", () => {
    const path = dbIn("driver");
    const db = new NodeSqliteDatabase(path);
    try {
      assert.equal(db.synchronous(), NORMAL);
    } finally {
      db.close();
    }
    const other = dbIn("driver-bad");
    assert.throws(() => new NodeSqliteDatabase(other, { durability: "FULL" }), namesTheKey);
    assert.equal(existsSync(other), false, "no file was created");
  });
});

describe("invalid durability", () => {
  for (const storage of STORAGES) {
    for (const bad of ["FULL", "off", "", 2, true, {}]) {
      test(`${JSON.stringify(bad)} is rejected with storage ${storage}, naming the key, before opening`, async () => {
        const dbPath = dbIn(`bad-${storage.replace(":", "")}`);
        await assert.rejects(openNodeEngine(dbPath, { storage, durability: bad }), namesTheKey);
        assert.equal(existsSync(dbPath), false, "no file was created");
      });
    }
  }

  test("the engine itself rejects it too (library entry, no node:sqlite involved)", async () => {
    const { default: initSqlJs } = await import(new URL("vendor/sql.js/sql-wasm.cjs", PKG));
    const SQL = await initSqlJs();
    const wasm = readFileSync(new URL("wasm/lossless_wasm_bg.wasm", PKG));
    await assert.rejects(openEngine({ SQL, wasm, config: { durability: "paranoid" } }), namesTheKey);
    await openEngine({ SQL, wasm, config: { durability: "full" } });
  });
});
