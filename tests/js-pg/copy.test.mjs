// `lossless-wasm-lcm copy-to-postgres` (js-shim/operator/copy-to-postgres.js) on a real server: a store of
// several conversations of two agents, one of them compacted by a scripted LLM, written by
// node:sqlite or by sql.js with its journal, is copied into a schema of its own; every table's
// rows arrive with their ids, doctor passes there, the source file is unchanged, a second copy
// copies nothing, the copied conversation goes on on PostgreSQL with ids after the copied ones
// and recall finds its old messages and nothing of the other agent, and a copy after that is
// refused (it would mix two histories); the copied search text is
// what the engine writes on PostgreSQL itself; a wrong password is one line without it; a target
// holding another store's rows is refused and left as it was. Run as a child process, as an
// operator runs it.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { createFakeHost } from "../js/fake-host.mjs";
import { openStored } from "../js/stored-db.mjs";
import { pgConfig, pgQuery, PKG, schemaFor, URL_ } from "./support.mjs";

const { openNodeEngine } = await import(new URL("shim/node/engine.js", PKG));
const { createContextEngine } = await import(new URL("shim/engine/context-engine.js", PKG));
const { SQLITE_VERSION, TABLES } = await import(new URL("shim/operator/copy-tables.js", PKG));
const plugin = (await import(new URL("shim/index.js", PKG))).default;
const CLI = fileURLToPath(new URL("shim/operator/cli.js", PKG));
const PASSWORD = new globalThis.URL(URL_).password;
const SMALL = { freshTailCount: 4, leafChunkTokens: 1000, leafBudgetHeadroomFactor: 0, leafSkipReductionThreshold: 0 };
const LLM = { complete: async () => ({ text: "## Goal\n- keep the parser working\n## Progress\n- answered many questions", provider: "fake", model: "fake-summarizer" }) };

