// openBrowserEngineInWorker in headless Chromium: the engine runs in a dedicated worker (its
// wasm calls and IndexedDB writes off the page's main thread), holds the store's write lock
// there, sends summary requests back to the page's LLM, and leaves a store the page's own
// openBrowserEngine opens with every turn once the worker's engine is closed.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { startServerAndBrowser, stopServerAndBrowser } from "./chromium.mjs";

let server;
let browser;

before(async () => ({ server, browser } = await startServerAndBrowser()));
after(() => stopServerAndBrowser({ server, browser }));

test("an engine in a worker writes, compacts through the page's LLM, holds the key, and closes", async () => {
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(`${server.url}/tests/browser/blank.html`);
  await page.addScriptTag({ url: "/node_modules/sql.js/dist/sql-wasm.js" });
  const out = await page.evaluate(async () => {
    const lib = await import("/dist/pkg/shim/library.js");
    const SQL = await globalThis.initSqlJs({ locateFile: (f) => `/node_modules/sql.js/dist/${f}` });
    const requests = [];
    const llm = {
      async complete(request) {
        requests.push(request.purpose);
        return { text: `page summary of ${request.messages[0].content.length} chars` };
      },
    };
    const s = { sessionId: "s", sessionKey: "chat" };
    const engine = await lib.openBrowserEngineInWorker({ sqlJsUrl: "/node_modules/sql.js/dist/sql-wasm.js", idbName: "worker-test", key: "chat", llm, config: { summarizer: "auto", freshTailCount: 4, leafChunkTokens: 400 } });
    const statuses = [];
    for (let i = 0; i < 30; i++) {
      const r = await engine.commitTurn({ ...s, advancementKey: `w-${i}`, messages: [
        { role: "user", content: `worker question ${i} ${"lorem ipsum ".repeat(20)}`, timestamp: 10 * i },
        { role: "assistant", content: [{ type: "text", text: `worker answer ${i}` }], timestamp: 10 * i + 1 },
      ] });
      statuses.push(r.status);
    }
    let busy;
    try {
      await lib.openBrowserEngine({ SQL, idbName: "worker-test", key: "chat", lockTimeoutMs: 0 });
    } catch (e) {
      busy = e.message;
    }
    // The same refusal thrown in a second worker crosses to the page as its class (errors.js).
    let busyInWorker;
    try {
      await lib.openBrowserEngineInWorker({ sqlJsUrl: "/node_modules/sql.js/dist/sql-wasm.js", idbName: "worker-test", key: "chat", lockTimeoutMs: 0 });
    } catch (e) {
      const { StoreBusyError } = await import("/dist/pkg/shim/errors.js");
      busyInWorker = { isClass: e instanceof StoreBusyError, name: e.name, code: e.code, message: e.message, stack: e.stack };
    }
    const compacted = await engine.compact({ ...s, force: true, tokenBudget: 2000 });
    const described = await engine.describe(s);
    const hits = await engine.search({ ...s, pattern: "worker answer 7", scope: "all" });
    let badInput;
    try {
      await engine.ingest({ ...s, message: { role: "user", content: [{ type: "hologram" }] } });
    } catch (e) {
      badInput = e.message;
    }
    await engine.close();
    await engine.close();
    let afterClose;
    try {
      await engine.search({ ...s, pattern: "x" });
    } catch (e) {
      afterClose = e.message;
    }
    const reopened = await lib.openBrowserEngine({ SQL, idbName: "worker-test", key: "chat", lockTimeoutMs: 0 });
    const count = (await reopened.describe(s)).messageCount;
    const summaries = (await reopened.describe(s)).summaries.length;
    await reopened.close();
    return { statuses, busy, busyInWorker, compacted: compacted.compacted, requests, summaries, stored: described.messageCount, hits: hits.length, badInput, afterClose, count, info: engine.info.id };
  });
  assert.equal(out.statuses.filter((s) => s === "committed").length, 30);
  assert.match(out.busy, /open for writing in another tab or worker of this origin/);
  assert.ok(out.busyInWorker, "a second engine in a worker opened a key another one holds");
  assert.equal(out.busyInWorker.isClass, true, JSON.stringify(out.busyInWorker));
  assert.equal(out.busyInWorker.name, "StoreBusyError");
  assert.equal(out.busyInWorker.code, "LOSSLESS_STORE_BUSY");
  assert.match(out.busyInWorker.message, /open for writing in another tab or worker of this origin/);
  assert.match(out.busyInWorker.stack, /\(thrown in the engine's worker, rebuilt here\)$/);
  assert.ok(out.requests.length > 0, "the worker's compaction asked the page's LLM");
  assert.equal(out.compacted, true);
  assert.ok(out.summaries > 0, "the summaries are stored");
  assert.equal(out.stored, 60);
  assert.equal(out.hits, 1);
  assert.match(out.badInput, /messages\[0\]\.content\[0\]\.type/);
  assert.match(out.afterClose, /search\(\) called after close\(\)/);
  assert.equal(out.count, 60, "the page's own engine opens the worker's store with every turn");
  assert.equal(out.info, "lossless-wasm");
  assert.deepEqual(errors, []);
});
