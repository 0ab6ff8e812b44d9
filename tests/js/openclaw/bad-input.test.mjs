// Host params of the wrong shape through the shim: each call fails with an Error that names what
// is wrong (or, where the contract allows, is accepted), nothing half-written is stored, and —
// the point — the wasm instance survives: a trap would kill the engine for every session, so
// after every bad call a good call on another session must still work.
import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, test } from "node:test";
import { query, STORAGES, tempDir } from "../support.mjs";

const { createContextEngine } = await import("../../../dist/pkg/shim/engine/context-engine.js");
const { openNodeEngine } = await import("../../../dist/pkg/shim/node/engine.js");

const nested = (depth) => {
  let v = "leaf";
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { v };
  return v;
};

const msg = (text, timestamp) => ({ role: "user", content: text, timestamp });

const BAD = [
  ["missing sessionId", (e) => e.commitTurn({ advancementKey: "b1", messages: [msg("x", 1)] }), /sessionId/],
  ["numeric sessionId", (e) => e.commitTurn({ sessionId: 42, advancementKey: "b2", messages: [msg("x", 2)] }), /sessionId/],
  ["messages not an array", (e) => e.commitTurn({ sessionId: "s", sessionKey: "k", advancementKey: "b3", messages: "nope" }), /messages/],
  ["a message that is a number", (e) => e.commitTurn({ sessionId: "s", sessionKey: "k", advancementKey: "b4", messages: [msg("ok", 3), 7] }), /messages\[1\]/],
  ["unknown role", (e) => e.commitTurn({ sessionId: "s", sessionKey: "k", advancementKey: "b5", messages: [{ role: "wizard", content: "x", timestamp: 4 }] }), /messages\[0\]\.role.*wizard/],
  // In a worker thread (the default) the message arrives cut at 128 levels (node/engine-thread.js
  // plainCopy) and goes through the JSON path, which names the message, not the block.
  ["nesting depth 10,000 in a message", (e) => e.commitTurn({ sessionId: "s", sessionKey: "k", advancementKey: "b6", messages: [{ role: "user", content: [{ type: "text", text: "x", extra: nested(10_000) }], timestamp: 5 }] }), /messages\[0\](\.content)?.*nested deeper than 100 levels/],
  ["nesting depth 10,000 in ingest", (e) => e.ingestBatch({ sessionId: "s", sessionKey: "k", messages: [nested(10_000)] }), /nested deeper/],
  ["nesting depth 10,000 in afterTurn", (e) => e.afterTurn({ sessionId: "s", sessionKey: "k", messages: [nested(10_000)], prePromptMessageCount: 0 }), /nested deeper/],
  ["nesting depth 10,000 in bootstrap", (e) => e.bootstrap({ sessionId: "s", sessionKey: "k", messages: [nested(10_000)] }), /nested deeper/],
  ["prePromptMessageCount past the end", (e) => e.afterTurn({ sessionId: "s", sessionKey: "k", messages: [msg("a", 6)], prePromptMessageCount: 5 }), /prePromptMessageCount/],
  ["search without a pattern", (e) => e.search({ sessionId: "s", sessionKey: "k" }), /pattern/],
];

for (const storage of STORAGES) describe(`storage ${storage}`, () => {
  test("wrong-shaped params fail naming what is wrong, store nothing, and the engine survives", async () => {
    const dbPath = join(tempDir("bad-input"), "db.sqlite");
    const engine = createContextEngine(() => openNodeEngine(dbPath, { storage }));
    await engine.commitTurn({ sessionId: "s", sessionKey: "k", advancementKey: "good-0", messages: [msg("before", 100)] });
    let good = 1;
    for (const [name, call, expected] of BAD) {
      await assert.rejects(call(engine), (err) => {
        assert.ok(err instanceof Error, `${name}: not an Error`);
        assert.doesNotMatch(err.message, /unreachable|memory access|RuntimeError|recursive use/, name);
        assert.match(err.message, expected, name);
        // The engine's error crosses the worker with the code a caller matches on.
        assert.equal(err.code, "LOSSLESS_INVALID_INPUT", `${name}: ${err.code}`);
        return true;
      }, name);
      // Another session on the same instance still works: the bad call did not trap the wasm.
      const out = await engine.commitTurn({ sessionId: "other", sessionKey: "other", advancementKey: `good-${good}`, messages: [msg(`after ${name}`, 200 + good)] });
      assert.equal(out.status, "committed", name);
      good++;
    }
    assert.deepEqual(await query(dbPath, "SELECT COUNT(*) FROM messages"), [[good]], "only the good calls stored anything");
  });

  test("a missing sessionKey, huge strings and lone surrogates are stored, not fatal", async () => {
    const dbPath = join(tempDir("odd-input"), "db.sqlite");
    const engine = createContextEngine(() => openNodeEngine(dbPath, { storage }));
    assert.equal((await engine.commitTurn({ sessionId: "only-id", advancementKey: "a", messages: [msg("no key", 1)] })).status, "committed");
    const huge = "x".repeat(8_000_000);
    assert.equal((await engine.commitTurn({ sessionId: "s", sessionKey: "k", advancementKey: "h", messages: [msg(huge, 2)] })).status, "committed");
    assert.equal((await engine.commitTurn({ sessionId: "s", sessionKey: "k", advancementKey: "u", messages: [msg("lone \uD800 high and \uDC00 low", 3)] })).status, "committed");
    const [[length]] = await query(dbPath, "SELECT length(t.content) FROM messages m JOIN messages_text t ON t.rowid = m.id WHERE m.host_timestamp = 2");
    assert.equal(length, huge.length, "the huge message is stored whole");
    // Lone surrogates cannot cross into Rust strings; they arrive as U+FFFD, the rest intact.
    const [[text]] = await query(dbPath, "SELECT t.content FROM messages m JOIN messages_text t ON t.rowid = m.id WHERE m.host_timestamp = 3");
    assert.equal(text, "lone \uFFFD high and \uFFFD low");
    const view = await engine.assemble({ sessionId: "s", sessionKey: "k", messages: [], tokenBudget: 1_000 });
    assert.ok(Array.isArray(view.messages));
  });
});
