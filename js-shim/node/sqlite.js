// node:sqlite behind the subset of sql.js's Database/Statement interface that the Rust backend
// binds to (prepare/bind/step/get/reset/free, exec), so the same Rust SQL layer runs on both.
// The database is a file in WAL mode: each committed transaction persists itself, with no
// whole-file export. Config `durability` sets `PRAGMA synchronous`. "normal" (the default) does
// not fsync a commit: a committed turn survives a crash or SIGKILL of the process (the WAL pages
// are in the OS page cache), and only an OS crash or power loss can roll back the commits since
// the last WAL checkpoint, leaving the database consistent; the host re-sends its whole history
// every turn, so what was rolled back is re-imported on the next one. "full" fsyncs every commit
// (~0.3 ms each here).
// Several processes may share the file (two gateways of one user): SQLite's busy timeout waits
// for the other writer, and a statement that still finds the database locked outside a
// transaction (starting one, or a lone read) is retried, so "database is locked" does not reach
// the host while the other process is merely busy. Past config `lockTimeoutMs` in all, the call
// fails with one sentence naming the processes that hold the file (lock-holders.js).

/** Whether this Node has node:sqlite (22.5+; stable in 24+). */
export function nodeSqliteAvailable() {
  try {
    return Boolean(process.getBuiltinModule?.("node:sqlite")?.DatabaseSync);
  } catch {
    return false;
  }
}

/** How long SQLite itself waits for another connection's lock, per attempt. */
export const BUSY_TIMEOUT_MS = 5000;
/** How long a call waits for another process's lock in all (config `lockTimeoutMs`). */
export const LOCK_TIMEOUT_MS = 30_000;
/** The pause between attempts. */
const BUSY_PAUSE_MS = 200;
const pause = new Int32Array(new SharedArrayBuffer(4));

/** `housekeep()` calls (turns, when the host calls `maintain` after each) between WAL checkpoints.
 *  A checkpoint costs mostly its fsyncs and copies each page once, however many turns rewrote it:
 *  every 8th costs a turn less than every 4th (docs/performance.md, "WAL checkpoints"). */
export const CHECKPOINT_EVERY = 8;
/** WAL pages at which a commit checkpoints by itself: the bound when `housekeep()` is never
 *  called (SQLite's default is 1,000; housekeeping checkpoints long before). */
export const AUTOCHECKPOINT_PAGES = 4000;
/** Bytes the WAL file keeps when the WAL starts over (`PRAGMA journal_size_limit`). SQLite
 *  reuses a WAL file from its start without shrinking it, so without a limit the file keeps its
 *  largest size for as long as the database is open: ~110 MiB after a 100K-message bootstrap,
 *  as much again as the database. Turns write ~0.6 MiB between checkpoints. */
export const WAL_KEEP_BYTES = 1 << 20;

/** Config `durability` → `PRAGMA synchronous` (WAL mode). */
const SYNCHRONOUS = { normal: "NORMAL", full: "FULL" };
export const DURABILITY = Object.keys(SYNCHRONOUS);

/** The `PRAGMA synchronous` value for `config.durability`; an Error naming the key when invalid. */
export function synchronousFor(durability = "normal") {
  if (!Object.hasOwn(SYNCHRONOUS, durability)) {
    throw new Error(
      `invalid config \`durability\`: must be one of ${DURABILITY.map((d) => JSON.stringify(d)).join(", ")}`,
    );
  }
  return SYNCHRONOUS[durability];
}

import { describeHolders, lockHolders } from "./lock-holders.js";
import { DatabaseLockedError } from "../errors.js";

/** Config `lockTimeoutMs` as a number of milliseconds; an Error naming the key when invalid. */
export function lockTimeoutFor(value = LOCK_TIMEOUT_MS) {
  if (!(Number.isInteger(value) && value >= 0 && value <= 3_600_000)) {
    throw new Error("invalid config `lockTimeoutMs`: must be an integer number of milliseconds between 0 and 3600000");
  }
  return value;
}

const isBusy = (err) =>
  err?.errcode === 5 || err?.errcode === 6 || /database is (locked|busy)/i.test(err?.message ?? "");

