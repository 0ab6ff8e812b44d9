// Persistence cost per turn in headless Chromium, at 1K / 10K / 100K stored messages, for the
// library's browser storage: the earlier whole-database save to IndexedDB after every write
// ("whole file", as openBrowserEngine did before the journal) against the journal
// (openBrowserEngine now), with an in-memory engine as the floor. One turn = commitTurn of a
// 2-message turn, including its persistence (the call resolves after the IndexedDB commit).
// Also: reopening (load + replay of the journal) and one checkpoint. Prints medians; asserts
// nothing. Usage (after bash scripts/build.sh):
//   node bench/browser-persistence.mjs [sizes...]      (default 1000 10000 100000)
import { startServerAndBrowser, stopServerAndBrowser } from "../tests/browser/chromium.mjs";

const sizes = process.argv.slice(2).map(Number).filter(Boolean);
if (sizes.length === 0) sizes.push(1_000, 10_000, 100_000);
const { server, browser } = await startServerAndBrowser();
const results = [];
// A fresh page per size: every engine of a size stays open until its page closes.
for (const size of sizes) {
const page = await browser.newPage();
page.on("crash", () => console.error("[page crashed]"));
page.on("console", (m) => m.type() !== "error" && console.error(`[page] ${m.text()}`));
await page.goto(`${server.url}/tests/browser/blank.html`);
await page.addScriptTag({ url: "/node_modules/sql.js/dist/sql-wasm.js" });
results.push(...(await page.evaluate(async (sizes) => {
  const { openEngine, openBrowserEngine } = await import("/dist/pkg/shim/library.js");
  const SQL = await globalThis.initSqlJs({ locateFile: (f) => `/node_modules/sql.js/dist/${f}` });
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const s = { sessionId: "s", sessionKey: "k" };
  let ts = 1_790_000_000_000;
  const message = (i) =>
    i % 2 === 0
      ? { role: "user", content: `user message ${i}: please look at file src/module_${i % 97}.rs and fix the failing test`, timestamp: ts++ }
      : { role: "assistant", content: [{ type: "text", text: `Assistant reply ${i}. I read the file, changed two lines and the test passes now.` }], usage: { input: 1000, output: 40 }, timestamp: ts++ };
  const idb = (name) => new Promise((resolve, reject) => {
    const open = indexedDB.open(name, 1);
    open.onupgradeneeded = () => open.result.createObjectStore("databases");
    open.onsuccess = () => resolve(open.result);
    open.onerror = () => reject(open.error);
  });
  const deleteDb = (name) => new Promise((r) => { const q = indexedDB.deleteDatabase(name); q.onsuccess = q.onerror = q.onblocked = () => r(); });
  // The whole-file save exactly as openBrowserEngine did before the journal.
  const wholeFileSave = (db) => (bytes) => new Promise((resolve, reject) => {
    const tx = db.transaction("databases", "readwrite");
    tx.objectStore("databases").put(bytes, "k");
    tx.oncomplete = () => resolve();
    tx.onerror = () => reject(tx.error);
  });
  const turns = async (engine, n, from) => {
    const times = [];
    for (let t = 0; t < n; t++) {
      const i = from + 2 * t;
      const t0 = performance.now();
      await engine.commitTurn({ ...s, advancementKey: `turn-${i}`, messages: [message(i), message(i + 1)] });
      times.push(performance.now() - t0);
    }
    return times;
  };

  const out = [];
  let latest;
  const grower = await openEngine({ SQL, save: (b) => { latest = b; } });
  let stored = 0;
  for (const n of sizes) {
    while (stored < n) {
      const batch = Array.from({ length: Math.min(1000, n - stored) }, (_, j) => message(stored + j));
      await grower.ingestBatch({ ...s, messages: batch });
      stored += batch.length;
    }
    const bytes = latest;
    console.log(`grown to ${n}, ${bytes.length} bytes`);
    const row = { n, dbBytes: bytes.length };
    // Floor: the same turns with no persistence at all.
    const memory = await openEngine({ SQL, bytes });
    row.memory = median(await turns(memory, 20, n));
    // Before: the whole database to IndexedDB after every write.
    await deleteDb("bench-whole");
    const whole = await idb("bench-whole");
    const before = await openEngine({ SQL, bytes, save: wholeFileSave(whole) });
    row.wholeFile = median(await turns(before, 20, n));
    whole.close();
    // After: the journal. Seed the store with the snapshot, open, run turns.
    await deleteDb("bench-journal");
    const { openIndexedDbStore } = await import("/dist/pkg/shim/browser/indexeddb-store.js");
    const seed = await openIndexedDbStore("bench-journal");
    let t0 = performance.now();
    await seed.checkpoint("k", bytes);
    row.checkpoint = performance.now() - t0;
    seed.close();
    t0 = performance.now();
    const journaled = await openBrowserEngine({ SQL, idbName: "bench-journal", key: "k" });
    row.openSnapshot = performance.now() - t0;
    row.journal = median(await turns(journaled, 20, n));
    const more = await turns(journaled, 80, n + 40);
    row.journalP95 = [...more].sort((a, b) => a - b)[Math.floor(more.length * 0.95)];
    // Reopen with 100 journaled turns to replay, once the writer has let go of the key (a second
    // writer on it would wait for the first's write lock, then fail).
    await journaled.close();
    t0 = performance.now();
    const reopened = await openBrowserEngine({ SQL, idbName: "bench-journal", key: "k" });
    row.reopenWith100 = performance.now() - t0;
    row.reopenedMessages = (await reopened.describe(s)).messageCount;
    console.log(JSON.stringify(row));
    out.push(row);
  }
  return out;
}, [size])));
await page.close();
}
const ms = (x) => `${x.toFixed(1)} ms`;
console.log(`browser persistence, Chromium ${browser.version()}, ${new Date().toISOString().slice(0, 10)} (medians of 20 turns; commitTurn of 2 messages incl. persistence)`);
for (const r of results) {
  console.log(`${String(r.n).padStart(7)} msgs (${(r.dbBytes / 1048576).toFixed(1)} MiB): memory ${ms(r.memory)} | whole file ${ms(r.wholeFile)} | journal ${ms(r.journal)} (p95 of 80: ${ms(r.journalP95)}) | open snapshot ${ms(r.openSnapshot)}, reopen + replay 100 turns ${ms(r.reopenWith100)} (${r.reopenedMessages} msgs) | one checkpoint write ${ms(r.checkpoint)}`);
}
await stopServerAndBrowser({ server, browser });
