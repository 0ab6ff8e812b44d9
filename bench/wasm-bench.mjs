// Node benchmark harness for the wasm build (dist/pkg), per storage driver. Measures:
//  - ingest rate while a conversation grows to N messages (ingestBatch, 100 per call)
//  - per-turn overhead (assemble + commitTurn of a 2-message turn) at N stored messages, with the
//    host passing the whole history to assemble as OpenClaw does
//  - database bytes per message
//  - bootstrap import of 10K messages
// Drivers: sql.js in memory; sql.js with the plugin's atomic whole-file save after each write;
// node:sqlite on a WAL file (needs Node >= 22.5). Usage: node bench/wasm-bench.mjs [sizes...]
// (default 10000 100000). Prints medians; record results in docs/benchmarks.md. Asserts nothing.
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";

const require = createRequire(import.meta.url);
const pkg = new URL("../dist/pkg/", import.meta.url);
const { initSync } = await import(new URL("wasm/lossless_wasm.js", pkg));
const { createHandle } = await import(new URL("shim/engine/handle.js", pkg));
const { createContextEngine } = await import(new URL("shim/engine/context-engine.js", pkg));
const { writeFileAtomic } = await import(new URL("shim/node/file-store.js", pkg));
const { NodeSqliteDatabase, nodeSqliteAvailable } = await import(new URL("shim/node/sqlite.js", pkg));
initSync({ module: readFileSync(new URL("wasm/lossless_wasm_bg.wasm", pkg)) });
const SQL = await require("sql.js")();
const sizes = process.argv.slice(2).map(Number);
if (sizes.length === 0) sizes.push(10_000, 100_000);
const dir = mkdtempSync(join(tmpdir(), "lossless-wasm-bench-"));

let ts = 1_790_000_000_000;
const message = (i) =>
  i % 2 === 0
    ? { role: "user", content: `user message ${i}: please look at file src/module_${i % 97}.rs and fix the failing test`, timestamp: ts++ }
    : { role: "assistant", content: [{ type: "text", text: `Assistant reply ${i}. I read the file, changed two lines and the test passes now.` }], usage: { input: 1000, output: 40 }, timestamp: ts++ };
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const drivers = {
  "sql.js (memory)": () => ({ db: new SQL.Database() }),
  "sql.js (file, atomic save per write)": (path) => ({ db: new SQL.Database(), save: (bytes) => writeFileAtomic(path, bytes), path, saveLate: true }),
  ...(nodeSqliteAvailable() ? { "node:sqlite (WAL file)": (path) => ({ db: new NodeSqliteDatabase(path), path }) } : {}),
};

async function measure(name, open, n) {
  const path = join(dir, `${name.replace(/\W+/g, "_")}-${n}.sqlite`);
  const { db, save, saveLate } = open(path);
  // The file-backed sql.js driver saves the whole database after every write; growing to 100K
  // that way is quadratic, so it grows in memory and starts saving for the per-turn phase.
  let saving = !saveLate;
  const handle = createHandle({ db, save: save && ((bytes) => saving && save(bytes)) });
  const engine = createContextEngine(async () => handle);
  const history = [];
  const started = performance.now();
  for (let i = 0; i < n; i += 100) {
    const batch = Array.from({ length: Math.min(100, n - i) }, (_, j) => message(i + j));
    history.push(...batch);
    await engine.ingestBatch({ sessionId: "s", sessionKey: "k", messages: batch });
  }
  const rate = n / ((performance.now() - started) / 1000);
  saving = true;
  const times = [];
  for (let t = 0; t < 20; t++) {
    const turn = [message(history.length), message(history.length + 1)];
    const t0 = performance.now();
    await engine.assemble({ sessionId: "s", sessionKey: "k", messages: history, tokenBudget: 128_000 });
    await engine.commitTurn({ sessionId: "s", sessionKey: "k", advancementKey: `turn-${history.length}`, messages: turn });
    times.push(performance.now() - t0);
    history.push(...turn);
  }
  let bytes;
  if (db instanceof NodeSqliteDatabase) {
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    bytes = statSync(path).size;
  } else {
    bytes = db.export().length;
  }
  const json = history.reduce((s, m) => s + JSON.stringify(m).length, 0);
  return { rate, turn: median(times), bytesPerMessage: bytes / history.length, ratio: bytes / json };
}

console.log(`lossless-wasm wasm benchmarks (Node ${process.versions.node}, ${new Date().toISOString().slice(0, 10)})`);
for (const n of sizes) {
  for (const [name, open] of Object.entries(drivers)) {
    const r = await measure(name, open, n);
    const size = `, db ${r.bytesPerMessage.toFixed(0)} B/msg = ${r.ratio.toFixed(2)}x message JSON`;
    console.log(`${String(n).padStart(7)} msgs  ${name.padEnd(38)} ingest ${r.rate.toFixed(0).padStart(6)} msgs/s, per turn ${r.turn.toFixed(2).padStart(7)} ms${size}`);
  }
}
const boot = createContextEngine(async () => createHandle({ db: new SQL.Database() }));
const tenK = Array.from({ length: 10_000 }, (_, i) => message(i));
const started = performance.now();
const result = await boot.bootstrap({ sessionId: "b", sessionKey: "boot", messages: tenK });
console.log(`bootstrap import of ${result.importedMessages} messages (sql.js, memory): ${(performance.now() - started).toFixed(0)} ms`);
rmSync(dir, { recursive: true, force: true });
