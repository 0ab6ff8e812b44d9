// The built package in headless Chromium: the library entry on sql.js, persisting to IndexedDB,
// survives a page reload with every message and stays idempotent.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { startServerAndBrowser, stopServerAndBrowser } from "./chromium.mjs";

let server;
let browser;

before(async () => ({ server, browser } = await startServerAndBrowser()));
after(() => stopServerAndBrowser({ server, browser }));

/** Opens the engine in the page (fresh module state) and runs `steps` against it. */
async function inPage(page, steps) {
  await page.goto(`${server.url}/tests/browser/blank.html`);
  await page.addScriptTag({ url: "/node_modules/sql.js/dist/sql-wasm.js" });
  return page.evaluate(async (stepsSource) => {
    const { openBrowserEngine } = await import("/dist/pkg/shim/library.js");
    const SQL = await globalThis.initSqlJs({ locateFile: (f) => `/node_modules/sql.js/dist/${f}` });
    const engine = await openBrowserEngine({ SQL, idbName: "lossless-wasm-test", key: "chat-1" });
    return new Function("engine", `return (async () => { ${stepsSource} })();`)(engine);
  }, steps);
}

test("a browser engine persists to IndexedDB and survives a reload", async () => {
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  const first = await inPage(page, `
    const statuses = [];
    for (let i = 0; i < 3; i++) {
      const r = await engine.commitTurn({ sessionId: "s", sessionKey: "chat", advancementKey: "t" + i, messages: [
        { role: "user", content: "browser question " + i + " 静默", timestamp: 100 + i * 2 },
        { role: "assistant", content: [{ type: "text", text: "browser answer " + i }], timestamp: 101 + i * 2 } ] });
      statuses.push(r.status);
    }
    const view = await engine.assemble({ sessionId: "s", sessionKey: "chat", messages: [], tokenBudget: 1000 });
    return { statuses, count: view.messages.length, marker: view.systemPromptAddition.slice(0, 15) };
  `);
  assert.deepEqual(first, { statuses: ["committed", "committed", "committed"], count: 6, marker: "[lossless-wasm]" });

  await page.reload();
  const second = await inPage(page, `
    const retry = await engine.commitTurn({ sessionId: "s", sessionKey: "chat", advancementKey: "t1", messages: [] });
    const view = await engine.assemble({ sessionId: "s", sessionKey: "chat", messages: [], tokenBudget: 1000 });
    return { retry: retry.status, texts: view.messages.map((m) => typeof m.content === "string" ? m.content : m.content[0].text) };
  `);
  assert.equal(second.retry, "duplicate");
  assert.deepEqual(second.texts, [0, 1, 2].flatMap((i) => [`browser question ${i} 静默`, `browser answer ${i}`]));
  assert.deepEqual(errors, []);
});

test("bad input in the browser is an Error naming the field, not a crashed engine", async () => {
  const page = await browser.newPage();
  const result = await inPage(page, `
    let message;
    try { await engine.ingest({ sessionId: "s", sessionKey: "bad", message: { role: "user", content: [{ type: "hologram" }] } }); }
    catch (e) { message = e.message; }
    const ok = await engine.ingest({ sessionId: "s", sessionKey: "bad", message: { role: "user", content: "still alive", timestamp: 1 } });
    return { message, ok };
  `);
  assert.match(result.message, /messages\[0\]\.content\[0\]\.type/);
  assert.deepEqual(result.ok, { ingested: true });
});
