// 1,200 realistic model calls to the four recall tools (tests/js/recall-fuzz.mjs: a
// deterministic generator of the arguments models send, right and wrong, from two agents'
// sessions): none may throw — a thrown error is what the host reports as a tool failure. Bad
// input must come back as a sentence naming the problem, good input as a normal result, and
// every result must fit the host's tool-result limit (result-size.js) as whole JSON.
import assert from "node:assert/strict";
import { test } from "node:test";
import { fuzzCalls, fuzzSessions, runFuzz } from "../recall-fuzz.mjs";
import { PKG, STORAGES, tempDir } from "../support.mjs";

const { fitsLimit, toolCallText, TOOL_RESULT_DEFAULT_MAX_CHARS } = await import(new URL("shim/openclaw/result-size.js", PKG));
/** Whole JSON under the default limit, as Tool Search's tool_call shows it. */
const fits = (tool, out) => JSON.parse(toolCallText(tool, out)) && fitsLimit(tool, out, TOOL_RESULT_DEFAULT_MAX_CHARS);

for (const storage of STORAGES) {
  test(`${storage}: 1,200 fuzzed model calls to the recall tools throw nothing and bad input gets a sentence`, { timeout: 300_000 }, async () => {
    const { mine, theirs } = await fuzzSessions(PKG, { dir: tempDir("fuzz"), storage });
    assert.deepEqual(Object.keys(mine).sort(), ["lcm_ask", "lcm_describe", "lcm_expand", "lcm_grep"]);
    const thrown = [];
    const counts = await runFuzz(fuzzCalls(20261125, 1_200), mine, theirs, { onThrow: (t) => thrown.push(t), fits });
    assert.equal(counts.calls, 1_200);
    assert.equal(counts.missing, 0, "every call reached a tool");
    assert.ok(counts.problems >= 100 && counts.answered >= 100, `both kinds of answers happened: ${JSON.stringify(counts)}`);
    for (const tool of ["lcm_grep", "lcm_describe", "lcm_expand", "lcm_ask"]) assert.ok(counts.byTool[tool].calls >= 100, tool);
    assert.equal(counts.oversized, 0, "every result fits the host's tool-result limit");
    assert.equal(counts.thrown, 0, `thrown: ${thrown.slice(0, 5).map((t) => `${t.tool} ${JSON.stringify(t.args)?.slice(0, 120)}: ${t.err.message}`).join("\n")}`);
  });
}
