// A call that waits on a lock names who holds it (issue 24; js-shim/postgres/lock-holders.js). The
// pure parts without a server: the store's application_name (host, pid and command, at most
// 63 bytes, never the command line's options) and how holders read in the error. Then, on a
// real server with real processes: a gateway's turn (fault-gateway.mjs) waits on the
// conversation's row, which another process of the store (lock-holder-child.mjs, titled as
// OpenClaw's gateway) holds past the gateway's `lockTimeoutMs`: the turn fails with one line
// naming that process, writes nothing, and the turn after the holder let go is stored.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { hostname } from "node:os";
import { describe, test } from "node:test";
import { gateway } from "./fault-support.mjs";
import { pgQuery, PKG, schemaFor, URL_ } from "./support.mjs";

const { applicationName, hostCommand, holdersText, lookupDelayFor } = await import(new URL("shim/postgres/lock-holders.js", PKG));
const PASSWORD = new globalThis.URL(URL_).password;
const count = async (schema, sql) => Number((await pgQuery(sql.replaceAll("S.", `${schema}.`)))[0][0]);
/** A backend of `schema`'s store opened by process `pid`: [backend pid, application_name, wait_event_type, state]. */
const backendOf = async (schema, pid) => (await pgQuery("SELECT pid, application_name, wait_event_type, state FROM pg_stat_activity WHERE starts_with(application_name, $1)", [`lossless-wasm ${schema} `])).filter(([, app]) => app.includes(` pid ${pid} `) || app.endsWith(` pid ${pid}`));

/** The holder: a child process of the store with an open transaction on every conversation row. */
function holderProcess(schema, title) {
  const proc = spawn(process.execPath, [new URL("./lock-holder-child.mjs", import.meta.url).pathname, schema, title], { stdio: ["pipe", "pipe", "pipe"] });
  let out = "";
  let err = "";
  proc.stderr.on("data", (d) => (err += d));
  const holding = new Promise((resolve, reject) => {
    proc.stdout.on("data", (d) => { out += d; if (/^holding .*\n/m.test(out)) resolve(out.match(/^holding (.*)$/m)[1]); });
    proc.on("exit", (code) => reject(new Error(`the holder exited (${code}) before holding: ${out} ${err}`)));
  });
  const exited = new Promise((resolve) => proc.on("exit", (code) => resolve({ code, out, err })));
  return { proc, holding, release: () => { proc.stdin.end(); return exited; } };
}

