// storage "postgres" through a connection pooler: gateways often reach a shared server through
// PgBouncer, which refuses a connection whose start-up carries parameters it does not know
// (`statement_timeout`, `lock_timeout`: the driver used to send them so and could not connect at
// all). This file starts a real PgBouncer in session pooling in front of the suite's server
// (scripts/pg-server.sh pooler-start; installed by `install` as root) and runs turns, recall, a
// lock wait that must end at lockTimeoutMs (so the server's timeouts were set on the pooled
// connection) and two gateway processes committing one session at once through it. The
// pooler's admin console (SHOW CLIENTS) shows the store's connections are its clients.
// Transaction pooling is not supported (docs/scale-out.md, The Node driver): a pooler in
// transaction mode with one server connection makes the second store's first statement meet the
// first store's prepared statement, and the call fails in one line saying what to change.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, describe, test } from "node:test";
import { assistant, pgClient, pgQuery, PKG, runGateway, schemaFor, turnsWithViews, URL_, user } from "./support.mjs";

const { openNodeEngine } = await import(new URL("shim/node/engine.js", PKG));
const { createContextEngine } = await import(new URL("shim/engine/context-engine.js", PKG));
const pg = createRequire(import.meta.url)("pg");
const SERVER = fileURLToPath(new URL("../../scripts/pg-server.sh", import.meta.url));

// PgBouncer may run as another user (as root, pg-server.sh runs it as lcm-pg), who must reach DIR.
const parent = mkdtempSync(join(tmpdir(), "lcm-pgbouncer-"));
chmodSync(parent, 0o755);
const dir = join(parent, "pooler");
let pooled; // the suite's server through PgBouncer

before(() => {
  pooled = execFileSync("bash", [SERVER, "pooler-start", dir, URL_, "session"], { encoding: "utf8" }).trim();
});
after(() => {
  execFileSync("bash", [SERVER, "pooler-stop", dir]);
  rmSync(parent, { recursive: true, force: true });
});

/** PgBouncer's clients (SHOW CLIENTS on its admin console): their application names. */
async function poolerClients() {
  const admin = new pg.Client({ connectionString: pooled.replace(/\/[^/]+$/, "/pgbouncer") });
  await admin.connect();
  try {
    return (await admin.query("SHOW CLIENTS")).rows.map((r) => r.application_name);
  } finally {
    await admin.end();
  }
}

const count = async (schema, table) => Number((await pgQuery(`SELECT COUNT(*) FROM ${schema}.${table}`))[0][0]);
const engineAt = (schema, extra = {}) => createContextEngine(() => openNodeEngine("unused.sqlite", { storage: "postgres", postgresUrl: pooled, postgresSchema: schema, ...extra }));

