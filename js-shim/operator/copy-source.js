// The source of the SQLite → PostgreSQL copy (copy-to-postgres.js): a store file opened for
// reading only, as one consistent snapshot, whatever wrote it. Owns how the file is opened and
// read; never writes to it.
// - A file with a sql.js journal beside it (`<db>.lwjournal`) is read by sql.js: the snapshot
//   with the journal replayed in memory (node/journal-file.js readJournaledFile). That is a copy taken
//   at one moment, so a sql.js gateway still writing it cannot tear it.
// - Otherwise node:sqlite opens it `readOnly` and every table is read inside one read
//   transaction: in WAL mode that is a snapshot, so a gateway writing meanwhile neither blocks
//   the copy nor shows it half a turn. (Without node:sqlite, sql.js reads the file.)
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { journalPath, readJournaledFile } from "../node/journal-file.js";
import { nodeSqliteAvailable } from "../node/sqlite.js";

const require = createRequire(import.meta.url);

/** node:sqlite's wait for a write lock it meets (a checkpoint); a read rarely meets one. */
const BUSY_TIMEOUT_MS = 10_000;

/**
 * Opens the store at `path` for the copy.
 * @param {string} path
 * @param {"auto"|"node:sqlite"|"sql.js"} [storage] the CLI's `--storage`: which driver reads it
 * @returns {{driver: string, version: () => number, rows: (sql: string) => Iterable<any[]>, close: () => void}}
 */
export async function openCopySource(path, storage = "auto") {
  const journaled = existsSync(journalPath(path));
  const driver = storage === "sql.js" || journaled || !nodeSqliteAvailable() ? "sql.js" : "node:sqlite";
  const source = driver === "sql.js" ? await openSqlJs(path) : openNodeSqlite(path);
  try {
    const [[tables]] = [
      ...source.rows("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"),
    ];
    if (!tables) throw new Error(`${path} is not a lossless-wasm store (it has no schema_migrations table)`);
  } catch (err) {
    source.close();
    throw err;
  }
  return {
    driver,
    version: () => Number([...source.rows("SELECT COALESCE(MAX(version), 0) FROM schema_migrations")][0][0]),
    rows: source.rows,
    close: source.close,
  };
}

function openNodeSqlite(path) {
  const { DatabaseSync } = process.getBuiltinModule("node:sqlite");
  const db = new DatabaseSync(path, { readOnly: true, timeout: BUSY_TIMEOUT_MS });
  // Every read below sees the database as of the first one.
  db.exec("BEGIN");
  return {
    *rows(sql) {
      const stmt = db.prepare(sql);
      stmt.setReturnArrays(true);
      yield* stmt.iterate();
    },
    close() {
      if (db.isTransaction) db.exec("ROLLBACK");
      db.close();
    },
  };
}

async function openSqlJs(path) {
  const SQL = await require("../../vendor/sql.js/sql-wasm.cjs")();
  const db = readJournaledFile(SQL, path);
  return {
    *rows(sql) {
      const stmt = db.prepare(sql);
      try {
        while (stmt.step()) yield stmt.get();
      } finally {
        stmt.free();
      }
    },
    close: () => db.close(),
  };
}
