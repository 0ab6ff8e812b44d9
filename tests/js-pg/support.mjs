// Shared helpers for the PostgreSQL shim tests: the server's URL (from scripts/pg-server.sh; a
// run without it fails and says how to run), a fresh schema per test, and reading the store
// with `pg` directly, rows as arrays.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

export const PKG = new URL("../../dist/pkg/", import.meta.url);
const pg = createRequire(import.meta.url)("pg");

export const URL_ = process.env.LCM_PG_TEST_URL;
if (!URL_) {
  throw new Error("LCM_PG_TEST_URL is not set: these tests need a real PostgreSQL server; run them with: bash scripts/pg-server.sh run \"$NODE26_BIN/node\" --test --test-concurrency=1 tests/js-pg/");
}

let counter = 0;
/** A schema name no other test uses. */
export const schemaFor = (label) => `t_${label}_${process.pid}_${++counter}`;

/** Runs `sql` on its own connection; rows as arrays. */
export async function pgQuery(sql, params = []) {
  const client = new pg.Client({ connectionString: URL_ });
  await client.connect();
  try {
    return (await client.query({ text: sql, values: params, rowMode: "array" })).rows;
  } finally {
    await client.end();
  }
}

/** A connection of its own, for tests that hold locks. */
export async function pgClient() {
  const client = new pg.Client({ connectionString: URL_ });
  await client.connect();
  return client;
}

// Stores in different schemas share the database's extensions, which must then live in a schema
// every store's search_path has (docs/scale-out.md, "Extensions").
for (const ext of ["pg_trgm", "unaccent"]) await pgQuery(`CREATE EXTENSION IF NOT EXISTS ${ext} SCHEMA public`);

export const pgConfig = (schema, extra = {}) => ({ storage: "postgres", postgresUrl: URL_, postgresSchema: schema, ...extra });

let clock = 1_790_000_000_000;
export const user = (text) => ({ role: "user", content: text, timestamp: clock++ });
export const assistant = (text) => ({
  role: "assistant", content: [{ type: "text", text }], api: "openai-completions", provider: "mock", model: "m",
  usage: { input: 1, output: 1 }, stopReason: "stop", timestamp: clock++,
});

/**
 * Waits until `check()` (sync or async) is true, polling every `everyMs`; throws naming `what`
 * after `timeoutMs`. A test whose fault never shows must fail, not hang the suite: a pending
 * poll keeps the test file's process alive past the test's own timeout.
 */
export async function waitUntil(check, what, { timeoutMs = 20_000, everyMs = 10 } = {}) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`waited ${timeoutMs} ms for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * Whether this machine's TCP socket from 127.0.0.1:`localPort` to port `remotePort` has its
 * keepalive timer running (/proc/net/tcp's timer_active 2: an idle connection with SO_KEEPALIVE
 * set; 0 without it). Throws when no such established socket exists.
 */
export function keepaliveRunning(localPort, remotePort) {
  const hex = (port) => Number(port).toString(16).toUpperCase().padStart(4, "0");
  const lines = readFileSync("/proc/net/tcp", "utf8").split("\n").slice(1);
  for (const line of lines) {
    const f = line.trim().split(/\s+/);
    // f[1] local "0100007F:PORT", f[2] remote, f[3] state (01 established), f[5] "timer:when"
    if (f[1]?.endsWith(`:${hex(localPort)}`) && f[2]?.endsWith(`:${hex(remotePort)}`) && f[3] === "01") return f[5].split(":")[0] === "02";
  }
  throw new Error(`no established TCP socket from port ${localPort} to port ${remotePort} in /proc/net/tcp`);
}

/**
 * Runs a gateway child process (gateway-child.mjs: `turns` turns of `sessionKey` as `name` on
 * `schema`) with `env` as its whole environment; resolves {code, err, acks} once it exits (acks:
 * how many turns it acknowledged).
 */
export function runGateway({ schema, name, sessionKey, turns, env }) {
  const child = new URL("./gateway-child.mjs", import.meta.url).pathname;
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [child, schema, name, sessionKey, String(turns)], { stdio: ["ignore", "pipe", "pipe"], env });
    let out = "";
    let err = "";
    proc.stdout.on("data", (d) => (out += d));
    proc.stderr.on("data", (d) => (err += d));
    proc.on("error", reject);
    proc.on("exit", (code) => resolve({ code, err, acks: out.split("\n").filter((l) => l.startsWith("ack ")).length }));
  });
}

/** A message's text, whether its content is a string or text parts. */
export const textOf = (m) => (typeof m.content === "string" ? m.content : m.content[0].text);

/**
 * `turns` host turns of `session` on `engine`: each a `commitTurn` of a question and its answer,
 * then an `assemble` whose view must hold every message so far, in order. Turn `at`'s question
 * carries `word` (for a search). Resolves the messages.
 */
export async function turnsWithViews(engine, session, { turns = 5, word, at }) {
  const messages = [];
  for (let i = 0; i < turns; i++) {
    const pre = messages.length;
    messages.push(user(`question ${i} about the ${i === at ? word : "harbor"} plan`), assistant(`answer ${i}`));
    await engine.commitTurn({ ...session, advancementKey: `turn-${i}`, messages: messages.slice(pre) });
    const view = await engine.assemble({ ...session, messages, tokenBudget: 100_000 });
    assert.deepEqual(view.messages.map(textOf), messages.map(textOf), `the view after turn ${i}`);
  }
  return messages;
}
