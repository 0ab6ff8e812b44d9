// The Node side: loads the wasm module once per process and keeps one engine per database path
// for the life of the process (the host calls the factory every turn). Storage is node:sqlite
// when available (file-backed, WAL; config `durability` says whether each commit is fsynced,
// node-sqlite.js) or sql.js with a journal file
// (journal-file.js: each write appended and fsynced, the whole file rewritten only at
// checkpoints); config `storage` overrides the choice. A sql.js file is locked to one process
// (file-lock.js): a second process gets a clear error instead of silently losing writes.
// node:sqlite does not read sql.js journals, so before it opens a path that sql.js used, the
// journal is folded into the file (under the same lock) and removed.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, resolve } from "node:path";
import { initSync } from "../wasm/lossless_wasm.js";
import { createHandle } from "./engine-handle.js";
import { lockDatabaseFile } from "./file-lock.js";
import { foldJournal, journalPath, openJournaledFile } from "./journal-file.js";
import { NodeSqliteDatabase, nodeSqliteAvailable, synchronousFor } from "./node-sqlite.js";

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

const loadSqlJs = () => (sqlJs ??= require("../vendor/sql.js/sql-wasm.cjs")());

/** Takes the sql.js lock; for node:sqlite, says which process still writes through sql.js. */
function lockFor(path, storage) {
  try {
    return lockDatabaseFile(path);
  } catch (err) {
    if (storage !== "node:sqlite" || !/in use by another process/.test(err.message)) throw err;
    const holder = /\(pid \d+/.exec(err.message)?.[0].slice(1) ?? "see its lock file";
    throw new Error(`lossless-wasm: ${path} is open with storage "sql.js" in another process (${holder}); stop that process, then open it with "node:sqlite" (its journal ${journalPath(path)} is folded in then)`);
  }
}

async function openDatabase(path, storage, durability, { checkpointBytes } = {}) {
  mkdirSync(dirname(path), { recursive: true });
  if (storage === "node:sqlite") {
    if (existsSync(journalPath(path))) {
      const unlock = lockFor(path, storage);
      try {
        foldJournal(await loadSqlJs(), path);
      } finally {
        unlock();
      }
    }
    return { db: new NodeSqliteDatabase(path, { durability }) };
  }
  const unlock = lockFor(path, storage);
  try {
    const file = openJournaledFile(await loadSqlJs(), path, { checkpointBytes });
    return { db: file.db, persist: file.persist, release: () => { file.close(); unlock(); } };
  } catch (err) {
    unlock();
    throw err;
  }
}

/**
 * The engine for `dbPath`, opened on first use and shared afterwards.
 * @param {object} [options] `checkpointBytes`: the sql.js journal's least checkpoint size (tests
 *        make it small so kills land inside checkpoints); only the first open of a path uses it
 */
export function openNodeEngine(dbPath, config, options) {
  const path = resolve(dbPath);
  let pending = handles.get(path);
  if (!pending) {
    pending = (async () => {
      const storage = chooseStorage(config);
      // Checked for every driver, so a typo is an error before anything is opened; only
      // node:sqlite acts on it (the sql.js drivers fsync every commit).
      const durability = config?.durability ?? "normal";
      synchronousFor(durability);
      loadWasm();
      const { db, persist, release } = await openDatabase(path, storage, durability, options);
      try {
        // `synchronous()`: the open connection's PRAGMA synchronous (node:sqlite only), for tests.
        const handle = createHandle({ db, config, persist });
        // `backupTo(dest)`: a consistent copy of the database in a new file (the explorer takes
        // one before a repair); sql.js exports the in-memory database, which holds every commit.
        const backupTo = (dest) => (db.backupTo ? db.backupTo(dest) : writeFileSync(dest, db.export(), { flag: "wx" }));
        return Object.assign(handle, { storage, path, backupTo, synchronous: () => db.synchronous?.() });
      } catch (err) {
        release?.();
        throw err;
      }
    })();
    // A failed open is not cached, so a fixed config or file is picked up on the next turn.
    pending.catch(() => handles.delete(path));
    handles.set(path, pending);
  }
  return pending;
}
