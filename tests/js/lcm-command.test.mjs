// The /lcm operator command through the plugin entry (registered with api.registerCommand), on
// the built package: status and doctor print sensible reports, repair re-summarizes a fallback
// summary with the host's LLM, and bad input gets the usage text.
import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, test } from "node:test";
import { createFakeHost } from "./fake-host.mjs";
import { assistant, loadPlugin, STORAGES, tempDir, user } from "./support.mjs";

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

/** A small lcm.db in lossless-claw's schema (see tests/import_native.rs for the full fixture). */
async function lcmDb(path) {
  const { createRequire } = await import("node:module");
  const { writeFileSync } = await import("node:fs");
  const SQL = await createRequire(import.meta.url)("sql.js")();
  const db = new SQL.Database();
  db.exec(`
    CREATE TABLE conversations (conversation_id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, session_key TEXT, active INTEGER NOT NULL DEFAULT 1,
      archived_at TEXT, archive_cause TEXT, created_at TEXT NOT NULL DEFAULT (datetime('now')), updated_at TEXT NOT NULL DEFAULT (datetime('now')));
    CREATE TABLE messages (message_id INTEGER PRIMARY KEY AUTOINCREMENT, conversation_id INTEGER NOT NULL, seq INTEGER NOT NULL, role TEXT NOT NULL,
      content TEXT NOT NULL, token_count INTEGER NOT NULL, created_at TEXT NOT NULL DEFAULT (datetime('now')), UNIQUE (conversation_id, seq));
    CREATE TABLE message_parts (part_id TEXT PRIMARY KEY, message_id INTEGER NOT NULL, session_id TEXT NOT NULL, part_type TEXT NOT NULL, ordinal INTEGER NOT NULL,
      tool_call_id TEXT, tool_name TEXT);
    CREATE TABLE summaries (summary_id TEXT PRIMARY KEY, conversation_id INTEGER NOT NULL, kind TEXT NOT NULL, depth INTEGER NOT NULL DEFAULT 0, content TEXT NOT NULL,
      token_count INTEGER NOT NULL, earliest_at TEXT, latest_at TEXT, source_message_token_count INTEGER NOT NULL DEFAULT 0,
      created_at TEXT NOT NULL DEFAULT (datetime('now')), model TEXT NOT NULL DEFAULT 'unknown');
    CREATE TABLE summary_messages (summary_id TEXT NOT NULL, message_id INTEGER NOT NULL, ordinal INTEGER NOT NULL, PRIMARY KEY (summary_id, message_id));
    CREATE TABLE summary_parents (summary_id TEXT NOT NULL, parent_summary_id TEXT NOT NULL, ordinal INTEGER NOT NULL, PRIMARY KEY (summary_id, parent_summary_id));
    CREATE TABLE context_items (conversation_id INTEGER NOT NULL, ordinal INTEGER NOT NULL, item_type TEXT NOT NULL, message_id INTEGER, summary_id TEXT,
      PRIMARY KEY (conversation_id, ordinal));
    INSERT INTO conversations VALUES (1, 'sess-1', '${KEY}', 1, NULL, NULL, '2026-05-02 09:00:00', '2026-05-02 09:00:00');
    INSERT INTO messages VALUES (1, 1, 1, 'user', 'The release train leaves on Thursday; freeze branch rel-7 at noon.', 15, '2026-05-02 09:01:00'),
      (2, 1, 2, 'assistant', 'Noted: freeze rel-7 Thursday noon.', 9, '2026-05-02 09:02:00'),
      (3, 1, 3, 'user', 'Also bump the schema to v12.', 8, '2026-05-02 09:03:00'),
      (4, 1, 4, 'assistant', 'Schema bumped to v12.', 6, '2026-05-02 09:04:00');
    INSERT INTO summaries VALUES ('sum_0123456789abcdef', 1, 'leaf', 0, '[Truncated from 2400 tokens] The release train leaves on', 10,
      '2026-05-02T09:01:00.000Z', '2026-05-02T09:02:00.000Z', 24, '2026-05-02 09:10:00', 'claude');
    INSERT INTO summary_messages VALUES ('sum_0123456789abcdef', 1, 0), ('sum_0123456789abcdef', 2, 1);
    INSERT INTO context_items VALUES (1, 0, 'summary', NULL, 'sum_0123456789abcdef'), (1, 1, 'message', 3, NULL), (1, 2, 'message', 4, NULL);`);
  writeFileSync(path, db.export());
  db.close();
}

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
