// The I/O thread of the PostgreSQL driver (database.js): holds one connection through the npm
// package `pg` (asynchronous) and runs the statements the engine's thread sends over a
// MessagePort, in the order sent. A statement the engine waits for is answered on the port, then
// counted in the shared array, which wakes the engine's thread (it blocks in Atomics.wait
// meanwhile: the engine's calls are synchronous). A statement it does not wait for (inside a
// transaction) is written at once, pipelined, and never answered; the transaction's next
// waited statement answers for it (its first failure). Owns the connection's life (connect,
// schema, reconnect after a break, a transaction kept on its connection), the conversion of
// values to and from SQLite's shapes, and error text. A waited statement that waits long is
// watched from a side connection, so a lock timeout can name the holder (lock-holders.js).
import { createRequire } from "node:module";
import { workerData } from "node:worker_threads";
import { numberedPlaceholders } from "./placeholders.js";
import { redactedUrl, tlsAdvice } from "./config.js";
import { transactionControl } from "./transaction.js";
import { applicationName, holdersText, lookupApplicationName, lookupDelayFor, watchLockWait } from "./lock-holders.js";
import { PostgresError, toWire } from "../errors.js";

/** The thread errors are sent from, as the engine's thread reports them (errors.js). */
const THREAD = "the PostgreSQL I/O thread";

const { port, flag: flagBuffer, url, schema, pgPath, connectTimeoutMs, pipeline, timeouts } = workerData;
const pg = createRequire(import.meta.url)(pgPath);
const flag = new Int32Array(flagBuffer);
const where = redactedUrl(url);
const lookupDelayMs = lookupDelayFor(timeouts?.lock_timeout);
/** Bounds on the side connection that looks up lock holders: it must never wait long itself. */
const LOOKUP_TIMEOUTS = { connectionTimeoutMillis: Math.min(connectTimeoutMs, 5_000), query_timeout: 6_000 };
const LOOKUP_STATEMENT_TIMEOUT_MS = 5_000;

/**
 * TCP keepalive on the store's connection: an idle connection is probed after 10 s, every 5 s,
 * and given up after 3 unanswered probes. The probes keep a NAT's or firewall's mapping of an
 * idle connection alive (many drop one after 4-10 minutes without traffic, silently, and the
 * next statement would then wait for the client's query timeout), and a server host that
 * vanished while the connection was idle is noticed within ~25 s, so the next call connects
 * again at once. The interval and count need Node >= 26 (older Nodes take the idle time, and
 * libuv's own interval and count).
 */
const KEEPALIVE = { idleMs: 10_000, intervalMs: 5_000, count: 3 };

/** Named (server-side prepared) statements per connection at most; a search's text varies with
 *  its filters, so past this a statement runs unnamed (parsed each time) instead of growing the
 *  server's memory for as long as the connection lives. */
const MAX_NAMED = 256;

// Values come back as SQLite has them (what the store reads, and what native_pg gives): integers
// and integral numerics as numbers (exact to 2^53, beyond any id, count or timestamp stored),
// booleans as 0/1, bytea as bytes, json as its text, void as null, everything else as text.
const integral = (text) => Number(text);
const PARSERS = new Map([
  [20, integral], // int8
  [21, integral], // int2
  [23, integral], // int4
  [26, integral], // oid
  [700, Number], // float4
  [701, Number], // float8
  [1700, Number], // numeric (SUM of bigints): integral ones are exact integers up to 2^53
  [16, (text) => (text === "t" ? 1 : 0)], // bool
  [2278, () => null], // void (SELECT pg_advisory_xact_lock(...))
]);
const text = (value) => value;
const types = {
  getTypeParser(oid, format) {
    if (oid === 17) return pg.types.getTypeParser(17, format); // bytea → Buffer
    return PARSERS.get(oid) ?? text;
  },
};

/** A parameter as `pg` sends it: bytes as a Buffer (bound in binary, so a bytea slot gets them
 *  unchanged), the rest as given (`pg` sends numbers and strings as text, which the server
 *  parses as whatever type it inferred for the slot: an integer into int4, int8, bool or text). */
const INT8_MIN = -(2n ** 63n);
const INT8_MAX = 2n ** 63n - 1n;
function param(value) {
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  // The store's integers cross from wasm as doubles, exact to 2^53; past that only its
  // sentinels occur (i64::MIN/MAX: "from the start", "no limit"), which a double rounds to
  // ±2^63 and JS would print in exponent-free but inexact digits. Sent as the int8 bounds.
  if (typeof value === "number" && Number.isInteger(value) && !Number.isSafeInteger(value)) {
    const big = BigInt(value);
    return String(big < INT8_MIN ? INT8_MIN : big > INT8_MAX ? INT8_MAX : big);
  }
  return value ?? null;
}

