// PostgreSQL behind the synchronous sql.js-like interface the wasm engine's SQL layer calls
// (src/wasm/sqljs.rs: prepare → run/all, exec), as node/sqlite.js does for node:sqlite. The
// connection lives in a second worker thread (io-thread-main.js) running the asynchronous
// `pg` client; each statement is a message to it, and this thread blocks in Atomics.wait on a
// shared flag until the reply is there, then takes it with receiveMessageOnPort. Blocking is
// allowed only off the host's thread: this runs in the engine's worker (node/engine-thread.js),
// and refuses to open on the main thread. Owns only the synchronous call protocol, and which
// statements are waited for.
//
// Deferral: inside a transaction (BEGIN … COMMIT/ROLLBACK), a statement run through `run`, whose
// result the engine never reads, is posted and not waited for; the I/O thread pipelines it, and
// the transaction's next waited statement (a read, an exec, COMMIT or ROLLBACK) reports the first
// failure among them. Outside a transaction every statement waits, so no failure can go
// unreported. LOSSLESS_WASM_POSTGRES_DEFER=0 (or the option `defer: false`) waits for every
// statement, as before, for comparisons.
//
// Read after commit: the engine names, before a turn's transaction, the read its next
// `assemble` starts with (`readAfterCommit`). The COMMIT carries it to the I/O thread, which
// puts it on the wire right behind the COMMIT; its rows come back with the COMMIT's answer,
// and the next `all` of that statement with those values is answered from them, if nothing
// else was sent in between and it comes within READ_AHEAD_MS of the COMMIT's answer. A steady
// turn followed at once by `assemble` (OpenClaw's tool loop: `afterTurn` then `assemble` before
// each model call) then waits once for its COMMIT and not again for `assemble`'s read, whose
// rows are as of just after the COMMIT. A later `assemble` (the next prompt, after the user's
// pause) reads afresh: another gateway may have continued the session meanwhile.
//
// `dialect` is "postgres": the engine reads it once and writes PostgreSQL's statements.
import { isMainThread, MessageChannel, receiveMessageOnPort, Worker } from "node:worker_threads";
import { redactedUrl, resolvePg } from "./config.js";
import { transactionControl } from "./transaction.js";
import { fromWire, PostgresError } from "../errors.js";

/** How long opening waits for the server to accept the connection. */
export const CONNECT_TIMEOUT_MS = 10_000;
/** Beyond the lock wait, how long a statement may take before the server cancels it, and
 *  (a little later) before this side gives up on a server that stopped answering. */
export const STATEMENT_GRACE_MS = 60_000;
const READ_GRACE_MS = 5_000;

/**
 * The connection's timeouts for a lock wait of `lockTimeoutMs` (config; 0 fails at once):
 * `lock_timeout` ends a wait for a row lock another connection holds (SQLSTATE 55P03),
 * `statement_timeout` any statement that runs too long, and `query_timeout` (the client's)
 * a wait on a server that stopped answering without closing the connection (a partition).
 * `statementGraceMs` is not a config key: tests shorten it to reach the client's timeout soon.
 */
export function timeoutsFor(lockTimeoutMs, statementGraceMs = STATEMENT_GRACE_MS) {
  const statement = lockTimeoutMs + statementGraceMs;
  // lock_timeout 0 means "no limit" to PostgreSQL; 1 ms is as close to "at once" as it has.
  return {
    lock_timeout: Math.max(1, lockTimeoutMs),
    statement_timeout: statement,
    query_timeout: statement + READ_GRACE_MS,
  };
}
/** How long after a COMMIT's answer the read sent behind it may answer the query it names. */
export const READ_AHEAD_MS = 500;

/** Whether two statements' values are the same (numbers, strings, null; a blob never is). */
function sameValues(a, b) {
  if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
  return a.every((v, i) => (v === null || typeof v !== "object") && v === b[i]);
}

/** The wait is cut into slices this long, so a vanished I/O thread is noticed. */
const WAIT_SLICE_MS = 1000;
/** Setting this environment variable to 0 turns deferral off (measurements compare both). */
export const DEFER_ENV = "LOSSLESS_WASM_POSTGRES_DEFER";

