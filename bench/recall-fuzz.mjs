// The recall tools' failure rate over fuzzed model calls (tests/js/recall-fuzz.mjs), for
// docs/recall.md: how many of N realistic calls throw (what the host reports as a tool
// failure). Point it at any built package to compare versions:
//   node bench/recall-fuzz.mjs [--pkg dist/pkg] [--calls 1200] [--seed 20261125]
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { fuzzCalls, fuzzSessions, runFuzz } from "../tests/js/recall-fuzz.mjs";
import { tempDir } from "../tests/js/support.mjs";

const { values } = parseArgs({ options: { pkg: { type: "string", default: "dist/pkg" }, calls: { type: "string", default: "1200" }, seed: { type: "string", default: "20261125" } } });
const pkg = pathToFileURL(`${resolve(values.pkg)}/`);
const { mine, theirs } = await fuzzSessions(pkg, { dir: tempDir("fuzz-bench") });
const reasons = new Map();
const counts = await runFuzz(fuzzCalls(Number(values.seed), Number(values.calls)), mine, theirs, {
  onThrow: ({ tool, err }) => {
    const key = `${tool}: ${String(err.message).replace(/\d+/g, "N").slice(0, 90)}`;
    reasons.set(key, (reasons.get(key) ?? 0) + 1);
  },
});
const ran = counts.calls - counts.missing;
console.log(`package ${values.pkg}: ${counts.calls} calls, ${counts.missing} to tools it lacks; of ${ran}: thrown ${counts.thrown} (${((100 * counts.thrown) / ran).toFixed(1)} %), problem sentences ${counts.problems}, answered ${counts.answered}`);
for (const [tool, t] of Object.entries(counts.byTool)) console.log(`  ${tool}: ${t.thrown} of ${t.calls} thrown`);
for (const [reason, n] of [...reasons].sort((a, b) => b[1] - a[1]).slice(0, 12)) console.log(`  ${n}× ${reason}`);
