// The context explorer's gateway route, as the plugin registers it, over a real store on both
// storage drivers: it registers with `auth: "gateway"` (never its own auth or port) plus a
// Control UI tab; it answers only inside the agent scope a request names; it is read-only; and a
// repair runs only with the confirmation phrase, after a backup of the database. The page is one
// document with everything inline, and a request from origin null (the Control UI's sandboxed
// frame) gets a readable answer only with the capability minted into that page.
// (The gateway's own auth is exercised end to end in tests/e2e/explorer.e2e.test.mjs.)
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { describe, test } from "node:test";
import { writeLosslessClawDb } from "../lcm-fixture.mjs";
import { loadPlugin, query, STORAGES, tempDir } from "../support.mjs";

/** Registers the plugin with a minimal host that records what the explorer registers. */
async function register(dbPath, storage) {
  const plugin = await loadPlugin();
  const got = { routes: [], tabs: [], commands: [] };
  plugin.register({
    registrationMode: "full",
    pluginConfig: { dbPath, storage, summarizer: "host" },
    // The host's LLM a repair uses (the fixture's messages are too short to shrink extractively).
    runtime: { llm: { complete: async () => ({ text: "## Goal\n- rel-7 freeze Thursday", model: "mock" }) } },
    registerHttpRoute: (r) => got.routes.push(r),
    session: { controls: { registerControlUiDescriptor: (d) => got.tabs.push(d) } },
    registerCommand: (c) => got.commands.push(c),
    registerTool() {},
    registerContextEngine() {},
    on() {},
  });
  return got;
}