/** The key of the advisory lock that serializes setting up a store (src/store/backend/schema.rs). */
const MIGRATION_LOCK = "7810206435415517042";

let client = null;
let connecting = null;
const names = new Map();

/** The SQLSTATE of an error the server sent, or null. Node's socket errors have codes too, and
 *  some look like one (`EPIPE`): only an error with the server's severity carries a SQLSTATE. */
const sqlstate = (err) =>
  err?.severity && typeof err.code === "string" && /^[0-9A-Z]{5}$/.test(err.code) ? err.code : null;

/** Whether an error means the connection is gone (the next call opens a new one): anything that
 *  is not the server's answer (a socket error, a closed stream), or an answer that ends it. */
const broken = (err) =>
  !sqlstate(err) || err.severity === "FATAL" || err.severity === "PANIC" || /^(08|57P)/.test(err.code);

/** One line for a failure: the server's SQLSTATE and message, or what broke the connection. */
function describe(err, during) {
  if (sqlstate(err)) {
    const detail = err.detail ? ` (${err.detail})` : "";
    return `PostgreSQL ${err.severity ?? "ERROR"} ${err.code}: ${err.message}${detail}`;
  }
  if (err?.message === "Query read timeout")
    return `${during} PostgreSQL at ${where} failed: the server sent no answer for ${timeouts?.query_timeout} ms`;
  const reason = String(err?.message ?? err)
    .replaceAll(url, where)
    .split("\n")[0];
  return `${during} PostgreSQL at ${where} failed: ${reason}`;
}

async function connection() {
  if (client) return client;
  connecting ??= (async () => {
    // The application name lets an operator (and the tests) tell the store's connections apart,
    // and names this process to a call that waits on its locks (lock-holders.js).
    // Pipeline mode (pg >= 8.23) writes each query as it is given instead of after the previous
    // one's answer: the statements the engine does not wait for share a round trip.
    let c;
    try {
      // The client reads the files the URL names (sslrootcert, sslcert, sslkey) as it is made.
      // The server's timeouts are set by the first statement, not sent as start-up parameters:
      // a pooler (PgBouncer) refuses a connection whose start-up carries them.
      c = new pg.Client({
        connectionString: url,
        types,
        connectionTimeoutMillis: connectTimeoutMs,
        application_name: applicationName(schema),
        pipeline,
        query_timeout: timeouts?.query_timeout,
        keepAlive: true,
        keepAliveInitialDelayMillis: KEEPALIVE.idleMs,
      });
      // A connection that breaks while idle emits "error"; the next call finds it gone.
      // Its error is kept: a statement sent after it learns only that the client is unusable,
      // while this one carries the server's reason (a FATAL such as 57P01).
      c.on("error", (err) => {
        c.lostWith = err;
        if (client === c) client = null;
      });
      c.on("end", () => {
        if (client === c) client = null;
      });
      await c.connect();
      c.connection.stream.setKeepAlive(true, KEEPALIVE.idleMs, KEEPALIVE.intervalMs, KEEPALIVE.count);
      // The store lives in its own schema; the extensions (pg_trgm, unaccent) may live in public.
      // `IF NOT EXISTS` alone races (two gateways opening a new store at once: one fails on the
      // catalog's unique index), so it runs under the migrations' advisory lock
      // (POSTGRES_MIGRATION_LOCK in src/store/backend/schema.rs).
      // Its server process is asked for, not taken from the start-up's key: behind a pooler
      // that key is the pooler's (lock-holders.js looks the process's blockers up by it).
      // The server's clock too: the engine's time on a shared store is the server's
      // (clockOffsetMs), so gateways whose machines' clocks disagree agree on leases and retries.
      const setUp = await c.query(
        `BEGIN; SELECT pg_advisory_xact_lock(${MIGRATION_LOCK}); CREATE SCHEMA IF NOT EXISTS ${schema}; COMMIT; SET search_path = ${schema}, public${serverTimeouts(timeouts)}; SELECT pg_backend_pid() AS pid, extract(epoch from clock_timestamp()) * 1000 AS ms`,
      );
      const { pid, ms } = setUp.at(-1).rows[0];
      c.backendPid = Number(pid);
      clockOffsetMs = Math.round(Number(ms) - Date.now());
    } catch (err) {
      c?.end().catch(() => {});
      const reason = describe(err, "connecting to").replace(/^connecting to PostgreSQL at \S+ failed: /, "");
      throw new PostgresError(
        `lossless-wasm: cannot connect to PostgreSQL at ${where}: ${reason}${tlsAdvice(err)}; this call failed: check that the server is running and accepts this URL, the next call tries again`,
        { code: "LOSSLESS_POSTGRES_CONNECT" },
      );
    }
    client = c;
    names.clear();
    return c;
  })().finally(() => {
    connecting = null;
  });
  return connecting;
}