/**
 * Runs `work`, retrying while the database is locked by another process. Only safe outside a
 * transaction or for the statement that opens one: inside a transaction the caller rolls back.
 * The waits block this thread: by default the engine's worker (engine-thread.js), never
 * the host's. When the lock outlasts every attempt, the error names who holds the file.
 */
function retryBusy(conn, work) {
  const started = Date.now();
  for (;;) {
    try {
      return work();
    } catch (err) {
      if (!isBusy(err) || conn.db.isTransaction) throw err;
      const waited = Date.now() - started;
      if (waited + BUSY_PAUSE_MS > conn.lockTimeoutMs) throw stillLocked(conn.path, waited, err);
      Atomics.wait(pause, 0, 0, BUSY_PAUSE_MS);
    }
  }
}

/** The error for a lock another process held past every attempt: one sentence, with its holders. */
function stillLocked(path, waitedMs, err) {
  const holders = path ? describeHolders(lockHolders(path)) : "another process";
  return new DatabaseLockedError(
    `lossless-wasm: ${path ?? "the database"} stayed locked by ${holders} for ${(waitedMs / 1000).toFixed(1)} s (${err.message}); nothing of this call was written, and it can be retried once that process is done`,
  );
}

class Statement {
  constructor(stmt, conn) {
    this.conn = conn;
    stmt.setReturnArrays(true);
    this.stmt = stmt;
    this.params = [];
    this.rows = null;
    this.row = null;
  }

  bind(values) {
    this.reset();
    this.params = values;
    return true;
  }

  step() {
    // The first step is where a lock is taken (retried afresh); a later one continues a read
    // that already holds it.
    const next = this.rows
      ? this.rows.next()
      : retryBusy(this.conn, () => {
          this.rows = this.stmt.iterate(...this.params);
          return this.rows.next();
        });
    if (next.done) {
      this.rows = null;
      this.row = null;
      return false;
    }
    this.row = next.value;
    return true;
  }

  get() {
    return this.row;
  }

  /**
   * Runs a statement that returns no rows, in one call (the engine prefers it to bind/step).
   * A blob in `values` may be a view on the engine's wasm memory, valid only during this call
   * (src/wasm/sqljs.rs `bind_values`): node:sqlite copies it when binding; keep no reference.
   */
  run(values) {
    this.reset();
    retryBusy(this.conn, () => this.stmt.run(...values));
    return true;
  }

  /** Every row at once, each an array of values (`values` as for `run`). */
  all(values) {
    this.reset();
    return retryBusy(this.conn, () => this.stmt.all(...values));
  }

  reset() {
    // Finishing the iterator resets the underlying statement, releasing its read lock.
    this.rows?.return?.();
    this.rows = null;
    this.row = null;
    return true;
  }

  free() {
    return this.reset();
  }
}

export class NodeSqliteDatabase {
  /**
   * Opens (creating if needed) the database file at `path`.
   * @param {object} [options] `durability`: "normal" (default) or "full", config `durability`;
   *        `lockTimeoutMs`: how long a call waits for another process's lock, config
   *        `lockTimeoutMs` (default LOCK_TIMEOUT_MS); `readOnly`: open an existing file strictly
   *        read-only, as it is (another tool's database: no pragma that writes, no WAL mode set;
   *        a WAL the file's owner has not checkpointed is still read)
   */
  constructor(path, { durability, lockTimeoutMs, readOnly = false } = {}) {
    const synchronous = synchronousFor(durability ?? "normal");
    this.lockTimeoutMs = lockTimeoutFor(lockTimeoutMs);
    this.busyTimeoutMs = Math.min(BUSY_TIMEOUT_MS, this.lockTimeoutMs);
    const { DatabaseSync } = process.getBuiltinModule("node:sqlite");
    this.db = new DatabaseSync(path, { readOnly });
    this.path = path;
    this.walPath = `${path}-wal`;
    this.housekeepings = 0;
    try {
      // Fails here, not later, when the file is not a SQLite database.
      this.db.exec(`PRAGMA busy_timeout = ${this.busyTimeoutMs};`);
      if (readOnly) {
        // Reads the schema, so a file that is not a database fails here.
        this.db.prepare("SELECT count(*) FROM sqlite_master").get();
      } else {
        retryBusy(this, () =>
          this.db.exec(
            `PRAGMA journal_mode = WAL; PRAGMA synchronous = ${synchronous}; PRAGMA wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}; PRAGMA journal_size_limit = ${WAL_KEEP_BYTES};`,
          ),
        );
      }
    } catch (err) {
      this.db.close();
      if (err instanceof DatabaseLockedError) throw err;
      throw new Error(
        `lossless-wasm: ${path} is not a SQLite database (${err.message}); refusing to open it, the file was left unchanged`,
      );
    }
  }

