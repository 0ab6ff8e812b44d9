// The I/O thread of the PostgreSQL driver (postgres-db.js): holds one connection through the npm
// package `pg` (asynchronous) and runs the statements the engine's thread sends over a
// MessagePort, one at a time. After each reply is posted it counts it in the shared array and wakes the
// engine's thread, which blocks in Atomics.wait meanwhile (it has nothing else to do: the
// engine's calls are synchronous). Owns the connection's life (connect, schema, reconnect after
// a break), the conversion of values to and from SQLite's shapes, and error text.
import { createRequire } from "node:module";
import { workerData } from "node:worker_threads";
import { numberedPlaceholders } from "./pg-placeholders.js";
import { redactedUrl } from "./pg-config.js";

const { port, flag: flagBuffer, url, schema, pgPath, connectTimeoutMs } = workerData;
const pg = createRequire(import.meta.url)(pgPath);
const flag = new Int32Array(flagBuffer);
const where = redactedUrl(url);

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


let client = null;
let connecting = null;
const names = new Map();

// The engine's transaction on the current connection: BEGIN sent and no COMMIT or ROLLBACK yet.
// When the connection is lost inside one, the server rolls it back; every later statement up to
// the engine's ROLLBACK must then fail. Otherwise the next statement would open a new
// connection and the rest of the transaction would run outside any transaction, each statement
// committed on its own: a half-applied turn or compaction.
let inTransaction = false;
let transactionLost = false;
const verbOf = (sql) => /^\s*([A-Za-z]+)/.exec(sql)?.[1].toUpperCase();

/** The connection went away (while idle, or failing a call). */
function lost(c) {
  if (client !== c) return;
  client = null;
  if (inTransaction) transactionLost = true;
  inTransaction = false;
}

/** Whether an error means the connection is gone (the next call opens a new one). */
const broken = (err) => !err?.code || err.severity === "FATAL" || err.severity === "PANIC" || /^(08|57P)/.test(err.code);

/** One line for a failure: the server's SQLSTATE and message, or what broke the connection. */
function describe(err, during) {
  if (err?.code && /^[0-9A-Z]{5}$/.test(err.code)) {
    const detail = err.detail ? ` (${err.detail})` : "";
    return `PostgreSQL ${err.severity ?? "ERROR"} ${err.code}: ${err.message}${detail}`;
  }
  const reason = String(err?.message ?? err).replaceAll(url, where).split("\n")[0];
  return `${during} PostgreSQL at ${where} failed: ${reason}`;
}

async function connection() {
  if (client) return client;
  connecting ??= (async () => {
    // The application name lets an operator (and the tests) tell the store's connections apart.
    const c = new pg.Client({ connectionString: url, types, connectionTimeoutMillis: connectTimeoutMs, application_name: `lossless-wasm ${schema}` });
    // A connection that breaks while idle emits "error"; the next call finds it gone.
    c.on("error", () => lost(c));
    c.on("end", () => lost(c));
    try {
      await c.connect();
      // The store lives in its own schema; the extensions (pg_trgm, unaccent) may live in public.
      await c.query(`CREATE SCHEMA IF NOT EXISTS ${schema}; SET search_path = ${schema}, public`);
    } catch (err) {
      c.end().catch(() => {});
      const reason = describe(err, "connecting to").replace(/^connecting to PostgreSQL at \S+ failed: /, "");
      throw Object.assign(new Error(`lossless-wasm: cannot connect to PostgreSQL at ${where}: ${reason}; this call failed: check that the server is running and accepts this URL, the next call tries again`), { code: "LOSSLESS_POSTGRES_CONNECT" });
    }
    client = c;
    names.clear();
    return c;
  })().finally(() => { connecting = null; });
  return connecting;
}

/** Runs one request: `{op: "query", sql, params, rows}` or `{op: "exec", sql}` or `{op: "connect"}`
 *  or `{op: "close"}`. */
async function handle(req) {
  if (req.op === "close") {
    const c = client;
    client = null;
    inTransaction = transactionLost = false;
    await c?.end().catch(() => {});
    return null;
  }
  const verb = req.op === "query" ? verbOf(req.sql) : undefined;
  // A new transaction means the engine has left the lost one behind (it always rolls back first;
  // this only keeps one missed ROLLBACK from failing every call for good).
  if (verb === "BEGIN") transactionLost = false;
  if (transactionLost) {
    // The server already rolled the transaction back; the engine's ROLLBACK has nothing to do.
    if (verb === "ROLLBACK") {
      transactionLost = false;
      return null;
    }
    if (req.op !== "connect") throw Object.assign(new Error(`lossless-wasm: the connection to PostgreSQL at ${where} broke inside a transaction, which the server rolled back; this call failed, and the next one connects again`), { code: "LOSSLESS_POSTGRES_BROKEN" });
  }
  const c = await connection();
  if (req.op === "connect") return null;
  try {
    if (req.op === "exec") {
      await c.query(req.sql);
      return null;
    }
    let name = names.get(req.sql);
    if (name === undefined && names.size < MAX_NAMED) names.set(req.sql, (name = `lw${names.size}`));
    const result = await c.query({ text: numberedPlaceholders(req.sql), values: req.params.map(param), rowMode: "array", ...(name ? { name } : {}) });
    if (verb === "BEGIN") inTransaction = true;
    else if (verb === "COMMIT" || verb === "ROLLBACK") inTransaction = false;
    return req.rows ? result.rows : null;
  } catch (err) {
    if (broken(err) && client === c) {
      lost(c);
      c.end().catch(() => {});
      throw Object.assign(new Error(`lossless-wasm: the connection to PostgreSQL at ${where} broke (${describe(err, "talking to").replace(/^talking to PostgreSQL at \S+ failed: /, "")}); this call failed, and the next one connects again`), { code: "LOSSLESS_POSTGRES_BROKEN" });
    }
    throw new Error(describe(err, "talking to"));
  }
}

function reply(message) {
  try {
    port.postMessage(message);
  } catch (err) {
    port.postMessage({ id: message.id, error: { message: `lossless-wasm: a PostgreSQL reply could not be sent: ${err.message}` } });
  }
  Atomics.add(flag, 0, 1);
  Atomics.notify(flag, 0);
}

let current;
port.on("message", async (req) => {
  current = req.id;
  try {
    reply({ id: req.id, result: await handle(req) });
  } catch (err) {
    reply({ id: req.id, error: { message: err.message, code: err.code } });
  }
  current = undefined;
});

// Whatever else goes wrong here must still wake the engine's thread, or it would wait forever.
process.on("uncaughtException", (err) => {
  if (client) lost(client);
  reply({ id: current, error: { message: `lossless-wasm: the PostgreSQL I/O thread failed: ${String(err?.message ?? err).replaceAll(url, where)}`, code: "LOSSLESS_POSTGRES_BROKEN" } });
});
process.on("exit", () => {
  Atomics.store(flag, 1, 1);
  Atomics.add(flag, 0, 1);
  Atomics.notify(flag, 0);
});