/** `; SET lock_timeout = …; SET statement_timeout = …` for the server's timeouts in `t` (ms). */
function serverTimeouts(t) {
  return ["lock_timeout", "statement_timeout"]
    .filter((name) => Number.isFinite(t?.[name]))
    .map((name) => `; SET ${name} = ${Math.round(t[name])}`)
    .join("");
}

/** A side connection for looking up who blocks a waited statement (watchLockWait). */
async function connectSide() {
  const side = new pg.Client({ connectionString: url, application_name: lookupApplicationName(), ...LOOKUP_TIMEOUTS });
  // Unhandled, a socket error would end this thread; the watch drops the connection instead.
  side.on("error", () => {});
  try {
    await side.connect();
    await side.query(`SET statement_timeout = ${LOOKUP_STATEMENT_TIMEOUT_MS}`);
  } catch (err) {
    side.end().catch(() => {});
    throw err;
  }
  return side;
}

/** Watches a waited statement on `c` until the returned function is called (lock-holders.js). */
const watch = (c) => (c ? watchLockWait(c, { delayMs: lookupDelayMs, connectSide }) : () => {});

/** Whether `err` says the server session under this connection changed between its statements:
 *  a statement this connection prepared (`lwN`) is unknown to the server or prepared twice, or
 *  is bound with another statement's values. Only a pooler in transaction mode does that. */
const sessionSwapped = (err) =>
  (["26000", "42P05"].includes(sqlstate(err)) && /"lw\d+"/.test(err.message)) ||
  (sqlstate(err) === "08P01" && /bind message supplies/.test(err.message));
const NEEDS_SESSION =
  "a connection pooler in transaction mode is in between (PgBouncer pool_mode = transaction); lossless-wasm keeps its prepared statements and its schema's search_path on the server session, so it needs session pooling (pool_mode = session) or a direct connection";

/** Ends `c` when it is the current connection, so the next call connects again. */
function drop(c) {
  if (c && client === c) {
    client = null;
    c.end().catch(() => {});
  }
}

/** A failure as the engine is told it, an Error with the SQLSTATE as `code` when the server
 *  gave one; a broken connection is dropped here, so the next call (outside a transaction)
 *  connects again. A lock timeout (55P03) is about another connection, not the statement: its
 *  code LOSSLESS_POSTGRES_LOCKED, like the connection failures' LOSSLESS_POSTGRES_*, keeps the
 *  statement's text out of the engine's message (src/wasm/sqljs.rs, js_err). */
function failureOf(err, c) {
  if (sqlstate(err) === "55P03") {
    const waited = timeouts?.lock_timeout ?? 0;
    const holders = holdersText(c?.lockHolders);
    const who = holders
      ? `held by ${holders}`
      : "another gateway's turn or compaction, or a lossless-wasm-lcm command (pg_stat_activity shows it)";
    return new PostgresError(
      `lossless-wasm: another connection to PostgreSQL at ${where} held a lock this call needs for over ${waited} ms (config \`lockTimeoutMs\`): ${who}; this call failed and wrote nothing`,
      { code: "LOSSLESS_POSTGRES_LOCKED" },
    );
  }
  if (sessionSwapped(err)) {
    drop(c);
    return new PostgresError(
      `lossless-wasm: the server session under the connection to PostgreSQL at ${where} changed between statements (${describe(err)}): ${NEEDS_SESSION}; this call failed`,
      { code: "LOSSLESS_POSTGRES_POOLED" },
    );
  }
  if (broken(err)) {
    drop(c);
    const cause = !sqlstate(err) && sqlstate(c?.lostWith) ? c.lostWith : err;
    return new PostgresError(
      `lossless-wasm: the connection to PostgreSQL at ${where} broke (${describe(cause, "talking to").replace(/^talking to PostgreSQL at \S+ failed: /, "")}); this call failed, and the next one connects again`,
      { code: "LOSSLESS_POSTGRES_BROKEN" },
    );
  }
  // A lost search_path reads as a table of the store missing.
  const pooled =
    sqlstate(err) === "42P01"
      ? "; if a connection pooler is in between, it must pool sessions (PgBouncer pool_mode = session), not transactions"
      : "";
  return new PostgresError(`${describe(err, "talking to")}${pooled}`, { code: err?.code || undefined });
}

