// End-to-end tests in the real OpenClaw host with the plugin's DEFAULT config (only `dbPath`
// is set, so the test can read our database): what a new user runs. Long notes fill small
// windows within a few turns, and the host's preflight check (docs/prompt-accounting.md) then
// asks the engine to compact before the turn may run. Every turn must be answered:
//
//   1. window 8000, ~2,400-character notes, 12 turns, the summarizer answers: a summary from
//      the host's LLM reaches the prompt in its tag, as a user message, in place of the oldest
//      turn; the summary row holds the LLM's text (not our markup) and the model that wrote it;
//      summarization requests are plain completions of our prompt and nothing of them is stored
//      as a conversation message;
//   2. the same with every summary request answered HTTP 500: every reply is a normal one, no
//      truncated or placeholder text in any prompt, the failures are logged (a warning with its
//      reason, `compaction_events` rows "failed"), and the old notes reach the prompt as their
//      deterministic extractive summaries (level fallback), never as the failure's text;
//   3. window 32000, ~16,000-character notes, 8 turns.
//
// In every run each note is stored exactly once and every request to the model keeps its
// configured reply budget (`max_completion_tokens`), which the host cuts when a prompt nears
// the window.
//
// The first runs on every host under test (2026.9.6 and 2026.7.1; 2026.7.1 has no preflight check
// below a 24K window, its reply budget is what binds there); the other two on 2026.9.6 only, to keep the suite's time: what they add is the
// engine's, which is the same wasm on both hosts. (These absorb the small-window compaction
// tests that ran a non-default config on 2026.9.6.)
// Run as the other e2e tests (see openclaw.e2e.test.mjs). The turns go through one long-lived
// gateway per test (gateway.mjs), on both hosts.

import test from "node:test";
import assert from "node:assert/strict";

import { SUMMARIZE_MARKER } from "./mock-llm.mjs";
import { grepLines, logLineText } from "./openclaw-host.mjs";
import {
  SUMMARY_TAG,
  allMessages,
  assertSummarizationRequestShape,
  assertEngineUsedForEveryAgentRequest,
  assertNoFailureLines,
  assertStoredExactlyOnce,
  assertTurnOk,
  contextEngineLines,
  conversationsOf,
  describeRequests,
  describeSummarizationRequest,
  dumpMessages,
  e2eHosts,
  expectedMessages,
  hostTitle,
  historyTexts,
  longText,
  setupE2e,
} from "./e2e-support.mjs";

const MAX_TOKENS = 1024;
// The host's defaults make its own prompt ~10K tokens (workspace bootstrap files, 12 tool
// schemas), more than an 8K window holds before any history: no engine can answer there. A user
// of such a model trims the host (its settings, not ours): no bootstrap files and the minimal
// tool profile leave a ~3K-token system prompt, as in the runs the issue reports.
const SMALL_MODEL_AGENT = { skipBootstrap: true };
// The minimal profile leaves the recall tools out, and at 8K they stay out: on 2026.7.1 their
// schemas (~1.5K tokens in every request) leave no room for the reply (the host cuts it). The
// engine's system-prompt addition then names none of them (issue 42; checked for every request).
const SMALL_MODEL_HOST = { tools: { profile: "minimal" } };
const FAILED_WARNING = /\[lossless-wasm\] compaction failed \((.+?)\); all (\d+) original messages preserved/;
const OMISSION_LINE = /earlier messages of this conversation are stored/;

/** Runs `turns` turns of `chars`-character notes on one session; returns the turn records. */
async function runNotes(e2e, sessionKey, { turns, chars, nonce }) {
  const out = [];
  for (let i = 1; i <= turns; i++) {
    out.push(await e2e.turn(sessionKey, longText(`Default-config note ${i} ${nonce}`, chars)));
  }
  return out;
}

