// End-to-end test of `storage: "postgres"` in the real OpenClaw hosts (2026.9.6 and 2026.7.1): two gateways
// (two sandboxes, each its own state directory, as two machines would have) share one store on
// a real PostgreSQL server that this test starts (scripts/pg-server.sh; nothing preinstalled).
// The server accepts connections only over TLS, as one on another machine should (LCM_PG_TLS=1:
// a throw-away CA and a certificate for 127.0.0.1); the URL asks for `sslmode=verify-full`
// with that CA, so every turn below also shows the real hosts' plugin working over TLS.
// Each gateway gets `pg` the way the README says (`npm install --prefix <plugin dir> pg@8.23.1`,
// the plugin dir being the "Install path" of `openclaw plugins inspect lossless-wasm`)
// and the URL from the environment (`LOSSLESS_WASM_POSTGRES_URL`), so its password is in no
// config file. Then:
//
//   1. three turns on A: stored once each in the server, every request assembled by the engine.
//      The first is a one-shot `openclaw agent --local` process, which must exit after its
//      turn (no PostgreSQL connection keeps it); then A and B run as long-lived gateways
//      (`openclaw gateway run`, as users run them) and take every other turn;
//   2. the same session continued on gateway B (the `agent` method's `sessionId` of A's session;
//      B's host has no transcript of it): B's request carries A's three notes, from the shared
//      store, and the conversation is the same row (not rotated);
//   3. back on A: its request carries B's note;
//   4. another session key on B sees none of them;
//   5. nothing of the password in either host's output or log.
//
// Run as the other e2e tests (see openclaw.e2e.test.mjs); ~6 turns of a few seconds each.

import test from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";

import {
  PLUGIN_ID,
  REPO,
  assertEngineUsedForEveryAgentRequest,
  assertNoFailureLines,
  assertTurnOk,
  describeRequests,
  e2eHosts,
  historyTexts,
  hostTitle,
  setupE2e,
} from "./e2e-support.mjs";
import { sessionIdOf } from "./openclaw-host.mjs";
import { PG_VERSION, POSTGRES_URL_ENV } from "../../js-shim/postgres/config.js";

const pg = createRequire(import.meta.url)("pg");
const PG_SERVER = path.join(REPO, "scripts", "pg-server.sh");
const CONTEXT_WINDOW = 64000;

/** Starts a throw-away server that accepts only TLS (stopped and deleted after the test);
 *  resolves its URL, verified TLS settings included. */
function startServer(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "lcm-pg-e2e-"));
  t.after(() => execFileSync("bash", [PG_SERVER, "stop", dir], { stdio: "ignore" }));
  const out = execFileSync("bash", [PG_SERVER, "start", dir], { encoding: "utf8", env: { ...process.env, LCM_PG_TLS: "1" } }).trim().split("\n");
  const url = out.at(-1);
  assert.match(url, /^postgres:\/\/lcm:[0-9a-f]+@127\.0\.0\.1:\d+\/postgres$/, `pg-server.sh start printed ${JSON.stringify(out)}`);
  return `${url}?sslmode=verify-full&sslrootcert=${path.join(dir, "tls", "ca.crt")}`;
}

/** The directory the host installed the plugin in, as a user finds it: the "Install path" that
 *  `openclaw plugins inspect lossless-wasm` prints. */
async function pluginDir(sandbox) {
  const { stdout } = await sandbox.openclaw(["plugins", "inspect", PLUGIN_ID]);
  const dir = stdout.match(/^Install path: (.+)$/m)?.[1]?.trim();
  assert.ok(dir && fs.existsSync(path.join(dir, "package.json")), `no install path with a package.json in "openclaw plugins inspect":\n${stdout.slice(0, 3000)}`);
  assert.equal(JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")).name, PLUGIN_ID);
  return dir;
}

/** A gateway: a sandboxed host with the plugin on `storage: "postgres"` and `pg` beside it. */
async function gateway(t, { hostVersion, url, schema }) {
  const e2e = await setupE2e(t, { hostVersion, contextWindow: CONTEXT_WINDOW, pluginConfig: { storage: "postgres", postgresSchema: schema } });
  const dir = await pluginDir(e2e.sandbox);
  execFileSync("npm", ["install", "--prefix", dir, "--no-audit", "--no-fund", "--prefer-offline", `pg@${PG_VERSION}`], {
    env: { ...process.env, npm_config_cache: e2e.sandbox.env.npm_config_cache },
    stdio: "pipe",
    timeout: 300_000,
  });
  assert.ok(fs.existsSync(path.join(dir, "node_modules", "pg", "package.json")), `pg was not installed in ${dir}`);
  e2e.sandbox.env[POSTGRES_URL_ENV] = url;
  return e2e;
}

/** Rows of `sql` in the store's schema. */
async function query(url, schema, sql, params = []) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`SET search_path TO ${schema}`);
    return (await client.query(sql, params)).rows;
  } finally {
    await client.end();
  }
}

/** The user-visible texts of the model's request history in `rec`'s last served request. */
function promptTexts(rec) {
  const body = rec.served.at(-1)?.body;
  assert.ok(body, `${rec.label}: no served request:\n${describeRequests(rec.requests)}`);
  return historyTexts(body).map((h) => h.text).join("\n");
}

