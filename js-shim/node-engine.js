// The Node side: loads the wasm module once per process and keeps one engine per database path
// for the life of the process (the host calls the factory every turn). Storage is node:sqlite
// when available (file-backed, WAL, durable per transaction) or sql.js with atomic whole-file
// saves; config `storage` overrides the choice. A sql.js file is locked to one process
// (file-lock.js): a second process gets a clear error instead of silently losing writes.
import { mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, resolve } from "node:path";
import { initSync } from "../wasm/lossless_wasm.js";
import { createHandle } from "./engine-handle.js";
import { lockDatabaseFile } from "./file-lock.js";
import { readDatabaseFile, writeFileAtomic } from "./file-store.js";
import { NodeSqliteDatabase, nodeSqliteAvailable } from "./node-sqlite.js";

const require = createRequire(import.meta.url);
const STORAGE = ["auto", "sql.js", "node:sqlite"];
let wasmLoaded = false;
let sqlJs;
const handles = new Map();

function loadWasm() {
  if (wasmLoaded) return;
  initSync({ module: readFileSync(new URL("../wasm/lossless_wasm_bg.wasm", import.meta.url)) });
  wasmLoaded = true;
}

/** The driver `config.storage` asks for, resolved against what this Node offers. */
export function chooseStorage(config) {
  const wanted = config?.storage ?? "auto";
  if (!STORAGE.includes(wanted)) {
    throw new Error(`invalid config \`storage\`: must be one of ${STORAGE.map((s) => JSON.stringify(s)).join(", ")}`);
  }
  if (wanted === "node:sqlite" && !nodeSqliteAvailable()) {
    throw new Error(`invalid config \`storage\`: "node:sqlite" is not available in Node ${process.versions.node}`);
  }
  return wanted === "auto" ? (nodeSqliteAvailable() ? "node:sqlite" : "sql.js") : wanted;
}

async function openDatabase(path, storage) {
  mkdirSync(dirname(path), { recursive: true });
  if (storage === "node:sqlite") return { db: new NodeSqliteDatabase(path) };
  const unlock = lockDatabaseFile(path);
  try {
    sqlJs ??= require("../vendor/sql.js/sql-wasm.cjs")();
    const SQL = await sqlJs;
    return { db: new SQL.Database(readDatabaseFile(path)), save: (bytes) => writeFileAtomic(path, bytes) };
  } catch (err) {
    unlock();
    throw err;
  }
}

/** The engine for `dbPath`, opened on first use and shared afterwards. */
export function openNodeEngine(dbPath, config) {
  const path = resolve(dbPath);
  let pending = handles.get(path);
  if (!pending) {
    pending = (async () => {
      const storage = chooseStorage(config);
      loadWasm();
      const { db, save } = await openDatabase(path, storage);
      return Object.assign(createHandle({ db, config, save }), { storage, path });
    })();
    // A failed open is not cached, so a fixed config or file is picked up on the next turn.
    pending.catch(() => handles.delete(path));
    handles.set(path, pending);
  }
  return pending;
}
