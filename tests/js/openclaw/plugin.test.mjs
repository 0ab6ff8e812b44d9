// The plugin shim against a fake host that follows the real host's rules (fake-host.mjs), on the
// built package and real sql.js.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { createFakeHost } from "../fake-host.mjs";
import { assistant, loadPlugin, PKG, query, STORAGES, tempDir, user } from "../support.mjs";

const plugin = await loadPlugin();
const manifest = JSON.parse(readFileSync(new URL("openclaw.plugin.json", PKG), "utf8"));

for (const storage of STORAGES) describe(`storage ${storage}`, () => {
  function host(config = {}) {
    const dir = tempDir("host");
    const dbPath = join(dir, "db.sqlite");
    const h = createFakeHost({ pluginConfig: { dbPath, storage, ...config }, stateDir: dir });
    h.load(plugin);
    return { h, dbPath, dir };
  }

  test("register is synchronous and plugin id, engine id and info.id agree with the manifest", async () => {
    const { h } = host();
    assert.deepEqual([...h.engines.keys()], [manifest.id]);
    const engine = await h.resolveEngine(manifest.id);
    assert.equal(engine.info.id, manifest.id);
    assert.equal(plugin.id, manifest.id);
    assert.equal(manifest.kind, "context-engine");
    assert.equal(engine.info.ownsCompaction, true);
    assert.ok(engine.info.acceptedHostParams.includes("sessionKey"));
  });

  test("three durable turns store every message once and assemble serves them back", async () => {
    const { h, dbPath } = host();
    const history = [];
    for (let i = 0; i < 3; i++) {
      const turn = [user(`question ${i}`), assistant(`answer ${i}`)];
      const { view, commit } = await h.runTurn("lossless-wasm", { sessionId: "s1", sessionKey: "agent:main:a", history: [...history], turn });
      assert.equal(commit.status, "committed");
      assert.deepEqual(view.messages, history, "the view is exactly the history so far");
      assert.match(view.systemPromptAddition, /^\[lossless-wasm\]/);
      history.push(...turn);
    }
    const rows = await query(dbPath, "SELECT m.role, t.content FROM messages m JOIN messages_text t ON t.rowid = m.id ORDER BY m.seq");
    assert.deepEqual(rows, history.map((m) => [m.role, typeof m.content === "string" ? m.content : m.content[0].text]));
  });

  test("a retried commitTurn is a duplicate and stores nothing twice", async () => {
    const { h, dbPath } = host();
    const turn = [user("once"), assistant("only once")];
    const first = await h.runTurn("lossless-wasm", { sessionId: "s", sessionKey: "k", history: [], turn, advancementKey: "adv-1" });
    const retry = await h.runTurn("lossless-wasm", { sessionId: "s", sessionKey: "k", history: [], turn, advancementKey: "adv-1" });
    assert.equal(first.commit.status, "committed");
    assert.equal(retry.commit.status, "duplicate");
    assert.deepEqual(await query(dbPath, "SELECT COUNT(*) FROM messages"), [[2]]);
  });

  test("assemble keeps the view inside a small budget", async () => {
    const { h } = host();
    const engine = await h.resolveEngine("lossless-wasm");
    const long = Array.from({ length: 40 }, (_, i) => [user(`q${i} ${"words ".repeat(50)}`), assistant(`a${i}`)]).flat();
    await engine.ingestBatch({ sessionId: "s", sessionKey: "k", messages: long });
    const view = await engine.assemble({ sessionId: "s", sessionKey: "k", messages: long, tokenBudget: 500 });
    assert.ok(view.estimatedTokens <= 500, `estimated ${view.estimatedTokens}`);
    assert.ok(view.messages.length > 0 && view.messages.length < long.length);
    assert.deepEqual(view.messages.at(-1), long.at(-1));
  });

  test("ingest and ingestBatch report what was new", async () => {
    const { h } = host();
    const engine = await h.resolveEngine("lossless-wasm");
    const m = user("single");
    assert.deepEqual(await engine.ingest({ sessionId: "s", sessionKey: "k", message: m }), { ingested: true });
    assert.deepEqual(await engine.ingest({ sessionId: "s", sessionKey: "k", message: m }), { ingested: false });
    assert.deepEqual(await engine.ingestBatch({ sessionId: "s", sessionKey: "k", messages: [m, user("two")] }), { ingestedCount: 1 });
  });

  test("malformed messages are rejected with the field named and nothing stored", async () => {
    const { h, dbPath } = host();
    const engine = await h.resolveEngine("lossless-wasm");
    await assert.rejects(
      engine.commitTurn({ sessionId: "s", sessionKey: "k", advancementKey: "x", messages: [user("fine"), { role: "user", content: [{ type: "hologram" }] }] }),
      /messages\[1\]\.content\[0\]\.type/,
    );
    await assert.rejects(engine.ingest({ sessionId: "s", sessionKey: "k", message: { role: "oracle", content: "x" } }), /unknown role "oracle"/);
    assert.deepEqual(await query(dbPath, "SELECT COUNT(*) FROM messages"), [[0]]);
  });

  test("broken UTF-16 from the host is stored with U+FFFD, not an error", async () => {
    const { h, dbPath } = host();
    const engine = await h.resolveEngine("lossless-wasm");
    assert.deepEqual(await engine.ingest({ sessionId: "s", sessionKey: "k", message: { role: "user", content: "bad \uD800 half", timestamp: 1 } }), { ingested: true });
    assert.deepEqual(await query(dbPath, "SELECT content FROM messages_text"), [["bad \uFFFD half"]]);
  });

  test("an invalid config fails the factory with the key's name", async () => {
    const { h } = host({ defaultTokenBudget: "lots" });
    await assert.rejects(h.resolveEngine("lossless-wasm"), /defaultTokenBudget/);
  });

  test("a non-SQLite file at dbPath is refused and left untouched", async () => {
    const dir = tempDir("corrupt");
    const dbPath = join(dir, "notes.sqlite");
    writeFileSync(dbPath, "these are my notes, not a database ".repeat(10));
    const h = createFakeHost({ pluginConfig: { dbPath, storage }, stateDir: dir });
    h.load(plugin);
    await assert.rejects(h.resolveEngine("lossless-wasm"), /is not a SQLite database.*left unchanged/);
    assert.match(readFileSync(dbPath, "utf8"), /^these are my notes/);
  });

  test("a reset keeps the old conversation and starts a new one (before_reset hook and empty history)", async () => {
    const { h, dbPath } = host();
    const first = [user("before reset"), assistant("old reply")];
    await h.runTurn("lossless-wasm", { sessionId: "s", sessionKey: "agent:main:r", history: [], turn: first, advancementKey: "r1" });
    await h.fireHook("before_reset", { reason: "reset" }, { sessionId: "s", sessionKey: "agent:main:r" });
    const { view } = await h.runTurn("lossless-wasm", { sessionId: "s", sessionKey: "agent:main:r", history: [], turn: [user("after reset")], advancementKey: "r2" });
    assert.deepEqual(view.messages, [], "nothing from before the reset is shown");
    assert.deepEqual(await query(dbPath, "SELECT generation, status, archive_cause FROM conversations ORDER BY id"), [[1, "archived", "host-reset"], [2, "active", null]]);
    assert.deepEqual(await query(dbPath, "SELECT COUNT(*) FROM messages"), [[3]]);
    // 2026.9 without the hook: the host's visible history simply starts over.
    const next = [user("third generation")];
    const second = [user("after reset")];
    await h.runTurn("lossless-wasm", { sessionId: "s", sessionKey: "agent:main:r", history: second, turn: [assistant("x")], advancementKey: "r3" });
    const again = await h.runTurn("lossless-wasm", { sessionId: "s", sessionKey: "agent:main:r", history: [], turn: next, advancementKey: "r4", hasTranscript: true });
    assert.deepEqual(again.view.messages, []);
    assert.deepEqual(await query(dbPath, "SELECT COUNT(*) FROM conversations WHERE archive_cause = 'host-history-reset'"), [[1]]);
  });

  test("a session new to this host (no transcript, so no bootstrap) continues the stored conversation", async () => {
    // Another gateway sharing the store (PostgreSQL) stored two turns of the session; this host
    // has no transcript of it, so its history is empty and it calls no bootstrap: not a reset.
    const { h, dbPath } = host();
    const first = [user("told on the other gateway"), assistant("noted there")];
    await h.runTurn("lossless-wasm", { sessionId: "s", sessionKey: "agent:main:moved", history: [], turn: first, advancementKey: "m1" });
    const { view } = await h.runTurn("lossless-wasm", { sessionId: "s", sessionKey: "agent:main:moved", history: [], turn: [user("and here?")], advancementKey: "m2" });
    const shown = view.messages.map((m) => JSON.stringify(m.content));
    assert.equal(shown.length, 2, `the stored turn is shown: ${shown.join(" | ")}`);
    assert.ok(shown[0].includes("told on the other gateway") && shown[1].includes("noted there"), shown.join(" | "));
    assert.deepEqual(await query(dbPath, "SELECT generation, status FROM conversations ORDER BY id"), [[1, "active"]], "the conversation was not archived");
    assert.deepEqual(await query(dbPath, "SELECT COUNT(*) FROM messages"), [[3]]);
  });

  test("compact with nothing stored reports ok and not compacted", async () => {
    const { h } = host();
    const result = await h.compact("lossless-wasm", { sessionId: "s", sessionKey: "k", tokenBudget: 1000 });
    assert.equal(result.ok, true);
    assert.equal(result.compacted, false);
    assert.match(result.reason, /no conversation/);
  });

  test("the default database lives under the host's state directory", async () => {
    const dir = tempDir("state");
    const h = createFakeHost({ pluginConfig: { storage }, stateDir: dir });
    h.load(plugin);
    await h.runTurn("lossless-wasm", { sessionId: "s", sessionKey: "k", history: [], turn: [user("where am I stored?")] });
    assert.deepEqual(await query(join(dir, "lossless-wasm", "lossless.sqlite"), "SELECT content FROM messages_text"), [["where am I stored?"]]);
  });

  test("the database survives a restart of the host process", async () => {
    const dir = tempDir("restart");
    const dbPath = join(dir, "db.sqlite");
    const script = new URL("../restart-child.mjs", import.meta.url);
    let firstRow;
    for (const round of ["1", "2", "3"]) {
      const run = spawnSync(process.execPath, [script.pathname, dbPath, round, storage], { encoding: "utf8" });
      assert.equal(run.status, 0, run.stderr);
      assert.equal(run.stdout.trim(), `round ${round}: view has ${Number(round) * 2 - 2} messages`);
      // The first message is the very row the first process wrote: kept, not re-imported.
      const [row] = await query(dbPath, "SELECT id, created_at FROM messages WHERE seq = 1");
      firstRow ??= row;
      assert.deepEqual(row, firstRow);
    }
    assert.deepEqual(await query(dbPath, "SELECT COUNT(*), COUNT(DISTINCT identity_hash) FROM messages"), [[6, 6]]);
    assert.deepEqual(await query(dbPath, "SELECT COUNT(*) FROM conversations"), [[1]]);
  });

  test("the system-prompt addition names only the recall tools in the host's availableTools", async () => {
    const { h } = host();
    const turn = (i, availableTools) => h.runTurn("lossless-wasm", { sessionId: "s1", sessionKey: "agent:main:tools", history: [], turn: [user(`q ${i}`), assistant(`a ${i}`)], advancementKey: `t${i}`, availableTools });
    const all = (await turn(0)).view.systemPromptAddition;
    for (const name of ["lcm_grep", "lcm_describe", "lcm_expand", "lcm_ask"]) assert.ok(all.includes(name), all);
    // tools.profile "minimal" (no lcm_* in the Set) and a memory-flush run (no tools): no addition.
    assert.equal((await turn(1, ["read", "exec"])).view.systemPromptAddition, undefined);
    assert.equal((await turn(2, [])).view.systemPromptAddition, undefined);
    const two = (await turn(3, ["lcm_expand", "read", "lcm_grep"])).view.systemPromptAddition;
    assert.match(two, /lcm_grep/);
    assert.match(two, /lcm_expand/);
    assert.doesNotMatch(two, /lcm_describe|lcm_ask/);
    assert.equal((await turn(4, ["lcm_grep", "lcm_expand"])).view.systemPromptAddition, two, "byte-stable for the same recall tools");
    // A host that passes no availableTools (older hosts, embedders): all four, as before.
    const engine = await h.resolveEngine("lossless-wasm");
    const bare = await engine.assemble({ sessionId: "s1", sessionKey: "agent:main:tools", messages: [], tokenBudget: 100_000 });
    assert.equal(bare.systemPromptAddition, all);
  });

  test("a clamped config value is logged once with the value given and the value used", async () => {
    const { h } = host({ condensedFanout: 500 });
    for (let i = 0; i < 2; i++) await h.runTurn("lossless-wasm", { sessionId: "s1", sessionKey: "agent:main:c", history: [], turn: [user(`q ${i}`)], advancementKey: `c${i}` });
    const lines = h.logs.filter(([, m]) => m.includes("condensedFanout"));
    assert.deepEqual(lines, [["warn", "[lossless-wasm] config `condensedFanout`: 500 is out of range; using 64"]]);
  });

  test("the config schema in the manifest matches what the engine accepts", async () => {
    const props = manifest.configSchema.properties;
    await host().h.resolveEngine("lossless-wasm");
    // The engine runs in a worker thread: load the wasm module here to ask it for its keys.
    const { configKeys, initSync } = await import(new URL("wasm/lossless_wasm.js", PKG));
    initSync({ module: readFileSync(new URL("wasm/lossless_wasm_bg.wasm", PKG)) });
    const ENGINE_KEYS = configKeys();
    assert.equal(manifest.configSchema.additionalProperties, false);
    assert.deepEqual(Object.keys(props).sort(), [...ENGINE_KEYS].sort());
    assert.deepEqual(props.storage.enum, ["auto", "sql.js", "node:sqlite", "postgres"]);
    assert.equal(manifest.uiHints.postgresUrl.sensitive, true, "the URL holds a password");
    assert.deepEqual(props.durability.enum, ["normal", "full"]);
    assert.equal(manifest.uiHints.durability.advanced, true);
    const { h } = host({ defaultTokenBudget: props.defaultTokenBudget.minimum });
    await h.resolveEngine("lossless-wasm");
  });
});