/** Serves the captured route handlers on 127.0.0.1 for the test (the gateway's job in the host). */
async function serve(t, routes) {
  const server = createServer(async (req, res) => {
    for (const route of routes) if (await route.handler(req, res)) return;
    res.writeHead(404).end();
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  t.after(() => server.close());
  return `http://127.0.0.1:${server.address().port}`;
}

for (const storage of STORAGES) describe(`explorer route (${storage})`, () => {
  test("registers a gateway-auth route and a Control UI tab framing it", async () => {
    const got = await register(join(tempDir("explorer"), "db.sqlite"), storage);
    assert.equal(got.routes.length, 2);
    const [route, frameApi] = got.routes;
    assert.equal(route.auth, "gateway", "the gateway's own authentication guards the explorer");
    assert.equal(route.match, "prefix");
    assert.equal(route.path, "/plugins/lossless-wasm/explorer");
    assert.equal(frameApi.path, "/plugins/lossless-wasm/explorer-api", "the page's own read API, beside the page");
    assert.equal(frameApi.auth, "plugin", "it checks the page's capability itself");
    assert.equal(got.tabs.length, 1);
    assert.equal(got.tabs[0].surface, "tab");
    assert.equal(got.tabs[0].path, "/plugins/lossless-wasm/explorer/");
    assert.deepEqual(got.tabs[0].requiredScopes, ["operator.read"]);
  });

  test("no tab on a host that frames tabs without the gateway's credential (2026.7.1)", async () => {
    const plugin = await loadPlugin();
    const tabs = [];
    const routes = [];
    plugin.register({
      registrationMode: "full",
      pluginConfig: { dbPath: join(tempDir("explorer"), "db.sqlite"), storage },
      runtime: { version: "2026.7.1" },
      registerHttpRoute: (r) => routes.push(r),
      session: { controls: { registerControlUiDescriptor: (d) => tabs.push(d) } },
      registerCommand() {},
      registerTool() {},
      registerContextEngine() {},
      on() {},
    });
    assert.equal(routes.length, 2, "the page is still served");
    assert.deepEqual(tabs, []);
    const { hostAuthenticatesTabFrames } = await import("../../../dist/pkg/shim/explorer/registration.js");
    assert.deepEqual(["2026.7.1", "2026.8.1", "2026.8.2", "2026.9.6", "2027.1.1", undefined].map(hostAuthenticatesTabFrames), [false, false, true, true, true, true]);
  });

  test("serves one self-contained page that reads its API only with the capability minted into it", async (t) => {
    const dir = tempDir("explorer");
    const got = await register(join(dir, "db.sqlite"), storage);
    const base = `${await serve(t, got.routes)}/plugins/lossless-wasm/explorer/`;
    const page = await fetch(`${base}?agent=main`);
    assert.equal(page.status, 200);
    const html = await page.text();
    // Everything the page needs arrives with its navigation: nothing loaded by URL.
    assert.match(html, /<style>[^]*--fallback[^]*<\/style>/, "the styles are inline");
    assert.match(html, /<script type="importmap">\{"imports":\{"\.\/dag\.js":"data:text\/javascript;base64,/, "dag.js arrives as a data: URL");
    assert.match(html, /<script type="module">[^]*renderDag[^]*<\/script>/, "app.js is inline");
    assert.ok(!/(src|href)="(app\.js|dag\.js|style\.css)"/.test(html), "no script or style by URL");
    assert.equal((await fetch(`${base}app.js`)).status, 404, "the parts are not served on their own");
    const capability = /<meta name="explorer-capability" content="([^"]+)">/.exec(html)?.[1];
    assert.ok(capability, "the page carries its capability");
    assert.ok(!html.includes("Bearer ey") && !/token=/.test(html), "no credential of the gateway in the page");

    // The page's reads go to the sibling route, as the sandboxed frame (origin null) sends them.
    const frameApi = base.replace(/explorer\/$/, "explorer-api/");
    const fromFrame = (path, cap) => fetch(frameApi + path, { headers: { origin: "null", ...(cap ? { accept: `application/json; explorer-capability=${cap}` } : {}) } });
    const bare = await fromFrame("conversations?agent=main");
    assert.equal(bare.status, 401, "without the page's capability nothing is served");
    assert.ok(!(await bare.text()).includes("conversations"), "and nothing of the store");
    const read = await fromFrame("conversations?agent=main", capability);
    assert.equal(read.status, 200, await read.clone().text());
    assert.equal(read.headers.get("access-control-allow-origin"), "null", "readable from the sandboxed frame");
    assert.equal(read.headers.get("access-control-allow-credentials"), null, "no credentials involved");
    assert.deepEqual((await read.json()).conversations, []);
    assert.equal((await fromFrame("conversations?agent=other", capability)).status, 401, "main's page cannot read agent other");
    assert.equal((await fromFrame("conversations?agent=main", `${capability.split(".")[0]}.${"A".repeat(32)}`)).status, 401, "a forged capability is refused");
    assert.equal((await fromFrame("dag?agent=main&conversation=999", capability)).status, 404);
    const write = await fetch(`${frameApi}repair?agent=main`, { method: "POST", headers: { origin: "null", accept: `application/json; explorer-capability=${capability}` }, body: "{}" });
    assert.equal(write.status, 405, "no write through the page's API");
    assert.equal((await fetch(`${frameApi}conversations?agent=main&explorer-capability=${capability}`)).status, 401, "a capability in the URL is not read");

    const { checkCapability, mintCapability, CAPABILITY_TTL_MS } = await import("../../../dist/pkg/shim/explorer/capability.js");
    // A page past its capability's lifetime is told so, readably, and reloads itself.
    const expired = await fromFrame("conversations?agent=main", mintCapability("main", Date.now() - CAPABILITY_TTL_MS - 1));
    assert.equal(expired.status, 401);
    assert.equal(expired.headers.get("access-control-allow-origin"), "null");
    assert.match((await expired.json()).error, /capability expired/);
    const minted = mintCapability("main", 1_000);
    assert.equal(checkCapability(minted, "main", 1_000 + CAPABILITY_TTL_MS - 1), "valid");
    assert.equal(checkCapability(minted, "main", 1_000 + CAPABILITY_TTL_MS), "expired");
    assert.equal(checkCapability(minted, "other", 1_000), "invalid");
    assert.equal(checkCapability(undefined, "main"), "invalid");
  });

  test("answers only inside the agent scope, read-only, and repairs only when confirmed, after a backup", async (t) => {
    const dir = tempDir("explorer");
    const dbPath = join(dir, "db.sqlite");
    const got = await register(dbPath, storage);
    const lcm = got.commands.find((c) => c.name === "lcm");
    for (const key of ["agent:main:imported", "agent:other:imported"]) {
      const src = join(dir, `${key.split(":")[1]}.lcm.db`);
      await writeLosslessClawDb(src, key);
      if (key.includes("other")) {
        // The import recognizes what it imported before; give the other agent's copy its own ids.
        const db = new (process.getBuiltinModule("node:sqlite").DatabaseSync)(src);
        db.exec("UPDATE conversations SET session_id = 'sess-other'; UPDATE messages SET content = 'other agent: ' || content; UPDATE summaries SET content = 'other agent: ' || content, summary_id = 'sum_fedcba9876543210'; " +
          "UPDATE summary_messages SET summary_id = 'sum_fedcba9876543210'; UPDATE context_items SET summary_id = 'sum_fedcba9876543210' WHERE summary_id IS NOT NULL");
        db.close();
      }
      const { text } = await lcm.handler({ args: `import ${src}` });
      assert.match(text, /1 new conversation/, text);
    }
    const base = `${await serve(t, got.routes)}/plugins/lossless-wasm/explorer/`;
    const get = async (path) => {
      const res = await fetch(base + path);
      return { status: res.status, body: await res.json() };
    };

    const page = await fetch(base);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /Context explorer/);
    assert.equal((await fetch(`${base}../explorer?agent=main`, { redirect: "manual" })).status, 308, "the bare path redirects to the page");

    const main = await get("api/conversations?agent=main");
    assert.equal(main.status, 200);
    assert.deepEqual(main.body.conversations.map((c) => c.sessionKey), ["agent:main:imported"]);
    const [conv] = main.body.conversations;
    assert.equal(conv.fallbackSummaries, 1, "the imported truncation summary is a fallback");
    const other = (await get("api/conversations?agent=other")).body.conversations[0];
    assert.equal(other.sessionKey, "agent:other:imported");

    const dag = await get(`api/dag?agent=main&conversation=${conv.id}`);
    assert.equal(dag.status, 200);
    assert.equal(dag.body.summaries.length, 1);
    assert.equal(dag.body.summaries[0].level, "fallback");
    const sid = dag.body.summaries[0].id;
    const expanded = await get(`api/expand?agent=main&summary=${sid}&messages=1`);
    assert.deepEqual(expanded.body.items.map((i) => i.message.content), ["The release train leaves on Thursday; freeze branch rel-7 at noon.", "Noted: freeze rel-7 Thursday noon."]);

    // Another agent's ids are "not found" in main's scope, like ids that do not exist.
    const otherSummary = (await get(`api/dag?agent=other&conversation=${other.id}`)).body.summaries[0].id;
    for (const path of [`api/dag?agent=main&conversation=${other.id}`, `api/summary?agent=main&summary=${otherSummary}`, `api/expand?agent=main&summary=${otherSummary}&messages=1`, `api/repair-plan?agent=main&conversation=${other.id}`]) {
      const res = await get(path);
      assert.equal(res.status, 404, `${path}: ${JSON.stringify(res.body)}`);
      assert.ok(!JSON.stringify(res.body).includes("release train"), "nothing of the other agent leaks");
    }
    assert.equal((await get("api/conversations")).status, 400, "no scope, no answer");
    assert.equal((await get("api/conversations?agent=main%3Aother")).status, 400, "an agent id that could widen the prefix is refused");
    assert.equal((await fetch(`${base}api/dag?agent=main&conversation=${conv.id}`, { method: "POST" })).status, 405);

    const plan = await get(`api/repair-plan?agent=main&conversation=${conv.id}`);
    assert.deepEqual(plan.body.planned.map((p) => p.id), [sid]);
    assert.equal(plan.body.confirmPhrase, `repair conversation ${conv.id}`);
    const repair = (body) => fetch(`${base}api/repair`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    const unconfirmed = await repair({ agent: "main", conversation: conv.id, confirm: "yes" });
    assert.equal(unconfirmed.status, 409);
    assert.equal((await repair({ agent: "main", conversation: other.id, confirm: `repair conversation ${other.id}` })).status, 404, "no repair across agents");
    const levels = async () => (await query(dbPath, "SELECT s.level FROM summaries s JOIN conversations c ON c.id = s.conversation_id ORDER BY c.session_key")).map((r) => r[0]);
    assert.deepEqual(await levels(), ["fallback", "fallback"], "refused repairs changed nothing");

    const done = await repair({ agent: "main", conversation: conv.id, confirm: `repair conversation ${conv.id}` });
    const report = await done.json();
    assert.equal(done.status, 200, JSON.stringify(report));
    assert.deepEqual(report.repaired, [sid], JSON.stringify(report));
    assert.ok(existsSync(report.backup), `the backup exists: ${report.backup}`);
    assert.deepEqual((await query(report.backup, "SELECT level FROM summaries ORDER BY id")).map((r) => r[0]), ["fallback", "fallback"], "the backup holds the state before the repair");
    assert.deepEqual(await levels(), ["normal", "fallback"], "main's fallback was redone, other's left alone");
  });
});
