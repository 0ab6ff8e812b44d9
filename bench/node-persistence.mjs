// Persistence cost per turn for the Node sql.js fallback at 1K / 10K / 100K stored messages:
// the atomic whole-file save after every write (file-store.js, today's driver) against the
// statement journal on files (journal-file.js), with an in-memory engine as the floor. One
// turn = commitTurn of a 2-message turn including its durable save (fsync). Also: reopening
// with 100 journaled turns to replay. Prints medians; asserts nothing. Usage (after
// bash scripts/build.sh): node bench/node-persistence.mjs [sizes...]
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";

const pkg = new URL("../dist/pkg/", import.meta.url);
const { initSync } = await import(new URL("wasm/lossless_wasm.js", pkg));
const { createHandle } = await import(new URL("shim/engine-handle.js", pkg));
const { createContextEngine } = await import(new URL("shim/context-engine.js", pkg));
const { writeFileAtomic } = await import(new URL("shim/file-store.js", pkg));
const { openJournaledFile } = await import(new URL("shim/journal-file.js", pkg));
initSync({ module: readFileSync(new URL("wasm/lossless_wasm_bg.wasm", pkg)) });
const SQL = await createRequire(import.meta.url)("sql.js")();
const sizes = process.argv.slice(2).map(Number).filter(Boolean);
if (sizes.length === 0) sizes.push(1_000, 10_000, 100_000);
const dir = mkdtempSync(join(tmpdir(), "lossless-wasm-persist-"));
const s = { sessionId: "s", sessionKey: "k" };
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const p95 = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.95)];
let ts = 1_790_000_000_000;
const message = (i) =>
  i % 2 === 0
    ? { role: "user", content: `user message ${i}: please look at file src/module_${i % 97}.rs and fix the failing test`, timestamp: ts++ }
    : { role: "assistant", content: [{ type: "text", text: `Assistant reply ${i}. I read the file, changed two lines and the test passes now.` }], usage: { input: 1000, output: 40 }, timestamp: ts++ };
const engineOn = (options) => createContextEngine(async () => handleOf(options));
const handles = new WeakMap();
function handleOf(options) {
  if (!handles.has(options)) handles.set(options, createHandle(options));
  return handles.get(options);
}
async function turns(engine, n, from) {
  const times = [];
  for (let t = 0; t < n; t++) {
    const i = from + 2 * t;
    const t0 = performance.now();
    await engine.commitTurn({ ...s, advancementKey: `turn-${i}`, messages: [message(i), message(i + 1)] });
    times.push(performance.now() - t0);
  }
  return times;
}

let latest;
const grower = engineOn({ db: new SQL.Database(), save: (b) => { latest = b; } });
let stored = 0;
console.log(`Node sql.js fallback persistence, Node ${process.versions.node}, ${new Date().toISOString().slice(0, 10)} (medians of 20 turns; commitTurn of 2 messages incl. the durable save)`);
for (const n of sizes) {
  while (stored < n) {
    const batch = Array.from({ length: Math.min(1000, n - stored) }, (_, j) => message(stored + j));
    await grower.ingestBatch({ ...s, messages: batch });
    stored += batch.length;
  }
  const bytes = latest;
  const memory = median(await turns(engineOn({ db: new SQL.Database(bytes) }), 20, n));
  const wholePath = join(dir, `whole-${n}.sqlite`);
  const whole = median(await turns(engineOn({ db: new SQL.Database(bytes), save: (b) => writeFileAtomic(wholePath, b) }), 20, n));
  const journalPathN = join(dir, `journal-${n}.sqlite`);
  writeFileSync(journalPathN, bytes);
  const file = openJournaledFile(SQL, journalPathN);
  const journaled = engineOn({ db: file.db, persist: file.persist });
  const jt = await turns(journaled, 100, n);
  file.close();
  const t0 = performance.now();
  const reopened = openJournaledFile(SQL, journalPathN);
  const reopen = performance.now() - t0;
  reopened.close();
  const ms = (x) => `${x.toFixed(1)} ms`;
  console.log(`${String(n).padStart(7)} msgs (${(bytes.length / 1048576).toFixed(1)} MiB): memory ${ms(memory)} | whole file ${ms(whole)} | journal ${ms(median(jt.slice(0, 20)))} (p95 of 100: ${ms(p95(jt))}) | reopen + replay 100 turns ${ms(reopen)}`);
}
rmSync(dir, { recursive: true, force: true });
