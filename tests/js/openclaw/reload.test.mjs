// Hot reload of the plugin's config in a running gateway (issue 42 item 4). OpenClaw (2026.9.6,
// reload mode "hybrid") reloads plugins when `plugins.entries.<id>.config` changes: it requires the
// plugin's entry again — Node keeps the ES module and its state — and calls `register` with the
// new config; the old registration's engine instances are disposed as their turns end. Here: the
// same plugin module registered twice on one database, a turn of the old registration still
// running and disposed while the new registration's first turn opens the store. The new engine
// runs with the new config (a clamped value logs its warning, which only an engine opened with
// that config does), every message of both sides is stored once, and a call through the old
// registration afterwards neither fails nor brings the old config back.
import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, test } from "node:test";
import { createFakeHost } from "../fake-host.mjs";
import { assistant, loadPlugin, query, STORAGES, tempDir, user } from "../support.mjs";

const plugin = await loadPlugin();
const KEY = "agent:main:reload";

/** One registration of the plugin (the module loaded once, as the host keeps it). */
function register(pluginConfig, dir) {
  const h = createFakeHost({ pluginConfig, stateDir: dir });
  const factories = [];
  h.api.registerTool = (tool) => factories.push(tool);
  h.load(plugin);
  const tools = () => Object.fromEntries(factories.flatMap((f) => f({ sessionId: "s", sessionKey: KEY }) ?? []).map((t) => [t.name, t]));
  return { h, tools };
}

const fanoutWarnings = (h) => h.logs.filter(([level, m]) => level === "warn" && m.includes("condensedFanout"));

for (const storage of STORAGES) describe(`storage ${storage}`, () => {
  test("a config reload while a turn runs: the old instance disposes while the new one opens the store with the new config; nothing lost, nothing twice", { timeout: 120_000 }, async () => {
    const dir = tempDir("reload");
    const dbPath = join(dir, "db.sqlite");
    const before = register({ dbPath, storage, freshTailCount: 2 }, dir);
    const history = [];
    const turnOf = (i) => [user(`reload note ${i}: marker-${i}-end`), assistant(`noted ${i}`)];
    for (let i = 0; i < 4; i++) {
      const turn = turnOf(i);
      await before.h.runTurn("lossless-wasm", { sessionId: "s", sessionKey: KEY, history: [...history], turn });
      history.push(...turn);
    }
    // A turn of the old registration is running: it committed, its instance is not disposed yet.
    const old = await before.h.resolveEngine("lossless-wasm");
    const oldTurn = turnOf(4);
    await old.commitTurn({
      sessionId: "s", sessionKey: KEY, advancementKey: "old-4", messages: oldTurn,
      admission: { entryId: "u4" }, terminal: { entryId: "a4" }, runtimeContext: { provider: "fake", modelId: "fake" },
    });
    history.push(...oldTurn);

    // The config changes: the host registers the plugin again with it.
    const after = register({ dbPath, storage, freshTailCount: 2, condensedFanout: 500 }, dir);
    // The old instance disposes while the new registration's first turn opens the store.
    const newTurn = turnOf(5);
    const [disposed, ran] = await Promise.allSettled([
      old.dispose(),
      after.h.runTurn("lossless-wasm", { sessionId: "s", sessionKey: KEY, history: [...history], turn: newTurn }),
    ]);
    assert.equal(disposed.status, "fulfilled", String(disposed.reason));
    assert.equal(ran.status, "fulfilled", String(ran.reason?.stack ?? ran.reason));
    history.push(...newTurn);
    assert.deepEqual(fanoutWarnings(after.h).map(([, m]) => m), ["[lossless-wasm] config `condensedFanout`: 500 is out of range; using 64"], "the new engine was opened with the new config");

    // Both registrations keep working; neither reopens the other's config.
    for (let i = 6; i < 8; i++) {
      const side = i % 2 === 0 ? before : after;
      const turn = turnOf(i);
      await side.h.runTurn("lossless-wasm", { sessionId: "s", sessionKey: KEY, history: [...history], turn });
      history.push(...turn);
    }
    const grep = await before.tools().lcm_grep.execute("g", { pattern: "marker-5-end" });
    assert.equal(grep.details.hits.filter((x) => x.kind === "message").length, 1, grep.content[0].text);
    await after.h.resolveEngine("lossless-wasm").then((e) => e.dispose());
    assert.equal(fanoutWarnings(after.h).length, 1, "the engine with the new config stayed open (no reopen, no flip back)");
    assert.equal(fanoutWarnings(before.h).length, 0, "the old registration never reopened its config");

    const [[messages]] = await query(dbPath, "SELECT COUNT(*) FROM messages");
    assert.equal(messages, history.length, "every message of both registrations, once");
    for (let i = 0; i < 8; i++) {
      const [[n]] = await query(dbPath, `SELECT COUNT(*) FROM messages_text WHERE content LIKE '%marker-${i}-end%'`);
      assert.equal(n, 1, `marker ${i}`);
    }
  });
});