describe("storage postgres through PgBouncer (session pooling)", () => {
  test("the pooler refuses a start-up that carries the server's timeouts (the test's premise)", async () => {
    const client = new pg.Client({ connectionString: pooled, statement_timeout: 90_000 });
    await assert.rejects(client.connect(), /unsupported startup parameter: statement_timeout/);
  });

  test("turns, assemble and recall through the pooler, whose clients the store's connections are", async () => {
    const schema = schemaFor("pooled");
    const engine = engineAt(schema);
    const session = { sessionId: "s", sessionKey: "agent:main:pooled" };
    await turnsWithViews(engine, session, { word: "breakwater-5521", at: 3 });
    assert.equal(await count(schema, "messages"), 10);
    assert.equal((await engine.search({ ...session, pattern: "breakwater-5521" })).length, 1);
    const clients = await poolerClients();
    assert.ok(clients.some((name) => name.startsWith(`lossless-wasm ${schema} `)), `the store is a client of the pooler: ${JSON.stringify(clients)}`);
  });

  test("a lock wait through the pooler ends at lockTimeoutMs, names its holder, and the next turn is stored", { timeout: 60_000 }, async () => {
    const schema = schemaFor("pooledlock");
    const engine = engineAt(schema, { lockTimeoutMs: 1500 });
    const session = { sessionId: "s", sessionKey: "agent:main:pooledlock" };
    const messages = [user("first"), assistant("one")];
    await engine.afterTurn({ ...session, messages, prePromptMessageCount: 0 });
    const holder = await pgClient();
    try {
      await holder.query("SET application_name = 'pooled lock holder'");
      await holder.query(`BEGIN; SELECT id FROM ${schema}.conversations FOR UPDATE`);
      messages.push(user("second"), assistant("two"));
      const started = Date.now();
      const err = await engine.afterTurn({ ...session, messages, prePromptMessageCount: 2 }).then(() => null, (e) => e);
      const waited = Date.now() - started;
      assert.ok(err, "the turn waiting on the held row failed");
      // Without the server's lock_timeout on the pooled connection the wait would last until
      // the client's own timeout, a minute later.
      assert.ok(waited < 30_000, `the wait ended at the lock timeout, not the client's (${waited} ms)`);
      assert.match(err.message, /held a lock this call needs for over 1500 ms .*held by pid \d+ \("pooled lock holder"/);
      await holder.query("ROLLBACK");
    } finally {
      await holder.end();
    }
    await engine.afterTurn({ ...session, messages, prePromptMessageCount: 2 });
    assert.equal(await count(schema, "messages"), 4);
  });

  test("a pooler in transaction mode: the call fails in one line asking for session pooling, and nothing is written", { timeout: 60_000 }, async () => {
    const txDir = join(parent, "transaction-pooler");
    const viaTx = execFileSync("bash", [SERVER, "pooler-start", txDir, URL_, "transaction", "1"], { encoding: "utf8" }).trim();
    try {
      const [first, second] = [schemaFor("txa"), schemaFor("txb")];
      const open = (schema) => createContextEngine(() => openNodeEngine("unused.sqlite", { storage: "postgres", postgresUrl: viaTx, postgresSchema: schema }));
      const turn = (engine, key) => engine.afterTurn({ sessionId: "s", sessionKey: key, messages: [user("hello"), assistant("hi")], prePromptMessageCount: 0 });
      // One store alone on the pooler's one server connection works: nothing else used it.
      await turn(open(first), "agent:main:txa");
      assert.equal(await count(first, "messages"), 2);
      // A second store gets the same server session, where the first one's statements are prepared.
      const err = await turn(open(second), "agent:main:txb").then(() => null, (e) => e);
      assert.ok(err, "the second store's turn failed");
      assert.match(err.message, /the server session under the connection to PostgreSQL at postgres:\/\/lcm:\*\*\*@127\.0\.0\.1:\d+\/postgres changed between statements \(PostgreSQL ERROR (42P05|26000|08P01): .*\): a connection pooler in transaction mode is in between \(PgBouncer pool_mode = transaction\); .*needs session pooling \(pool_mode = session\) or a direct connection/);
      assert.ok(!err.message.includes("\n") && !err.message.includes(new globalThis.URL(URL_).password), err.message);
      const stored = await pgQuery("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = $1 AND table_name = 'messages'", [second]);
      if (Number(stored[0][0]) > 0) assert.equal(await count(second, "messages"), 0, "the failed turn wrote nothing");
      assert.equal(await count(first, "messages"), 2, "nor into the first store");
    } finally {
      execFileSync("bash", [SERVER, "pooler-stop", txDir]);
    }
  });

  test("two gateway processes through the pooler, committing one session at once, store every message exactly once", { timeout: 300_000 }, async () => {
    const schema = schemaFor("pooledtwo");
    const TURNS = 15;
    const run = (name) => runGateway({ schema, name, sessionKey: "agent:main:pooledtwo", turns: TURNS, env: { ...process.env, LCM_PG_GATEWAY_URL: pooled } });
    const runs = await Promise.all(["P", "Q"].map(run));
    for (const g of runs) {
      assert.equal(g.code, 0, `a gateway failed: ${g.err}`);
      assert.equal(g.acks, TURNS);
    }
    const total = 2 * 2 * TURNS;
    assert.equal(await count(schema, "messages"), total);
    assert.equal(Number((await pgQuery(`SELECT COUNT(DISTINCT identity_hash) FROM ${schema}.messages`))[0][0]), total, "no message stored twice");
    assert.equal(await count(schema, "turn_advancements"), total / 2, "every acknowledged turn stored once");
  });
});
