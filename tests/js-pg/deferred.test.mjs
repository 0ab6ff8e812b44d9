// The PostgreSQL driver's deferred statements (js-shim/postgres/database.js, postgres/io-thread-main.js),
// on a real server: inside a transaction a `run` is not waited for, and its failure fails the
// transaction's next waited statement (COMMIT at the latest) with the first error, leaving nothing
// written; outside a transaction a failing `run` fails at once. Through the engine, a steady turn
// waits fewer times than it sends statements, and reads no message id back. Counts and outcomes
// only, never timings.
import assert from "node:assert/strict";
import { once } from "node:events";
import { Worker } from "node:worker_threads";
import { describe, test } from "node:test";
import { assistant, pgConfig, pgQuery, PKG, schemaFor, URL_, user } from "./support.mjs";

const { openNodeEngine } = await import(new URL("shim/node/engine.js", PKG));
const { createContextEngine } = await import(new URL("shim/engine/context-engine.js", PKG));
const { READ_AHEAD_MS } = await import(new URL("shim/postgres/database.js", PKG));

/** Runs `steps` through the driver in a worker; returns each step's outcome and the stats. */
async function drive(schema, steps, { defer = true } = {}) {
  const worker = new Worker(new URL("./driver-worker.mjs", import.meta.url), { workerData: { pkg: PKG.href, url: URL_, schema, defer, steps } });
  // Both listeners first: the worker exits right after its one message, and an "exit" emitted
  // before anyone listened would never be seen.
  const exited = once(worker, "exit");
  const [result] = await once(worker, "message");
  await exited;
  return result;
}

/**
 * Runs `body` with an OpenClaw-shaped engine on a fresh schema (`name`) and the handle it opens,
 * whose driver counts statements and waits: `waitsOf(call)` is how many round trips `call` made;
 * `stamp` gives each message a timestamp of its own (from `clock`). Closes the handle after.
 */
async function withCountedEngine(name, sessionKey, clock, body) {
  const schema = schemaFor(name);
  const config = pgConfig(schema);
  const engine = createContextEngine(() => openNodeEngine("unused", config));
  const handle = await openNodeEngine("unused", config);
  const waitsOf = async (call) => {
    const before = await handle.storageStats();
    await call();
    return (await handle.storageStats()).waits - before.waits;
  };
  try {
    await body({ schema, engine, session: { sessionId: "s", sessionKey }, stamp: (m) => ({ ...m, timestamp: clock++ }), waitsOf });
  } finally {
    await handle.close();
  }
}

/**
 * Runs `body` with two gateways on a fresh schema (`name`): `a` and `b`, OpenClaw-shaped
 * engines on connections of their own (engines are shared per URL and schema, so b's URL
 * differs by a harmless parameter), and `handle`, a's engine, whose driver counts its waits.
 */
async function withTwoGateways(name, body) {
  const schema = schemaFor(name);
  const config = pgConfig(schema);
  const a = createContextEngine(() => openNodeEngine("unused", config));
  const other = { ...config, postgresUrl: `${URL_}${URL_.includes("?") ? "&" : "?"}connect_timeout=10` };
  const b = createContextEngine(() => openNodeEngine("unused", other));
  const handle = await openNodeEngine("unused", config);
  assert.notEqual(await openNodeEngine("unused", other), handle);
  try {
    await body({ schema, a, b, handle });
  } finally {
    await handle.close();
    await (await openNodeEngine("unused", other)).close();
  }
}

/** A view's messages as their texts. */
const texts = (view) => view.messages.map((m) => (typeof m.content === "string" ? m.content : m.content.map((c) => c.text).join("")));

const table = (schema) => [["exec", `CREATE TABLE ${schema}.t (id int PRIMARY KEY, note text)`]];
const insert = (schema, id) => ["run", `INSERT INTO ${schema}.t (id, note) VALUES (?1, ?2)`, [id, `row ${id}`]];

