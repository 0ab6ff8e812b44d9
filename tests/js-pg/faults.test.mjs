// Faults of storage "postgres" at the level of the Node plugin and real gateway processes
// (issue 24, item 4): the server restarting while a gateway commits turns, the server down when
// a gateway opens, a gateway SIGKILLed mid-compaction (its summary request in flight, or its
// apply half written), two gateways compacting the same range at once, and a connection lost
// inside a transaction. Real server (scripts/pg-server.sh, which this file stops and starts
// through LCM_PG_TEST_DIR), real child processes (fault-gateway.mjs) with scripted LLMs.
// Each test first checks that its fault really happened, then the outcome: every acknowledged
// turn stored once, nothing half-applied (doctor passes), the next call works, and each failure
// is one line that names no password, shows no SQL or stack, and says what to do.
import assert from "node:assert/strict";
import { Worker } from "node:worker_threads";
import { after, describe, test } from "node:test";
import { doctor, gateway, lcm, serverDown, serverUp } from "./fault-support.mjs";
import { pgClient, pgQuery, PKG, schemaFor, URL_, waitUntil } from "./support.mjs";

const PASSWORD = new globalThis.URL(URL_).password;
const CANNOT_CONNECT = /^storage error: lossless-wasm: cannot connect to PostgreSQL at postgres:\/\/lcm:\*\*\*@127\.0\.0\.1:\d+\/postgres: .*; this call failed: check that the server is running and accepts this URL, the next call tries again$/;
const BROKE = /^storage error: lossless-wasm: the connection to PostgreSQL at postgres:\/\/lcm:\*\*\*@127\.0\.0\.1:\d+\/postgres broke .*; this call failed, and the next one connects again$/;
const wait = (ms) => new Promise((r) => setTimeout(r, ms));
const count = async (schema, sql) => Number((await pgQuery(sql.replaceAll("S.", `${schema}.`)))[0][0]);
// The store's connections: their application_name starts with this (host, pid and command follow).
const app = (schema) => `lossless-wasm ${schema} `;

/** A failure as the host logs it: one line (the child shows a newline as "\n"), no password,
 *  no stack, no statement text. */
