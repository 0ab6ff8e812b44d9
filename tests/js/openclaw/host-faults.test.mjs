// Host faults: the host aborts compact() mid-summary, gives up waiting on maintain, disposes the
// engine while a compaction is in flight, or calls several methods of one session at once.
// Each time: nothing half-written (every message reachable, every summary with its edges), the
// summary request that was abandoned is aborted, and the next call works.
import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, test } from "node:test";
import { inspectSoak } from "../soak-host.mjs";
import { assistant, query, STORAGES, tempDir, user } from "../support.mjs";

const { createContextEngine } = await import("../../../dist/pkg/shim/engine/context-engine.js");
const { openNodeEngine } = await import("../../../dist/pkg/shim/node/engine.js");

const CONFIG = { freshTailCount: 4, leafChunkTokens: 1000, leafBudgetHeadroomFactor: 0, leafSkipReductionThreshold: 0, summarizer: "host", summaryTimeoutMs: 1000 };
const SESSION = { sessionId: "s1", sessionKey: "agent:main:faults" };
const SUMMARY = "## Goal\n- keep the parser working\n## Progress\n- answered many questions about it";

/** An LLM whose answers the test releases by hand; records each request's signal. */
function heldLlm() {
  const pending = [];
  return {
    pending,
    complete: ({ signal }) => new Promise((resolve, reject) => {
      const entry = { signal, resolve: () => resolve({ text: SUMMARY, stopReason: "stop", model: "held" }) };
      signal?.addEventListener("abort", () => reject(Object.assign(new Error("aborted"), { name: "AbortError" })), { once: true });
      pending.push(entry);
    }),
  };
}
const goodLlm = { complete: async () => ({ text: SUMMARY, stopReason: "stop", model: "good" }) };
const until = async (cond) => { while (!cond()) await new Promise((r) => setTimeout(r, 5)); };

async function setup(storage, turns = 8) {
  const dbPath = join(tempDir("host-faults"), "db.sqlite");
  const engine = createContextEngine(() => openNodeEngine(dbPath, { storage, ...CONFIG }), { config: CONFIG });
  const sent = [];
  for (let i = 0; i < turns; i++) await commit(engine, sent, i);
  return { dbPath, engine, sent };
}

async function commit(engine, sent, i) {
  const turn = [user(`question ${i}: ${"please explain the parser ".repeat(15)}`), assistant(`answer ${i}: ${"the parser works like this ".repeat(15)}`)];
  await engine.commitTurn({ ...SESSION, advancementKey: `t${i}-${sent.length}`, messages: turn });
  sent.push(...turn);
}

async function assertIntact(dbPath, sent) {
  const state = await inspectSoak(dbPath, sent);
  assert.equal(state.integrity, "ok");
  assert.equal(state.storedMessages, sent.length, "every message stored");
  assert.equal(state.reachableMessages, sent.length, "every message reachable");
  assert.equal(state.halfApplied, 0, "nothing half-applied");
  return state;
}

