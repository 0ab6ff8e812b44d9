// Reads a stored database the way the engine will see it, for every test that looks inside the
// file: a sql.js database is its snapshot plus its journal (`<dbPath>.lwjournal`, replayed in
// memory by the shipped node/journal-file.js, so nothing on disk changes), a node:sqlite one is the
// file plus its WAL. Reading the snapshot alone would miss every write since the last checkpoint.
import { existsSync } from "node:fs";
import { createRequire } from "node:module";

const PKG = new URL("../../dist/pkg/", import.meta.url);
const { journalPath, readJournaledFile } = await import(new URL("shim/node/journal-file.js", PKG));
const SQL = await createRequire(import.meta.url)("sql.js")();
const nodeSqlite = process.getBuiltinModule?.("node:sqlite");

/** Whether `dbPath` was written by the sql.js driver (it keeps a journal beside the file). */
export const hasJournal = (dbPath) => existsSync(journalPath(dbPath));

/**
 * Opens the stored database at `dbPath` for reading.
 * @param {{readOnly?: boolean}} [options] node:sqlite files only (a read-write open recovers a WAL)
 * @returns {{all: (sql: string) => object[], values: (sql: string) => any[][], close: () => void}}
 */
export function openStored(dbPath, { readOnly = true } = {}) {
  if (nodeSqlite && !hasJournal(dbPath)) {
    // The timeout: a process of the test may still be closing the file (its last connection
    // checkpoints under an exclusive lock), and a read then would fail at once as "locked".
    const db = new nodeSqlite.DatabaseSync(dbPath, { readOnly, timeout: 15_000 });
    return {
      all: (sql) => db.prepare(sql).all(),
      values: (sql) => {
        const stmt = db.prepare(sql);
        stmt.setReturnArrays(true);
        return stmt.all();
      },
      close: () => db.close(),
    };
  }
  const db = readJournaledFile(SQL, dbPath);
  const rows = (sql, asObjects) => {
    const stmt = db.prepare(sql);
    try {
      const out = [];
      while (stmt.step()) out.push(asObjects ? stmt.getAsObject() : stmt.get());
      return out;
    } finally {
      stmt.free();
    }
  };
  return { all: (sql) => rows(sql, true), values: (sql) => rows(sql, false), close: () => db.close() };
}

/** Runs `fn` with an open reader and closes it. */
export function withStored(dbPath, fn, options) {
  const db = openStored(dbPath, options);
  try {
    return fn(db);
  } finally {
    db.close();
  }
}