export class PostgresDatabase {
  /**
   * Starts the I/O thread and connects (creating `schema` when missing); throws the
   * connection's error, with the password hidden, when the server cannot be reached.
   * @param {object} options `url` (with the password), `schema` (already validated), `defer`
   *   (default: on unless the environment variable says 0), `lockTimeoutMs` (config; 30 s),
   *   `statementGraceMs` (not config: STATEMENT_GRACE_MS; see timeoutsFor)
   */
  constructor({
    url,
    schema,
    defer = process.env[DEFER_ENV] !== "0",
    lockTimeoutMs = 30_000,
    statementGraceMs = STATEMENT_GRACE_MS,
  }) {
    if (isMainThread) {
      throw new Error(
        'invalid config `storageThread`: storage "postgres" needs `storageThread: "worker"` (its statements wait for the server, which must never hold the host\'s thread)',
      );
    }
    this.pgPath = resolvePg();
    this.dialect = "postgres";
    this.url = url;
    this.schema = schema;
    this.where = `${redactedUrl(url)} schema ${schema}`;
    this.nextId = 1;
    this.defer = defer;
    this.timeouts = timeoutsFor(lockTimeoutMs, statementGraceMs);
    // Between BEGIN and COMMIT/ROLLBACK as the engine sent them: where `run` may defer.
    this.inTransaction = false;
    // The read to send behind the next COMMIT ({sql, params}), and the rows of the one sent
    // behind the last COMMIT ({sql, params, rows, at}) until another statement is sent.
    this.afterCommit = null;
    this.readAhead = null;
    this.statements = 0;
    this.waits = 0;
    // How far the server's clock is ahead of this machine's (ms), measured by the I/O thread at
    // each connection: engine/handle.js adds it to the engine's time, so every gateway sharing
    // the store keeps the server's time for leases and retries whatever its own clock says.
    this.clockOffsetMs = 0;
    this.io = null;
    try {
      this.request({ op: "connect" });
    } catch (err) {
      this.stopIo();
      throw err;
    }
  }

  /** The I/O thread, started anew when the last one stopped (a crash); it connects on its first
   *  statement. */
  startIo() {
    this.flag = new Int32Array(new SharedArrayBuffer(8));
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    this.io = new Worker(new URL("./io-thread-main.js", import.meta.url), {
      workerData: {
        port: port2,
        flag: this.flag.buffer,
        url: this.url,
        schema: this.schema,
        pgPath: this.pgPath,
        connectTimeoutMs: CONNECT_TIMEOUT_MS,
        pipeline: this.defer,
        timeouts: this.timeouts,
      },
      transferList: [port2],
    });
    // Not a reason for the engine's thread to stay alive on its own.
    this.io.unref();
  }

  stopIo() {
    this.port?.close();
    this.io?.terminate();
    this.io = null;
  }

  /** Sends `req` and blocks until its reply (see `exchange`); returns its result or throws. */
  request(req) {
    return this.exchange(req).result;
  }

  /**
   * Sends `req` to the I/O thread and blocks until its reply; returns the reply (its `result`, and
   * `afterCommit` for a COMMIT that carried a read) or throws.
   * The shared array's slot 0 counts the replies the I/O thread has posted (each one wakes this
   * thread); slot 1 turns 1 when that thread exits.
   */
  exchange(req) {
    if (this.closed) throw new Error("lossless-wasm: this PostgreSQL connection was closed");
    if (!this.io) this.startIo();
    const id = this.nextId++;
    let seen = Atomics.load(this.flag, 0);
    this.port.postMessage({ ...req, id });
    for (;;) {
      const got = receiveMessageOnPort(this.port);
      if (got) {
        const { message } = got;
        // Only a reply to this call ends the wait (a failure report outside any call is not one).
        if (message.id !== id) continue;
        this.clockOffsetMs = message.clockOffsetMs ?? this.clockOffsetMs;
        if (message.error) throw fromWire(message.error);
        return message;
      }
      if (Atomics.load(this.flag, 1) === 1) {
        this.stopIo();
        throw new PostgresError(
          `lossless-wasm: the PostgreSQL I/O thread for ${this.where} stopped; this call failed, and the next one connects again`,
          { code: "LOSSLESS_POSTGRES_BROKEN" },
        );
      }
      Atomics.wait(this.flag, 0, seen, WAIT_SLICE_MS);
      seen = Atomics.load(this.flag, 0);
    }
  }

