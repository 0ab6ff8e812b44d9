// A slow summarizer never slows a turn (issue 23, item 5), through the built plugin and a host
// that runs turns as OpenClaw 2026.9 does when the engine asks for background maintenance
// (deferred-host.mjs). What is checked is structure, never time: a turn's calls returned while
// the summary they asked for was still unanswered; the summary was stored later, over the
// messages it was planned for, although turns went on meanwhile; a process that exits first
// (`openclaw agent --local`) leaves nothing half-applied, the next one sends no request that
// cannot be answered, and a catch-up turn still stores summaries; an answer that arrives after
// another process summarized the same messages is checked, logged and replanned.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { createDeferredHost } from "../deferred-host.mjs";
import { inspectSoak } from "../soak-host.mjs";
import { heldLlm, longNote } from "../slow-llm.mjs";
import { loadPlugin, query, STORAGES, tempDir } from "../support.mjs";

const plugin = await loadPlugin();
const KEY = "agent:main:slow";
const SMALL = { freshTailCount: 4, leafChunkTokens: 1000, leafBudgetHeadroomFactor: 0, leafSkipReductionThreshold: 0 };
const CHILD = fileURLToPath(new URL("../slow-summarizer-child.mjs", import.meta.url));

const until = async (cond) => { while (!cond()) await new Promise((r) => setTimeout(r, 5)); };
/** Messages under more than one leaf summary (a summary applied over another's range). */
const coveredTwice = (dbPath) => query(dbPath, "SELECT COUNT(*) FROM (SELECT sm.message_id FROM summary_messages sm JOIN summaries s ON s.id = sm.summary_id WHERE s.depth = 0 GROUP BY sm.message_id HAVING COUNT(*) > 1)");

/** Runs one turn in a child process that exits right after its reply, as `openclaw agent --local` does. */
function childTurn(dir, dbPath, history, index, delayMs, config) {
  const historyPath = join(dir, `history-${index}.json`);
  writeFileSync(historyPath, JSON.stringify(history));
  const run = spawnSync(process.execPath, [CHILD, dbPath, historyPath, String(index), String(delayMs), JSON.stringify(config)], { encoding: "utf8", timeout: 120_000 });
  assert.equal(run.status, 0, `child turn ${index} failed:\n${run.stderr}`);
  return JSON.parse(run.stdout.trim().split("\n").at(-1));
}

