// The demo page (demo/web) in headless Chromium, on the built package: replays turns, draws one
// DAG node per summary the engine reports, expands a node down to original text that was
// summarized away, finds a marker by search, and comes back unchanged after a reload. Saves a
// screenshot to target/browser/demo-page.png (docs/demo-page.png is a checked-in copy).
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { after, before, test } from "node:test";
import { startServerAndBrowser, stopServerAndBrowser } from "./chromium.mjs";

const TURNS = 40;
// The first user message of the bundled transcript; nothing else contains this text.
const MARKER = "(request 1)";
const FIRST_MESSAGE = "Add support for trailing commas in arrays (request 1)";
let server;
let browser;

before(async () => ({ server, browser } = await startServerAndBrowser()));
after(() => stopServerAndBrowser({ server, browser }));

/** What the engine behind the page reports, read through the page's own engine. */
const engineState = (page) =>
  page.evaluate(async () => {
    const { engine, session } = window.lcmDemo;
    const info = await engine.describe(session);
    const events = await engine.compactionEvents({ ...session, limit: 1000 });
    const view = await engine.assemble({ ...session, messages: [], tokenBudget: 6000 });
    const raw = JSON.parse(JSON.stringify(view.messages)).filter((m) => typeof m.content === "string").map((m) => m.content);
    return { summaryIds: info.summaries.map((s) => s.id), leaves: info.summaries.filter((s) => s.kind === "leaf").map((s) => s.id), messageCount: info.messageCount, events: events.length, rawUserTexts: raw };
  });

const drawnIds = (page) => page.$$eval("#dag .node", (nodes) => nodes.map((n) => Number(n.dataset.id)).sort((a, b) => a - b));

test("the demo page replays turns, draws the DAG, expands, searches, and survives a reload", async () => {
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
  const page = await context.newPage();
  const errors = [];
  page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(`${server.url}/demo/web/index.html`);
  await page.waitForSelector("body[data-ready='1']");
  assert.equal(await page.textContent("#turn"), "turn 0 / 75");
  // Styled: the colours come from the explorer's stylesheet in the package, the two-column
  // layout from the demo's own.
  const styled = await page.evaluate(() => ({
    normal: getComputedStyle(document.documentElement).getPropertyValue("--normal").trim(),
    columns: getComputedStyle(document.querySelector("main")).gridTemplateColumns.split(" ").length,
  }));
  assert.ok(styled.normal.length > 0, "the explorer's colours are defined");
  assert.equal(styled.columns, 2, "the demo's two-column layout");

  for (let i = 1; i <= TURNS; i++) {
    await page.click("#step");
    await page.waitForSelector(`body[data-turn='${i}']`);
  }
  assert.equal(await page.textContent("#turn"), `turn ${TURNS} / 75`);
  const state = await engineState(page);
  assert.ok(state.summaryIds.length >= 3, `${TURNS} turns under the demo config compact several times (${state.summaryIds.length} summaries)`);
  assert.deepEqual(await drawnIds(page), [...state.summaryIds].sort((a, b) => a - b), "one DAG node per summary the engine reports");
  assert.ok(state.events > 0);
  assert.equal(await page.locator("#events tbody tr").count(), state.events, "every compaction event is in the log");

  // The first message was summarized away: it is no longer raw in the view...
  assert.ok(!state.rawUserTexts.includes(FIRST_MESSAGE), "the first message is not raw in the view any more");
  // ...and clicking the summary that covers it brings the original text back.
  await page.click(`#dag .node[data-id='${Math.min(...state.leaves)}']`);
  await page.waitForSelector("#detail .originals .msg");
  const originals = await page.$$eval("#detail .originals .msg", (els) => els.map((e) => e.textContent));
  assert.ok(originals.some((t) => t.includes(FIRST_MESSAGE)), `expanded text: ${originals.slice(0, 2).join(" | ")}`);

  // Search finds the marker in the stored message; its result opens the message and names its summary.
  await page.fill("#search-input", MARKER);
  await page.click("#search-go");
  await page.waitForSelector("#results li[data-kind='message']");
  await page.click("#results li[data-kind='message']");
  await page.waitForSelector("#detail a");
  assert.match(await page.textContent("#detail"), /summarized in S\d+/);
  assert.ok((await page.textContent("#detail")).includes(FIRST_MESSAGE));

  mkdirSync("target/browser", { recursive: true });
  await page.click(`#dag .node[data-id='${Math.min(...state.leaves)}']`);
  await page.waitForSelector("#detail .originals .msg");
  await page.screenshot({ path: "target/browser/demo-page.png" });

  // Reload: the conversation comes back from IndexedDB, and the page resumes where it was.
  await page.reload();
  await page.waitForSelector("body[data-ready='1']");
  assert.equal(await page.textContent("#turn"), `turn ${TURNS} / 75`);
  const reloaded = await engineState(page);
  assert.deepEqual(reloaded, state, "the same messages, summaries and events after a reload");
  assert.deepEqual(await drawnIds(page), [...state.summaryIds].sort((a, b) => a - b));
  assert.equal(await page.locator("#events tbody tr").count(), state.events);

  // And the replay continues from there.
  await page.click("#step");
  await page.waitForSelector(`body[data-turn='${TURNS + 1}']`);
  assert.ok((await engineState(page)).messageCount > state.messageCount);
  assert.deepEqual(errors, [], "no console errors");
  await context.close();
});
