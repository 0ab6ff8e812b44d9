// Shared helpers for the shim tests: the built package, temp dirs, and reading our database
// with sql.js (a real SQLite, the same one the engine uses).
import { mkdtempSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const PKG = new URL("../../dist/pkg/", import.meta.url);

export async function loadPlugin() {
  try {
    return (await import(new URL("shim/index.js", PKG))).default;
  } catch (err) {
    throw new Error(`the built package is missing or broken (run: bash scripts/build.sh): ${err.message}`);
  }
}

export function tempDir(name) {
  return mkdtempSync(join(tmpdir(), `lossless-wasm-${name}-`));
}

/** The storage drivers this Node can test: sql.js everywhere, node:sqlite where it exists. */
export const STORAGES = process.getBuiltinModule?.("node:sqlite") ? ["sql.js", "node:sqlite"] : ["sql.js"];

const require = createRequire(import.meta.url);
let SQL;
/** Reads our database with a real SQLite: node:sqlite (sees WAL content) or else sql.js. */
export async function query(dbPath, sql) {
  const nodeSqlite = process.getBuiltinModule?.("node:sqlite");
  if (nodeSqlite) {
    const db = new nodeSqlite.DatabaseSync(dbPath, { readOnly: true });
    try {
      const stmt = db.prepare(sql);
      stmt.setReturnArrays(true);
      return stmt.all();
    } finally {
      db.close();
    }
  }
  SQL ??= await require("sql.js")();
  const db = new SQL.Database(readFileSync(dbPath));
  try {
    const [result] = db.exec(sql);
    return result ? result.values : [];
  } finally {
    db.close();
  }
}

let clock = 1_790_000_000_000;
export const user = (text) => ({ role: "user", content: text, timestamp: clock++ });
export const assistant = (text) => ({
  role: "assistant", content: [{ type: "text", text }], api: "openai-completions", provider: "mock", model: "m",
  usage: { input: 1, output: 1 }, stopReason: "stop", timestamp: clock++,
});
