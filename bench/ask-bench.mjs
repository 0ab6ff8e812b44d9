// lcm_ask's own cost at scale, on the wasm build (dist/pkg): a conversation of N stored messages
// (default 100,000) with a planted fact every 1,000 messages, compacted by the extractive
// summarizer and indexed as after a normal turn, its vectors backfilled; then the tool is called for each fact with a
// stub LLM that answers at once, and the tool's wall time minus the LLM's own time is reported
// (p50, p95, max), with the evidence size. Drivers: node:sqlite (WAL file) and sql.js (memory).
// Usage: node bench/ask-bench.mjs [N]. Prints figures for docs/benchmarks.md; asserts nothing.
import { mkdtempSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";

const require = createRequire(import.meta.url);
const pkg = new URL("../dist/pkg/", import.meta.url);
const { initSync } = await import(new URL("wasm/lossless_wasm.js", pkg));
const { createHandle } = await import(new URL("shim/engine/handle.js", pkg));
const { createContextEngine } = await import(new URL("shim/engine/context-engine.js", pkg));
const { createRecallTools } = await import(new URL("shim/openclaw/tools.js", pkg));
const { NodeSqliteDatabase, nodeSqliteAvailable } = await import(new URL("shim/node/sqlite.js", pkg));
initSync({ module: readFileSync(new URL("wasm/lossless_wasm_bg.wasm", pkg)) });
const SQL = await require("sql.js")();
const n = Number(process.argv[2] ?? 100_000);
const dir = mkdtempSync(join(tmpdir(), "lossless-wasm-ask-bench-"));
const KEY = "agent:bench:main";

let ts = 1_790_000_000_000;
const fact = (f) => `Decision ${f}: the canary host for shard ${f} is canary-${f}.eu.internal:7${String(f).padStart(3, "0")} and its retry budget is ${f % 9 + 2} attempts.`;
const message = (i) => {
  if (i % 1000 === 500) return { role: "user", content: `${fact(i / 1000 - 0.5)} Please keep that in mind.`, timestamp: ts++ };
  return i % 2 === 0
    ? { role: "user", content: `user message ${i}: please look at file src/module_${i % 97}.rs and fix the failing retry test`, timestamp: ts++ }
    : { role: "assistant", content: [{ type: "text", text: `Assistant reply ${i}. I read the file, changed two lines and the retry test passes now.` }], usage: { input: 1000, output: 40 }, timestamp: ts++ };
};
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

const drivers = {
  ...(nodeSqliteAvailable() ? { "node:sqlite (WAL file)": (path) => new NodeSqliteDatabase(path) } : {}),
  "sql.js (memory)": () => new SQL.Database(),
};

for (const [name, open] of Object.entries(drivers)) {
  const handle = createHandle({ db: open(join(dir, `${name.replace(/\W+/g, "_")}.sqlite`)), config: { summarizer: "extractive" } });
  const engine = createContextEngine(async () => handle, { config: { summarizer: "extractive" } });
  let started = performance.now();
  for (let i = 0; i < n; i += 500) {
    await engine.ingestBatch({ sessionId: "s", sessionKey: KEY, messages: Array.from({ length: Math.min(500, n - i) }, (_, j) => message(i + j)) });
  }
  const ingestMs = performance.now() - started;
  started = performance.now();
  const report = await engine.compact({ sessionId: "s", sessionKey: KEY, tokenBudget: 32_000, force: true });
  const compactMs = performance.now() - started;
  handle.housekeep();
  // Bulk ingest leaves embedding to the backfill (maintain): catch it up, and time it.
  started = performance.now();
  let vectors = 0;
  for (let made; (made = await handle.call("backfillVectors")) > 0; ) vectors += made;
  const backfillMs = performance.now() - started;
  let llmMs = 0;
  const llm = {
    complete: async ({ messages }) => {
      const t0 = performance.now();
      const label = messages[0].content.match(/\[(m\d+)\] user/)?.[1] ?? "m1";
      llmMs += performance.now() - t0;
      return { text: `It is in ${label} [${label}].`, stopReason: "stop" };
    },
  };
  const tools = Object.fromEntries(createRecallTools(async () => handle, { sessionId: "s", sessionKey: KEY }, { llm: () => llm }).map((t) => [t.name, t]));
  const facts = Math.floor(n / 1000);
  const times = [];
  const evidence = [];
  let found = 0;
  for (let round = 0; round < 2; round++) {
    for (let f = 0; f < facts; f++) {
      llmMs = 0;
      const t0 = performance.now();
      const out = await tools.lcm_ask.execute(`b${f}`, { question: `What is the canary host for shard ${f}, canary-${f}.eu.internal?` });
      const wall = performance.now() - t0 - llmMs;
      if (round === 1) {
        times.push(wall);
        evidence.push(out.details.evidenceTokens);
        if (out.details.outcome === "answered" && out.details.citedMessageIds.length) found += 1;
      }
    }
  }
  console.log(`${name}, ${n} stored messages (ingest ${(ingestMs / 1000).toFixed(1)} s; compaction ${(compactMs / 1000).toFixed(1)} s: ${report.reason}; backfill of ${vectors} vectors ${(backfillMs / 1000).toFixed(1)} s)`);
  console.log(`  lcm_ask excluding the LLM, ${times.length} questions (second round): p50 ${pct(times, 0.5).toFixed(1)} ms, p95 ${pct(times, 0.95).toFixed(1)} ms, max ${Math.max(...times).toFixed(1)} ms; evidence p50 ${pct(evidence, 0.5)} tokens; answered with a cited id: ${found}/${times.length}`);
}
