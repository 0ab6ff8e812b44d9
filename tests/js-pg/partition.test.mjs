// A network partition under the PostgreSQL driver (issue 24): the client's query timeout
// (postgres/database.js timeoutsFor, `query_timeout`) ends a call the server never answers. The driver
// runs alone in a worker thread (driver-thread.mjs), connected through a loopback proxy
// (bench/pg-proxy.mjs) that goes silent in both directions mid-transaction without closing
// anything. Its timeouts are shortened (lockTimeoutMs 200, statementGraceMs 500: the client
// gives up after 5.7 s). The test checks the partition happened (the proxy dropped the call's
// bytes; the server still sees the transaction idle, its last statement before the partition),
// then the outcome: one line naming the missing answer, nothing of the transaction stored, and
// the next statement after the partition heals works on a new connection.
import assert from "node:assert/strict";
import { Worker } from "node:worker_threads";
import { describe, test } from "node:test";
import { startDelayProxy } from "../../bench/pg-proxy.mjs";
import { pgQuery, PKG, schemaFor, URL_, waitUntil } from "./support.mjs";

const PASSWORD = new globalThis.URL(URL_).password;
const TIMEOUTS = { lockTimeoutMs: 200, statementGraceMs: 500 };
const QUERY_TIMEOUT_MS = 200 + 500 + 5000;

/** The store's backends on the server: [state, query]. */
const backends = (schema) => pgQuery("SELECT state, query FROM pg_stat_activity WHERE starts_with(application_name, $1)", [`lossless-wasm ${schema} `]);

describe("storage postgres: a network partition", () => {
  for (const defer of [true, false]) {
    test(`the server never answers: the call fails after the query timeout with one line, nothing half-applied, the next call connects again (deferral ${defer ? "on" : "off"})`, { timeout: 60_000 }, async () => {
      const schema = schemaFor(`partition${defer ? "d" : "w"}`);
      await pgQuery(`CREATE SCHEMA ${schema}; CREATE TABLE ${schema}.t (n int)`);
      const target = new globalThis.URL(URL_);
      const proxy = await startDelayProxy({ target: { host: target.hostname, port: Number(target.port) }, upMs: 0, downMs: 0 });
      const viaProxy = new globalThis.URL(URL_);
      viaProxy.port = String(proxy.port);
      const thread = new Worker(new URL("./driver-thread.mjs", import.meta.url), { workerData: { driver: new URL("shim/postgres/database.js", PKG).href, url: viaProxy.href, schema, defer, ...TIMEOUTS } });
      const send = (statements) => new Promise((resolve) => { thread.once("message", resolve); thread.postMessage(statements); });
      try {
        assert.deepEqual(await send(["INSERT INTO t VALUES (1)", "BEGIN", "INSERT INTO t VALUES (2)"]), ["ok", "ok", "ok"]);
        // The transaction's INSERT reached the server (deferred, it is not answered yet).
        let seen = [];
        await waitUntil(async () => {
          seen = await backends(schema);
          return seen.length === 1 && seen[0][0] === "idle in transaction" && seen[0][1].includes("VALUES (2)");
        }, "the transaction's INSERT to reach the server");
        assert.equal(proxy.traffic().connections, 1, "one connection so far: the statements looked nothing up on the side");

        // The fault: from here nothing crosses, in either direction, and nothing is closed.
        proxy.partition();
        const [update, commit] = await send(["UPDATE t SET n = 20 WHERE n = 2", "COMMIT"]);
        assert.ok(proxy.traffic().dropped > 0, "the partition dropped the call's bytes");
        assert.deepEqual(await backends(schema), seen, "the server never saw the rest of the transaction: still idle after its INSERT");

        const noAnswer = new RegExp(`^error lossless-wasm: the connection to PostgreSQL at postgres://lcm:\\*\\*\\*@127\\.0\\.0\\.1:${proxy.port}/postgres broke \\(the server sent no answer for ${QUERY_TIMEOUT_MS} ms\\); this call failed, and the next one connects again$`);
        // Deferred, the UPDATE is acknowledged at once and the COMMIT reports the missing answer;
        // waited, the UPDATE reports it and the COMMIT of the failed transaction fails the same way.
        assert.equal(defer ? update : update.replace(noAnswer, "matched"), defer ? "ok" : "matched", update);
        assert.match(commit, noAnswer);
        for (const line of [update, commit]) {
          assert.ok(!line.includes("\n"), "one line");
          assert.ok(!line.includes(PASSWORD), "no password");
        }

        // The partition heals: the connections that lived through it are reset, the server ends
        // the transaction, and nothing of it is stored.
        proxy.heal();
        await waitUntil(async () => (await backends(schema)).length === 0, "the server to end the partitioned connection", { everyMs: 20 });
        assert.deepEqual((await pgQuery(`SELECT n FROM ${schema}.t ORDER BY n`)).map(([n]) => n), [1], "nothing of the transaction was stored");
        const before = proxy.traffic().connections;
        assert.deepEqual(await send(["INSERT INTO t VALUES (3)"]), ["ok"], "the next call works");
        assert.ok(proxy.traffic().connections > before, "on a new connection");
        assert.deepEqual((await pgQuery(`SELECT n FROM ${schema}.t ORDER BY n`)).map(([n]) => n), [1, 3]);
      } finally {
        thread.postMessage("close");
        await new Promise((r) => thread.once("exit", r));
        await proxy.close();
      }
    });
  }
});