for (const hostVersion of e2eHosts({ only: ["2026.9.6", "2026.7.1"] })) test(
  hostTitle("postgres: two gateways share one store; a session continues on the other gateway", hostVersion),
  { timeout: 20 * 60_000 },
  async (t) => {
    const url = startServer(t);
    const password = new URL(url).password;
    // The premise: the server refuses a connection without TLS.
    await assert.rejects(query(url.split("?")[0], "public", "SELECT 1"), /no pg_hba\.conf entry .*no encryption/);
    const nonce = Date.now().toString(36);
    const schema = `e2e_${nonce}`;
    const a = await gateway(t, { hostVersion, url, schema });
    const b = await gateway(t, { hostVersion, url, schema });
    const sessionKey = `agent:main:e2e-pg-${nonce}`;
    const note = (n, where) => `Postgres e2e note ${n} ${nonce} on gateway ${where}: remember the word ${["amber", "basil", "cobalt", "dune", "ember"][n - 1]}.`;

    // 1. Three turns on A: the first in a one-shot process, which exits; then both gateways.
    const oneShot = await a.turn(sessionKey, note(1, "A"), { label: "A turn 1 (agent --local)" });
    assert.ok(!oneShot.turn.timedOut, `${oneShot.label}: the host process did not exit (timed out)`);
    const sessionId = sessionIdOf(oneShot.turn.result);
    assert.ok(sessionId, `A's turn reported no sessionId: ${oneShot.turn.stdout.slice(0, 2000)}`);
    await Promise.all([a.useGateway(), b.useGateway()]);
    for (let n = 2; n <= 3; n++) await a.turn(sessionKey, note(n, "A"), { label: `A turn ${n} (gateway)` });
    const afterA = await query(url, schema, "SELECT c.id, c.session_id, c.status FROM conversations c WHERE c.session_key = $1", [sessionKey]);
    assert.deepEqual(afterA.map((c) => [c.session_id, c.status]), [[sessionId, "active"]], "one active conversation for the session, in the server");

    // 2. The same session on B, which has no transcript of it.
    const bTurn = await b.turn(sessionKey, note(4, "B"), { label: "B turn 4 (same session)", sessionId });
    const rows = await query(url, schema, "SELECT id, session_id, status FROM conversations WHERE session_key = $1 ORDER BY id", [sessionKey]);
    t.diagnostic(`A's session ${sessionId}; B's turn reported ${sessionIdOf(bTurn.turn.result)}; conversations ${JSON.stringify(rows)}`);
    const seenByB = promptTexts(bTurn);
    for (let n = 1; n <= 3; n++) assert.ok(seenByB.includes(note(n, "A")), `B's request lacks A's note ${n}:\n${seenByB.slice(0, 3000)}`);
    assert.equal(sessionIdOf(bTurn.turn.result), sessionId, "B continued A's session id");

    // 3. Back on A: B's turn is in A's request.
    const aAgain = await a.turn(sessionKey, note(5, "A"), { label: "A turn 5" });
    assert.ok(promptTexts(aAgain).includes(note(4, "B")), `A's request lacks B's note:\n${promptTexts(aAgain).slice(0, 3000)}`);

    // 4. Another session on B sees nothing of them.
    const other = await b.turn(`agent:main:e2e-pg-other-${nonce}`, `Postgres e2e other session ${nonce}: hello.`, { label: "B other session" });
    const seenByOther = promptTexts(other);
    for (let n = 1; n <= 5; n++) assert.ok(!seenByOther.includes(`note ${n} ${nonce}`), `the other session's request shows note ${n}:\n${seenByOther.slice(0, 3000)}`);

    // Every turn answered through the engine, on both gateways.
    for (const e2e of [a, b]) {
      const output = e2e.sandbox.allOutput();
      for (const rec of e2e.turns) assertTurnOk(rec, output);
      assertNoFailureLines(output);
      assertEngineUsedForEveryAgentRequest(e2e.llm, output, { minRequests: e2e.turns.length });
      // 5. The password is nowhere in what the host printed or logged.
      assert.ok(!output.includes(password), "the server's password appears in a host's output or log");
    }

    // The store: one conversation for the session, each note once, nothing of the other session in it.
    const conversations = await query(url, schema, "SELECT id, session_id, status FROM conversations WHERE session_key = $1", [sessionKey]);
    assert.deepEqual(conversations.map((c) => [c.id, c.session_id, c.status]), [[afterA[0].id, sessionId, "active"]], "the session's conversation was neither rotated nor duplicated");
    const stored = await query(url, schema, "SELECT m.raw_json FROM messages m WHERE m.conversation_id = $1 ORDER BY m.seq", [afterA[0].id]);
    const raw = stored.map((m) => m.raw_json).join("\n");
    for (const [n, where] of [[1, "A"], [2, "A"], [3, "A"], [4, "B"], [5, "A"]]) {
      const count = raw.split(note(n, where)).length - 1;
      assert.equal(count, 1, `note ${n} is stored ${count} times in the conversation (${stored.length} messages)`);
    }
    assert.ok(!raw.includes("other session"), "the other session's message is in this conversation");
    const roles = await query(url, schema, "SELECT m.role, count(*)::int AS n FROM messages m WHERE m.conversation_id = $1 GROUP BY m.role ORDER BY m.role", [afterA[0].id]);
    t.diagnostic(`stored in ${schema}: ${JSON.stringify(roles)}`);
    assert.ok(roles.some((r) => r.role === "assistant" && r.n >= 5), `the replies are stored too: ${JSON.stringify(roles)}`);

    a.markPassed();
    b.markPassed();
  },
);
