// The /lcm operator command through the plugin entry (registered with api.registerCommand), on
// the built package: status and doctor print sensible reports, repair re-summarizes a fallback
// summary with the host's LLM, and bad input gets the usage text.
import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, test } from "node:test";
import { createFakeHost } from "../fake-host.mjs";
import { writeLosslessClawDb } from "../lcm-fixture.mjs";
import { assistant, loadPlugin, STORAGES, tempDir, user } from "../support.mjs";

const plugin = await loadPlugin();
const KEY = "agent:main:ops";

function host(storage) {
  const dir = tempDir("lcm");
  const dbPath = join(dir, "db.sqlite");
  const h = createFakeHost({ pluginConfig: { dbPath, storage, freshTailCount: 2 }, stateDir: dir });
  const commands = new Map();
  h.api.registerCommand = (def) => {
    if (typeof def?.handler !== "function" || !def.name) throw new Error("invalid command");
    commands.set(def.name, def);
  };
  h.load(plugin);
  const lcm = (args, extra = {}) => commands.get("lcm").handler({ args, sessionKey: KEY, sessionId: "s", isAuthorizedSender: true, ...extra });
  return { h, lcm, commands, dbPath };
}

async function conversation(h) {
  const history = [];
  for (let i = 0; i < 20; i++) {
    const turn = [user(`request ${i}: ${"please ".repeat(60)}`), assistant(`done ${i} ${"ok ".repeat(40)}`)];
    await h.runTurn("lossless-wasm", { sessionId: "s", sessionKey: KEY, history: [...history], turn });
    history.push(...turn);
  }
  const report = await h.compact("lossless-wasm", { sessionId: "s", sessionKey: KEY, tokenBudget: 1500 });
  assert.ok(report.compacted, JSON.stringify(report));
}

