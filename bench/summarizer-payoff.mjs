// Which summarizer calls pay off: the soak's agent traffic (tool loops, 500-4,000-token tool
// results, 5 % of them 20,000 tokens) through the built plugin and the fake host at a 6K budget,
// with a summarizer that fails `rate` of its calls in every way providers do (tests/js/soak-host.mjs).
// Reports, from the engine's own `summarizer_calls` log: calls, stored summaries, good answers
// thrown away (a good answer that did not become a summary), summaries larger than what they
// replaced, and the tokens spent.
//
//   node bench/summarizer-payoff.mjs [turns=400] [rate=0.25] [answers=short|long|reasoning] [storage=node:sqlite]
//
// `answers=long` makes every good answer a well-formed summary of ~450 tokens whatever its input,
// as small local models write them; `answers=reasoning` is a reasoning model (see below).
import { query } from "../tests/js/support.mjs";
import { runSoak, summaryFor } from "../tests/js/soak-host.mjs";

const [turns = "400", rate = "0.25", answers = "short", storage = "node:sqlite"] = process.argv.slice(2);

const longSummary = (prompt) => {
  const lines = Array.from({ length: 36 }, (_, i) => `- step ${i + 1}: the agent read a module, ran its tests, looked at failure ${i * 7 + 3} and applied fix number ${i + 11}`);
  return `${summaryFor(prompt)}\n## Artifacts\n${lines.join("\n")}`;
};

// `answers=reasoning`: a reasoning model that puts its chain of thought in the completion on half
// of its answers (`<think>…</think>` before the summary), and on one in eight sends nothing else.
const REASONING = "REASONING-CANARY let me think about which files the agent touched";
let reasoned = 0;
const reasoningSummary = (prompt) => {
  reasoned++;
  if (reasoned % 8 === 0) return `<think>\n${REASONING} and I ran out of tokens`;
  return reasoned % 2 ? `<think>\n${REASONING}.\n</think>\n\n${summaryFor(prompt)}` : summaryFor(prompt);
};
const answerOf = { short: summaryFor, long: longSummary, reasoning: reasoningSummary }[answers];
if (!answerOf) throw new Error(`answers must be short, long or reasoning, not ${answers}`);

const started = Date.now();
const r = await runSoak({ turns: Number(turns), storage, rate: Number(rate), window: Number(turns), answer: answerOf });
const rows = async (sql) => query(r.dbPath, sql);
const byOutcome = Object.fromEntries(await rows("SELECT outcome, COUNT(*) FROM summarizer_calls GROUP BY outcome"));
const reasons = {};
for (const [outcome, reason] of await rows("SELECT outcome, reason FROM summarizer_calls WHERE outcome != 'stored'")) {
  const key = `${outcome}: ${String(reason).replace(/\d+/g, "N").replace(/"[^"]*"/g, '"…"').slice(0, 110)}`;
  reasons[key] = (reasons[key] ?? 0) + 1;
}
const [[inTokens, outTokens]] = await rows("SELECT COALESCE(SUM(input_tokens), 0), COALESCE(SUM(output_tokens), 0) FROM summarizer_calls");
const [[grew]] = await rows(`SELECT COUNT(*) FROM compaction_events WHERE outcome = 'compacted' AND tokens_after >= tokens_before`);
const [[stored]] = await rows("SELECT COUNT(*) FROM summaries");
const [[withReasoning]] = await rows("SELECT COUNT(*) FROM summaries WHERE content LIKE '%REASONING-CANARY%' OR content LIKE '%<think%'");
const faults = Object.values(r.llm.faults).reduce((a, b) => a + b, 0) + r.llm.auth;
const out = {
  turns: Number(turns), rate: Number(rate), answers, storage,
  llmCalls: r.llm.calls, goodAnswers: r.llm.good, injectedFaults: faults,
  summariesStored: stored, goodAnswersThrownAway: r.llm.good - stored, summariesHoldingReasoning: withReasoning,
  callsLogged: byOutcome, summariesNotSmallerThanTheirRange: grew,
  tokensIn: inTokens, tokensOut: outTokens,
  lostOrDuplicated: r.storedMessages !== r.sentMessages || r.distinctMessages !== r.sentMessages,
  garbageSummaries: r.garbageSummaries.length,
  nonStoredReasons: reasons,
  seconds: (Date.now() - started) / 1000,
};
console.log(JSON.stringify(out, null, 1));
