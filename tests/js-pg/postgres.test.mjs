// storage "postgres" in Node, on a real server (scripts/pg-server.sh sets LCM_PG_TEST_URL; a run
// without it fails, never skips): the engine in its worker thread, the connection in the
// driver's I/O thread (js-shim/postgres/database.js). Turns are stored and assembled, a compaction's
// summary is stored, recall finds a message and nothing of another session, two gateway
// processes share one session and lose nothing, a killed gateway loses nothing acknowledged,
// a broken connection is re-opened, bad configs are one line naming the key and never the
// password, and the host's timers keep running while a call waits for the server.
// Each test has a schema of its own.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { createFakeHost } from "../js/fake-host.mjs";
import { startDelayProxy } from "../../bench/pg-proxy.mjs";
import { assistant, pgClient, pgConfig, pgQuery, PKG, schemaFor, URL_, user, waitUntil } from "./support.mjs";

const { openNodeEngine } = await import(new URL("shim/node/engine.js", PKG));
const { createContextEngine } = await import(new URL("shim/engine/context-engine.js", PKG));
const plugin = (await import(new URL("shim/index.js", PKG))).default;
const manifest = JSON.parse(readFileSync(new URL("openclaw.plugin.json", PKG), "utf8"));
const child = new URL("./gateway-child.mjs", import.meta.url).pathname;
const PASSWORD = new globalThis.URL(URL_).password;
const SMALL = { freshTailCount: 4, leafChunkTokens: 1000, leafBudgetHeadroomFactor: 0, leafSkipReductionThreshold: 0 };

const count = async (schema, sql) => Number((await pgQuery(sql.replaceAll("S.", `${schema}.`)))[0][0]);

function history(n, word = "harbor") {
  const out = [];
  for (let i = 0; i < n; i++) out.push(i % 2 ? assistant(`reply ${i} about the ${word} plan`) : user(`question ${i} on the ${word} plan`));
  return out;
}

/** A fake host on a PostgreSQL schema of its own, with the recall tools collected. */
function host(schema, { llm, config = {} } = {}) {
  const h = createFakeHost({ pluginConfig: pgConfig(schema, { ...SMALL, ...config }), stateDir: "/nonexistent", llm });
  const factories = [];
  h.api.registerTool = (tool, opts = {}) => factories.push({ tool, names: opts.names ?? [tool.name] });
  h.load(plugin);
  const tools = (ctx) => Object.fromEntries(factories.flatMap(({ tool }) => (typeof tool === "function" ? tool(ctx) ?? [] : [tool])).map((t) => [t.name, t]));
  return { h, tools };
}

function gateway(schema, name, sessionKey, turns, { url } = {}) {
  const env = url ? { ...process.env, LCM_PG_GATEWAY_URL: url } : process.env;
  const proc = spawn(process.execPath, [child, schema, name, sessionKey, String(turns)], { stdio: ["ignore", "pipe", "pipe"], env });
  let out = "";
  let err = "";
  proc.stdout.on("data", (d) => (out += d));
  proc.stderr.on("data", (d) => (err += d));
  const acks = () => out.split("\n").filter((l) => l.startsWith("ack ")).map((l) => l.slice(4));
  const exited = new Promise((resolve, reject) => {
    proc.on("error", reject);
    proc.on("exit", (code, signal) => resolve({ code, signal, err, acks: acks() }));
  });
  return { proc, acks, exited };
}

/** A gateway whose second turn waits on its conversation's row, which another connection
 *  (`holder`, in an open transaction) holds: the turn in flight settles to null or its error. */
async function turnOnHeldRow(label, config = {}) {
  const schema = schemaFor(label);
  const engine = createContextEngine(() => openNodeEngine("x", pgConfig(schema, config)));
  const session = { sessionId: "s", sessionKey: `agent:main:${label}` };
  const messages = history(4);
  await engine.afterTurn({ ...session, messages, prePromptMessageCount: 0 });
  const holder = await pgClient();
  await holder.query(`BEGIN; SELECT id FROM ${schema}.conversations FOR UPDATE`);
  messages.push(user("a question while another connection holds the conversation"), assistant("its answer"));
  const state = { settled: false };
  const turn = engine.afterTurn({ ...session, messages, prePromptMessageCount: 4 }).then(() => null, (e) => e).finally(() => { state.settled = true; });
  return { schema, engine, session, messages, holder, turn, state, app: `lossless-wasm ${schema} ` };
}

