// Shared helpers for the shim tests: the built package, temp dirs, and reading our database
// with a real SQLite, snapshot plus journal for sql.js files (stored-db.mjs).
import { mkdtempSync } from "node:fs";
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

/**
 * Reads our database with a real SQLite, as the engine sees it: node:sqlite with its WAL, or a
 * sql.js file with its journal replayed (stored-db.mjs). Rows as arrays.
 */
export async function query(dbPath, sql) {
  const { withStored } = await import("./stored-db.mjs");
  return withStored(dbPath, (db) => db.values(sql));
}

let clock = 1_790_000_000_000;
export const user = (text) => ({ role: "user", content: text, timestamp: clock++ });
export const assistant = (text) => ({
  role: "assistant", content: [{ type: "text", text }], api: "openai-completions", provider: "mock", model: "m",
  usage: { input: 1, output: 1 }, stopReason: "stop", timestamp: clock++,
});
