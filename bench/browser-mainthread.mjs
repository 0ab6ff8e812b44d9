// How long the browser engine holds a tab's main thread: the longest task (PerformanceObserver
// "longtask", tasks over 50 ms; "none" when every task stayed under) and the wall time of each
// call, in headless Chromium, for openBrowserEngine on IndexedDB:
//   open + import of a long history (bootstrap of N messages on a new key), a turn, a forced
//   compaction, a search for a common word, and reopening (snapshot + a journal of 300 turns).
// With `--worker`, the same calls go through openBrowserEngineInWorker, so the page's own main
// thread is what is measured there too. Prints JSON rows; asserts nothing. Usage (after
// bash scripts/build.sh):   node bench/browser-mainthread.mjs [messages] [--worker]
import { startServerAndBrowser, stopServerAndBrowser } from "../tests/browser/chromium.mjs";

const args = process.argv.slice(2);
const size = Number(args.find((a) => /^\d+$/.test(a)) ?? 20_000);
const worker = args.includes("--worker");
const { server, browser } = await startServerAndBrowser();
const page = await browser.newPage();
page.on("console", (m) => console.error(`[page] ${m.text()}`));
await page.goto(`${server.url}/tests/browser/blank.html`);
await page.addScriptTag({ url: "/node_modules/sql.js/dist/sql-wasm.js" });
const rows = await page.evaluate(
  async ({ size, worker }) => {
    const lib = await import("/dist/pkg/shim/library.js");
    const SQL = await globalThis.initSqlJs({ locateFile: (f) => `/node_modules/sql.js/dist/${f}` });
    const tasks = [];
    new PerformanceObserver((list) => tasks.push(...list.getEntries())).observe({ type: "longtask", buffered: true });
    const open = (opts) =>
      worker
        ? lib.openBrowserEngineInWorker({ sqlJsUrl: "/node_modules/sql.js/dist/sql-wasm.js", idbName: "mainthread", key: "k", ...opts })
        : lib.openBrowserEngine({ SQL, idbName: "mainthread", key: "k", ...opts });
    const s = { sessionId: "s", sessionKey: "k" };
    let ts = 1_790_000_000_000;
    const message = (i) =>
      i % 2 === 0
        ? { role: "user", content: `user message ${i}: please look at file src/module_${i % 97}.rs and fix the failing test`, timestamp: ts++ }
        : { role: "assistant", content: [{ type: "text", text: `Assistant reply ${i}. I read the file, changed two lines and the test passes now.` }], usage: { input: 1000, output: 40 }, timestamp: ts++ };
    const rows = [];
    /** Runs `fn`, then reports its wall time and the longest task that overlapped it. */
    const measure = async (moment, fn) => {
      await new Promise((r) => setTimeout(r, 100));
      const start = performance.now();
      const out = await fn();
      const wall = performance.now() - start;
      // Long tasks are reported after they end; give the observer a moment.
      await new Promise((r) => setTimeout(r, 100));
      const overlapping = tasks.filter((t) => t.startTime + t.duration > start && t.startTime < start + wall);
      const longest = overlapping.reduce((m, t) => Math.max(m, t.duration), 0);
      rows.push({ moment, wallMs: Math.round(wall), longestTaskMs: longest ? Math.round(longest) : "none (<50)", longTasks: overlapping.length });
      return out;
    };
    await new Promise((r) => {
      const q = indexedDB.deleteDatabase("mainthread");
      q.onsuccess = q.onerror = q.onblocked = () => r();
    });
    const history = Array.from({ length: size }, (_, i) => message(i));
    let engine = await measure("open (new key)", () => open({ config: { summarizer: "extractive" } }));
    const boot = await measure(`bootstrap: import ${size} messages`, () => engine.bootstrap({ ...s, messages: history }));
    if (boot.importedMessages !== size) throw new Error(`bootstrap imported ${boot.importedMessages} of ${size}`);
    let n = size;
    const turn = () => engine.commitTurn({ ...s, advancementKey: `turn-${n}`, messages: [message(n++), message(n++)] });
    for (let i = 0; i < 5; i++) await measure("a turn", turn);
    await measure("forced compaction (extractive)", () => engine.compact({ ...s, force: true, tokenBudget: 20_000 }));
    await measure("search for a common word", () => engine.search({ ...s, pattern: "file", limit: 20 }));
    for (let i = 0; i < 300; i++) await turn();
    await engine.close();
    engine = await measure("reopen: snapshot + 300 journaled turns", () => open({ config: { summarizer: "extractive" } }));
    await measure("a turn after reopening", turn);
    await engine.close();
    return rows;
  },
  { size, worker },
);
const merged = new Map();
for (const row of rows) {
  const seen = merged.get(row.moment);
  if (!seen) merged.set(row.moment, { ...row, runs: 1 });
  else {
    seen.runs++;
    seen.wallMs = Math.max(seen.wallMs, row.wallMs);
    if (typeof row.longestTaskMs === "number") seen.longestTaskMs = Math.max(typeof seen.longestTaskMs === "number" ? seen.longestTaskMs : 0, row.longestTaskMs);
  }
}
console.log(JSON.stringify({ size, worker, chromium: browser.version(), rows: [...merged.values()] }, null, 1));
await stopServerAndBrowser({ server, browser });