function assertOneClearLine(line) {
  assert.ok(!line.includes("\\n"), `one line: ${line}`);
  assert.ok(!line.includes(PASSWORD), `no password: ${line}`);
  assert.doesNotMatch(line, /\bat .*:\d+:\d+|running `|SELECT |INSERT /, `no stack or SQL: ${line}`);
}

/** Turn keys by how many messages each has stored, and the stored advancement keys. */
async function storedTurns(schema) {
  const perKey = new Map((await pgQuery(`SELECT substring(raw_json from '"([A-Z]+-[0-9]+): '), COUNT(*) FROM ${schema}.messages GROUP BY 1`)).map(([k, n]) => [k, Number(n)]));
  const advanced = (await pgQuery(`SELECT advancement_key FROM ${schema}.turn_advancements`)).map(([k]) => k);
  return { perKey, advanced };
}

/** Nothing half-applied: doctor passes, no message or summary twice in the context, and no
 *  summary without its sources and its place in the context. */
async function assertWhole(schema) {
  const report = await doctor(schema);
  assert.equal(report.code, 0, report.stdout + report.stderr);
  assert.match(report.stdout, /all checks pass/);
  assert.equal(await count(schema, "SELECT COUNT(*) FROM (SELECT message_id FROM S.context_items WHERE message_id IS NOT NULL GROUP BY 1 HAVING COUNT(*) > 1) d"), 0, "no message twice in the context");
  assert.equal(await count(schema, "SELECT COUNT(*) FROM (SELECT summary_id FROM S.context_items WHERE summary_id IS NOT NULL GROUP BY 1 HAVING COUNT(*) > 1) d"), 0, "no summary twice in the context");
  assert.equal(await count(schema, "SELECT COUNT(*) FROM S.summaries s WHERE NOT EXISTS (SELECT 1 FROM S.summary_messages m WHERE m.summary_id = s.id) AND NOT EXISTS (SELECT 1 FROM S.summary_sources x WHERE x.condensed_summary_id = s.id)"), 0, "every summary has its sources");
  assert.equal(await count(schema, "SELECT COUNT(*) FROM (SELECT message_id FROM S.summary_messages sm JOIN S.summaries s ON s.id = sm.summary_id WHERE s.depth = 0 GROUP BY 1 HAVING COUNT(*) > 1) d"), 0, "no message summarized twice");
}

/** Waits until none of the store's connections is left on the server. */
/** A new gateway "L" whose LLM answers at once compacts `key`'s conversation. */
async function anotherGatewayCompacts(schema, key) {
  const l = gateway(schema, "L", key);
  l.send("release");
  l.send("compact 2400");
  await l.until(() => l.lines.some((x) => /^(compacted|fail compact) /.test(x)));
  const [report] = l.get("compacted");
  assert.ok(report, l.lines.join("\n"));
  assert.equal(JSON.parse(report).compacted, true, report);
  await l.end();
}

async function connectionsGone(schema) {
  await waitUntil(async () => Number((await pgQuery("SELECT COUNT(*) FROM pg_stat_activity WHERE starts_with(application_name, $1)", [app(schema)]))[0][0]) === 0, "the store's connections to end", { everyMs: 20 });
}

// A test that fails while the server is down must not leave it down for the next one.
let serverIsDown = false;
const down = async () => { await serverDown(); serverIsDown = true; };
const up = async () => { await serverUp(); serverIsDown = false; };
after(async () => { if (serverIsDown) await serverUp(); });

describe("storage postgres: faults", () => {
  test("the server restarts while a gateway commits turns: one line per failed turn, the next turn works, every acknowledged turn stored once", { timeout: 60_000 }, async () => {
    const schema = schemaFor("restart");
    const g = gateway(schema, "R", "agent:main:restart");
    g.send("loop");
    await g.until(() => g.get("ack").length >= 3);
    // Mid-turn: another connection holds the conversation's row lock, so the gateway's next turn
    // waits inside its transaction when the server goes down.
    const holder = await pgClient();
    holder.on("error", () => {});
    await holder.query(`BEGIN; SELECT id FROM ${schema}.conversations FOR UPDATE`);
    const waiting = "SELECT COUNT(*) FROM pg_stat_activity WHERE starts_with(application_name, $1) AND wait_event_type = 'Lock'";
    await waitUntil(async () => Number((await pgQuery(waiting, [app(schema)]))[0][0]) > 0, "the turn to wait on the held row");
    const failsBefore = g.get("fail").length;
    await down();
    try {
      // The fault really happened: the server refuses connections, the turn in flight failed
      // on its broken connection, and the turns after it cannot connect.
      const refused = await pgQuery("SELECT 1").then(() => null, (e) => e);
      assert.match(refused?.message ?? "", /ECONNREFUSED/, "the server is down");
      await g.until(() => g.get("fail").length >= failsBefore + 3);
    } finally {
      await up();
      holder.end().catch(() => {});
    }
    const outage = g.get("fail").slice(failsBefore).map((l) => l.replace(/^\S+ /, ""));
    assert.match(outage[0], BROKE, "the turn in flight failed on its broken connection");
    assert.match(outage[0], /57P01: terminating connection due to administrator command/);
    assert.match(outage.at(-1), CANNOT_CONNECT);
    const acksAtUp = g.get("ack").length;
    await g.until(() => g.get("ack").length >= acksAtUp + 3);
    g.send("stop");
    await g.until(() => g.lines.includes("stopped"));
    const exit = await g.end();
    assert.equal(exit.code, 0, g.stderr);
    assert.equal(g.stderr, "", "nothing on stderr: no unhandled error");

    // Each failed turn is one line that says what happened and what to do.
    const fails = g.get("fail");
    for (const line of fails) {
      const message = line.replace(/^\S+ /, "");
      assertOneClearLine(message);
      assert.ok(CANNOT_CONNECT.test(message) || BROKE.test(message), message);
    }
    // Once a turn succeeded after the server came back, no later turn failed.
    const firstAckAfter = g.lines.indexOf(`ack ${g.get("ack")[acksAtUp]}`);
    assert.deepEqual(g.lines.slice(firstAckAfter).filter((l) => l.startsWith("fail ")), []);

    // Every acknowledged turn stored once; a failed one wholly or not at all (a commit cut by the
    // shutdown may have landed).
    const { perKey, advanced } = await storedTurns(schema);
    const acked = g.get("ack");
    assert.deepEqual(acked.filter((k) => !advanced.includes(k)), [], "every acknowledged turn is stored");
    assert.equal(new Set(advanced).size, advanced.length);
    for (const key of advanced) assert.equal(perKey.get(key), 2, `turn ${key} has both its messages, once`);
    assert.deepEqual([...perKey.keys()].filter((k) => !advanced.includes(k)), [], "no messages of a turn that was not stored");
    assert.equal(await count(schema, "SELECT COUNT(*) FROM S.messages"), 2 * advanced.length);
    await assertWhole(schema);
  });

  test("the server is down when a gateway opens: its first call fails with one line, and a later call in the same process works", { timeout: 30_000 }, async () => {
    const schema = schemaFor("startdown");
    await down();
    try {
      const refused = await pgQuery("SELECT 1").then(() => null, (e) => e);
      assert.match(refused?.message ?? "", /ECONNREFUSED/, "the server is down");
      const g = gateway(schema, "S", "agent:main:startdown");
      g.send("turns 1");
      await g.until(() => g.lines.includes("turns-done"));
      const [fail] = g.get("fail");
      assert.ok(fail, g.lines.join("\n"));
      const message = fail.replace(/^\S+ /, "");
      assertOneClearLine(message);
      // The open's own error (not wrapped by the engine: no engine is open yet).
      assert.match(message, /^lossless-wasm: cannot connect to PostgreSQL at postgres:\/\/lcm:\*\*\*@127\.0\.0\.1:\d+\/postgres: connect ECONNREFUSED .*; this call failed: check that the server is running and accepts this URL, the next call tries again$/);
      await up();
      g.send("turns 2");
      await g.until(() => g.lines.filter((l) => l === "turns-done").length === 2);
      assert.deepEqual(g.get("ack"), ["S-1", "S-2"], g.lines.join("\n"));
      assert.equal((await g.end()).code, 0);
      assert.equal(g.stderr, "");
    } finally {
      if (serverIsDown) await up();
    }
    const { advanced } = await storedTurns(schema);
    assert.deepEqual(advanced.sort(), ["S-1", "S-2"]);
    assert.equal(await count(schema, "SELECT COUNT(*) FROM S.messages"), 4);
  });

  test("a gateway killed while its summary request is in flight leaves nothing half-applied, and another gateway then compacts", { timeout: 30_000 }, async () => {
    const schema = schemaFor("killllm");
    const key = "agent:main:killllm";
    const k = gateway(schema, "K", key);
    k.send("turns 10");
    await k.until(() => k.lines.includes("turns-done"));
    k.send("compact 2400");
    await k.until(() => k.get("asked").length === 1);
    // The fault: the request is out, unanswered, and no transaction is open across it.
    const [[state]] = await pgQuery("SELECT state FROM pg_stat_activity WHERE starts_with(application_name, $1)", [app(schema)]);
    assert.equal(state, "idle", "no transaction is held while the LLM writes");
    k.proc.kill("SIGKILL");
    assert.equal((await k.exited).signal, "SIGKILL");
    assert.deepEqual(k.lines.filter((l) => /^(answered|compacted|fail) /.test(l)), [], "killed before any answer");

    await connectionsGone(schema);
    assert.equal(await count(schema, "SELECT COUNT(*) FROM S.summaries"), 0);
    assert.equal(await count(schema, "SELECT COUNT(*) FROM S.context_items WHERE message_id IS NOT NULL"), 20, "every message still in the context");
    await assertWhole(schema);

    await anotherGatewayCompacts(schema, key);
    assert.equal(await count(schema, "SELECT COUNT(*) FROM S.summaries WHERE content LIKE '%written by L%'"), 1);
    await assertWhole(schema);
  });

  test("a gateway killed while its compaction's transaction is half written leaves no part of it", { timeout: 30_000 }, async () => {
    const schema = schemaFor("killapply");
    const key = "agent:main:killapply";
    const k = gateway(schema, "K", key);
    k.send("turns 10");
    await k.until(() => k.lines.includes("turns-done"));
    k.send("compact 2400");
    await k.until(() => k.get("asked").length === 1);
    // The apply writes the summary, its edges and the context items, then its event: holding the
    // events table stops it there, with the rest written in its open transaction.
    const holder = await pgClient();
    await holder.query(`BEGIN; LOCK TABLE ${schema}.compaction_events IN EXCLUSIVE MODE`);
    k.send("release");
    const stuck = `SELECT COUNT(*) FROM pg_stat_activity WHERE starts_with(application_name, $1) AND wait_event_type = 'Lock' AND backend_xid IS NOT NULL AND query LIKE '%compaction_events%'`;
    await waitUntil(async () => Number((await pgQuery(stuck, [app(schema)]))[0][0]) > 0, "the apply to wait on the events table");
    // The fault really is mid-apply: its transaction has written the summary and the context
    // items (it holds their tables' write locks), uncommitted.
    const written = `SELECT COUNT(DISTINCT l.relation) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE starts_with(a.application_name, $1) AND l.granted AND l.mode = 'RowExclusiveLock' AND l.relation IN ('${schema}.summaries'::regclass, '${schema}.summary_messages'::regclass, '${schema}.context_items'::regclass)`;
    assert.equal(Number((await pgQuery(written, [app(schema)]))[0][0]), 3, "summary, edges and context items written in the open transaction");
    k.proc.kill("SIGKILL");
    assert.equal((await k.exited).signal, "SIGKILL");
    assert.ok(k.lines.includes("answered K"), "killed after the answer, inside the apply");
    assert.deepEqual(k.get("compacted"), []);
    await holder.query("ROLLBACK");
    await holder.end();

    // The server ends the orphaned transaction once it finds the client gone.
    await connectionsGone(schema);
    assert.equal(await count(schema, "SELECT COUNT(*) FROM S.summaries"), 0, "no summary");
    assert.equal(await count(schema, "SELECT COUNT(*) FROM S.summary_messages"), 0, "no edges");
    assert.equal(await count(schema, "SELECT COUNT(*) FROM S.context_items WHERE message_id IS NOT NULL"), 20, "every message still in the context");
    await assertWhole(schema);

    await anotherGatewayCompacts(schema, key);
    await assertWhole(schema);
  });

  /** Two gateways as OpenClaw runs the plugin on one conversation: A stores 10 turns, B (started
   *  beside it, its machine's clock `bSkewMs` off when given) `bTurns`; then A starts a
   *  compaction whose summary request the test holds. */
  async function gatewayAAsksBesideB(schema, key, bTurns, bSkewMs) {
    const a = gateway(schema, "A", key, { openclaw: true });
    a.send("turns 10");
    await a.until(() => a.lines.includes("turns-done"));
    const b = gateway(schema, "B", key, { openclaw: true, skewMs: bSkewMs });
    if (bTurns) {
      b.send(`turns ${bTurns}`);
      await b.until(() => b.lines.includes("turns-done"));
    }
    a.send("compact 2400");
    await a.until(() => a.get("asked").length === 1);
    return { a, b };
  }

  // A machine whose clock is ahead would take the lease A wrote by its clock for run out, and
  // ask again, unless the engine keeps the server's time (postgres/database.js clockOffsetMs).
  for (const [label, skewMs] of [["", undefined], [" on a machine whose clock is 2 min ahead", 120_000]]) test(`two gateways compacting one conversation at once: the second${label} asks for nothing while the first's request is leased`, { timeout: 60_000 }, async () => {
    const schema = schemaFor("lease");
    const { a, b } = await gatewayAAsksBesideB(schema, "agent:main:lease", 0, skewMs);
    try {
      // A has stored more than one turn: a gateway whose request outlives its turns, leased.
      const [[runs]] = await pgQuery(`SELECT summary_runs_json FROM ${schema}.conversations`);
      assert.ok(JSON.parse(runs).outstanding?.leaseUntilMs > Date.now(), `A's request is leased: ${runs}`);
      // `status` on B's machine reads the lease against the server's time too.
      const status = await lcm(schema, ["status", "--session", "agent:main:lease"], { skewMs });
      assert.match(status.stdout, /summaries across processes: a request out since \S+ \(process \S+, leased until /, status.stdout + status.stderr);
      // And says how far that machine's clock is from the server's (here, 120 s ahead of it).
      if (skewMs) assert.match(status.stdout, /^clock: the store keeps its server's time, 1(19\.\d|20\.\d) s behind this machine's clock/m, status.stdout);
      else assert.doesNotMatch(status.stdout, /^clock:/m, status.stdout);
      b.send("compact 2400");
      const finished = (g) => g.until(() => g.lines.some((x) => /^(compacted|fail compact) /.test(x)));
      // B's own request would be held (its LLM answers on "release"): stop at whichever comes.
      await b.until(() => b.get("asked").length > 0 || b.lines.some((x) => /^(compacted|fail compact) /.test(x)));
      assert.equal(b.get("asked").length, 0, "B asked for no summary of its own");
      assert.match(b.lines.find((x) => x.startsWith("compacted ")), /being written by another process/);
      a.send("release");
      await finished(a);
      assert.deepEqual([...a.get("fail"), ...b.get("fail")], []);
      await Promise.all([a.end(), b.end()]);
    } finally {
      for (const g of [a, b]) if (g.proc.exitCode === null && g.proc.signalCode === null) g.proc.kill("SIGKILL");
    }
    assert.equal(await count(schema, "SELECT COUNT(*) FROM S.summarizer_calls"), 1, "the summary was paid for once");
    assert.ok(await count(schema, "SELECT COUNT(*) FROM S.summaries") >= 1, "A's summary is stored");
    await assertWhole(schema);
  });

  test("two gateways compacting the same range at once (the first stalled past its lease): one summary of it, the other answer recorded as stale", { timeout: 30_000 }, async () => {
    const schema = schemaFor("race");
    // B too is a gateway that has stored turns (a process at its first turn would take A's lost
    // request for a sign that requests here end unanswered, and ask for none).
    const { a, b } = await gatewayAAsksBesideB(schema, "agent:main:race", 2);
    // The fault: A stalls past its request's lease (dropped here, so A cannot renew it either);
    // B takes the request for abandoned and asks for the same range.
    await pgQuery(`UPDATE ${schema}.conversations SET summary_runs_json = (summary_runs_json::jsonb #- '{outstanding,leaseUntilMs}')::text`);
    b.send("compact 2400");
    await b.until(() => b.get("asked").length === 1);
    const [askedA] = a.get("asked");
    const [askedB] = b.get("asked");
    assert.equal(askedA.replace(/^A /, ""), askedB.replace(/^B /, ""), "the same range, the same prompt");
    assert.equal(await count(schema, "SELECT COUNT(*) FROM S.summaries"), 0, "neither applied yet");
    a.send("release");
    b.send("release");
    const finished = (g) => g.until(() => g.lines.some((x) => /^(compacted|fail compact) /.test(x)));
    await Promise.all([finished(a), finished(b)]);
    assert.deepEqual([...a.get("fail"), ...b.get("fail")], []);
    await Promise.all([a.end(), b.end()]);

    const [, first, last] = askedA.split(" ");
    const covering = await pgQuery(`SELECT DISTINCT s.id, s.content FROM ${schema}.summaries s JOIN ${schema}.summary_messages sm ON sm.summary_id = s.id JOIN ${schema}.messages m ON m.id = sm.message_id WHERE m.raw_json LIKE $1 OR m.raw_json LIKE $2`, [`%"${first}: %`, `%"${last}: %`]);
    assert.equal(covering.length, 1, `one summary of the range: ${JSON.stringify(covering)}`);
    assert.match(covering[0][1], /written by [AB]/);
    // Both gateways go on compacting towards the same target, so they may race on a later range
    // as well (seen since a summary's write also stores its vector): every race leaves one
    // summary of its range and the other answer recorded as stale, never two summaries of a message.
    const stale = await pgQuery(`SELECT pass, reason FROM ${schema}.compaction_events WHERE outcome = 'skipped' AND reason LIKE 'the context changed while the summary was being written%'`);
    const compacted = await count(schema, "SELECT COUNT(*) FROM S.compaction_events WHERE pass = 'leaf' AND outcome = 'compacted'");
    assert.ok(stale.length >= 1 && stale.length <= compacted, `the other answer was rejected as stale, once per summarized range (${stale.length} stale, ${compacted} summarized)`);
    assert.ok(stale.every(([pass]) => pass === "leaf"), JSON.stringify(stale));
    assert.equal(await count(schema, "SELECT COUNT(*) FROM S.summarizer_calls WHERE outcome = 'stale'"), stale.length, "each stale answer paid for once");
    const twice = await pgQuery(`SELECT message_id FROM ${schema}.summary_messages GROUP BY message_id HAVING COUNT(*) > 1`);
    assert.deepEqual(twice, [], "no message is in two summaries");
    await assertWhole(schema);
  });

  for (const defer of [true, false]) {
    test(`a connection lost inside a transaction: no later statement of it runs outside it (deferral ${defer ? "on" : "off"})`, { timeout: 30_000 }, async () => {
      const schema = schemaFor(`txlost${defer ? "d" : "w"}`);
      await pgQuery(`CREATE SCHEMA ${schema}; CREATE TABLE ${schema}.t (n int)`);
      const thread = new Worker(new URL("./driver-thread.mjs", import.meta.url), { workerData: { driver: new URL("shim/postgres/database.js", PKG).href, url: URL_, schema, defer } });
      const send = (statements) => new Promise((resolve) => { thread.once("message", resolve); thread.postMessage(statements); });
      try {
        assert.deepEqual(await send(["BEGIN", "INSERT INTO t VALUES (1)"]), ["ok", "ok"]);
        // The fault: the server ends the connection while it sits idle inside the transaction.
        const [[ended]] = await pgQuery("SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE starts_with(application_name, $1) AND state = 'idle in transaction'", [app(schema)]);
        assert.equal(Number(ended), 1);
        await connectionsGone(schema);
        // Give the driver's I/O thread the time to read the server's goodbye while idle (the case
        // that used to open a new connection and run the rest without the transaction); either
        // way the outcome below must hold.
        await wait(200);
        const broke = /^error lossless-wasm: the connection to PostgreSQL at postgres:\/\/lcm:\*\*\*@.* broke.*; this call failed, and the next one connects again$/;
        const [insert, commit, again] = await send(["INSERT INTO t VALUES (2)", "COMMIT", "INSERT INTO t VALUES (3)"]);
        if (defer) {
          // Deferred: acknowledged at once; the transaction's COMMIT reports the break.
          assert.equal(insert, "ok");
          // The break is the connection's failure, not the deferred statement's: none is named.
          assert.match(commit, broke);
        } else {
          assert.match(insert, broke);
          assert.match(commit, broke, "the rest of the lost transaction fails too");
        }
        assert.equal(again, "ok", "the next statement connects again");
        assert.deepEqual((await pgQuery(`SELECT n FROM ${schema}.t ORDER BY n`)).map(([n]) => n), [3], "nothing of the lost transaction was stored");
      } finally {
        thread.postMessage("close");
        await new Promise((r) => thread.once("exit", r));
      }
    });
  }
});
