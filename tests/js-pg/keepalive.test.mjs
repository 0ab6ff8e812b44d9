// The store's connection is probed by TCP keepalive while idle (postgres/io-thread-main.js KEEPALIVE):
// a NAT or firewall between a gateway and the server drops an idle connection's mapping after
// minutes without traffic, silently, and the next statement on it would wait for the client's
// query timeout (lockTimeoutMs + 65 s). The probes keep the mapping, and notice a vanished
// server within ~25 s of idle. Checked on this machine's socket table (/proc/net/tcp), with a
// connection without keepalive beside it as the premise that the check can tell them apart.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { assistant, keepaliveRunning, pgClient, pgQuery, PKG, schemaFor, URL_, user } from "./support.mjs";

const { openNodeEngine } = await import(new URL("shim/node/engine.js", PKG));
const { createContextEngine } = await import(new URL("shim/engine/context-engine.js", PKG));
const serverPort = Number(new globalThis.URL(URL_).port);

describe("storage postgres: TCP keepalive", () => {
  test("the store's idle connection has its keepalive timer running; a plain pg connection's has none", async () => {
    const plain = await pgClient();
    try {
      assert.equal(keepaliveRunning(plain.connection.stream.localPort, serverPort), false, "a connection without SO_KEEPALIVE reads as none");
    } finally {
      await plain.end();
    }
    const schema = schemaFor("keepalive");
    const engine = createContextEngine(() => openNodeEngine("unused.sqlite", { storage: "postgres", postgresUrl: URL_, postgresSchema: schema }));
    await engine.afterTurn({ sessionId: "s", sessionKey: "agent:main:keepalive", messages: [user("hello"), assistant("hi")], prePromptMessageCount: 0 });
    const ports = (await pgQuery("SELECT client_port FROM pg_stat_activity WHERE starts_with(application_name, $1)", [`lossless-wasm ${schema} `])).map(([p]) => Number(p));
    assert.equal(ports.length, 1, "the store holds one connection");
    assert.equal(keepaliveRunning(ports[0], serverPort), true, "the store's connection is probed while idle");
  });
});