/** The checks every scenario shares: answered turns, intact reply budget, nothing lost. */
function assertEveryTurnAnsweredAndStored(e2e, sessionKey, recs) {
  const output = e2e.sandbox.allOutput();
  for (const rec of recs) assertTurnOk(rec, output);
  assertNoFailureLines(output);
  assertEngineUsedForEveryAgentRequest(e2e.llm, output, { minRequests: recs.length });
  const preflight = grepLines(output, /Preflight compaction required but failed/).map(logLineText);
  assert.deepEqual(preflight, [], `the host's preflight compaction failed:\n${preflight.join("\n")}`);
  const cut = e2e.llm.agentTurnRequests().filter((r) => (r.body?.max_completion_tokens ?? r.body?.max_tokens) !== MAX_TOKENS);
  assert.deepEqual(
    cut.map((r) => `#${r.index} max_completion_tokens=${r.body?.max_completion_tokens ?? r.body?.max_tokens}`),
    [],
    `requests whose reply budget the host cut (the prompt neared the window):\n${describeRequests(cut)}`,
  );
  const db = e2e.openDb();
  // The user's sessions: a gateway's memory-flush runs keep a copy of the history under their own
  // internal keys (docs/openclaw-host-observed.md §12.4).
  const rows = allMessages(db, { internal: false });
  const conversations = conversationsOf(db, sessionKey);
  const summaries = db.prepare("SELECT id, conversation_id, depth, summarizer, model, level, content FROM summaries ORDER BY id").all();
  const events = db.prepare("SELECT pass, outcome, reason, summary_id FROM compaction_events ORDER BY id").all();
  db.close();
  assert.equal(conversations.length, 1, `one conversation expected: ${JSON.stringify(conversations)}`);
  assertStoredExactlyOnce(rows, expectedMessages(recs), { conversationId: conversations[0].id });
  return { output, summaries, events, rows, conversationId: conversations[0].id };
}

