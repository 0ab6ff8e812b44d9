// PostgreSQL behind the synchronous sql.js-like interface the wasm engine's SQL layer calls
// (src/wasm/sqljs.rs: prepare → run/all, exec), as node-sqlite.js does for node:sqlite. The
// connection lives in a second worker thread (postgres-io-worker.js) running the asynchronous
// `pg` client; each statement is a message to it, and this thread blocks in Atomics.wait on a
// shared flag until the reply is there, then takes it with receiveMessageOnPort. Blocking is
// allowed only off the host's thread: this runs in the engine's worker (node-engine-thread.js),
// and refuses to open on the main thread. Owns only the synchronous call protocol.
//
// `dialect` is "postgres": the engine reads it once and writes PostgreSQL's statements.
import { isMainThread, MessageChannel, receiveMessageOnPort, Worker } from "node:worker_threads";
import { redactedUrl, resolvePg } from "./pg-config.js";

/** How long opening waits for the server to accept the connection. */
export const CONNECT_TIMEOUT_MS = 10_000;
/** The wait is cut into slices this long, so a vanished I/O thread is noticed. */
const WAIT_SLICE_MS = 1000;

export class PostgresDatabase {
  /**
   * Starts the I/O thread and connects (creating `schema` when missing); throws the
   * connection's error, with the password hidden, when the server cannot be reached.
   * @param {object} options `url` (with the password), `schema` (already validated)
   */
  constructor({ url, schema }) {
    if (isMainThread) {
      throw new Error("invalid config `storageThread`: storage \"postgres\" needs `storageThread: \"worker\"` (its statements wait for the server, which must never hold the host's thread)");
    }
    this.pgPath = resolvePg();
    this.dialect = "postgres";
    this.url = url;
    this.schema = schema;
    this.where = `${redactedUrl(url)} schema ${schema}`;
    this.nextId = 1;
    this.statements = 0;
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
    this.io = new Worker(new URL("./postgres-io-worker.js", import.meta.url), {
      workerData: { port: port2, flag: this.flag.buffer, url: this.url, schema: this.schema, pgPath: this.pgPath, connectTimeoutMs: CONNECT_TIMEOUT_MS },
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

  /**
   * Sends `req` to the I/O thread and blocks until its reply; returns its result or throws.
   * The shared array's slot 0 counts the replies the I/O thread has posted (each one wakes this
   * thread); slot 1 turns 1 when that thread exits.
   */
  request(req) {
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
        if (message.error) throw Object.assign(new Error(message.error.message), message.error.code ? { code: message.error.code } : {});
        return message.result;
      }
      if (Atomics.load(this.flag, 1) === 1) {
        this.stopIo();
        throw Object.assign(new Error(`lossless-wasm: the PostgreSQL I/O thread for ${this.where} stopped; this call failed, and the next one connects again`), { code: "LOSSLESS_POSTGRES_BROKEN" });
      }
      Atomics.wait(this.flag, 0, seen, WAIT_SLICE_MS);
      seen = Atomics.load(this.flag, 0);
    }
  }

  prepare(sql) {
    return new Statement(this, sql);
  }

  exec(sql) {
    this.statements++;
    this.request({ op: "exec", sql });
    return [];
  }

  /** Statements sent since opening (one round trip each), for measurements. */
  stats() {
    return { statements: this.statements };
  }

  export() {
    throw new Error("PostgreSQL persists every transaction itself; there is nothing to export (back it up with pg_dump)");
  }

  close() {
    if (this.closed) return;
    try {
      if (this.io) this.request({ op: "close" });
    } finally {
      this.closed = true;
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
    this.db.statements++;
    this.db.request({ op: "query", sql: this.sql, params: values, rows: false });
    return true;
  }

  /** Every row, each an array of values in SQLite's shapes. */
  all(values) {
    this.db.statements++;
    return this.db.request({ op: "query", sql: this.sql, params: values, rows: true });
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
