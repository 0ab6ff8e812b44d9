// storage "postgres" over TLS: gateways on other machines reach the server across a network, and
// managed servers refuse connections without TLS. This file starts a server of its own that
// accepts TCP connections only over TLS (scripts/pg-server.sh with LCM_PG_TLS=1: a throw-away CA,
// a certificate for 127.0.0.1, hostssl lines only). The connection URL carries the TLS settings
// as `pg` reads them (`sslmode`, `sslrootcert`). Turns, recall, a lock wait naming its holder
// (the side connection) and copy-to-postgres + doctor all run over TLS, every connection of the
// store is seen encrypted on the server, and a refused or unverifiable connection is one line
// naming why, without the password, whether it is in the URL's user part or a `password=`
// parameter.
import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, describe, test } from "node:test";
import { createFakeHost } from "../js/fake-host.mjs";
import { assistant, keepaliveRunning, PKG, schemaFor, turnsWithViews, URL_, user } from "./support.mjs";

const { openNodeEngine } = await import(new URL("shim/node/engine.js", PKG));
const { createContextEngine } = await import(new URL("shim/engine/context-engine.js", PKG));
const plugin = (await import(new URL("shim/index.js", PKG))).default;
const pg = createRequire(import.meta.url)("pg");
const SERVER = fileURLToPath(new URL("../../scripts/pg-server.sh", import.meta.url));
const CLI = fileURLToPath(new URL("shim/operator/cli.js", PKG));

// The server may run as another user (as root, pg-server.sh runs it as lcm-pg), who must reach DIR.
const parent = mkdtempSync(join(tmpdir(), "lcm-pg-tls-"));
chmodSync(parent, 0o755);
const dir = join(parent, "cluster");
let plain; // the server's URL as pg-server.sh prints it (no TLS settings)
let password;
let ca;
/** The server's URL with `query` (TLS settings) appended. */
const withTls = (query) => `${plain}?${query}`;
const verified = () => withTls(`sslmode=verify-full&sslrootcert=${ca}`);

before(async () => {
  plain = execFileSync("bash", [SERVER, "start", dir], { env: { ...process.env, LCM_PG_TLS: "1" }, encoding: "utf8" }).trim();
  password = new globalThis.URL(plain).password;
  ca = join(dir, "tls", "ca.crt");
  // As on the suite's server (support.mjs): the stores of every test share the extensions.
  await query("CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public; CREATE EXTENSION IF NOT EXISTS unaccent SCHEMA public");
});
after(() => {
  execFileSync("bash", [SERVER, "stop", dir]);
  rmSync(parent, { recursive: true, force: true });
});

/** Runs `sql` over a verified TLS connection of its own; rows as arrays. */
async function query(sql, params = []) {
  const client = new pg.Client({ connectionString: verified() });
  await client.connect();
  try {
    return (await client.query({ text: sql, values: params, rowMode: "array" })).rows;
  } finally {
    await client.end();
  }
}

/** The store's connections on the server (by application_name) and whether each is encrypted. */
const storeConnections = (schema) => query("SELECT a.application_name, s.ssl, s.version FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid) WHERE starts_with(a.application_name, $1)", [`lossless-wasm ${schema} `]);

/** The error a first turn of a store at `url` fails with. */
async function firstTurnError(url, label) {
  const engine = createContextEngine(() => openNodeEngine("unused.sqlite", { storage: "postgres", postgresUrl: url, postgresSchema: schemaFor(label) }));
  const err = await engine.afterTurn({ sessionId: "s", sessionKey: `agent:main:${label}`, messages: [user("hello"), assistant("hi")], prePromptMessageCount: 0 }).then(() => null, (e) => e);
  assert.ok(err, "the turn failed");
  return err.message;
}