  prepare(sql) {
    return new Statement(
      retryBusy(this, () => this.db.prepare(sql)),
      this,
    );
  }

  exec(sql) {
    retryBusy(this, () => this.db.exec(sql));
    return [];
  }

  /**
   * After-turn upkeep (the host's `maintain`): every CHECKPOINT_EVERY calls, copies the WAL into
   * the database file (PASSIVE: never waits for a reader). Left to SQLite, the commit that
   * crosses the WAL limit would do it inside a turn: 7-10 ms every ~50 turns.
   *
   * Once the whole WAL is in the file, the next write starts the WAL over, and starting over
   * fsyncs the new WAL header even with `synchronous = NORMAL` (so that frames written after it
   * can never be mistaken for the old ones). That write was the next turn's commit: ~0.2 ms,
   * 6× an ordinary commit, every CHECKPOINT_EVERY turns. A write that changes nothing (the
   * header's `user_version`, rewritten with its own value) starts the WAL over here instead.
   * It never waits for another process's write lock: that process's commit then starts it.
   */
  housekeep() {
    if (++this.housekeepings % CHECKPOINT_EVERY === 0) this.checkpoint();
  }

  /**
   * After a call that may have written many pages at once (a bootstrap, a large batch): a WAL
   * file past the autocheckpoint size was copied into the database by the commit that grew it,
   * so the WAL starts over now and its file shrinks to WAL_KEEP_BYTES in the call that grew it,
   * instead of in the next turn's commit (~36 ms to free the ~110 MiB of a 100K-message import).
   * A smaller WAL waits for the next checkpoint in `housekeep`. Best effort: the write it
   * follows is committed, so a failure here (another process holding the database) must not
   * fail the call; the next checkpoint in `housekeep` shrinks the file instead.
   */
  afterBulkWrite() {
    try {
      const bytes = process.getBuiltinModule("node:fs").statSync(this.walPath).size;
      if (bytes > AUTOCHECKPOINT_PAGES * this.db.prepare("PRAGMA page_size").get().page_size) this.checkpoint();
    } catch {
      // No WAL file, or the checkpoint could not run now.
    }
  }

  /** Copies the WAL into the database file and, when all of it is there, starts it over (see
   *  `housekeep`). */
  checkpoint() {
    const { log, checkpointed } = this.db.prepare("PRAGMA wal_checkpoint(PASSIVE)").get();
    if (!(log > 0 && checkpointed === log)) return;
    this.db.exec("PRAGMA busy_timeout = 0");
    try {
      const { user_version: version } = this.db.prepare("PRAGMA user_version").get();
      this.db.exec(`PRAGMA user_version = ${version}`);
    } catch (err) {
      if (!isBusy(err)) throw err;
    } finally {
      this.db.exec(`PRAGMA busy_timeout = ${this.busyTimeoutMs}`);
    }
  }

  /** Writes a consistent copy of the database to `path` (which must not exist): SQLite's
   *  `VACUUM INTO`, which reads one snapshot and leaves this connection's file untouched. */
  backupTo(path) {
    this.db.prepare("VACUUM INTO ?").run(path);
  }

  export() {
    throw new Error("node:sqlite databases persist every transaction themselves; there is nothing to export");
  }

  /** This connection's `PRAGMA synchronous`: 1 is NORMAL, 2 is FULL. */
  synchronous() {
    return this.db.prepare("PRAGMA synchronous").get().synchronous;
  }

  close() {
    this.db.close();
  }
}
