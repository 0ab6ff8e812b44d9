// A COMMIT whose answer is lost, under storage "postgres" (issue 24, item 4): the server commits
// the turn, but its answer never reaches the gateway, so the call fails although everything was
// stored, and the host retries the turn. The retry must store nothing twice: commitTurn
// (OpenClaw 2026.9) finds its advancement key and answers "duplicate"; afterTurn (2026.7, no
// key) finds the messages' identities stored. The engine runs as the plugin runs it (its worker
// thread, the driver's I/O thread) through a loopback proxy (bench/pg-proxy.mjs) that forwards
// the COMMIT and drops everything the server sends after it on that connection, closing
// nothing; the driver's timeouts are shortened (config lockTimeoutMs 1000, openNodeEngine's
// test option statementGraceMs 2000: the client gives up after 8 s). Each test checks the fault
// happened (the proxy dropped the answer of a COMMIT it forwarded; the server holds the turn and
// its key), then the outcome: one line naming the missing answer, the retry stores nothing
// twice, and the next turn is stored and shown in order. Deferral on and off.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { startDelayProxy } from "../../bench/pg-proxy.mjs";
import { doctor } from "./fault-support.mjs";
import { assistant, pgConfig, pgQuery, PKG, schemaFor, URL_, user } from "./support.mjs";

const { openNodeEngine } = await import(new URL("shim/node/engine.js", PKG));
const { createContextEngine } = await import(new URL("shim/engine/context-engine.js", PKG));
const { DEFER_ENV } = await import(new URL("shim/postgres/database.js", PKG));

const PASSWORD = new globalThis.URL(URL_).password;
const LOCK_TIMEOUT_MS = 1000;
const STATEMENT_GRACE_MS = 2000;
const QUERY_TIMEOUT_MS = LOCK_TIMEOUT_MS + STATEMENT_GRACE_MS + 5000;
/** The failed call's message, as the host sees it, for a proxy on `port`. */
const noAnswer = (port) => new RegExp(`^storage error: lossless-wasm: the connection to PostgreSQL at postgres://lcm:\\*\\*\\*@127\\.0\\.0\\.1:${port}/postgres broke \\(the server sent no answer for ${QUERY_TIMEOUT_MS} ms\\); this call failed, and the next one connects again$`);

/** Turn `i`'s two messages; their texts say which turn and which half they are. */
const turn = (i) => [user(`lost-commit turn ${i} question about the harbor plan`), assistant(`lost-commit turn ${i} answer about the harbor plan`)];
/** The tag a stored or shown message carries ("3 question"), or null. */
const tagOf = (text) => /lost-commit turn (\d+ (?:question|answer))/.exec(text)?.[1] ?? null;
const tagsOf = (messages) => messages.map((m) => tagOf(typeof m.content === "string" ? m.content : m.content.map((p) => p.text ?? "").join("")));
const tagsUpTo = (n) => [...Array(n).keys()].flatMap((i) => [`${i} question`, `${i} answer`]);

/** What the store holds, as the test compares it before and after a retry. */
async function snapshot(schema) {
  const q = (sql) => pgQuery(sql.replaceAll("S.", `${schema}.`));
  const one = async (sql) => Number((await q(sql))[0][0]);
  return {
    tags: (await q("SELECT raw_json FROM S.messages ORDER BY seq")).map(([raw]) => tagOf(raw)),
    seqs: (await q("SELECT seq FROM S.messages ORDER BY seq")).map(([s]) => Number(s)),
    identities: await one("SELECT COUNT(DISTINCT identity_hash) FROM S.messages"),
    items: await one("SELECT COUNT(*) FROM S.context_items"),
    itemMessages: await one("SELECT COUNT(DISTINCT message_id) FROM S.context_items"),
    counted: (await q("SELECT message_count FROM S.conversations ORDER BY id")).map(([n]) => Number(n)),
    advancements: (await q("SELECT advancement_key, message_count FROM S.turn_advancements ORDER BY advancement_key")).map(([k, n]) => [k, Number(n)]),
  };
}

/** The store holds turns 0..n-1, each message once, in order, each in the context once. */
function assertHoldsTurns(snap, n) {
  assert.deepEqual(snap.tags, tagsUpTo(n), "every message once, in order");
  assert.deepEqual(snap.seqs, snap.seqs.map((_, i) => snap.seqs[0] + i), "seqs without gaps or repeats");
  assert.equal(snap.identities, 2 * n, "no identity twice");
  assert.equal(snap.items, 2 * n, "one context item per message");
  assert.equal(snap.itemMessages, 2 * n, "no message twice in the context");
  assert.deepEqual(snap.counted, [2 * n], "one conversation, its running count right");
}

/** The fault happened: the proxy forwarded one COMMIT and dropped the server's answer to it. */
function assertCommitAnswerLost(proxy) {
  const { lostCommits, dropped } = proxy.traffic();
  assert.equal(lostCommits, 1, "the proxy forwarded one COMMIT with its answer lost");
  assert.ok(dropped > 0, "the server's answer was dropped");
}

/** The failed call's error: one line, no password, naming the answer that never came. */
function assertNoAnswerLine(err, proxy) {
  assert.ok(err, "the call whose COMMIT lost its answer failed");
  assert.ok(!err.message.includes("\n"), `one line: ${err.message}`);
  assert.ok(!err.message.includes(PASSWORD), "no password");
  assert.match(err.message, noAnswer(proxy.port));
}

/**
 * Runs `body` with an engine on a fresh schema, through a proxy, with short timeouts and the
 * driver's deferral as asked; `waits(call)` tells whether the call's statements were deferred.
 */