describe("storage postgres over TLS", () => {
  test("the server refuses a connection without TLS (the test's premise)", async () => {
    const client = new pg.Client({ connectionString: plain });
    await assert.rejects(client.connect(), /no pg_hba\.conf entry .*no encryption/);
    const [[ssl]] = await query("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()");
    assert.equal(ssl, true);
  });

  test("turns, assemble and recall over a verified TLS connection, every connection of the store encrypted", async () => {
    const schema = schemaFor("tls");
    const engine = createContextEngine(() => openNodeEngine("unused.sqlite", { storage: "postgres", postgresUrl: verified(), postgresSchema: schema }));
    const session = { sessionId: "s", sessionKey: "agent:main:tls" };
    await turnsWithViews(engine, session, { word: "lighthouse-8812", at: 2 });
    assert.equal(Number((await query(`SELECT COUNT(*) FROM ${schema}.messages`))[0][0]), 10);
    const found = await engine.search({ ...session, pattern: "lighthouse-8812" });
    assert.equal(found.length, 1, JSON.stringify(found));

    const connections = await storeConnections(schema);
    assert.ok(connections.length >= 1, "the store holds a connection open");
    for (const [name, ssl, version] of connections) assert.ok(ssl === true && /^TLS/.test(version), `${name} is encrypted (${ssl}, ${version})`);
    // Keepalive is set on the TCP socket under TLS too.
    const [[clientPort]] = await query("SELECT client_port FROM pg_stat_activity WHERE starts_with(application_name, $1)", [`lossless-wasm ${schema} `]);
    assert.equal(keepaliveRunning(Number(clientPort), Number(new globalThis.URL(plain).port)), true, "the TLS connection is probed while idle");
  });

  test("a lock wait past lockTimeoutMs names its holder over TLS too (the side connection)", { timeout: 60_000 }, async () => {
    const schema = schemaFor("tlslock");
    const engine = createContextEngine(() => openNodeEngine("unused.sqlite", { storage: "postgres", postgresUrl: verified(), postgresSchema: schema, lockTimeoutMs: 1500 }));
    const session = { sessionId: "s", sessionKey: "agent:main:tlslock" };
    const messages = [user("first"), assistant("one")];
    await engine.afterTurn({ ...session, messages, prePromptMessageCount: 0 });
    const holder = new pg.Client({ connectionString: verified(), application_name: "tls lock holder" });
    await holder.connect();
    try {
      await holder.query(`BEGIN; SELECT id FROM ${schema}.conversations FOR UPDATE`);
      messages.push(user("second"), assistant("two"));
      const err = await engine.afterTurn({ ...session, messages, prePromptMessageCount: 2 }).then(() => null, (e) => e);
      assert.ok(err, "the turn waiting on the held row failed");
      assert.match(err.message, /held a lock this call needs for over 1500 ms .*held by pid \d+ \("tls lock holder", from 127\.0\.0\.1/);
      assert.ok(!err.message.includes(password) && !err.message.includes("\n"), err.message);
      await holder.query("ROLLBACK");
    } finally {
      await holder.end();
    }
    await engine.afterTurn({ ...session, messages, prePromptMessageCount: 2 });
    assert.equal(Number((await query(`SELECT COUNT(*) FROM ${schema}.messages`))[0][0]), 4);
  });

  test("without TLS, with a certificate the client cannot verify or for another host, or TLS asked of a server without it: one line naming why and what to change, never the password", async () => {
    const refused = await firstTurnError(plain, "notls");
    assert.match(refused, /cannot connect to PostgreSQL at postgres:\/\/lcm:\*\*\*@127\.0\.0\.1:\d+\/postgres: .*no pg_hba\.conf entry .*no encryption \(the server accepts this connection only over TLS: add sslmode=verify-full to the URL/);
    const unverified = await firstTurnError(withTls("sslmode=verify-full"), "noca");
    assert.match(unverified, /cannot connect to PostgreSQL at postgres:\/\/lcm:\*\*\*@127\.0\.0\.1:\d+\/postgres\?sslmode=verify-full: .*unable to verify.* \(the server's certificate was not signed by a CA this process trusts: name the CA's certificate file with sslrootcert=<file>/);
    const missing = await firstTurnError(withTls(`sslmode=verify-full&sslrootcert=${join(dir, "tls", "missing.crt")}`), "missingca");
    assert.match(missing, /cannot connect to PostgreSQL .*: ENOENT: no such file or directory, open '.*missing\.crt'/);
    // The certificate names 127.0.0.1 only; localhost reaches the same server.
    const otherName = await firstTurnError(`${plain.replace("@127.0.0.1:", "@localhost:")}?sslmode=verify-full&sslrootcert=${ca}`, "altname");
    assert.match(otherName, /at postgres:\/\/lcm:\*\*\*@localhost:\d+\/postgres\?.*\(the server's certificate is for another host name: connect by a name the certificate lists\)/);
    // The suite's shared server has TLS off.
    const off = await firstTurnError(`${URL_}?sslmode=verify-full&sslrootcert=${ca}`, "tlsoff");
    assert.match(off, /does not support SSL.* \(the server has TLS off: remove sslmode from the URL, or turn ssl on in the server\)/);
    for (const message of [refused, unverified, missing, otherName, off]) {
      assert.ok(!message.includes(password) && !message.includes(new globalThis.URL(URL_).password), message);
      assert.ok(!message.includes("\n"), `one line: ${message}`);
    }
  });

  test("a password given as a URL parameter works and is hidden like one in the user part", async () => {
    const url = new globalThis.URL(plain);
    const bare = `postgres://${url.username}@${url.host}${url.pathname}`;
    const schema = schemaFor("pwparam");
    const h = createFakeHost({ pluginConfig: { storage: "postgres", postgresUrl: `${bare}?password=${password}&sslmode=verify-full&sslrootcert=${ca}`, postgresSchema: schema }, stateDir: "/nonexistent" });
    h.load(plugin);
    await h.runTurn("lossless-wasm", { sessionId: "s", sessionKey: "agent:main:pwparam", history: [], turn: [user("stored with the password as a parameter"), assistant("ok")] });
    assert.equal(Number((await query(`SELECT COUNT(*) FROM ${schema}.messages`))[0][0]), 2);

    const failing = createFakeHost({ pluginConfig: { storage: "postgres", postgresUrl: `${bare}?password=${password}&sslmode=verify-full`, postgresSchema: schemaFor("pwparamfail") }, stateDir: "/nonexistent" });
    failing.load(plugin);
    const failed = await failing.runTurn("lossless-wasm", { sessionId: "s", sessionKey: "agent:main:pwparam", history: [], turn: [user("never stored"), assistant("no")] }).then(() => null, (e) => e);
    assert.ok(failed, "the turn failed");
    assert.match(failed.message, /at postgres:\/\/lcm@127\.0\.0\.1:\d+\/postgres\?password=\*\*\*&sslmode=verify-full: /);
    assert.ok(!failed.message.includes(password), failed.message);
  });

  test("copy-to-postgres and doctor over TLS", { timeout: 120_000 }, async () => {
    const db = join(mkdtempSync(join(tmpdir(), "lcm-tls-copy-")), "lossless.sqlite");
    const h = createFakeHost({ pluginConfig: { dbPath: db, storage: "node:sqlite" }, stateDir: "/nonexistent" });
    h.load(plugin);
    const history = [];
    for (let i = 0; i < 3; i++) {
      const turn = [user(`copied question ${i}`), assistant(`copied answer ${i}`)];
      await h.runTurn("lossless-wasm", { sessionId: "s", sessionKey: "agent:main:copy", history: [...history], turn });
      history.push(...turn);
    }
    await (await openNodeEngine(db, { storage: "node:sqlite" })).close();
    const schema = schemaFor("tlscopy");
    const cli = (args) => new Promise((resolve) => {
      execFile(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH }, timeout: 100_000 }, (err, stdout, stderr) => resolve({ code: err ? err.code : 0, out: stdout + stderr }));
    });
    const copied = await cli(["--db", db, "copy-to-postgres", "--postgres-url", verified(), "--postgres-schema", schema]);
    assert.equal(copied.code, 0, copied.out);
    assert.match(copied.out, /lossless-wasm doctor: all checks pass/);
    assert.ok(!copied.out.includes(password), "the password is never printed");
    assert.equal(Number((await query(`SELECT COUNT(*) FROM ${schema}.messages`))[0][0]), 6);
    const doctor = await cli(["--storage", "postgres", "--postgres-url", verified(), "--postgres-schema", schema, "doctor"]);
    assert.equal(doctor.code, 0, doctor.out);
    assert.match(doctor.out, /all checks pass/);
    const refused = await cli(["--storage", "postgres", "--postgres-url", plain, "--postgres-schema", schema, "doctor"]);
    assert.notEqual(refused.code, 0, refused.out);
    assert.match(refused.out, /no encryption/);
    assert.ok(!refused.out.includes(password), refused.out);
    assert.ok(readFileSync(ca, "utf8").startsWith("-----BEGIN CERTIFICATE-----"));
  });
});