describe("a call waiting on a lock names its holder", () => {
  test("the store's application_name says which process it is, in at most 63 bytes, without the command line's options", () => {
    assert.equal(applicationName("public", { host: "host-b.example.com", pid: 311, command: "gateway" }), "lossless-wasm public host-b pid 311 gateway");
    for (const schema of ["lossless_wasm", "t_a_rather_long_schema_name_for_a_store", "s".repeat(63)]) {
      const name = applicationName(schema, { host: "a-very-long-host-name-of-a-gateway-machine.internal.example.com", pid: 4194304, command: "gateway" });
      assert.ok(Buffer.byteLength(name) <= 63, name);
      assert.ok(name.startsWith(`lossless-wasm ${schema}`.slice(0, 63)), name);
    }
    // The host name yields first: the pid and command stay while there is room.
    assert.match(applicationName("t_a_rather_long_schema_name", { host: "gateway-machine-7", pid: 4194304, command: "gateway" }), / pid 4194304 gateway$/);
    // OpenClaw's process titles, the lcm CLI's, and a plain script.
    assert.equal(hostCommand("openclaw-gateway", "/x/openclaw.mjs"), "gateway");
    assert.equal(hostCommand("openclaw-agent", "/x/openclaw.mjs"), "agent");
    assert.equal(hostCommand("lossless-wasm-lcm doctor", "/x/cli.js"), "lcm doctor");
    assert.equal(hostCommand(process.execPath, "/srv/bot/start.mjs"), "start");
    assert.ok(!hostCommand(process.execPath, "/x/cli.js").includes("postgres"));
  });

  test("holders read as pid, application name, address and time in their transaction, on one line", () => {
    const rows = [
      [4242, "lossless-wasm public host-b pid 311 gateway", "10.0.0.5", 51000, "idle in transaction", "31"],
      [4243, "psql\nwith a newline", null, -1, "active", "2"],
    ];
    assert.equal(holdersText(rows), 'pid 4242 ("lossless-wasm public host-b pid 311 gateway", from 10.0.0.5, idle in a transaction for 31 s), pid 4243 ("psql with a newline", from a local socket, in a transaction for 2 s)');
    assert.match(holdersText([...rows, ...rows]), / and 1 more$/);
    assert.equal(holdersText([]), null, "no one named: the error keeps its general wording");
    // The lookup comes well before the lock timeout, and not at all when the wait is too short.
    assert.ok(lookupDelayFor(30_000) < 30_000 / 2);
    assert.ok(lookupDelayFor(1000) < 1000 / 2);
    assert.equal(lookupDelayFor(1), null);
  });

  test("a turn that waits past lockTimeoutMs on another process's lock fails naming that process, writes nothing, and the next turn is stored", { timeout: 60_000 }, async () => {
    const schema = schemaFor("holder");
    const w = gateway(schema, "W", "agent:main:holder", { lockTimeoutMs: 1500 });
    let holder = null;
    try {
      w.send("turns 1");
      await w.until((l) => l.includes("turns-done"));
      assert.deepEqual(w.get("fail"), []);
      const [[, ownName]] = await backendOf(schema, w.proc.pid);
      assert.equal(ownName, applicationName(schema, { host: hostname(), pid: w.proc.pid, command: "fault-gateway" }), "the gateway's connection names its host, pid and command");
      const stored = await count(schema, "SELECT COUNT(*) FROM S.messages");

      holder = holderProcess(schema, "openclaw-gateway");
      assert.equal(await holder.holding, "ok | ok");
      const [[holderPid, holderName, , holderState]] = await backendOf(schema, holder.proc.pid);
      assert.equal(holderState, "idle in transaction");
      assert.match(holderName, new RegExp(` pid ${holder.proc.pid} gateway$`), "the holder's connection names it as OpenClaw's gateway");

      w.send("turns 1");
      // The fault: the gateway's connection really waits on the lock, and the holder blocks it.
      let waiting = [];
      const done = () => w.lines.filter((x) => x === "turns-done").length;
      while (!waiting.length && done() === 1) {
        waiting = (await backendOf(schema, w.proc.pid)).filter(([, , event]) => event === "Lock");
        if (!waiting.length) await new Promise((r) => setTimeout(r, 20));
      }
      assert.equal(waiting.length, 1, `the turn waited on a lock: ${w.lines.join(" | ")}`);
      const [[blockers]] = await pgQuery("SELECT pg_blocking_pids($1)", [waiting[0][0]]);
      assert.ok(blockers.map(Number).includes(holderPid), `blocked by the holder: ${blockers}`);

      await w.until(() => done() === 2);
      const [failure, ...more] = w.get("fail");
      assert.equal(more.length, 0);
      assert.ok(failure, "the turn failed instead of waiting for as long as the holder keeps the lock");
      const line = failure.replace(/^W-1 /, "");
      const named = `held by pid ${holderPid} ("${holderName}", from 127.0.0.1, idle in a transaction for `;
      assert.ok(line.includes(named), `the holder is named: ${line}`);
      assert.match(line, /^storage error: lossless-wasm: another connection to PostgreSQL at postgres:\/\/lcm:\*\*\*@127\.0\.0\.1:\d+\/postgres held a lock this call needs for over 1500 ms \(config `lockTimeoutMs`\): held by pid \d+ \(.*in a transaction for \d+ s\); this call failed and wrote nothing$/);
      assert.ok(!line.includes("\\n"), "one line");
      assert.ok(!line.includes(PASSWORD), "no password");
      assert.equal(await count(schema, "SELECT COUNT(*) FROM S.messages"), stored, "nothing of the failed turn was written");

      const { code, out } = await holder.release();
      holder = null;
      assert.equal(code, 0, out);
      w.send("turns 1");
      await w.until(() => done() === 3);
      assert.deepEqual(w.get("ack").slice(-1), ["W-2"], "the turn after the holder let go is stored");
      assert.equal(await count(schema, "SELECT COUNT(*) FROM S.messages"), stored + 2);
    } finally {
      await holder?.release();
      await w.end();
    }
  });
});