/** Runs the CLI as a child process; resolves {code, stdout, stderr}. */
function cli(args, env = {}) {
  const clean = { ...process.env };
  for (const k of Object.keys(clean)) if (k.startsWith("LOSSLESS_WASM_") || k.startsWith("OPENCLAW_")) delete clean[k];
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { env: { ...clean, ...env }, timeout: 120_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === "number" ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

const copy = (db, schema, extra = []) => cli(["--db", db, "copy-to-postgres", "--postgres-url", URL_, "--postgres-schema", schema, ...extra]);

// The conversations, built once so every store gets the same messages (timestamps included).
let clock = 1_790_000_000_000;
const user = (text) => ({ role: "user", content: text, timestamp: clock++ });
const assistant = (text, content = [{ type: "text", text }]) => ({
  role: "assistant", content, api: "openai-completions", provider: "mock", model: "m", usage: { input: 1, output: 1 }, stopReason: "stop", timestamp: clock++,
});
function sessions(prefix = "") {
  const long = [];
  for (let i = 0; i < 14; i++) {
    long.push([user(`question ${i}: ${"please explain the parser ".repeat(12)}${i === 3 ? " codeword zanzibar-7731" : ""}`), assistant(`answer ${i}: ${"the parser works like this ".repeat(12)}`)]);
  }
  const tools = [
    [user("run the tests, and note the NUL: a\u0000b"), assistant("", [{ type: "toolCall", id: "call_1", name: "bash", arguments: { command: "cargo test", cwd: "/r" } }])],
    [{ role: "toolResult", toolCallId: "call_1", toolName: "bash", content: [{ type: "text", text: "test result: ok. 12 passed" }], isError: false, timestamp: clock++ }, assistant("all 12 pass")],
  ];
  const other = [[user("the other agent's codeword is quokka-4410"), assistant("noted")], [user("anything else?"), assistant("no")]];
  return [
    { sessionKey: `agent:main:${prefix}long`, turns: long },
    { sessionKey: `agent:main:${prefix}tools`, turns: tools },
    { sessionKey: `agent:other:${prefix}b`, turns: other },
  ];
}
const SESSIONS = sessions();
const FOREIGN = sessions("foreign-");

/** Stores `list` through the plugin in a fake host (compaction through the scripted LLM). */
async function fill(config, list = SESSIONS) {
  const h = createFakeHost({ pluginConfig: { ...SMALL, ...config }, stateDir: "/nonexistent", llm: LLM });
  h.load(plugin);
  for (const { sessionKey, turns } of list) {
    const history = [];
    for (const turn of turns) {
      await h.runTurn("lossless-wasm", { sessionId: `${sessionKey}-s`, sessionKey, history: [...history], turn, tokenBudget: 50_000 });
      history.push(...turn);
    }
  }
}

/** A store file written by `storage`, its engine closed. */
async function sqliteStore(storage) {
  const db = join(mkdtempSync(join(tmpdir(), "lcm-copy-")), "lossless.sqlite");
  await fill({ dbPath: db, storage });
  await (await openNodeEngine(db, { storage })).close();
  return db;
}

const sourceCounts = (db) => {
  const s = openStored(db);
  try {
    return Object.fromEntries(TABLES.map((t) => [t.name, Number(s.values(`SELECT COUNT(*) FROM ${t.name}`)[0][0])]));
  } finally {
    s.close();
  }
};
async function targetCounts(schema) {
  const out = {};
  for (const t of TABLES) out[t.name] = Number((await pgQuery(`SELECT COUNT(*) FROM ${schema}.${t.name}`))[0][0]);
  return out;
}
/** The report's table lines: name → [source, copied, already there, target]. */
function reported(stdout) {
  const rows = {};
  for (const t of TABLES) {
    const m = new RegExp(`^${t.name}\\s+(\\d+)\\s+(\\d+)\\s+(\\d+)\\s+(\\d+)$`, "m").exec(stdout);
    assert.ok(m, `no report line for ${t.name} in:\n${stdout}`);
    rows[t.name] = m.slice(1).map(Number);
  }
  return rows;
}
const sha = (path) => createHash("sha256").update(readFileSync(path)).digest("hex");
const messagesOf = (schema) => pgQuery(`SELECT c.session_key, m.seq, m.role, m.raw_json, m.search_text, encode(m.identity_hash, 'hex'), m.token_count FROM ${schema}.messages m JOIN ${schema}.conversations c ON c.id = m.conversation_id ORDER BY 1, 2`);

describe("copy-to-postgres", () => {
  test("a node:sqlite store: every row with its ids, doctor passes, a second copy copies nothing, the conversation goes on on PostgreSQL", { timeout: 300_000 }, async () => {
    const db = await sqliteStore("node:sqlite");
    const counts = sourceCounts(db);
    assert.equal(counts.conversations, 3);
    for (const table of ["summaries", "summary_messages", "context_items", "compaction_events", "message_parts", "turn_advancements"]) {
      assert.ok(counts[table] > 0, `the source has ${table} (got ${counts[table]})`);
    }
    const before = sha(db);
    const schema = schemaFor("copy");

    const first = await copy(db, schema);
    assert.equal(first.code, 0, first.stdout + first.stderr);
    assert.ok(!(first.stdout + first.stderr).includes(PASSWORD), "the password is never printed");
    assert.match(first.stdout, /read with node:sqlite/);
    assert.match(first.stdout, /lossless-wasm doctor: all checks pass/);
    for (const [name, [src, copied, there, target]] of Object.entries(reported(first.stdout))) {
      assert.deepEqual([src, copied, there, target], [counts[name], counts[name], 0, counts[name]], name);
    }
    assert.deepEqual(await targetCounts(schema), counts);
    // The planner learned about the copied rows at once (not a minute later, by autovacuum).
    const analyzed = await pgQuery("SELECT relname FROM pg_stat_user_tables WHERE schemaname = $1 AND last_analyze IS NOT NULL ORDER BY 1", [schema]);
    for (const table of ["context_items", "message_parts", "messages"]) assert.ok(analyzed.some(([name]) => name === table), `${table} analyzed after the copy (got ${analyzed.join(",")})`);
    const summaryItems = await pgQuery(`SELECT COUNT(*) FROM ${schema}.context_items WHERE summary_id IS NOT NULL`);
    assert.ok(Number(summaryItems[0][0]) >= 1, "a summary is in the copied context");
    // The same ids on both sides.
    const src = openStored(db);
    const srcIds = src.values("SELECT id, seq FROM messages ORDER BY id").map(([id, seq]) => [Number(id), Number(seq)]);
    src.close();
    assert.deepEqual((await pgQuery(`SELECT id, seq FROM ${schema}.messages ORDER BY id`)).map(([id, seq]) => [Number(id), Number(seq)]), srcIds);
    assert.equal(sha(db), before, "the source file is unchanged");

    const second = await copy(db, schema);
    assert.equal(second.code, 0, second.stdout + second.stderr);
    assert.match(second.stdout, /nothing to copy: all \d+ row\(s\) of the source were already there/);
    for (const [name, [src2, copied, there]] of Object.entries(reported(second.stdout))) assert.deepEqual([copied, there], [0, src2], name);
    assert.deepEqual(await targetCounts(schema), counts);

    // The copied conversation goes on on PostgreSQL: new ids after the copied ones, no new conversation.
    const maxId = srcIds.at(-1)[0];
    const { sessionKey, turns } = SESSIONS[0];
    const engine = createContextEngine(() => openNodeEngine("unused.sqlite", pgConfig(schema, SMALL)));
    const messages = [...turns.flat(), user("one more question after the move"), assistant("answered on PostgreSQL")];
    await engine.afterTurn({ sessionId: `${sessionKey}-s`, sessionKey, messages, prePromptMessageCount: messages.length - 2 });
    const added = await pgQuery(`SELECT m.id, m.seq, c.session_key FROM ${schema}.messages m JOIN ${schema}.conversations c ON c.id = m.conversation_id WHERE m.id > ${maxId} ORDER BY m.id`);
    assert.equal(added.length, 2, "the new turn's two messages, and nothing stored twice");
    assert.ok(added.every(([, , key]) => key === sessionKey));
    assert.equal(Number((await pgQuery(`SELECT COUNT(*) FROM ${schema}.conversations`))[0][0]), 3, "the copied conversation continued");
    const view = await engine.assemble({ sessionId: `${sessionKey}-s`, sessionKey, messages, tokenBudget: 50_000 });
    assert.equal(view.messages.at(-1).content[0].text, "answered on PostgreSQL");

    // Recall on the copy: an old message of this agent, nothing of the other agent's.
    const h = createFakeHost({ pluginConfig: pgConfig(schema, SMALL), stateDir: "/nonexistent" });
    const factories = [];
    h.api.registerTool = (tool) => factories.push(tool);
    h.load(plugin);
    const ctx = { sessionId: `${sessionKey}-s`, sessionKey };
    const tools = Object.fromEntries(factories.flatMap((t) => (typeof t === "function" ? t(ctx) ?? [] : [t])).map((t) => [t.name, t]));
    const found = await tools.lcm_grep.execute("c1", { pattern: "zanzibar-7731" });
    assert.ok(found.details.hits.some((x) => x.kind === "message"), found.content[0].text);
    const other = await tools.lcm_grep.execute("c2", { pattern: "quokka-4410" });
    assert.deepEqual(other.details.hits, [], other.content[0].text);

    // Copying again now would bring back what PostgreSQL has replaced: refused, nothing written.
    const afterTurn = await targetCounts(schema);
    const third = await copy(db, schema);
    assert.equal(third.code, 1, third.stdout + third.stderr);
    assert.match(third.stderr, /copy-to-postgres failed: conversations id \d+ was written after an earlier copy, on PostgreSQL or in the source \(its .*message_count.* differ\); copying again would mix the two histories, so nothing was copied/);
    assert.deepEqual(await targetCounts(schema), afterTurn);

    // doctor from the CLI on the PostgreSQL store, after the new turn.
    const doctor = await cli(["--storage", "postgres", "--postgres-url", URL_, "--postgres-schema", schema, "doctor", "--dry-run"]);
    assert.equal(doctor.code, 0, doctor.stdout + doctor.stderr);
    assert.match(doctor.stdout, /all checks pass/);
  });

  test("a sql.js store with its journal copies the same, and its search text is what the engine writes on PostgreSQL", { timeout: 300_000 }, async () => {
    const db = await sqliteStore("sql.js");
    assert.ok(existsSync(`${db}.lwjournal`), "the store has a journal");
    const counts = sourceCounts(db);
    const before = [sha(db), sha(`${db}.lwjournal`)];
    const schema = schemaFor("copysqljs");
    const out = await copy(db, schema);
    assert.equal(out.code, 0, out.stdout + out.stderr);
    assert.match(out.stdout, /read with sql\.js/);
    assert.match(out.stdout, /lossless-wasm doctor: all checks pass/);
    assert.deepEqual(await targetCounts(schema), counts);
    assert.deepEqual([sha(db), sha(`${db}.lwjournal`)], before, "neither file changed");

    // The same conversations stored on PostgreSQL by the engine itself.
    const native = schemaFor("native");
    await fill(pgConfig(native));
    const copied = await messagesOf(schema);
    assert.deepEqual(copied, await messagesOf(native));
    assert.ok(copied.some(([, , , , text]) => text.includes("a\u2400b")), "NUL shows as U+2400");
    assert.ok(copied.some(([, , , , text]) => text.includes("[tool call bash")), "a tool call's text");
  });

  test("a wrong password: one line without the password, exit 1", { timeout: 120_000 }, async () => {
    const db = await sqliteStore("node:sqlite");
    const wrong = new globalThis.URL(URL_);
    wrong.password = "not-the-password-9137";
    const out = await cli(["--db", db, "copy-to-postgres", "--postgres-url", wrong.href, "--postgres-schema", schemaFor("wrong")]);
    assert.equal(out.code, 1, out.stdout + out.stderr);
    assert.equal(out.stderr.trim().split("\n").length, 1, out.stderr);
    assert.match(out.stderr, /copy-to-postgres failed: .*cannot connect to PostgreSQL at postgres:\/\/[^:]+:\*\*\*@/);
    assert.match(out.stderr, /password authentication failed/);
    for (const secret of [PASSWORD, "not-the-password-9137"]) assert.ok(!(out.stdout + out.stderr).includes(secret));
  });

  test("a source at an older schema version is refused, saying how to upgrade it, and nothing is written", { timeout: 120_000 }, async () => {
    const db = await sqliteStore("node:sqlite");
    const { DatabaseSync } = process.getBuiltinModule("node:sqlite");
    const rw = new DatabaseSync(db);
    rw.exec("DELETE FROM schema_migrations WHERE version = (SELECT MAX(version) FROM schema_migrations)");
    rw.close();
    const schema = schemaFor("old");
    const out = await copy(db, schema);
    assert.equal(out.code, 1, out.stdout + out.stderr);
    assert.ok(
      out.stderr.includes(`copy-to-postgres failed: the source has schema version ${SQLITE_VERSION - 1}; this copy reads version ${SQLITE_VERSION}: open it once with this lossless-wasm (lossless-wasm-lcm status --db <file> upgrades it), then copy`),
      out.stderr,
    );
    assert.deepEqual(await pgQuery("SELECT 1 FROM information_schema.schemata WHERE schema_name = $1", [schema]), [], "the server was not touched");
  });

  test("a target holding another store's rows under the same ids is refused and left as it was", { timeout: 300_000 }, async () => {
    const db = await sqliteStore("node:sqlite");
    const schema = schemaFor("conflict");
    await fill(pgConfig(schema), FOREIGN);
    const before = await targetCounts(schema);
    const out = await copy(db, schema);
    assert.equal(out.code, 1, out.stdout + out.stderr);
    assert.match(out.stderr, /copy-to-postgres failed: the target already holds another store's rows: conversations id 1 has a different session_key/);
    assert.match(out.stderr, /nothing was copied/);
    assert.deepEqual(await targetCounts(schema), before);

    // Another store's active conversation for a copied session key, under another id.
    const other = schemaFor("conflictkey");
    await (await openNodeEngine("unused", pgConfig(other))).close();
    await pgQuery(`SELECT setval(pg_get_serial_sequence('${other}.conversations', 'id'), 100)`);
    await fill(pgConfig(other), [SESSIONS[1]]);
    const before2 = await targetCounts(other);
    const out2 = await copy(db, other);
    assert.equal(out2.code, 1, out2.stdout + out2.stderr);
    assert.match(out2.stderr, /the target already holds another store's active conversation for a session key of the source \(Key \(session_key\)=\(agent:main:tools\) already exists\.\); nothing was copied/);
    assert.deepEqual(await targetCounts(other), before2);
  });
});