for (const storage of STORAGES) describe(`storage ${storage}`, () => {
  test("the command is registered as /lcm, takes arguments and requires an authorized sender", () => {
    const { commands } = host(storage);
    const def = commands.get("lcm");
    assert.equal(def.acceptsArgs, true);
    assert.equal(def.requireAuth, true);
  });

  test("status counts what is stored and shows this session and the last compactions", async () => {
    const { h, lcm } = host(storage);
    await conversation(h);
    const { text } = await lcm("status");
    assert.match(text, /messages: 40 \(/);
    assert.match(text, /conversations: 1 active, 0 archived/);
    assert.match(text, /summaries by level and depth: normal d0: \d+/);
    assert.match(text, new RegExp(`this session: conversation \\d+ \\(${KEY}\\), 40 messages`));
    assert.match(text, /compaction: no failures recorded|consecutive failure/);
    assert.match(text, /last compactions:\n {2}\S+ conversation \d+ \w+\/normal compacted:/);
    assert.equal((await lcm("")).text, text, "status is the default");
  });

  test("status labels the last assembled view apart from the stored context, and counts internal runs apart", async () => {
    const { h, lcm } = host(storage);
    const history = [];
    for (let i = 0; i < 12; i++) {
      const turn = [user(`request ${i}: ${"please ".repeat(60)}`), assistant(`done ${i} ${"ok ".repeat(40)}`)];
      await h.runTurn("lossless-wasm", { sessionId: "s", sessionKey: KEY, history: [...history], turn, tokenBudget: 800 });
      history.push(...turn);
    }
    // The host's memory-flush run: stored, but not one of the user's conversations.
    await h.runTurn("lossless-wasm", { sessionId: "f", sessionKey: "agent:main:internal-session-effects:f1", history: [], turn: [user("flush memory")], availableTools: [] });
    const { text } = await lcm("status");
    const view = Number(/\n {2}view: (\d+) tokens last assembled, budget (\d+)/.exec(text)?.[1]);
    const stored = Number(/\n {2}stored context \(summaries and the messages they do not cover\): (\d+) tokens/.exec(text)?.[1]);
    assert.ok(view > 0 && view <= 800, text);
    assert.ok(stored > view, `the stored context is larger than the 800-token view: ${text}`);
    assert.doesNotMatch(text, /this session: .*view \d+ tokens/, "no unlabelled 'view' number");
    assert.match(text, /conversations: 1 active \(\+1 internal\), 0 archived/);
  });

  test("status shows what the summarizer calls cost, per pass, as the provider counted it", async () => {
    const dir = tempDir("lcm-spend");
    let calls = 0;
    const llm = { complete: async () => {
      calls++;
      // Each answer says something new: one made only of the previous summary's lines is
      // carried forward, not a summary, and is rejected.
      return { text: `## Goal\n- answer the requests\n## Progress\n- answered them (pass ${calls})`, stopReason: "stop", model: "m", usage: { inputTokens: 1000, outputTokens: 20 } };
    } };
    const h = createFakeHost({ pluginConfig: { dbPath: join(dir, "db.sqlite"), storage, freshTailCount: 2, summarizer: "host" }, stateDir: dir, llm });
    const commands = new Map();
    h.api.registerCommand = (def) => commands.set(def.name, def);
    h.load(plugin);
    await conversation(h);
    assert.ok(calls > 0, "the host's LLM was asked for summaries");
    const { text } = await commands.get("lcm").handler({ args: "status", sessionKey: KEY, sessionId: "s", isAuthorizedSender: true });
    const total = `${calls} call(s), ${calls * 1000} tokens in, ${calls * 20} out; ${calls} stored, 0 rejected, 0 failed`;
    assert.ok(text.includes(`  summarizer spend (this session): ${total}`), text);
    assert.ok(text.includes(`summarizer spend (all conversations): ${total}`), text);
    assert.match(text, /\n {4}leaf: \d+ call\(s\), \d+ tokens in/);
  });

  test("doctor passes a healthy database and repair has nothing to do", async () => {
    const { h, lcm } = host(storage);
    await conversation(h);
    const doctor = (await lcm("doctor --dry-run")).text;
    assert.match(doctor, /all checks pass \(dry run: nothing changed\)/);
    for (const name of ["sqlite_integrity", "messages_reachable", "dag_acyclic", "context_items_valid", "running_totals", "messages_fts", "summaries_fts"]) {
      assert.match(doctor, new RegExp(`ok {3}${name}:`));
    }
    assert.match((await lcm("repair --dry-run")).text, /no fallback summaries; nothing to do/);
  });

  test("unknown commands and options get the usage", async () => {
    const { lcm } = host(storage);
    assert.match((await lcm("frobnicate")).text, /unknown command "frobnicate"\nusage: \/lcm/);
    assert.match((await lcm("repair --force")).text, /unknown option --force/);
  });
});

if (STORAGES.includes("node:sqlite")) {
  test("node:sqlite: repair redoes a fallback summary and its parents with the host's LLM", async () => {
    const { h, lcm, dbPath } = host("node:sqlite");
    await conversation(h);
    // Plant a truncation fallback (as an older engine or an import leaves them) in the live file.
    const { DatabaseSync } = process.getBuiltinModule("node:sqlite");
    const db = new DatabaseSync(dbPath);
    const { id } = db.prepare("SELECT id FROM summaries ORDER BY depth, id LIMIT 1").get();
    db.prepare("DELETE FROM summaries_fts WHERE docid = ?").run(id);
    db.prepare("UPDATE summaries SET level = 'fallback', content = '[Truncated from 9000 tokens] request 0: ple' WHERE id = ?").run(id);
    db.prepare("INSERT INTO summaries_fts (docid, content) VALUES (CAST(? AS INTEGER), '[Truncated from 9000 tokens] request 0: ple')").run(id);
    db.close();
    assert.match((await lcm("repair --dry-run")).text, new RegExp(`would redo 1 fallback summary and \\d+ built on them:\\n {2}summary ${id} \\(depth 0, fallback\\)`));
    const prompts = [];
    const llm = { complete: async ({ messages }) => { prompts.push(messages[0].content); return { text: `## Goal\n- redone by the host LLM (${prompts.length})`, model: "mock" }; } };
    const out = (await lcm("repair", { runtimeContext: { llm } })).text;
    assert.match(out, new RegExp(`redone \\d+ \\(${id}`), out);
    assert.ok(prompts[0].includes("request 0"), "the fallback is redone from its original messages");
    const check = new DatabaseSync(dbPath, { readOnly: true });
    const row = check.prepare("SELECT level, content FROM summaries WHERE id = ?").get(id);
    check.close();
    assert.equal(row.level, "normal");
    assert.match(row.content, /redone by the host LLM \(1\)/);
    assert.match((await lcm("doctor --dry-run")).text, /all checks pass/);
  });
}

if (STORAGES.includes("node:sqlite")) {
  test("node:sqlite: /lcm repair sends no credential to the host's LLM and says what it replaced", async () => {
    const { h, lcm, dbPath } = host("node:sqlite");
    const key = `sk-proj-${"Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7".repeat(3)}`;
    const history = [];
    for (let i = 0; i < 20; i++) {
      const ask = i === 0 ? `request 0: export OPENAI_API_KEY=${key} then run the tests. ${"please ".repeat(60)}` : `request ${i}: ${"please ".repeat(60)}`;
      const turn = [user(ask), assistant(`done ${i} ${"ok ".repeat(40)}`)];
      await h.runTurn("lossless-wasm", { sessionId: "s", sessionKey: KEY, history: [...history], turn });
      history.push(...turn);
    }
    assert.ok((await h.compact("lossless-wasm", { sessionId: "s", sessionKey: KEY, tokenBudget: 1500 })).compacted);
    const { DatabaseSync } = process.getBuiltinModule("node:sqlite");
    const db = new DatabaseSync(dbPath);
    const { id } = db.prepare("SELECT s.id FROM summaries s JOIN summary_messages sm ON sm.summary_id = s.id JOIN messages m ON m.id = sm.message_id WHERE m.raw_json LIKE '%request 0:%' AND s.depth = 0").get();
    db.prepare("UPDATE summaries SET level = 'fallback' WHERE id = ?").run(id);
    db.close();
    const prompts = [];
    const llm = { complete: async ({ messages }) => { prompts.push(messages[0].content); return { text: `## Goal\n- redone (${prompts.length})`, model: "mock" }; } };
    const out = (await lcm("repair", { runtimeContext: { llm } })).text;
    assert.match(out, new RegExp(`redone \\d+ \\(${id}`), out);
    assert.ok(prompts.some((p) => p.includes("request 0: export OPENAI_API_KEY=[credential: openai-api-key]")), "the fallback's sources were sent, redacted");
    assert.ok(prompts.every((p) => !p.includes(key)), "the key never reached the LLM");
    assert.match(out, /credentials replaced before summarizing: \d+ openai-api-key/);
  });
}

const lcmDb = (path) => writeLosslessClawDb(path, KEY);

for (const storage of STORAGES) {
  test(`${storage}: /lcm import brings a lossless-claw lcm.db over once, read-only, and its fallback is repairable`, async () => {
    const { readFileSync } = await import("node:fs");
    const { lcm } = host(storage);
    const source = join(tempDir("lcmdb"), "lcm.db");
    await lcmDb(source);
    const before = readFileSync(source);
    const first = (await lcm(`import ${source}`)).text;
    assert.match(first, /1 new conversation\(s\), 4 message\(s\), 1 summary \(1 fallback\), 1 view\(s\); the source was not modified/);
    assert.match(first, /run \/lcm repair/);
    assert.deepEqual(readFileSync(source), before, "the source file is byte-for-byte unchanged");
    const second = (await lcm(`import ${source}`)).text;
    assert.match(second, /0 new conversation\(s\), 0 message\(s\), 0 summaries/);
    assert.match(second, /nothing new/);
    assert.match((await lcm("repair --dry-run")).text, /would redo 1 fallback summary and 0 built on them/);
    const status = (await lcm("status")).text;
    assert.match(status, /conversations: 0 active, 1 archived\nmessages: 4 \(/);
    assert.match(status, /summaries by level and depth: fallback d0: 1\n/);
    assert.match((await lcm("import /nonexistent/lcm.db")).text, /no database at \/nonexistent\/lcm.db/);
  });
}