for (const storage of STORAGES) describe(`storage ${storage}`, () => {
  test("turns go on while a summary is unanswered; it lands later over the messages it was planned for", { timeout: 120_000 }, async () => {
    const dir = tempDir("slow-held");
    const dbPath = join(dir, "db.sqlite");
    const llm = heldLlm();
    const config = { dbPath, storage, ...SMALL, summarizer: "host", summaryTimeoutMs: 600_000, summaryTurnWaitMs: 20 };
    const host = createDeferredHost({ plugin, pluginConfig: config, stateDir: dir, llm });
    const history = [];
    const deferred = [];
    const preflights = [];
    let turnsWhileWaiting = 0;
    for (let i = 1; i <= 12; i++) {
      const out = await host.turn(KEY, history, longNote(i));
      assert.equal(out.background, true, "the engine asks for background turn maintenance");
      history.push(...out.turn);
      deferred.push(out.deferred);
      if (out.preflight) preflights.push(out.preflight);
      // The turn is over (its reply is out) while a summary it or an earlier turn asked for is unanswered.
      if (llm.waiting().length) turnsWhileWaiting += 1;
    }
    assert.ok(llm.requests.length >= 1, "a summary was requested");
    assert.ok(turnsWhileWaiting >= 3, `turns went on while the summary was unanswered (${turnsWhileWaiting})`);
    assert.equal(llm.requests.filter((r) => r.answeredAt).length, 0, "nothing was answered yet");
    assert.equal(llm.requests.length, 1, "one summary in flight per conversation: later calls joined it instead of asking again");
    assert.deepEqual(await query(dbPath, "SELECT COUNT(*) FROM summaries"), [[0]]);
    // The host's preflight compact() still brought each prompt under its target, by the view.
    assert.ok(preflights.length >= 1, "the preflight check ran");
    for (const p of preflights) {
      const benign = !p.compacted && /nothing to compact|already under target/.test(p.reason);
      assert.ok(p.ok && (p.compacted || benign), `preflight compact: ${JSON.stringify(p)}`);
    }
    assert.ok(preflights.some((p) => /still being written/.test(p.reason)), `a preflight said why it asked for no summary: ${JSON.stringify(preflights.at(-1))}`);

    // The summarizer answers: the summary is applied, and the rest of the work runs.
    const [[oldestSeq]] = await query(dbPath, "SELECT MIN(seq) FROM messages");
    llm.answerAtOnce();
    await Promise.all(deferred);
    const [[summaries]] = await query(dbPath, "SELECT COUNT(*) FROM summaries");
    assert.ok(summaries >= 1, "summaries were stored");
    const [[firstCovered]] = await query(dbPath, "SELECT MIN(m.seq) FROM summary_messages sm JOIN messages m ON m.id = sm.message_id");
    assert.equal(firstCovered, oldestSeq, "the first summary covers the oldest messages, as planned");
    assert.deepEqual(await coveredTwice(dbPath), [[0]]);
    const state = await inspectSoak(dbPath, history);
    assert.equal(state.storedMessages, history.length, "every message stored");
    assert.equal(state.reachableMessages, history.length, "every message reachable");
    assert.equal(state.halfApplied, 0);
    const next = await host.turn(KEY, history, longNote(13));
    await next.deferred;
    assert.match(next.view.messages[0].content, /<lossless-summary id="\d+"/, "the next view starts with the summary");
  });

  test("a call the turn waits on returns when its hold runs out; the summary lands in the background", { timeout: 120_000 }, async () => {
    const dir = tempDir("slow-detach");
    const dbPath = join(dir, "db.sqlite");
    const llm = heldLlm();
    const config = { dbPath, storage, ...SMALL, summarizer: "host", summaryTimeoutMs: 600_000, summaryTurnWaitMs: 20 };
    // Turns without a summarizer and whose maintenance never gets to run (as when each process
    // exits first), then the maintenance before the next turn, with one: the turn waits on it.
    const host = createDeferredHost({ plugin, pluginConfig: config, stateDir: dir, llm: undefined });
    const history = [];
    for (let i = 1; i <= 8; i++) history.push(...(await host.turn(KEY, history, longNote(i), { skipDeferred: true })).turn);
    const engine = await host.fake.resolveEngine("lossless-wasm");
    const result = await engine.maintain({ sessionId: "sess", sessionKey: KEY, sessionFile: KEY, runtimeContext: { llm } });
    assert.equal(llm.requests.length, 1, "the maintenance asked for a summary");
    assert.equal(llm.waiting().length, 1, "and returned while it was unanswered");
    assert.equal(result.changed, false);
    assert.match(result.reason, /still being written in the background/);
    assert.ok(host.logs.some(([, m]) => /summary continues in the background; the turn goes on without it/.test(m)), "the detach is logged");
    assert.deepEqual(await query(dbPath, "SELECT COUNT(*) FROM summaries"), [[0]]);
    llm.answerAtOnce();
    await until(() => host.logs.some(([, m]) => /in the background: .*summaries written/.test(m)));
    const [[stored]] = await query(dbPath, "SELECT COUNT(*) FROM summaries");
    assert.ok(stored >= 1, "the summary was stored after the call returned");
    const state = await inspectSoak(dbPath, history);
    assert.equal(state.reachableMessages, history.length);
    assert.equal(state.halfApplied, 0);
  });

  test("processes that exit before the summarizer answers: nothing half-applied, no request that cannot be answered, catch-up turns store summaries", { timeout: 600_000 }, async () => {
    const dir = tempDir("slow-exit");
    const dbPath = join(dir, "db.sqlite");
    const delayMs = 1_500;
    const config = { storage, ...SMALL, summarizer: "host", summaryTimeoutMs: 60_000, summaryTurnWaitMs: 20, summaryCatchUpTurns: 3 };
    const history = [];
    const turns = [];
    for (let i = 1; i <= 14; i++) {
      const out = childTurn(dir, dbPath, history, i, delayMs, config);
      history.push(...out.turn);
      const answered = out.requests.filter((r) => r.answeredAt !== null);
      turns.push({ i, requests: out.requests.length, answered: answered.length, catchUp: out.logs.some((m) => /catch-up/.test(m)) || answered.length > 0, out });
    }
    const summary = turns.map((t) => `turn ${t.i}: ${t.requests} requests, ${t.answered} answered${t.catchUp ? " (catch-up)" : ""}`).join("\n");
    const sent = turns.reduce((n, t) => n + t.requests, 0);
    const lost = turns.reduce((n, t) => n + t.requests - t.answered, 0);
    const catchUps = turns.filter((t) => t.answered > 0);
    assert.ok(sent >= 1, `summaries were requested:\n${summary}`);
    assert.ok(lost >= 1, `some request was lost with its process (the case under test):\n${summary}`);
    assert.ok(catchUps.length >= 1, `a catch-up turn waited for a summary:\n${summary}`);
    // A turn that was not a catch-up replied before any summary it asked for was answered.
    for (const t of turns.filter((x) => x.answered === 0)) {
      assert.ok(t.out.requests.every((r) => r.answeredAt === null), `turn ${t.i} waited for a summary:\n${summary}`);
    }
    // Only the first request, sent before anything was known, was lost: after it only catch-ups
    // asked, one summary each, and waited for it.
    assert.equal(lost, 1, `requests that could not be answered (${lost} of ${sent}):\n${summary}`);
    assert.ok(catchUps.every((t) => t.requests === 1), `a catch-up asks for one summary:\n${summary}`);
    const [[stored]] = await query(dbPath, "SELECT COUNT(*) FROM summaries");
    assert.ok(stored >= catchUps.length, `each catch-up stored a summary (${stored} stored):\n${summary}`);
    assert.deepEqual(await coveredTwice(dbPath), [[0]]);
    const state = await inspectSoak(dbPath, history);
    assert.equal(state.storedMessages, history.length);
    assert.equal(state.reachableMessages, history.length);
    assert.equal(state.halfApplied, 0, "nothing half-applied when a process exits mid-summary");
    assert.equal(state.integrity, "ok");
  });
});

