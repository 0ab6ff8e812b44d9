// Node benchmark harness for the wasm build (dist/pkg). Measures, on this machine:
//  - ingest rate while a conversation grows (ingestBatch of 100 messages per call)
//  - per-turn overhead (assemble + commitTurn) at N stored messages, with and without the
//    file persistence that runs after every write in the OpenClaw plugin
//  - bootstrap import of 10K messages
// Usage: node bench/wasm-bench.mjs [sizes...]   (default 1000 10000)
// Prints medians; results are recorded in docs/benchmarks.md. Not a test: nothing is asserted.
import { readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";

const require = createRequire(import.meta.url);
const pkg = new URL("../dist/pkg/", import.meta.url);
const { openEngine } = await import(new URL("shim/library.js", pkg));
const { writeFileAtomic } = await import(new URL("shim/file-store.js", pkg));
const SQL = await require("sql.js")();
const wasm = readFileSync(new URL("wasm/lossless_wasm_bg.wasm", pkg));
const sizes = process.argv.slice(2).map(Number);
if (sizes.length === 0) sizes.push(1_000, 10_000);

let ts = 1_790_000_000_000;
const message = (i) =>
  i % 2 === 0
    ? { role: "user", content: `user message ${i}: please look at file src/module_${i % 97}.rs and fix the failing test`, timestamp: ts++ }
    : { role: "assistant", content: [{ type: "text", text: `Assistant reply ${i}. I read the file, changed two lines and the test passes now.` }], usage: { input: 1000, output: 40 }, timestamp: ts++ };

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function grow(engine, n) {
  const started = performance.now();
  for (let i = 0; i < n; i += 100) {
    const batch = Array.from({ length: Math.min(100, n - i) }, (_, j) => message(i + j));
    await engine.ingestBatch({ sessionId: "s", sessionKey: "k", messages: batch });
  }
  return n / ((performance.now() - started) / 1000);
}

async function perTurn(engine, history, turns = 30) {
  const times = [];
  for (let t = 0; t < turns; t++) {
    const turn = [message(history.length), message(history.length + 1)];
    const started = performance.now();
    await engine.assemble({ sessionId: "s", sessionKey: "k", messages: history, tokenBudget: 128_000 });
    await engine.commitTurn({ sessionId: "s", sessionKey: "k", advancementKey: `turn-${history.length}`, messages: turn });
    times.push(performance.now() - started);
    history.push(...turn);
  }
  return median(times);
}

console.log("lossless-wasm wasm benchmarks (Node " + process.versions.node + ")");
for (const n of sizes) {
  const memory = await openEngine({ SQL, wasm });
  const rate = await grow(memory, n);
  const history = Array.from({ length: n }, (_, i) => ({ ...message(i) }));
  const turnMemory = await perTurn(memory, history);
  const path = join(tmpdir(), `lossless-wasm-bench-${process.pid}-${n}.sqlite`);
  const durable = await openEngine({ SQL, wasm, save: (bytes) => writeFileAtomic(path, bytes) });
  await grow(durable, n);
  const turnDurable = await perTurn(durable, Array.from({ length: n }, (_, i) => ({ ...message(i) })), 10);
  const bytes = readFileSync(path).length;
  rmSync(path, { force: true });
  const json = history.slice(0, n).reduce((s, m) => s + JSON.stringify(m).length, 0);
  console.log(`${String(n).padStart(7)} msgs: ingest ${rate.toFixed(0)} msgs/s (in memory, batches of 100); ` +
    `per turn ${turnMemory.toFixed(2)} ms in memory, ${turnDurable.toFixed(2)} ms with atomic file save; ` +
    `db ${(bytes / n).toFixed(0)} B/msg = ${(bytes / json).toFixed(2)}x message JSON`);
}

const boot = await openEngine({ SQL, wasm });
const tenK = Array.from({ length: 10_000 }, (_, i) => message(i));
const started = performance.now();
const result = await boot.bootstrap({ sessionId: "b", sessionKey: "boot", messages: tenK });
console.log(`bootstrap import of ${result.importedMessages} messages: ${(performance.now() - started).toFixed(0)} ms`);