describe("deferred statements", () => {
  test("a deferred duplicate key fails the COMMIT with the first error (23505), and nothing is written", async () => {
    const schema = schemaFor("defer_commit");
    const { outcomes, stats } = await drive(schema, [
      ...table(schema),
      ["run", "BEGIN"],
      insert(schema, 1),
      insert(schema, 1), // the first failure
      insert(schema, 2), // refused by the server after it (25P02), not reported
      ["run", "COMMIT"],
      ["run", "ROLLBACK"],
    ]);
    assert.deepEqual(outcomes.slice(1, 5).map((o) => o.ok), [true, true, true, true], "the deferred statements were acknowledged at once");
    const commit = outcomes[5];
    assert.equal(commit.code, "23505", JSON.stringify(commit));
    // Made in the I/O thread, it crossed to the driver's thread as its class (errors.js).
    assert.equal(commit.postgresError, true, JSON.stringify(commit));
    assert.equal(commit.name, "PostgresError");
    assert.equal(commit.fromIoThread, true, JSON.stringify(commit));
    assert.match(commit.error, /^PostgreSQL ERROR 23505: duplicate key value violates unique constraint .*sent without waiting for its answer: INSERT INTO/);
    assert.doesNotMatch(commit.error, /25P02/);
    assert.equal(outcomes[6].ok, true, "the engine's ROLLBACK after it succeeds");
    assert.deepEqual(await pgQuery(`SELECT COUNT(*) FROM ${schema}.t`), [["0"]]);
    assert.ok(stats.waits < stats.statements, JSON.stringify(stats));
  });

  test("the next read after a deferred failure fails with it; after ROLLBACK the connection works again", async () => {
    const schema = schemaFor("defer_read");
    const { outcomes } = await drive(schema, [
      ...table(schema),
      ["run", "BEGIN"],
      insert(schema, 1),
      ["run", `INSERT INTO ${schema}.t (id, note) VALUES (?1, ?2)`, [1, "again"]],
      ["all", `SELECT COUNT(*) FROM ${schema}.t`],
      insert(schema, 3), // after the failure: not sent
      ["run", "ROLLBACK"],
      // The same statement texts again, on the same connection (its prepared statements intact).
      ["run", "BEGIN"],
      insert(schema, 1),
      insert(schema, 2),
      ["all", `SELECT COUNT(*) FROM ${schema}.t`],
      ["run", "COMMIT"],
    ]);
    assert.equal(outcomes[4].code, "23505", JSON.stringify(outcomes[4]));
    assert.equal(outcomes[6].ok, true);
    assert.deepEqual(outcomes.slice(7).map((o) => o.error ?? null), [null, null, null, null, null], JSON.stringify(outcomes.slice(7)));
    assert.deepEqual(outcomes[10].rows, [[2]]);
    assert.deepEqual(await pgQuery(`SELECT id FROM ${schema}.t ORDER BY id`), [[1], [2]]);
  });

  test("a connection that breaks under deferred statements fails the COMMIT; the transaction is not continued on a new connection", async () => {
    const schema = schemaFor("defer_broken");
    const { outcomes } = await drive(schema, [
      ...table(schema),
      ["run", "BEGIN"],
      insert(schema, 1),
      // The server ends this very connection (the test's user is a superuser), with the
      // statements after it already on their way.
      ["run", "SELECT pg_terminate_backend(pg_backend_pid())"],
      insert(schema, 2),
      ["run", "COMMIT"],
      ["run", "ROLLBACK"],
      ["run", "BEGIN"],
      insert(schema, 3),
      ["run", "COMMIT"],
    ]);
    assert.deepEqual(outcomes.slice(1, 5).map((o) => o.ok), [true, true, true, true]);
    assert.equal(outcomes[5].code, "LOSSLESS_POSTGRES_BROKEN", JSON.stringify(outcomes[5]));
    assert.equal(outcomes[5].postgresError, true, JSON.stringify(outcomes[5]));
    assert.match(outcomes[5].error, /the connection to PostgreSQL at postgres:\/\/\w+:\*\*\*@.* broke .*the next one connects again/);
    assert.equal(outcomes[6].ok, true, "ROLLBACK has nothing left to do");
    assert.deepEqual(outcomes.slice(7).map((o) => o.error ?? null), [null, null, null], JSON.stringify(outcomes.slice(7)));
    assert.deepEqual(await pgQuery(`SELECT id FROM ${schema}.t ORDER BY id`), [[3]], "only the transaction on the new connection was written");
  });

  test("outside a transaction a failing run fails at once; with deferral off it fails at once inside one too", async () => {
    const schema = schemaFor("defer_outside");
    const outside = await drive(schema, [...table(schema), insert(schema, 1), insert(schema, 1), insert(schema, 2)]);
    assert.equal(outside.outcomes[2].code, "23505");
    assert.equal(outside.outcomes[3].ok, true);
    assert.equal(outside.stats.waits, outside.stats.statements, "nothing outside a transaction is deferred");
    const off = await drive(schema, [["run", "BEGIN"], insert(schema, 3), insert(schema, 1), ["run", "ROLLBACK"]], { defer: false });
    assert.equal(off.outcomes[2].code, "23505");
    assert.equal(off.stats.waits, off.stats.statements);
    assert.deepEqual(await pgQuery(`SELECT id FROM ${schema}.t ORDER BY id`), [[1], [2]]);
  });

  test("a steady turn through the engine waits fewer times than it sends statements, and stores the same rows as with deferral off", async () => {
    const rows = {};
    for (const defer of ["1", "0"]) {
      const schema = schemaFor(`defer_turns_${defer}`);
      process.env.LOSSLESS_WASM_POSTGRES_DEFER = defer;
      try {
        const config = pgConfig(schema);
        const engine = createContextEngine(() => openNodeEngine("unused", config));
        const handle = await openNodeEngine("unused", config);
        const session = { sessionId: "s", sessionKey: "agent:main:defer" };
        const messages = [];
        let clock = 1_790_000_000_000;
        const stamp = (m) => ({ ...m, timestamp: clock++ });
        for (let i = 0; i < 3; i++) {
          messages.push(stamp(user(`question ${i}`)), stamp(assistant(`answer ${i}`)));
          await engine.afterTurn({ ...session, messages, prePromptMessageCount: messages.length - 2 });
        }
        const before = await handle.storageStats();
        messages.push(stamp(user("question 3")), stamp(assistant("answer 3")));
        await engine.afterTurn({ ...session, messages, prePromptMessageCount: messages.length - 2 });
        await engine.assemble({ ...session, messages, tokenBudget: 100_000 });
        const after = await handle.storageStats();
        const statements = after.statements - before.statements;
        const waits = after.waits - before.waits;
        if (defer === "1") assert.ok(waits < statements, `waits ${waits} < statements ${statements}`);
        else assert.equal(waits, statements);
        rows[defer] = {
          messages: await pgQuery(`SELECT seq, role, token_count, identity_hash, raw_json FROM ${schema}.messages ORDER BY seq`),
          items: await pgQuery(`SELECT ordinal, message_id, summary_id, token_count FROM ${schema}.context_items ORDER BY ordinal`),
        };
        await handle.close();
      } finally {
        delete process.env.LOSSLESS_WASM_POSTGRES_DEFER;
      }
    }
    assert.equal(rows["1"].messages.length, 8);
    assert.equal(rows["1"].items.length, 8);
    assert.deepEqual(rows["1"], rows["0"]);
  });

  test("round trips per turn: a steady afterTurn waits once (COMMIT: it claims the conversation its last view read instead of reading it) and assemble not at all (its read came back with the COMMIT), showing the turn", async () => {
    await withCountedEngine("turn_waits", "agent:main:waits", 1_793_000_000_000, async ({ schema, engine, session, stamp, waitsOf }) => {
      const messages = [];
      const turn = async (i) => {
        messages.push(stamp(user(`question ${i}`)), stamp(assistant(`answer ${i}`)));
        const after = await waitsOf(() => engine.afterTurn({ ...session, messages, prePromptMessageCount: messages.length - 2 }));
        let view;
        const assemble = await waitsOf(async () => { view = await engine.assemble({ ...session, messages, tokenBudget: 100_000 }); });
        assert.deepEqual(texts(view), texts({ messages }), `turn ${i}: the view is every message, this turn's included`);
        return { after, assemble };
      };
      for (let i = 0; i < 3; i++) await turn(i);
      for (let i = 3; i < 6; i++) assert.deepEqual(await turn(i), { after: 1, assemble: 0 }, `turn ${i}`);
      const items = await pgQuery(`SELECT COUNT(*) FROM ${schema}.context_items`);
      assert.equal(Number(items[0][0]), 12, "every turn stored");
    });
  });

  test("round trips per turn: a steady commitTurn waits once (COMMIT, on a claim); a retried key costs the refused claim and the two waits of a turn that reads under the lock", async () => {
    await withCountedEngine("commit_waits", "agent:main:commitwaits", 1_794_000_000_000, async ({ schema, engine, session, stamp, waitsOf }) => {
      const messages = [];
      const waits = [];
      for (let i = 0; i < 6; i++) {
        const turn = [stamp(user(`question ${i}`)), stamp(assistant(`answer ${i}`))];
        messages.push(...turn);
        let out;
        waits.push(await waitsOf(async () => { out = await engine.commitTurn({ ...session, advancementKey: `turn-${i}`, messages: turn }); }));
        assert.equal(out?.status ?? "committed", "committed", JSON.stringify(out));
        await engine.assemble({ ...session, messages, tokenBudget: 100_000 });
      }
      assert.deepEqual(waits.slice(3), [1, 1, 1], `waits per commitTurn: ${waits}`);
      // A retry of a committed turn: the claim is refused at COMMIT (the key's primary key), and
      // the turn runs again, its lock statement finding the key: stored nothing.
      let again;
      const retried = await waitsOf(async () => { again = await engine.commitTurn({ ...session, advancementKey: "turn-5", messages: messages.slice(-2) }); });
      assert.equal(again?.status, "duplicate", JSON.stringify(again));
      assert.equal(retried, 3, "a retry waits for the refused claim and for the two of a reading turn");
      const stored = await pgQuery(`SELECT COUNT(*) FROM ${schema}.messages`);
      assert.equal(Number(stored[0][0]), 12, "every turn stored once");
    });
  });

  test("round trips per turn: a steady commitTurn + assemble (OpenClaw 2026.9's turn) waits once: assemble's read travels behind the COMMIT, and its view shows the turn", async () => {
    await withCountedEngine("commit_turn_waits", "agent:main:committurn", 1_795_000_000_000, async ({ schema, engine, session, stamp, waitsOf }) => {
      const messages = [];
      const turn = async (i) => {
        const fresh = [stamp(user(`question ${i}`)), stamp(assistant(`answer ${i}`))];
        messages.push(...fresh);
        let view;
        const waits = await waitsOf(async () => {
          const out = await engine.commitTurn({ ...session, advancementKey: `turn-${i}`, messages: fresh });
          assert.equal(out?.status, "committed", JSON.stringify(out));
          view = await engine.assemble({ ...session, messages, tokenBudget: 100_000 });
        });
        assert.deepEqual(texts(view), texts({ messages }), `turn ${i}: the view is every message, this turn's included`);
        return waits;
      };
      for (let i = 0; i < 3; i++) await turn(i);
      for (let i = 3; i < 6; i++) assert.equal(await turn(i), 1, `turn ${i}`);
      const items = await pgQuery(`SELECT COUNT(*) FROM ${schema}.context_items`);
      assert.equal(Number(items[0][0]), 12, "every turn stored");
    });
  });

  test("a steady turn's append waits once for any number of messages: ids are found by seq, tool links and context items point at the right rows, a replay stores nothing", async () => {
    await withCountedEngine("append_waits", "agent:main:append", 1_791_000_000_000, async ({ schema, engine, session, stamp, waitsOf }) => {
      const messages = [stamp(user("question 0")), stamp(assistant("answer 0"))];
      await engine.afterTurn({ ...session, messages, prePromptMessageCount: 0 });
      const turn = async (tail) => {
        messages.push(...tail);
        return waitsOf(() => engine.afterTurn({ ...session, messages, prePromptMessageCount: messages.length - tail.length }));
      };
      const two = await turn([stamp(user("question 1")), stamp(assistant("answer 1"))]);
      const five = await turn([
        stamp(user("run the tests")),
        stamp({ ...assistant(""), content: [{ type: "toolCall", id: "call_9", name: "bash", arguments: { command: "cargo test" } }], stopReason: "toolUse" }),
        stamp({ role: "toolResult", toolCallId: "call_9", toolName: "bash", content: [{ type: "text", text: "ok. 3 passed" }], isError: false }),
        stamp(assistant("all pass")),
        stamp(user("thanks")),
      ]);
      // The append's waits do not grow with the turn's messages (one per message before).
      assert.equal(five, two, `waits for 2 messages ${two}, for 5 ${five}`);
      // The host replays the last turn's messages: nothing new, nothing duplicated.
      await engine.afterTurn({ ...session, messages: [...messages, ...messages.slice(-5)], prePromptMessageCount: messages.length });
      const stored = await pgQuery(`SELECT id, seq, role FROM ${schema}.messages ORDER BY seq`);
      assert.deepEqual(stored.map((r) => Number(r[1])), [1, 2, 3, 4, 5, 6, 7, 8, 9]);
      const items = await pgQuery(`SELECT ci.ordinal, ci.message_id, m.seq FROM ${schema}.context_items ci JOIN ${schema}.messages m ON m.id = ci.message_id ORDER BY ci.ordinal`);
      assert.deepEqual(items.map((r) => Number(r[2])), [1, 2, 3, 4, 5, 6, 7, 8, 9], "each context item names its own message");
      const parts = await pgQuery(`SELECT m.seq, p.kind, p.tool_call_id FROM ${schema}.message_parts p JOIN ${schema}.messages m ON m.id = p.message_id ORDER BY m.seq, p.ordinal`);
      assert.deepEqual(parts.map((r) => [Number(r[0]), r[1], r[2]]), [[6, "tool_call", "call_9"], [7, "tool_result", "call_9"]]);
    });
  });

  test("assemble reads the conversation and what was appended since its last view in one round trip, including another gateway's turn", async () => {
    await withTwoGateways("assemble_one", async ({ a, b, handle }) => {
      const session = { sessionId: "s", sessionKey: "agent:main:assemble" };
      let clock = 1_792_000_000_000;
      const stamp = (m) => ({ ...m, timestamp: clock++ });
      const messages = [stamp(user("question 0")), stamp(assistant("answer 0"))];
      await a.afterTurn({ ...session, messages, prePromptMessageCount: 0 });
      assert.deepEqual(texts(await a.assemble({ ...session, messages, tokenBudget: 100_000 })), ["question 0", "answer 0"]);
      // Another gateway stores a turn of the same session.
      messages.push(stamp(user("question 1")), stamp(assistant("answer 1")));
      await b.afterTurn({ ...session, messages, prePromptMessageCount: 2 });
      const before = await handle.storageStats();
      const view = await a.assemble({ ...session, messages, tokenBudget: 100_000 });
      const after = await handle.storageStats();
      assert.deepEqual(texts(view), ["question 0", "answer 0", "question 1", "answer 1"]);
      assert.equal(after.waits - before.waits, 1, "one statement: the conversation and its new items");
      // A fresh engine (no cached view) shows the same.
      assert.deepEqual(texts(await b.assemble({ ...session, messages, tokenBudget: 100_000 })), texts(view));
    });
  });

  test("the read behind a COMMIT: used only by an assemble right after it; another engine call in between, a later assemble, or another gateway's turn costs at most a round trip or a turn's delay, never a message", async () => {
    await withTwoGateways("read_after_commit", async ({ schema, a, b, handle }) => {
      const waitsOf = async (call) => {
        const before = await handle.storageStats();
        await call();
        return (await handle.storageStats()).waits - before.waits;
      };
      const session = { sessionId: "s", sessionKey: "agent:main:readahead" };
      let clock = 1_796_000_000_000;
      const stamp = (m) => ({ ...m, timestamp: clock++ });
      // Every message in the order stored, and the history a's host holds (its own turns: b's
      // turn happens on another machine).
      const messages = [];
      const aHistory = [];
      const commit = async (engine, key, words) => {
        const fresh = [stamp(user(`${words} question`)), stamp(assistant(`${words} answer`))];
        messages.push(...fresh);
        if (engine === a) aHistory.push(...fresh);
        const out = await engine.commitTurn({ ...session, advancementKey: key, messages: fresh });
        assert.equal(out?.status, "committed", JSON.stringify(out));
      };
      const assemble = async () => {
        let view;
        const waits = await waitsOf(async () => { view = await a.assemble({ ...session, messages: aHistory, tokenBudget: 100_000 }); });
        return { waits, texts: texts(view) };
      };
      for (let i = 0; i < 3; i++) {
        await commit(a, `a${i}`, `a ${i}`);
        await assemble();
      }
      // Steady: the read came with the COMMIT.
      await commit(a, "a3", "a 3");
      assert.deepEqual(await assemble(), { waits: 0, texts: texts({ messages }) });
      // An engine call between the turn and assemble (a search): the read is dropped, and
      // assemble reads again, seeing the same.
      await commit(a, "a4", "a 4");
      const hits = await a.search({ ...session, pattern: "a 4 question" });
      assert.ok(hits.length > 0, `the search ran: ${JSON.stringify(hits)}`);
      assert.deepEqual(await assemble(), { waits: 1, texts: texts({ messages }) });
      // Another gateway's turn between a's COMMIT and a's assemble: a's view is as of its
      // COMMIT (as if b's turn had come a moment later) ...
      await commit(a, "a5", "a 5");
      const beforeB = texts({ messages });
      await commit(b, "b0", "b 0");
      assert.deepEqual(await assemble(), { waits: 0, texts: beforeB });
      // ... and a's next turn finds the row changed (its claim is refused), so the view after it
      // shows b's turn, every message once.
      await commit(a, "a6", "a 6");
      assert.deepEqual((await assemble()).texts, texts({ messages }));
      // An assemble that comes later than READ_AHEAD_MS after the COMMIT (the next prompt, after
      // the user's pause) reads afresh, and shows what another gateway stored meanwhile.
      await commit(a, "a7", "a 7");
      await new Promise((resolve) => setTimeout(resolve, READ_AHEAD_MS + 100));
      await commit(b, "b1", "b 1");
      assert.deepEqual(await assemble(), { waits: 1, texts: texts({ messages }) });
      const stored = await pgQuery(`SELECT COUNT(*), COUNT(DISTINCT identity_hash) FROM ${schema}.messages`);
      assert.deepEqual(stored[0].map(Number), [20, 20], "every message stored once");
    });
  });
});