async function withProxiedEngine(label, defer, body) {
  const schema = schemaFor(label);
  const server = new globalThis.URL(URL_);
  const proxy = await startDelayProxy({ target: { host: server.hostname, port: Number(server.port) }, upMs: 0, downMs: 0 });
  const viaProxy = new globalThis.URL(URL_);
  viaProxy.port = String(proxy.port);
  const config = pgConfig(schema, { postgresUrl: viaProxy.href, lockTimeoutMs: LOCK_TIMEOUT_MS });
  // The engine's worker reads the environment when it starts: here, on the first open.
  process.env[DEFER_ENV] = defer ? "1" : "0";
  let handle;
  try {
    handle = await openNodeEngine("unused", config, { statementGraceMs: STATEMENT_GRACE_MS });
  } finally {
    delete process.env[DEFER_ENV];
  }
  const engine = createContextEngine(() => openNodeEngine("unused", config));
  const session = { sessionId: "s", sessionKey: `agent:main:${label}` };
  const deferred = async (call) => {
    const before = await handle.storageStats();
    await call();
    const after = await handle.storageStats();
    return after.waits - before.waits < after.statements - before.statements;
  };
  try {
    await body({ schema, engine, session, proxy, deferred });
    const report = await doctor(schema);
    assert.equal(report.code, 0, report.stdout + report.stderr);
    assert.match(report.stdout, /all checks pass/);
  } finally {
    await handle.close();
    await proxy.close();
  }
}

describe("storage postgres: a COMMIT whose answer is lost", () => {
  for (const defer of [true, false]) {
    const mode = `deferral ${defer ? "on" : "off"}`;

    test(`commitTurn: the call fails with one line though the turn committed; the host's retry answers "duplicate" and stores nothing twice; the next turn is stored (${mode})`, { timeout: 120_000 }, async () => {
      await withProxiedEngine(`lostc${defer ? "d" : "w"}`, defer, async ({ schema, engine, session, proxy, deferred }) => {
        const commit = (key, messages) => engine.commitTurn({ ...session, advancementKey: key, messages });
        const view = async () => tagsOf((await engine.assemble({ ...session, messages: [], tokenBudget: 100_000 })).messages);
        for (let i = 0; i < 3; i++) {
          await view();
          const messages = turn(i);
          let out;
          const wasDeferred = await deferred(async () => { out = await commit(`turn-${i}`, messages); });
          assert.deepEqual(out, { status: "committed" });
          if (i === 2) assert.equal(wasDeferred, defer, `the driver's deferral is ${defer ? "on" : "off"}`);
        }
        assertHoldsTurns(await snapshot(schema), 3);
        assert.deepEqual(proxy.traffic().dropped, 0, "nothing dropped before the fault");

        await view();
        const lost = turn(3);
        proxy.loseAnswersAfterCommit();
        const err = await commit("turn-3", lost).then(() => null, (e) => e);
        assertCommitAnswerLost(proxy);
        // The server committed it: the turn's messages and its key are stored.
        const landed = await snapshot(schema);
        assertHoldsTurns(landed, 4);
        assert.deepEqual(landed.advancements.at(-1), ["turn-3", 2], "the turn's advancement key is recorded");
        assertNoAnswerLine(err, proxy);

        // The host retries the very same turn once the network is back.
        proxy.heal();
        const again = await commit("turn-3", lost);
        assert.deepEqual(again, { status: "duplicate" }, "the retry finds the committed turn");
        assert.deepEqual(await snapshot(schema), landed, "the retry stored nothing");

        await view();
        assert.deepEqual(await commit("turn-4", turn(4)), { status: "committed" });
        const after = await snapshot(schema);
        assertHoldsTurns(after, 5);
        assert.deepEqual(after.advancements.map(([k]) => k), ["turn-0", "turn-1", "turn-2", "turn-3", "turn-4"]);
        assert.deepEqual(await view(), tagsUpTo(5), "the view shows every message once, in order");
      });
    });

    test(`afterTurn: the call fails with one line though the turn committed; the host's retry with the same messages stores nothing twice; the next turn is stored (${mode})`, { timeout: 120_000 }, async () => {
      await withProxiedEngine(`losta${defer ? "d" : "w"}`, defer, async ({ schema, engine, session, proxy, deferred }) => {
        const history = [];
        const afterTurn = () => engine.afterTurn({ ...session, messages: [...history], prePromptMessageCount: history.length - 2 });
        const view = async () => tagsOf((await engine.assemble({ ...session, messages: [...history], tokenBudget: 100_000 })).messages);
        for (let i = 0; i < 3; i++) {
          await view();
          history.push(...turn(i));
          const wasDeferred = await deferred(afterTurn);
          if (i === 2) assert.equal(wasDeferred, defer, `the driver's deferral is ${defer ? "on" : "off"}`);
        }
        assertHoldsTurns(await snapshot(schema), 3);
        assert.deepEqual(proxy.traffic().dropped, 0, "nothing dropped before the fault");

        await view();
        history.push(...turn(3));
        proxy.loseAnswersAfterCommit();
        const err = await afterTurn().then(() => null, (e) => e);
        assertCommitAnswerLost(proxy);
        const landed = await snapshot(schema);
        assertHoldsTurns(landed, 4);
        assertNoAnswerLine(err, proxy);

        proxy.heal();
        await afterTurn();
        assert.deepEqual(await snapshot(schema), landed, "the retry stored nothing");

        await view();
        history.push(...turn(4));
        await afterTurn();
        assertHoldsTurns(await snapshot(schema), 5);
        assert.deepEqual(await view(), tagsUpTo(5), "the view shows every message once, in order");
      });
    });
  }
});