for (const storage of STORAGES) describe(`storage ${storage}`, () => {
  test("the host aborts compact() mid-summary: the request is aborted, nothing is written, the next compact works", async () => {
    const { dbPath, engine, sent } = await setup(storage);
    const llm = heldLlm();
    const controller = new AbortController();
    const compacting = engine.compact({ ...SESSION, force: true, tokenBudget: 1000, abortSignal: controller.signal, runtimeContext: { llm } });
    await until(() => llm.pending.length === 1);
    controller.abort();
    const result = await compacting;
    assert.equal(result.ok, false);
    assert.match(result.reason, /aborted/);
    assert.equal(llm.pending[0].signal.aborted, true, "the summary request itself was aborted");
    assert.equal((await assertIntact(dbPath, sent)).summaries, 0);
    await commit(engine, sent, 100);
    const next = await engine.compact({ ...SESSION, force: true, tokenBudget: 1000, runtimeContext: { llm: goodLlm } });
    assert.equal(next.compacted, true, next.reason);
    assert.ok((await assertIntact(dbPath, sent)).summaries > 0);
  });

  test("the host stops waiting for maintain and carries on: turns commit meanwhile, the summary lands intact", async () => {
    const { dbPath, engine, sent } = await setup(storage);
    const llm = heldLlm();
    const maintaining = engine.maintain({ ...SESSION, runtimeContext: { llm } });
    await until(() => llm.pending.length === 1);
    // The host's own timeout fired: it moves on to the next turn without awaiting maintain.
    for (let i = 0; i < 3; i++) {
      await engine.assemble({ ...SESSION, messages: sent, tokenBudget: 4000 });
      await commit(engine, sent, 200 + i);
    }
    llm.pending[0].resolve();
    const report = await maintaining;
    assert.equal(typeof report.changed, "boolean");
    await assertIntact(dbPath, sent);
    const view = await engine.assemble({ ...SESSION, messages: sent, tokenBudget: 4000 });
    assert.ok(view.messages.length > 0);
  });

  test("a maintain the host abandons is aborted by the summary time limit", async () => {
    const { dbPath, engine, sent } = await setup(storage);
    const llm = heldLlm();
    const report = await engine.maintain({ ...SESSION, runtimeContext: { llm } });
    assert.equal(llm.pending.length, 1);
    assert.equal(llm.pending[0].signal.aborted, true, "summaryTimeoutMs aborted the request");
    // The range the summarizer did not answer for gets its extractive fallback (level fallback).
    assert.equal(report.changed, true, report.reason);
    assert.match(report.reason, /timed out/);
    const { summaries } = await assertIntact(dbPath, sent);
    assert.ok(summaries > 0);
    assert.deepEqual(await query(dbPath, "SELECT COUNT(*) FROM summaries WHERE level <> 'fallback' OR summarizer <> 'extractive'"), [[0]]);
  });

  test("dispose() while a compaction is in flight: the compaction finishes, is saved, and the next call works", async () => {
    const { dbPath, engine, sent } = await setup(storage);
    const llm = heldLlm();
    const compacting = engine.compact({ ...SESSION, force: true, tokenBudget: 1000, runtimeContext: { llm } });
    await until(() => llm.pending.length === 1);
    await engine.dispose();
    // Answer this request and those of the sweep's later passes until it ends.
    const feeder = setInterval(() => llm.pending.forEach((p) => p.resolve()), 5);
    const result = await compacting;
    clearInterval(feeder);
    assert.equal(result.compacted, true, result.reason);
    await engine.dispose();
    assert.ok((await assertIntact(dbPath, sent)).summaries > 0, "the summary reached the file");
    await commit(engine, sent, 300);
    await assertIntact(dbPath, sent);
  });

  test("several methods of one session at once leave a consistent database", async () => {
    const { dbPath, engine, sent } = await setup(storage, 10);
    const slow = { complete: async () => { await new Promise((r) => setTimeout(r, 20)); return { text: SUMMARY, stopReason: "stop", model: "slow" }; } };
    const extra = [];
    const calls = [
      engine.compact({ ...SESSION, force: true, tokenBudget: 1500, runtimeContext: { llm: slow } }),
      engine.maintain({ ...SESSION, runtimeContext: { llm: slow } }),
      engine.compact({ ...SESSION, force: true, tokenBudget: 1500, runtimeContext: { llm: slow } }),
      engine.assemble({ ...SESSION, messages: sent, tokenBudget: 2000 }),
      commit(engine, extra, 400),
      engine.search({ ...SESSION, pattern: "parser" }),
    ];
    const results = await Promise.allSettled(calls);
    for (const r of results) assert.equal(r.status, "fulfilled", String(r.reason?.stack ?? r.reason));
    sent.push(...extra);
    const state = await assertIntact(dbPath, sent);
    assert.ok(state.summaries > 0);
    const next = await engine.assemble({ ...SESSION, messages: sent, tokenBudget: 2000 });
    assert.ok(next.messages.length > 0);
  });
});