test("an answer that arrives after another process summarized the same messages is replanned, never applied over them", { timeout: 120_000 }, async () => {
  const dir = tempDir("slow-stale");
  const dbPath = join(dir, "db.sqlite");
  const llm = heldLlm();
  const config = { storage: "node:sqlite", ...SMALL, summarizer: "host", summaryTimeoutMs: 600_000, summaryTurnWaitMs: 20, summaryCatchUpTurns: 1 };
  const host = createDeferredHost({ plugin, pluginConfig: { dbPath, ...config }, stateDir: dir, llm });
  const history = [];
  const deferred = [];
  let i = 0;
  while (!llm.waiting().length && i < 20) {
    const out = await host.turn(KEY, history, longNote(++i));
    history.push(...out.turn);
    deferred.push(out.deferred);
  }
  await until(() => llm.waiting().length === 1);
  // This process outlives its turns, so its request is leased; the fault injected: it stalls
  // past its lease (dropped here), so another process takes the request for lost and catches
  // up: it summarizes the same oldest messages, with a summarizer that answers at once.
  const [[runs]] = await query(dbPath, "SELECT summary_runs_json FROM conversations");
  assert.ok(JSON.parse(runs).outstanding?.leaseUntilMs > 0, `the request is leased: ${runs}`);
  const { DatabaseSync } = process.getBuiltinModule("node:sqlite");
  const db = new DatabaseSync(dbPath, { timeout: 10_000 });
  db.exec("UPDATE conversations SET summary_runs_json = json_remove(summary_runs_json, '$.outstanding.leaseUntilMs')");
  db.close();
  const other = childTurn(dir, dbPath, history, ++i, 0, config);
  history.push(...other.turn);
  assert.equal(other.requests.filter((r) => r.answeredAt !== null).length >= 1, true, `the other process stored a summary: ${JSON.stringify(other.requests)}`);
  const [[before]] = await query(dbPath, "SELECT COUNT(*) FROM summaries");
  assert.ok(before >= 1);
  // The late answer arrives here.
  llm.answerAtOnce();
  await Promise.all(deferred);
  const skipped = await query(dbPath, "SELECT reason FROM compaction_events WHERE outcome = 'skipped' AND reason LIKE '%context changed%'");
  assert.ok(skipped.length >= 1, "the stale plan was checked, logged and not applied");
  assert.deepEqual(await coveredTwice(dbPath), [[0]], "no message ends up under two leaf summaries");
  const state = await inspectSoak(dbPath, history);
  assert.equal(state.reachableMessages, history.length);
  assert.equal(state.halfApplied, 0);
});
