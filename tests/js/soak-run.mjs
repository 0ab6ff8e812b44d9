// The long summarizer-fault soak, run by scripts/reliability.sh (not by the test suite):
// `node tests/js/soak-run.mjs <storage> <turns> [out.json]`. Prints one line per 1,000 turns and
// a summary; exits non-zero if a message was lost or duplicated, a summary holds garbage, a
// compaction is half-applied, or a hung summary request was not aborted.
import { writeFileSync } from "node:fs";
import { runSoak } from "./soak-host.mjs";

const [storage = "node:sqlite", turnsArg = "10000", out] = process.argv.slice(2);
const turns = Number(turnsArg);
const outage = [Math.floor(turns * 0.4), Math.floor(turns * 0.4) + 50];
const r = await runSoak({ turns, storage, window: Math.min(1_000, turns), authOutageTurns: outage, log: (row) => console.log(JSON.stringify(row)) });
delete r.logs;
const reasons = {};
for (const line of r.failureReasons) {
  const key = line.replace(/\d+/g, "N").replace(/"[^"]*"/g, '"…"').slice(0, 110);
  reasons[key] = (reasons[key] ?? 0) + 1;
}
r.failureReasons = reasons;
const problems = [];
if (r.storedMessages !== r.sentMessages || r.distinctMessages !== r.sentMessages) problems.push("messages lost or duplicated");
if (r.reachableMessages !== r.sentMessages) problems.push("messages unreachable");
if (r.garbageSummaries.length) problems.push(`garbage in summaries ${r.garbageSummaries}`);
if (r.halfApplied) problems.push("half-applied compaction");
if (r.llm.hung !== r.llm.hungAborted) problems.push("hung summary requests not aborted");
if (r.integrity !== "ok") problems.push(`integrity: ${r.integrity}`);
console.log(JSON.stringify({ ...r, outageTurns: outage, problems }, null, 1));
if (out) writeFileSync(out, JSON.stringify({ ...r, outageTurns: outage, problems }, null, 1));
process.exitCode = problems.length ? 1 : 0;