  /**
   * Sends a statement. One whose result the engine does not read (`mayDefer`) is deferred inside
   * a transaction (BEGIN itself included); every other one is waited for, and so are COMMIT and
   * ROLLBACK, whose outcome decides whether the engine reports success. Returns the result of a
   * waited statement.
   */
  send(req, mayDefer) {
    const ahead = this.readAhead;
    this.readAhead = null;
    if (
      ahead &&
      req.op === "query" &&
      req.rows &&
      req.sql === ahead.sql &&
      sameValues(req.params, ahead.params) &&
      performance.now() - ahead.at <= READ_AHEAD_MS
    )
      return ahead.rows;
    this.statements++;
    const control = transactionControl(req.sql);
    const ends = control === "commit" || control === "rollback";
    // The read named for after a COMMIT belongs to the transaction about to begin.
    if (control === "rollback" || (!this.inTransaction && control !== "begin")) this.afterCommit = null;
    if (mayDefer && this.defer && !ends && (this.inTransaction || control === "begin")) {
      if (this.closed) throw new Error("lossless-wasm: this PostgreSQL connection was closed");
      // An I/O thread that stopped took the transaction's connection with it: the transaction
      // cannot go on elsewhere.
      if (this.inTransaction && !this.io)
        throw new PostgresError(
          `lossless-wasm: the PostgreSQL I/O thread for ${this.where} stopped during a transaction; this call failed, and the next one connects again`,
          { code: "LOSSLESS_POSTGRES_BROKEN" },
        );
      if (!this.io) this.startIo();
      this.inTransaction = true;
      // Posting copies the values (views on wasm memory included) before this returns.
      this.port.postMessage({ ...req, id: this.nextId++, deferred: true });
      return;
    }
    // The engine rolls back after a COMMIT that failed, which already ended the transaction
    // (the I/O thread sent ROLLBACK in its place): there is nothing left to end on the server.
    if (control === "rollback" && !this.inTransaction) return;
    if (ends) this.inTransaction = false;
    this.waits++;
    const then = control === "commit" ? this.afterCommit : null;
    this.afterCommit = null;
    if (then) {
      this.statements++;
      const { result, afterCommit: rows } = this.exchange({ ...req, afterCommit: then });
      // Rows, or nothing when the read failed (the query is then sent when it comes).
      if (Array.isArray(rows)) this.readAhead = { ...then, rows, at: performance.now() };
      return result;
    }
    const result = this.request(req);
    // A waited BEGIN counts only once it has succeeded (the engine does not roll back a BEGIN
    // that failed).
    if (control === "begin") this.inTransaction = true;
    return result;
  }

  prepare(sql) {
    return new Statement(this, sql);
  }

  /** Names the read to send right behind the next COMMIT (see the file's comment). A hint:
   *  without deferral every statement waits for its own round trip, and this does nothing. */
  readAfterCommit(sql, params) {
    this.afterCommit = this.defer ? { sql, params: Array.from(params) } : null;
  }

  exec(sql) {
    this.send({ op: "exec", sql }, false);
    return [];
  }

  /** Statements sent since opening, and the waits among them (each one round trip: the deferred
   *  statements before a wait travel with it), for measurements. */
  stats() {
    return { statements: this.statements, waits: this.waits };
  }

  export() {
    throw new Error(
      "PostgreSQL persists every transaction itself; there is nothing to export (back it up with pg_dump)",
    );
  }

  close() {
    if (this.closed) return;
    try {
      if (this.io) this.request({ op: "close" });
    } finally {
      this.closed = true;
      // A closed connection answers nothing, not even from rows it already holds.
      this.readAhead = null;
      this.afterCommit = null;
      this.stopIo();
    }
  }
}

/** A statement: nothing is sent until it runs (the I/O thread prepares it on the server the
 *  first time, per connection). */
class Statement {
  constructor(db, sql) {
    this.db = db;
    this.sql = sql;
    this.rows = null;
    this.at = 0;
  }

  /** Runs a statement that returns no rows. Blobs in `values` may be views on wasm memory:
   *  posting the message copies them before this returns. */
  run(values) {
    this.db.send({ op: "query", sql: this.sql, params: values, rows: false }, true);
    return true;
  }

  /** Every row, each an array of values in SQLite's shapes. */
  all(values) {
    return this.db.send({ op: "query", sql: this.sql, params: values, rows: true }, false);
  }

  // sql.js's stepwise interface, over `all`.
  bind(values) {
    this.rows = null;
    this.params = values;
    return true;
  }

  step() {
    this.rows ??= this.all(this.params ?? []);
    return this.at < this.rows.length && ++this.at > 0;
  }

  get() {
    return this.rows[this.at - 1];
  }

  reset() {
    this.rows = null;
    this.at = 0;
    return true;
  }

  free() {
    return this.reset();
  }
}
