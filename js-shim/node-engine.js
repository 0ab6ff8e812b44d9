// The Node side: loads the wasm module and sql.js once per process and keeps one engine per
// database path for the life of the process (the host calls the factory every turn).
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { resolve } from "node:path";
import { initSync } from "../wasm/lossless_wasm.js";
import { createHandle } from "./engine-handle.js";
import { readDatabaseFile, writeFileAtomic } from "./file-store.js";

const require = createRequire(import.meta.url);
let wasmLoaded = false;
let sqlJs;
const handles = new Map();

function loadWasm() {
  if (wasmLoaded) return;
  initSync({ module: readFileSync(new URL("../wasm/lossless_wasm_bg.wasm", import.meta.url)) });
  wasmLoaded = true;
}

function loadSqlJs() {
  sqlJs ??= require("sql.js")();
  return sqlJs;
}

/** The engine for `dbPath`, opened on first use and shared afterwards. */
export function openNodeEngine(dbPath, config) {
  const path = resolve(dbPath);
  let pending = handles.get(path);
  if (!pending) {
    pending = (async () => {
      loadWasm();
      const SQL = await loadSqlJs();
      return createHandle({ SQL, bytes: readDatabaseFile(path), config, save: (bytes) => writeFileAtomic(path, bytes) });
    })();
    // A failed open is not cached, so a fixed config or file is picked up on the next turn.
    pending.catch(() => handles.delete(path));
    handles.set(path, pending);
  }
  return pending;
}