/** Puts one statement on `c`'s wire and returns its outcome. In pipeline mode `pg` writes it
 *  before this returns, behind whatever was sent before and without waiting for their answers;
 *  the answers come back in the order sent. */
async function send(c, req) {
  if (req.op === "exec") {
    await c.query(req.sql);
    return null;
  }
  let name = names.get(req.sql);
  if (name === undefined && names.size < MAX_NAMED) names.set(req.sql, (name = `lw${names.size}`));
  const result = await c.query({
    text: numberedPlaceholders(req.sql),
    values: req.params.map(param),
    rowMode: "array",
    ...(name ? { name } : {}),
  });
  return req.rows ? result.rows : null;
}

/**
 * The open transaction, or null: the connection it began on (the rest of it must run there;
 * on another connection it would be a run of separate autocommits), the statements sent
 * without waiting whose answers are still to come, and its first failure. Once it has
 * failed, nothing more of it is sent until the engine ends it: the server would refuse it
 * anyway (25P02), and on a broken connection a new one must not pick up half a transaction.
 */
let tx = null;

/** A deferred statement's failure as the transaction's next waited statement reports it: it
 *  also names the statement that caused it, which the engine never waited for (the engine's
 *  own message names the statement it was waiting on). */
const deferredFailure = (err, sql) =>
  new PostgresError(
    `${err.message}; raised by a statement of this transaction sent without waiting for its answer: ${sql.replace(/\s+/g, " ").slice(0, 200)}`,
    { code: err.code || undefined },
  );

/** Sends a statement the engine does not wait for (database.js `run` inside a transaction).
 *  Its failure is kept, and reported by the transaction's next waited statement. */
async function deferred(req, control) {
  if (control === "begin") await begin();
  if (!tx) {
    // The transaction's BEGIN went to an I/O thread that has since stopped.
    tx = {
      client: null,
      sent: [],
      failure: new PostgresError(
        `lossless-wasm: the connection to PostgreSQL at ${where} broke during a transaction; this call failed, and the next one connects again`,
        { code: "LOSSLESS_POSTGRES_BROKEN" },
      ),
    };
  }
  const t = tx;
  if (t.failure) return;
  t.sent.push(
    send(t.client, req).catch((err) => {
      const failure = failureOf(err, t.client);
      // A lost connection or another connection's lock is not the statement's doing: the
      // failure is not named after it.
      t.failure ??= failure.code?.startsWith("LOSSLESS_POSTGRES_") ? failure : deferredFailure(failure, req.sql);
    }),
  );
}

/** Opens the transaction's record on the current connection (connecting when there is none). */
async function begin() {
  try {
    tx = { client: await connection(), sent: [], failure: null };
  } catch (err) {
    tx = { client: null, sent: [], failure: err };
  }
}

/** Runs a statement the engine waits for, inside the open transaction: sent at once behind the
 *  deferred ones (so they share the round trip), answered once all of them are. The answer is
 *  the transaction's first failure when there is one. */
async function waitedInTransaction(req, control) {
  const t = tx;
  const ends = control === "commit" || control === "rollback";
  // Whatever happens below, the engine's next statement is outside this transaction.
  if (ends) tx = null;
  if (!t.failure && t.client !== client) {
    t.failure = new PostgresError(
      `lossless-wasm: the connection to PostgreSQL at ${where} broke during a transaction; this call failed, and the next one connects again`,
      { code: "LOSSLESS_POSTGRES_BROKEN" },
    );
  }
  // A failed transaction is ended by ROLLBACK, also when the engine asks for COMMIT; any other
  // statement of it is not sent.
  const failedBefore = t.failure !== null;
  const alive = t.client !== null && t.client === client;
  const toSend = !failedBefore ? req : ends && alive ? { op: "exec", sql: "ROLLBACK" } : null;
  // Watched while unanswered: a deferred statement before it may be the one waiting on a lock.
  const unwatch = watch(alive ? t.client : null);
  const own = toSend
    ? send(t.client, toSend).then(
        (result) => ({ result }),
        (err) => ({ error: failureOf(err, t.client) }),
      )
    : { result: null };
  // The read named to follow this COMMIT, on the wire right behind it (pg's pipeline): its rows
  // come back in the same round trip. Its failure is nobody's: the engine sends it again.
  const next =
    toSend === req && control === "commit" && req.afterCommit
      ? send(t.client, { op: "query", ...req.afterCommit, rows: true }).catch(() => undefined)
      : null;
  let outcome;
  try {
    await Promise.all(t.sent);
    t.sent = [];
    outcome = await own;
  } finally {
    unwatch();
  }
  // ROLLBACK answers for itself; the engine discards its outcome, and a transaction whose
  // connection broke has nothing left to roll back.
  if (control === "rollback") {
    if (outcome.error && outcome.error.code !== "LOSSLESS_POSTGRES_BROKEN") throw outcome.error;
    return null;
  }
  if (outcome.error) t.failure ??= outcome.error;
  // COMMIT of a failed transaction: the server answers ROLLBACK, not an error; this reports it.
  if (t.failure) throw t.failure;
  if (next) return new WithReadAfterCommit(outcome.result, await next);
  return outcome.result;
}

