// Which summarizer calls pay off: the soak's agent traffic (tool loops, 500-4,000-token tool
// results, 5 % of them 20,000 tokens) through the built plugin and the fake host at a 6K budget,
// with a summarizer that fails `rate` of its calls in every way providers do (tests/js/soak-host.mjs).
// Reports, from the engine's own `summarizer_calls` log: calls, stored summaries, good answers
// thrown away (a good answer that did not become a summary), summaries larger than what they
// replaced, and the tokens spent.
//
//   node bench/summarizer-payoff.mjs [turns=400] [rate=0.25] [answers=short|long] [storage=node:sqlite]
//
// `answers=long` makes every good answer a well-formed summary of ~450 tokens whatever its input,
// as small local models write them.
import { query } from "../tests/js/support.mjs";
import { runSoak, summaryFor } from "../tests/js/soak-host.mjs";

const [turns = "400", rate = "0.25", answers = "short", storage = "node:sqlite"] = process.argv.slice(2);

const longSummary = (prompt) => {
  const lines = Array.from({ length: 36 }, (_, i) => `- step ${i + 1}: the agent read a module, ran its tests, looked at failure ${i * 7 + 3} and applied fix number ${i + 11}`);
  return `${summaryFor(prompt)}\n## Artifacts\n${lines.join("\n")}`;
};

const started = Date.now();
const r = await runSoak({ turns: Number(turns), storage, rate: Number(rate), window: Number(turns), answer: answers === "long" ? longSummary : summaryFor });
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
const faults = Object.values(r.llm.faults).reduce((a, b) => a + b, 0) + r.llm.auth;
const out = {
  turns: Number(turns), rate: Number(rate), answers, storage,
  llmCalls: r.llm.calls, goodAnswers: r.llm.good, injectedFaults: faults,
  summariesStored: stored, goodAnswersThrownAway: r.llm.good - stored,
  callsLogged: byOutcome, summariesNotSmallerThanTheirRange: grew,
  tokensIn: inTokens, tokensOut: outTokens,
  lostOrDuplicated: r.storedMessages !== r.sentMessages || r.distinctMessages !== r.sentMessages,
  garbageSummaries: r.garbageSummaries.length,
  nonStoredReasons: reasons,
  seconds: (Date.now() - started) / 1000,
};
console.log(JSON.stringify(out, null, 1));
