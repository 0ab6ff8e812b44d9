// node:sqlite behind the subset of sql.js's Database/Statement interface that the Rust backend
// binds to (prepare/bind/step/get/reset/free, exec), so the same Rust SQL layer runs on both.
// The database is a file in WAL mode with synchronous=FULL: each committed transaction is durable
// on its own, with no whole-file export.

/** Whether this Node has node:sqlite (22.5+; stable in 24+). */
export function nodeSqliteAvailable() {
  try {
    return Boolean(process.getBuiltinModule?.("node:sqlite")?.DatabaseSync);
  } catch {
    return false;
  }
}

class Statement {
  constructor(stmt) {
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
    this.rows ??= this.stmt.iterate(...this.params);
    const next = this.rows.next();
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
  /** Opens (creating if needed) the database file at `path`. */
  constructor(path) {
    const { DatabaseSync } = process.getBuiltinModule("node:sqlite");
    this.db = new DatabaseSync(path);
    try {
      // Fails here, not later, when the file is not a SQLite database.
      this.db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA busy_timeout = 5000;");
    } catch (err) {
      this.db.close();
      throw new Error(`lossless-wasm: ${path} is not a SQLite database (${err.message}); refusing to open it, the file was left unchanged`);
    }
  }

  prepare(sql) {
    return new Statement(this.db.prepare(sql));
  }

  exec(sql) {
    this.db.exec(sql);
    return [];
  }

  export() {
    throw new Error("node:sqlite databases persist every transaction themselves; there is nothing to export");
  }

  close() {
    this.db.close();
  }
}