/** A COMMIT's answer with the rows of the read sent behind it (undefined if that failed). */
class WithReadAfterCommit {
  constructor(result, rows) {
    this.result = result;
    this.rows = rows;
  }
}

/** Runs one request: `{op: "query", sql, params, rows, deferred, afterCommit}` (`afterCommit`:
 *  on a COMMIT, `{sql, params}` of a read to send behind it) or `{op: "exec", sql}` or
 *  `{op: "connect"}` or `{op: "close"}`. Returns NO_REPLY for a deferred statement. */
const NO_REPLY = Symbol("no reply");
async function handle(req) {
  if (req.op === "close") {
    if (tx) await Promise.all(tx.sent);
    tx = null;
    const c = client;
    client = null;
    await c?.end().catch(() => {});
    return null;
  }
  if (req.op === "connect") {
    await connection();
    return null;
  }
  const control = transactionControl(req.sql);
  if (req.deferred) {
    await deferred(req, control);
    return NO_REPLY;
  }
  if (control === "begin") {
    await begin();
    if (tx.failure) {
      const { failure } = tx;
      tx = null;
      throw failure;
    }
  }
  if (tx) {
    const result = await waitedInTransaction(req, control);
    return result;
  }
  // Outside a transaction every statement waits (database.js defers none there).
  const c = await connection();
  const unwatch = watch(c);
  try {
    return await send(c, req);
  } catch (err) {
    throw failureOf(err, c);
  } finally {
    unwatch();
  }
}

/** How far the server's clock is ahead of this machine's, in ms, as of the last connection
 *  (read when its answer arrived, so short by at most the answer's way back); every reply
 *  carries it (database.js `clockOffsetMs`). */
let clockOffsetMs = 0;

function reply(message) {
  try {
    port.postMessage({ ...message, clockOffsetMs });
  } catch (err) {
    port.postMessage({
      id: message.id,
      error: toWire(new PostgresError(`lossless-wasm: a PostgreSQL reply could not be sent: ${err.message}`), THREAD),
    });
  }
  Atomics.add(flag, 0, 1);
  Atomics.notify(flag, 0);
}

// One request at a time, in the order sent: a deferred statement must be on the wire before
// the next one is, and (while connecting) after the connection is ready.
let current;
let tail = Promise.resolve();
async function serve(req) {
  current = req.id;
  try {
    const result = await handle(req);
    if (result instanceof WithReadAfterCommit) reply({ id: req.id, result: result.result, afterCommit: result.rows });
    else if (result !== NO_REPLY) reply({ id: req.id, result });
  } catch (err) {
    if (req.deferred) {
      // Only a bug gets here (deferred() keeps its failures); the next waited call reports it.
      if (tx && !tx.failure) tx.failure = err;
    } else {
      reply({ id: req.id, error: toWire(err, THREAD) });
    }
  }
  current = undefined;
}
port.on("message", (req) => {
  // A failure of one request must not stop the ones after it (the engine would wait forever).
  tail = tail.then(() => serve(req)).catch((err) => process.emit("uncaughtException", err));
});

// Whatever else goes wrong here must still wake the engine's thread, or it would wait forever.
process.on("uncaughtException", (err) => {
  client = null;
  reply({
    id: current,
    error: toWire(
      new PostgresError(
        `lossless-wasm: the PostgreSQL I/O thread failed: ${String(err?.message ?? err).replaceAll(url, where)}`,
        { code: "LOSSLESS_POSTGRES_BROKEN" },
      ),
      THREAD,
    ),
  });
});
process.on("exit", () => {
  Atomics.store(flag, 1, 1);
  Atomics.add(flag, 0, 1);
  Atomics.notify(flag, 0);
});
