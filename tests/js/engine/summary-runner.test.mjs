// The shim's summary runner (js-shim/engine/summary-runner.js) on a scripted engine handle: a call is
// held only as long as the engine's `holdMs` says, the job then goes on and reports by itself, a
// later call joins the running job instead of starting a second summary, a joiner neither aborts
// nor inherits another call's job, and a host abort reaches only the job its own call started.
import assert from "node:assert/strict";
import { test } from "node:test";
import { PKG } from "../support.mjs";
import { heldLlm } from "../slow-llm.mjs";

const { createSummaryRunner, RUNNER_ID } = await import(new URL("shim/engine/summary-runner.js", PKG));

/**
 * An engine handle that asks for one summary per job (with the given hold and catch-up flag),
 * then reports; like the engine, it asks for none while one is in flight. It records the params
 * of every compactionStart.
 */
function scriptedHandle({ holdMs = null, catchUp = false } = {}) {
  const starts = [];
  let next = 0;
  let open = 0;
  return {
    starts,
    call(method, params) {
      if (method === "compactionStart") {
        starts.push(params);
        if (open) return { type: "done", ok: true, compacted: false, reason: "a summary for this conversation is still being written", summaryIds: [], failures: [] };
        next += 1;
        open += 1;
        return { type: "needSummary", jobId: next, prompt: "[lossless-wasm:summarize] …", maxTokens: 100, purpose: "test", holdMs, catchUp };
      }
      if (method === "compactionContinue") {
        open -= 1;
        return params.text
          ? { type: "done", ok: true, compacted: true, reason: `job ${params.jobId}: 1 summaries written`, summaryIds: [params.jobId], failures: [] }
          : { type: "done", ok: false, compacted: false, reason: `job ${params.jobId}: ${params.error?.kind}`, summaryIds: [], failures: [`compaction failed (${params.error?.message})`] };
      }
      throw new Error(`unexpected call ${method}`);
    },
  };
}

const driver = (llm) => ({ choice: "host", llm, timeoutMs: 60_000 });

test("a call the turn waits on returns when the hold runs out; the job reports by itself when its answer comes", async () => {
  const detached = [];
  const runner = createSummaryRunner({ onDetachedReport: (report) => detached.push(report) });
  const llm = heldLlm();
  const handle = scriptedHandle({ holdMs: 10 });
  const result = await runner.run("s", handle, { mode: "pending" }, { turnWaits: true, record: true, driver: driver(llm) });
  assert.equal(llm.requests.length, 1, "the summary was asked for");
  assert.deepEqual({ inFlight: result.inFlight, answered: llm.requests[0].answeredAt }, { inFlight: true, answered: undefined }, "the call returned before the answer");
  assert.equal(handle.starts[0].turnWaits, true);
  assert.equal(handle.starts[0].runner, RUNNER_ID, "requests are recorded with this process's id");
  assert.deepEqual(detached, []);
  llm.release();
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(detached.length, 1, "the job reported on its own");
  assert.match(detached[0].reason, /summaries written/);
});

test("a call the turn does not wait on waits for the answer, whatever the hold", async () => {
  const runner = createSummaryRunner();
  const llm = heldLlm();
  const handle = scriptedHandle({ holdMs: 10 });
  const pending = runner.run("s", handle, { mode: "pending" }, { turnWaits: false, driver: driver(llm) });
  await new Promise((r) => setTimeout(r, 40));
  assert.equal(llm.waiting().length, 1);
  llm.release();
  const report = await pending;
  assert.equal(report.compacted, true);
  assert.equal(handle.starts[0].runner, undefined, "no record without `record`");
});

test("a later call joins the running job: a background call waits for it, a turn's call does not wait for a background job", async () => {
  const runner = createSummaryRunner();
  const llm = heldLlm();
  const handle = scriptedHandle({ holdMs: null });
  const background = runner.run("s", handle, { mode: "pending" }, { turnWaits: false, driver: driver(llm) });
  await new Promise((r) => setTimeout(r, 5));
  // The maintenance before the next turn: the running job's request has no hold for a turn.
  const beforeTurn = await runner.run("s", handle, { mode: "pending" }, { turnWaits: true, driver: driver(llm) });
  assert.equal(llm.waiting().length, 1, "the turn's call returned while the background job's summary was unanswered");
  assert.match(beforeTurn.reason, /still being written/, "its own job asked for nothing");
  assert.equal(handle.starts.length, 2);
  assert.equal(llm.requests.length, 1);
  // Another background call waits for the running job before starting its own.
  const second = runner.run("s", handle, { mode: "pending" }, { turnWaits: false, driver: driver(llm) });
  await new Promise((r) => setTimeout(r, 5));
  assert.equal(handle.starts.length, 2, "the second background call joined; it has not started its own job yet");
  llm.answerAtOnce();
  assert.equal((await background).compacted, true);
  assert.equal((await second).compacted, true);
  assert.equal(handle.starts.length, 3, "then it ran its own");
});

test("a host abort reaches only the job its own call started; a joiner whose host gave up stops waiting", async () => {
  const runner = createSummaryRunner();
  const llm = heldLlm();
  const handle = scriptedHandle({ holdMs: null });
  const background = runner.run("s", handle, { mode: "pending" }, { turnWaits: false, driver: driver(llm) });
  await new Promise((r) => setTimeout(r, 5));
  const controller = new AbortController();
  const joiner = runner.run("s", handle, { mode: "sweep" }, { turnWaits: false, hostSignal: controller.signal, driver: driver(llm) });
  await new Promise((r) => setTimeout(r, 5));
  controller.abort();
  // The joiner stops waiting at once; its own job asks for nothing (one is in flight).
  const own = await joiner;
  assert.match(own.reason, /still being written/);
  assert.equal(llm.requests.length, 1, "the aborted call asked for nothing");
  assert.equal(llm.requests[0].aborted, false, "the background job's request was not aborted by another call's host");
  assert.equal(llm.waiting().length, 1, "and is still waiting for its answer");
  llm.release();
  assert.equal((await background).compacted, true);
});

test("a host abort while its own job waits for a summary aborts that request", async () => {
  const runner = createSummaryRunner();
  const llm = heldLlm();
  const handle = scriptedHandle({ holdMs: null });
  const controller = new AbortController();
  const call = runner.run("s", handle, { mode: "sweep" }, { turnWaits: false, hostSignal: controller.signal, driver: driver(llm) });
  await new Promise((r) => setTimeout(r, 5));
  assert.equal(llm.waiting().length, 1);
  controller.abort();
  const report = await call;
  assert.equal(llm.requests[0].aborted, true, "the request itself was aborted");
  assert.equal(report.ok, false);
  assert.match(report.reason, /aborted/);
});

test("a catch-up request holds the call until its answer and is announced", async () => {
  const catchUps = [];
  const runner = createSummaryRunner({ onCatchUp: () => catchUps.push(Date.now()) });
  const llm = heldLlm();
  const handle = scriptedHandle({ holdMs: null, catchUp: true });
  const call = runner.run("s", handle, { mode: "pending" }, { turnWaits: true, record: true, driver: driver(llm) });
  await new Promise((r) => setTimeout(r, 30));
  assert.equal(catchUps.length, 1);
  assert.equal(llm.waiting().length, 1, "still waiting: a catch-up has no hold");
  llm.release();
  const report = await call;
  assert.equal(report.compacted, true, "the call returned with the stored summary");
});