function describeEvents(events) {
  return events.map((e) => `  ${e.pass}/${e.outcome}${e.summary_id ? ` summary #${e.summary_id}` : ""}: ${String(e.reason).slice(0, 220)}`).join("\n");
}

const ONLY_96 = { only: ["2026.9.6"] };

for (const hostVersion of e2eHosts()) test(hostTitle("default config, window 8000, 2,400-char notes: 12/12 turns answered and summaries reach the prompt", hostVersion), { timeout: 30 * 60_000 }, async (t) => {
  // Through a gateway on both hosts. 2026.7.1's gateway adds ~270 tokens to the system prompt
  // (its Control UI section), and under 2026.9's preflight reserve no summary fitted beside the
  // current and previous turn; the shim now passes 2026.7's own limits (no preflight check below
  // a 24K window, the model's maxTokens, its ×1.25 estimate): docs/openclaw-host-observed.md §12.4.
  const e2e = await setupE2e(t, { hostVersion, gateway: true, contextWindow: 8000, maxTokens: MAX_TOKENS, agentDefaults: SMALL_MODEL_AGENT, extraConfig: SMALL_MODEL_HOST, mock: { summaryMode: "answer" } });
  const nonce = Date.now().toString(36);
  const sessionKey = `agent:main:e2e-default-8k-${nonce}`;
  const recs = await runNotes(e2e, sessionKey, { turns: 12, chars: 2400, nonce });
  const { output, summaries, events, rows, conversationId } = assertEveryTurnAnsweredAndStored(e2e, sessionKey, recs);
  const dbState = () => `compaction_events:\n${describeEvents(events)}\n${contextEngineLines(output).join("\n")}`;

  // Summarization requests: plain completions of our prompt, answered.
  const summarizations = e2e.llm.summarizationRequests();
  assert.ok(summarizations.some((r) => r.status === 200 && r.reply), `no summarization request was answered:\n${describeRequests(summarizations)}`);
  for (const r of summarizations.slice(0, 3)) t.diagnostic(`summarization request: ${describeSummarizationRequest(r)}`);
  assertSummarizationRequestShape(summarizations);
  const failedWarnings = grepLines(output, FAILED_WARNING).map(logLineText);
  assert.deepEqual(failedWarnings, [], `the plugin reported a failed compaction although the summarizer answered:\n${failedWarnings.join("\n")}`);

  // The summary rows: the host LLM's text, not our markup, with the model that wrote it.
  const fromHost = summaries.filter((s) => s.summarizer === "llm");
  assert.ok(fromHost.length >= 1, `no summary written by the host's LLM:\n${dbState()}`);
  const leaf = fromHost.find((s) => s.depth === 0 && s.conversation_id === conversationId);
  assert.ok(leaf, `no depth-0 summary by the host's LLM in conversation ${conversationId}:\n${dbState()}`);
  assert.match(leaf.content, /mock-summary-\d+/, `summary #${leaf.id} does not hold the mock's answer`);
  assert.ok(!leaf.content.includes(SUMMARY_TAG), `summary #${leaf.id} stores our markup: ${leaf.content.slice(0, 200)}`);
  assert.equal(leaf.model, "mock-model", `summary #${leaf.id} does not record the model that wrote it`);
  assert.ok(events.some((e) => e.outcome === "compacted" && e.summary_id === leaf.id), `no compaction_events row "compacted" for summary #${leaf.id}:\n${dbState()}`);
  // Nothing of a summarization (our prompt, the LLM's answer) is stored as a conversation message.
  const leaked = rows.filter((r) => r.content.includes(SUMMARIZE_MARKER) || /mock-summary-\d+/.test(r.content));
  assert.deepEqual(leaked.map((r) => r.id), [], `summarization prompts or answers were stored as conversation messages:\n${dumpMessages(leaked)}`);

  // The prompt: the summary in its tag, as a user message, in place of the oldest turn.
  const withSummary = e2e.llm.agentTurnRequests().filter((r) => historyTexts(r.body).some((h) => h.text.includes(SUMMARY_TAG)));
  assert.ok(withSummary.length >= 1, `no agent request carried a summary:\n${describeRequests(e2e.llm.requests)}`);
  const req = withSummary.at(-1);
  const hist = historyTexts(req.body);
  const summaryMsg = hist.find((h) => h.text.includes(SUMMARY_TAG));
  t.diagnostic(`summary as the model sees it (request #${req.index}, role ${summaryMsg.role}): ${JSON.stringify(summaryMsg.text.slice(0, 300))}`);
  assert.equal(summaryMsg.role, "user", `the summary message has role ${summaryMsg.role}, want user`);
  // The host prefixes user messages with "[<time> UTC] " (and more, doc §9.2); `text` has it removed.
  assert.match(summaryMsg.text, /^<lossless-summary id="\d+" depth="\d+"/, `the summary message does not start with its tag; as sent: ${JSON.stringify(summaryMsg.raw.slice(0, 200))}`);
  assert.ok(
    withSummary.some((r) => historyTexts(r.body).some((h) => /mock-summary-\d+/.test(h.text))),
    "the summaries in the prompt are not the host LLM's text",
  );
  const allText = hist.map((h) => h.text).join("\n");
  assert.ok(
    !allText.includes(recs[0].message) && !allText.includes(recs[0].served.at(-1).reply),
    `request #${req.index} still carries turn 1 verbatim next to the summary:\n${hist.map((h) => `  ${h.role}: ${JSON.stringify(h.text.slice(0, 120))}`).join("\n")}`,
  );
  e2e.markPassed();
});

for (const hostVersion of e2eHosts(ONLY_96)) test(hostTitle("default config, window 8000, every summary request HTTP 500: 12/12 answered, no truncated or error text, originals kept, fallback summaries in the prompt", hostVersion), { timeout: 30 * 60_000 }, async (t) => {
  const e2e = await setupE2e(t, { hostVersion, gateway: true, contextWindow: 8000, maxTokens: MAX_TOKENS, agentDefaults: SMALL_MODEL_AGENT, extraConfig: SMALL_MODEL_HOST, mock: { summaryMode: "fail", summaryFailStatus: 500 } });
  const nonce = Date.now().toString(36);
  const sessionKey = `agent:main:e2e-default-8k-fail-${nonce}`;
  const recs = await runNotes(e2e, sessionKey, { turns: 12, chars: 2400, nonce });
  const { output, summaries, events, rows } = assertEveryTurnAnsweredAndStored(e2e, sessionKey, recs);

  const summarizations = e2e.llm.summarizationRequests();
  assert.ok(summarizations.length >= 1, "no summary was ever requested");
  assert.deepEqual(summarizations.filter((r) => r.status !== 500).map((r) => r.index), [], `summarization requests not answered with HTTP 500:\n${describeRequests(summarizations)}`);
  assertSummarizationRequestShape(summarizations);
  for (const rec of recs) {
    assert.ok(
      rec.turn.reply.startsWith("Mock reply #") && !rec.turn.reply.includes("mock-summary"),
      `${rec.label}: not a normal agent reply: ${JSON.stringify(rec.turn.reply.slice(0, 200))}`,
    );
  }
  // Every range the summarizer gave no answer for has its deterministic extractive summary
  // (level fallback, redone when the summarizer answers again); nothing of the failures is stored.
  assert.ok(summaries.length >= 1, `no fallback summary was stored:\n${describeEvents(events)}`);
  assert.deepEqual(summaries.filter((s) => s.level !== "fallback" || s.summarizer !== "extractive").map((s) => s.id), [], "a summary other than an extractive fallback was stored although every summary request failed");
  assert.deepEqual(summaries.filter((s) => /mock: the summarizer is unavailable|HTTP 500|truncated/i.test(s.content)).map((s) => s.id), [], "a summary stores the failure's text");
  assert.ok(events.some((e) => e.outcome === "failed"), `no compaction_events row "failed":\n${describeEvents(events)}`);
  const warnings = grepLines(output, FAILED_WARNING).map(logLineText);
  assert.ok(warnings.length >= 1, `no "compaction failed (…); all N original messages preserved" warning:\n${describeEvents(events)}`);
  t.diagnostic(`warning: ${warnings[0].slice(0, 400)}`);
  const [, reason, preserved] = warnings[0].match(FAILED_WARNING);
  // N counts the messages of the chunk that was to be summarized, not the conversation.
  assert.ok(Number(preserved) >= 1 && Number(preserved) <= rows.length, `the warning names ${preserved} preserved messages; ${rows.length} are stored: ${warnings[0]}`);
  assert.ok(reason.length > 0, `the warning gives no reason: ${warnings[0]}`);
  for (const r of e2e.llm.agentTurnRequests()) {
    for (const h of historyTexts(r.body)) {
      assert.doesNotMatch(h.text, /truncated|\[LCM fallback|mock: the summarizer is unavailable/i, `request #${r.index} carries truncated or error text`);
      assert.ok(!h.text.startsWith(SUMMARIZE_MARKER), `request #${r.index} carries a summarization prompt`);
    }
  }
  // The old notes are in the prompt as their fallback summary (or announced as stored), never
  // silently gone.
  const last = e2e.llm.agentTurnRequests().at(-1);
  assert.ok(
    historyTexts(last.body).some((h) => h.text.includes(SUMMARY_TAG) || OMISSION_LINE.test(h.text)),
    `the last request carries neither a summary nor the line saying earlier messages are stored:\n${historyTexts(last.body).map((h) => `  ${h.role}: ${h.text.slice(0, 100)}`).join("\n")}`,
  );
  assert.ok(
    e2e.llm.agentTurnRequests().some((r) => historyTexts(r.body).some((h) => h.text.includes(SUMMARY_TAG))),
    "no request carried a fallback summary",
  );
  e2e.markPassed();
});

for (const hostVersion of e2eHosts(ONLY_96)) test(hostTitle("default config, window 32000, 16,000-char notes: 8/8 turns answered", hostVersion), { timeout: 30 * 60_000 }, async (t) => {
  // OpenClaw 2026.7.1's own estimate of its default ~10K-token system prompt plus one
  // 16,000-character note leaves no reply budget at 32K: with an empty history it sends the
  // first request with max_completion_tokens 1, and its legacy engine refuses the same turn
  // ("Context overflow: prompt too large for the model (precheck)"; doc §11.6). The host is
  // trimmed there as at 8K (SMALL_MODEL_AGENT, SMALL_MODEL_HOST); this test runs on 2026.9.6
  // only, with the host's defaults.
  const e2e = await setupE2e(t, { hostVersion, gateway: true, contextWindow: 32000, maxTokens: MAX_TOKENS, mock: { summaryMode: "answer" } });
  const nonce = Date.now().toString(36);
  const sessionKey = `agent:main:e2e-default-32k-${nonce}`;
  const recs = await runNotes(e2e, sessionKey, { turns: 8, chars: 16000, nonce });
  assertEveryTurnAnsweredAndStored(e2e, sessionKey, recs);
  e2e.markPassed();
});
