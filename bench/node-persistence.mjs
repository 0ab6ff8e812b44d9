// Persistence cost per turn for the Node sql.js fallback at 1K / 10K / 100K stored messages,
// through the product's own driver (openNodeEngine, storage "sql.js": the journal file), against
// the atomic whole-file save after every write that driver used before (the same createHandle +
// writeFileAtomic), with an in-memory engine as the floor. One turn = commitTurn of a 2-message
// turn including its durable save (fsync). Also: the journal bytes per turn, one checkpoint's
// cost and its share per turn (a checkpoint comes when the journal passes max(2 MiB, database /
// 16)), and reopening with 100 journaled turns to replay. Prints figures; asserts nothing.
// Usage (after bash scripts/build.sh): node bench/node-persistence.mjs [sizes...]
// LOSSLESS_PKG=<dir> runs it against another build of the package (e.g. main's, for "before").
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const pkg = process.env.LOSSLESS_PKG ? pathToFileURL(`${process.env.LOSSLESS_PKG.replace(/\/$/, "")}/`) : new URL("../dist/pkg/", import.meta.url);
const { initSync } = await import(new URL("wasm/lossless_wasm.js", pkg));
const { createHandle } = await import(new URL("shim/engine/handle.js", pkg));
const { createContextEngine } = await import(new URL("shim/engine/context-engine.js", pkg));
const { writeFileAtomic } = await import(new URL("shim/node/file-store.js", pkg));
const { openJournaledFile, journalPath } = await import(new URL("shim/node/journal-file.js", pkg));
const { openNodeEngine } = await import(new URL("shim/node/engine.js", pkg));
initSync({ module: readFileSync(new URL("wasm/lossless_wasm_bg.wasm", pkg)) });
const SQL = await createRequire(import.meta.url)("sql.js")();
const sizes = process.argv.slice(2).map(Number).filter(Boolean);
if (sizes.length === 0) sizes.push(1_000, 10_000, 100_000);
const dir = mkdtempSync(join(tmpdir(), "lossless-wasm-persist-"));
const s = { sessionId: "s", sessionKey: "k" };
const sorted = (xs) => [...xs].sort((a, b) => a - b);
const median = (xs) => sorted(xs)[Math.floor(xs.length / 2)];
const p95 = (xs) => sorted(xs)[Math.floor(xs.length * 0.95)];
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const size = (p) => { try { return statSync(p).size; } catch { return 0; } };
let ts = 1_790_000_000_000;
const message = (i) =>
  i % 2 === 0
    ? { role: "user", content: `user message ${i}: please look at file src/module_${i % 97}.rs and fix the failing test`, timestamp: ts++ }
    : { role: "assistant", content: [{ type: "text", text: `Assistant reply ${i}. I read the file, changed two lines and the test passes now.` }], usage: { input: 1000, output: 40 }, timestamp: ts++ };
const engineOn = (options) => {
  const handle = createHandle(options);
  return createContextEngine(async () => handle);
};
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
const ms = (x) => `${x.toFixed(1)} ms`;
console.log(`Node sql.js fallback persistence, Node ${process.versions.node}, ${new Date().toISOString().slice(0, 10)}, package ${pkg.pathname}`);
console.log("(driver: openNodeEngine storage sql.js, 100 turns; whole file: save after every write, 20 turns; memory: no persistence, 20 turns)");
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
  // The product's driver on a file holding the n messages.
  const driverPath = join(dir, `driver-${n}.sqlite`);
  writeFileSync(driverPath, bytes);
  const driver = createContextEngine(() => openNodeEngine(driverPath, { storage: "sql.js" }));
  await driver.assemble({ ...s, messages: [] });
  const journalBefore = size(journalPath(driverPath));
  const dt = await turns(driver, 100, n);
  const journalPerTurn = (size(journalPath(driverPath)) - journalBefore) / 100;
  let line = `${String(n).padStart(7)} msgs (${(bytes.length / 1048576).toFixed(1)} MiB): memory ${ms(memory)} | whole file ${ms(whole)} | driver ${ms(median(dt))} (p95 ${ms(p95(dt))}, mean ${ms(mean(dt))})`;
  if (journalPerTurn > 0) {
    // One checkpoint = export + atomic whole-file write; amortized over the turns between two.
    const t0 = performance.now();
    writeFileAtomic(join(dir, `checkpoint-${n}.sqlite`), new SQL.Database(bytes).export());
    const checkpoint = performance.now() - t0;
    const between = Math.max(2 << 20, bytes.length / 16) / journalPerTurn;
    const t1 = performance.now();
    const reopened = openJournaledFile(SQL, driverPath);
    const reopen = performance.now() - t1;
    reopened.close();
    line += ` | journal ${(journalPerTurn / 1024).toFixed(1)} KiB/turn, checkpoint ${ms(checkpoint)} every ~${Math.round(between)} turns (${(checkpoint / between).toFixed(2)} ms/turn) | reopen + replay 100 turns ${ms(reopen)}`;
  }
  console.log(line);
}
rmSync(dir, { recursive: true, force: true });