/** How many of the store's connections wait on a lock. */
const lockWaiters = async (app) => Number((await pgQuery("SELECT COUNT(*) FROM pg_stat_activity WHERE starts_with(application_name, $1) AND wait_event_type = 'Lock'", [app]))[0][0]);

describe("storage postgres", () => {
  test("turns through createContextEngine are stored and assembled in order", async () => {
    const schema = schemaFor("turns");
    const config = pgConfig(schema);
    const engine = createContextEngine(() => openNodeEngine("unused.sqlite", config));
    const session = { sessionId: "s", sessionKey: "agent:main:turns" };
    const messages = [];
    for (let i = 0; i < 6; i++) {
      messages.push(user(`question ${i} about the harbor`), assistant(`answer ${i} with 'quotes' and ? marks ?1`));
      await engine.afterTurn({ ...session, messages, prePromptMessageCount: messages.length - 2 });
    }
    const view = await engine.assemble({ ...session, messages, tokenBudget: 100_000 });
    assert.deepEqual(view.messages.map((m) => (typeof m.content === "string" ? m.content : m.content[0].text)), messages.map((m) => (typeof m.content === "string" ? m.content : m.content[0].text)));
    assert.equal(await count(schema, "SELECT COUNT(*) FROM S.messages"), 12);
    assert.equal(await count(schema, "SELECT COUNT(DISTINCT identity_hash) FROM S.messages"), 12);
    const handle = await openNodeEngine("other-path-same-store", config);
    assert.equal(handle.thread, "worker");
    assert.equal(handle.storage, "postgres");
    assert.ok(!handle.path.includes(PASSWORD) && handle.path.endsWith(`#${schema}`), handle.path);
  });

  test("a compaction with the host's LLM stores its summary, and every message is kept", async () => {
    const schema = schemaFor("compaction");
    const calls = [];
    const llm = { complete: async (request) => { calls.push(request); return { text: "## Goal\n- keep the parser working\n## Progress\n- answered many questions", provider: "fake", model: "fake-summarizer" }; } };
    const { h } = host(schema, { llm });
    const hist = [];
    for (let i = 0; i < 14; i++) {
      const turn = [user(`question ${i}: ${"please explain the parser ".repeat(12)}`), assistant(`answer ${i}: ${"the parser works like this ".repeat(12)}`)];
      await h.runTurn("lossless-wasm", { sessionId: "s1", sessionKey: "agent:main:c", history: [...hist], turn, tokenBudget: 50_000 });
      hist.push(...turn);
    }
    assert.ok(calls.length > 0, "the LLM was asked for a summary");
    assert.equal(await count(schema, "SELECT COUNT(*) FROM S.messages"), hist.length);
    const [[summaries, model]] = await pgQuery(`SELECT COUNT(*), MAX(model) FROM ${schema}.summaries`);
    assert.ok(Number(summaries) >= 1);
    assert.equal(model, "fake-summarizer");
    const { view } = await h.runTurn("lossless-wasm", { sessionId: "s1", sessionKey: "agent:main:c", history: hist, turn: [user("one more")] });
    assert.match(view.messages[0].content, /<lossless-summary id="\d+" depth="0"/);
  });

  test("lcm_grep finds a message of its session and nothing of another agent's session", async () => {
    const schema = schemaFor("recall");
    const { h, tools } = host(schema);
    for (const [sessionKey, word] of [["agent:main:a", "zanzibar-7731"], ["agent:other:b", "quokka-4410"]]) {
      const hist = [];
      for (let i = 0; i < 3; i++) {
        const turn = [user(i === 1 ? `the code word is ${word}` : `turn ${i} routine`), assistant(`ok ${i}`)];
        await h.runTurn("lossless-wasm", { sessionId: `${sessionKey}-s`, sessionKey, history: [...hist], turn });
        hist.push(...turn);
      }
    }
    const t = tools({ sessionId: "agent:main:a-s", sessionKey: "agent:main:a" });
    const found = await t.lcm_grep.execute("c1", { pattern: "zanzibar-7731" });
    assert.ok(found.details.hits.some((x) => x.kind === "message"), found.content[0].text);
    const other = await t.lcm_grep.execute("c2", { pattern: "quokka-4410" });
    assert.deepEqual(other.details.hits, [], other.content[0].text);
    const fts = await t.lcm_grep.execute("c3", { pattern: "code word", mode: "full_text" });
    assert.ok(fts.details.hits.length >= 1, fts.content[0].text);
  });

  test("two gateway processes committing one session alternately and at once store every message exactly once", { timeout: 300_000 }, async () => {
    const schema = schemaFor("two");
    const sessionKey = "agent:main:shared";
    // Alternately: A's turns, then B's, then A's again, each a process of its own.
    for (const name of ["A", "B", "C"]) {
      const r = await gateway(schema, name, sessionKey, 5).exited;
      assert.equal(r.code, 0, r.err);
    }
    // At once.
    const TURNS = 30;
    const [a, b] = await Promise.all([gateway(schema, "P", sessionKey, TURNS).exited, gateway(schema, "Q", sessionKey, TURNS).exited]);
    for (const g of [a, b]) {
      assert.equal(g.code, 0, `a gateway failed: ${g.err}`);
      assert.equal(g.acks.length, TURNS);
    }
    const total = 2 * (15 + 2 * TURNS);
    assert.equal(await count(schema, "SELECT COUNT(*) FROM S.messages"), total);
    assert.equal(await count(schema, "SELECT COUNT(DISTINCT identity_hash) FROM S.messages"), total, "no message stored twice");
    assert.equal(await count(schema, "SELECT COUNT(*) FROM S.turn_advancements"), total / 2, "every acknowledged turn stored once");
    assert.equal(await count(schema, "SELECT COUNT(*) FROM S.conversations"), 1, "one conversation for the shared key");
    const seqs = await pgQuery(`SELECT seq FROM ${schema}.messages ORDER BY seq`);
    assert.deepEqual(seqs.map(([s]) => Number(s)), [...Array(total).keys()].map((i) => seqs[0][0] * 1 + i), "seqs without gaps or repeats");
  });

  test("two gateway processes a 3 ms round trip from the server, committing one session at once, store every message exactly once", { timeout: 300_000 }, async () => {
    const schema = schemaFor("proxied");
    const sessionKey = "agent:main:proxied";
    const server = new globalThis.URL(URL_);
    const proxy = await startDelayProxy({ target: { host: server.hostname, port: Number(server.port) }, upMs: 1, downMs: 2 });
    try {
      const viaProxy = new globalThis.URL(URL_);
      viaProxy.port = String(proxy.port);
      const TURNS = 15;
      const runs = await Promise.all(["P", "Q"].map((name) => gateway(schema, name, sessionKey, TURNS, { url: viaProxy.href }).exited));
      for (const g of runs) {
        assert.equal(g.code, 0, `a gateway failed: ${g.err}`);
        assert.equal(g.acks.length, TURNS);
      }
      const { connections, bytes } = proxy.traffic();
      assert.ok(connections >= 2 && bytes > 0, "both gateways talked to the server through the proxy");
    } finally {
      await proxy.close();
    }
    const total = 2 * 2 * 15;
    assert.equal(await count(schema, "SELECT COUNT(*) FROM S.messages"), total);
    assert.equal(await count(schema, "SELECT COUNT(DISTINCT identity_hash) FROM S.messages"), total, "no message stored twice");
    assert.equal(await count(schema, "SELECT COUNT(*) FROM S.turn_advancements"), total / 2, "every acknowledged turn stored once");
    const seqs = await pgQuery(`SELECT seq FROM ${schema}.messages ORDER BY seq`);
    assert.deepEqual(seqs.map(([s]) => Number(s)), [...Array(total).keys()].map((i) => Number(seqs[0][0]) + i), "seqs without gaps or repeats");
  });

  test("a gateway killed with SIGKILL mid-run loses nothing it acknowledged, and the next one continues", { timeout: 120_000 }, async () => {
    const schema = schemaFor("kill");
    const sessionKey = "agent:main:kill";
    const g = gateway(schema, "K", sessionKey, 1000);
    await waitUntil(() => g.acks().length >= 8, "8 acknowledged turns", { timeoutMs: 60_000, everyMs: 20 });
    g.proc.kill("SIGKILL");
    const killed = await g.exited;
    assert.equal(killed.signal, "SIGKILL");
    const keys = new Set((await pgQuery(`SELECT advancement_key FROM ${schema}.turn_advancements`)).map(([k]) => k));
    assert.deepEqual(killed.acks.filter((k) => !keys.has(k)), [], "every acknowledged turn is stored");
    const stored = await count(schema, "SELECT COUNT(*) FROM S.messages");
    assert.equal(stored, 2 * keys.size, "a turn is stored whole or not at all");
    const after = await gateway(schema, "L", sessionKey, 3).exited;
    assert.equal(after.code, 0, after.err);
    assert.equal(await count(schema, "SELECT COUNT(*) FROM S.messages"), stored + 6);
  });

  test("a connection the server ends is opened again: the turn after it is stored", async () => {
    const schema = schemaFor("reconnect");
    const engine = createContextEngine(() => openNodeEngine("x", pgConfig(schema)));
    const session = { sessionId: "s", sessionKey: "agent:main:reconnect" };
    const messages = history(4);
    await engine.afterTurn({ ...session, messages, prePromptMessageCount: 0 });
    const ended = await pgQuery("SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE starts_with(application_name, $1)", [`lossless-wasm ${schema} `]);
    assert.equal(Number(ended[0][0]), 1, "the store's connection was ended");
    messages.push(user("after the server ended the connection"), assistant("still stored"));
    // The first call may meet the dead connection and fail with one sentence; the next one reconnects.
    try {
      await engine.afterTurn({ ...session, messages, prePromptMessageCount: 4 });
    } catch (err) {
      assert.match(err.message, /connection to PostgreSQL at .* broke .*the next one connects again/);
      assert.ok(!err.message.includes(PASSWORD));
      await engine.afterTurn({ ...session, messages, prePromptMessageCount: 4 });
    }
    assert.equal(await count(schema, "SELECT COUNT(*) FROM S.messages"), 6);
  });

  test("a connection that breaks during a call fails that call with one sentence, and the next call connects again", async () => {
    const { schema, engine, session, messages, holder, turn, app } = await turnOnHeldRow("midcall");
    await waitUntil(async () => (await lockWaiters(app)) > 0, "the turn to wait on the held row");
    await pgQuery("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE starts_with(application_name, $1)", [app]);
    const err = await turn;
    await holder.query("ROLLBACK");
    await holder.end();
    assert.ok(err, "the call on the cut connection failed");
    assert.match(err.message, /connection to PostgreSQL at postgres:\/\/lcm:\*\*\*@.* broke .*the next one connects again/);
    assert.doesNotMatch(err.message, /\n/);
    assert.ok(!err.message.includes(PASSWORD));
    assert.equal(await count(schema, "SELECT COUNT(*) FROM S.messages"), 4, "nothing of the failed turn was stored");
    await engine.afterTurn({ ...session, messages, prePromptMessageCount: 4 });
    assert.equal(await count(schema, "SELECT COUNT(*) FROM S.messages"), 6, "the host's next turn stores it");
  });

  test("a wrong password and a closed port are one line each, without the password", async () => {
    const wrong = new globalThis.URL(URL_);
    wrong.password = "not-the-password-x9";
    const closed = new globalThis.URL(URL_);
    closed.port = "1";
    for (const [url, secret, pattern] of [[wrong.href, "not-the-password-x9", /28P01|password authentication failed/], [closed.href, PASSWORD, /ECONNREFUSED|connect/]]) {
      const err = await openNodeEngine("x", { storage: "postgres", postgresUrl: url, postgresSchema: schemaFor("bad") }).then(() => null, (e) => e);
      assert.ok(err, "the open failed");
      assert.match(err.message, /^lossless-wasm: cannot connect to PostgreSQL at postgres:\/\/lcm:\*\*\*@127\.0\.0\.1:\d+\/postgres: /);
      assert.match(err.message, pattern);
      assert.ok(!err.message.includes(secret), err.message);
      assert.doesNotMatch(err.message, /\n/, "one line");
    }
  });

  test("a bad postgresSchema, a missing URL and storageThread main are refused naming the keys", async () => {
    const bad = await openNodeEngine("x", { storage: "postgres", postgresUrl: URL_, postgresSchema: "Bad-Name" }).catch((e) => e);
    assert.match(bad.message, /`postgresSchema`/);
    assert.ok(!bad.message.includes(PASSWORD));
    const saved = process.env.LOSSLESS_WASM_POSTGRES_URL;
    delete process.env.LOSSLESS_WASM_POSTGRES_URL;
    const none = await openNodeEngine("x", { storage: "postgres" }).catch((e) => e);
    if (saved !== undefined) process.env.LOSSLESS_WASM_POSTGRES_URL = saved;
    assert.match(none.message, /`postgresUrl`.*LOSSLESS_WASM_POSTGRES_URL/);
    const main = await openNodeEngine("x", pgConfig(schemaFor("main"), { storageThread: "main" })).catch((e) => e);
    assert.match(main.message, /`storageThread`.*`storage: "postgres"`/);
    assert.ok(manifest.configSchema.properties.storage.enum.includes("postgres"));
  });

  test("without the npm package pg beside the plugin, the error says how to install it", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "lossless-wasm-nopg-")), "pkg");
    cpSync(new URL(PKG).pathname, dir, { recursive: true });
    const { openNodeEngine: open } = await import(join(dir, "shim/node/engine.js"));
    const err = await open("x", pgConfig(schemaFor("nopg"))).catch((e) => e);
    assert.match(err.message, /storage "postgres" needs the npm package pg.*npm install --prefix .*pg@8\.23\.1/);
    assert.doesNotMatch(err.message, /\n/);
  });

  test("the URL may come from LOSSLESS_WASM_POSTGRES_URL", async () => {
    const schema = schemaFor("env");
    process.env.LOSSLESS_WASM_POSTGRES_URL = URL_;
    try {
      const engine = createContextEngine(() => openNodeEngine("x", { storage: "postgres", postgresSchema: schema }));
      await engine.afterTurn({ sessionId: "s", sessionKey: "agent:main:env", messages: history(2), prePromptMessageCount: 0 });
    } finally {
      delete process.env.LOSSLESS_WASM_POSTGRES_URL;
    }
    assert.equal(await count(schema, "SELECT COUNT(*) FROM S.messages"), 2);
  });

  test("the host's timers keep running while a turn waits for the server (a row lock held elsewhere)", async () => {
    const { schema, holder, turn, state, app } = await turnOnHeldRow("loop");
    let ticks = 0;
    const timer = setInterval(() => { ticks++; }, 1);
    try {
      while (ticks < 25 && !state.settled) await new Promise((r) => setTimeout(r, 1));
      assert.equal(state.settled, false, "the turn was still waiting for the lock while the timers ran");
      assert.ok(ticks >= 25);
      assert.equal(await lockWaiters(app), 1, "the store's connection really waits on the lock");
      await holder.query("COMMIT");
      assert.equal(await turn, null, "the turn succeeded once the lock was released");
    } finally {
      clearInterval(timer);
      await holder.end();
    }
    assert.equal(await count(schema, "SELECT COUNT(*) FROM S.messages"), 6);
  });

  test("a lock held past lockTimeoutMs fails the turn with one line and writes nothing; the next turn stores it", async () => {
    const { schema, engine, session, messages, holder, turn, app } = await turnOnHeldRow("locktimeout", { lockTimeoutMs: 1000 });
    const holderPid = holder.processID;
    let failure;
    let waited = 0;
    try {
      // The store's connection really waits on the lock (the failure is not for another reason).
      for (let i = 0; i < 100 && !waited; i++) waited = await lockWaiters(app);
      failure = await turn;
    } finally {
      await holder.query("ROLLBACK");
      await holder.end();
    }
    assert.equal(waited, 1, "the turn waited on the held lock");
    assert.ok(failure instanceof Error, "the turn failed instead of waiting for as long as the holder keeps the lock");
    assert.match(failure.message, /held a lock this call needs for over 1000 ms \(config `lockTimeoutMs`\).*wrote nothing/);
    assert.match(failure.message, new RegExp(`held by pid ${holderPid} \\(from 127\\.0\\.0\\.1, idle in a transaction for \\d+ s\\)`), "the holder is named");
    assert.doesNotMatch(failure.message, /running `|SELECT /, "no statement text");
    assert.equal(failure.message.split("\n").length, 1, failure.message);
    assert.ok(!failure.message.includes(PASSWORD), "no password in the error");
    assert.equal(await count(schema, "SELECT COUNT(*) FROM S.messages"), 4, "nothing of the failed turn was written");
    // The host's next turn assembles its whole history first: the failed turn's messages are
    // stored then, and the turn after them once.
    messages.push(user("the next question"));
    const view = await engine.assemble({ ...session, messages, tokenBudget: 100_000 });
    assert.ok(view.messages.length >= 7, "the view holds the history");
    messages.push(assistant("the next answer"));
    await engine.afterTurn({ ...session, messages, prePromptMessageCount: 6 });
    assert.equal(await count(schema, "SELECT COUNT(*) FROM S.messages"), 8);
    await engine.dispose?.();
  });
});
