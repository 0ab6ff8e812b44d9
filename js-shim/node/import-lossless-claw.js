// Node: opens a lossless-claw `lcm.db` strictly read-only and hands it to the engine's importer
// (the reading and writing are in the wasm engine). node:sqlite opens it with readOnly, which
// also sees a WAL the anchor has not checkpointed; without node:sqlite the file is read into
// sql.js's memory (never written back), which refuses a database with a pending WAL rather than
// import a stale copy. Either way the source file is never modified.
import { existsSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { NodeSqliteDatabase, nodeSqliteAvailable } from "./sqlite.js";

const require = createRequire(import.meta.url);

async function openSource(path) {
  if (!existsSync(path)) throw new Error(`lossless-claw import: no database at ${path}`);
  if (nodeSqliteAvailable()) return new NodeSqliteDatabase(path, { readOnly: true });
  const wal = `${path}-wal`;
  if (existsSync(wal) && statSync(wal).size > 0) {
    throw new Error(
      `lossless-claw import: ${path} has unmerged changes in ${wal}; stop OpenClaw (or run the import with a Node that has node:sqlite) and try again`,
    );
  }
  const SQL = await require("../../vendor/sql.js/sql-wasm.cjs")();
  return new SQL.Database(readFileSync(path));
}

/**
 * Imports a lossless-claw database into the engine behind `handle`. Idempotent.
 * @param {{call: Function}} handle an engine handle
 * @param {string} path the `lcm.db` file (default location: ~/.openclaw/lcm.db)
 * @returns {Promise<{conversations: number, messages: number, summaries: number, fallbackSummaries: number, views: number, notes: string[]}>}
 */
export async function importLosslessClaw(handle, path) {
  const source = await openSource(path);
  try {
    return await handle.call("importLosslessClaw", source);
  } finally {
    source.close();
  }
}
