// Opens the engine for one database on the calling thread: loads the wasm module, picks the
// storage driver config `storage` asks for (node:sqlite when available, file-backed, WAL; or
// sql.js with a journal file, journal-file.js, locked to one process by file-lock.js; or a
// PostgreSQL server, postgres/database.js), folds a sql.js journal before node:sqlite opens its
// path, and wraps the database in an engine handle (engine/handle.js). The worker thread
// (engine-thread-main.js) calls it for the default `storageThread: "worker"`; engine.js calls it
// directly for "main". It knows nothing of threads or of the per-path cache.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { initSync } from "../../wasm/lossless_wasm.js";
import { createHandle } from "../engine/handle.js";
import { isOsOpenError, storageOpenError } from "./db-path.js";
import { lockDatabaseFile } from "./file-lock.js";
import { foldJournal, journalPath, openJournaledFile } from "./journal-file.js";
import { lockTimeoutFor, NodeSqliteDatabase, nodeSqliteAvailable, synchronousFor } from "./sqlite.js";
import { importLosslessClaw } from "./import-lossless-claw.js";
import { PostgresDatabase } from "../postgres/database.js";
import { postgresSchemaFor, postgresUrlFor } from "../postgres/config.js";

const require = createRequire(import.meta.url);
const STORAGE = ["auto", "sql.js", "node:sqlite", "postgres"];
let wasmLoaded = false;
let sqlJs;

function loadWasm() {
  if (wasmLoaded) return;
  initSync({ module: readFileSync(new URL("../../wasm/lossless_wasm_bg.wasm", import.meta.url)) });
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

const loadSqlJs = () => (sqlJs ??= require("../../vendor/sql.js/sql-wasm.cjs")());

/** Takes the sql.js lock; for node:sqlite, says which process still writes through sql.js. */
function lockFor(path, storage) {
  try {
    return lockDatabaseFile(path);
  } catch (err) {
    if (storage !== "node:sqlite" || !/in use by another process/.test(err.message)) throw err;
    const holder = /\(pid \d+/.exec(err.message)?.[0].slice(1) ?? "see its lock file";
    throw new Error(
      `lossless-wasm: ${path} is open with storage "sql.js" in another process (${holder}); stop that process, then open it with "node:sqlite" (its journal ${journalPath(path)} is folded in then)`,
    );
  }
}

async function openDatabase(path, storage, durability, lockTimeoutMs, options, config) {
  if (storage === "postgres") return openFile(path, storage, durability, lockTimeoutMs, options, config);
  try {
    return await openFile(path, storage, durability, lockTimeoutMs, options, config);
  } catch (err) {
    // The folder cannot be created, the path runs under a file, no permission: one line naming
    // `dbPath`, the path and the OS's reason (db-path.js).
    throw isOsOpenError(err) ? storageOpenError(path, err) : err;
  }
}

async function openFile(path, storage, durability, lockTimeoutMs, { checkpointBytes, statementGraceMs } = {}, config) {
  if (storage === "postgres")
    return {
      db: new PostgresDatabase({
        url: postgresUrlFor(config),
        schema: postgresSchemaFor(config),
        lockTimeoutMs,
        statementGraceMs,
      }),
    };
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
    return { db: new NodeSqliteDatabase(path, { durability, lockTimeoutMs }) };
  }
  const unlock = lockFor(path, storage);
  try {
    const file = openJournaledFile(await loadSqlJs(), path, { checkpointBytes });
    return {
      db: file.db,
      persist: file.persist,
      release: () => {
        file.close();
        unlock();
      },
    };
  } catch (err) {
    unlock();
    throw err;
  }
}

const THREADS = ["worker", "main"];

/** Where config `storageThread` asks the engine to run ("worker" by default). */
export function chooseThread(config) {
  const wanted = config?.storageThread ?? "worker";
  if (!THREADS.includes(wanted)) {
    throw new Error(
      `invalid config \`storageThread\`: must be one of ${THREADS.map((t) => JSON.stringify(t)).join(", ")}`,
    );
  }
  return wanted;
}

/** Opens the engine for `path` on this thread (the worker does this for the default). */
export async function openHere(path, config, options) {
  const storage = chooseStorage(config);
  chooseThread(config);
  // Checked for every driver, so a typo is an error before anything is opened; only
  // node:sqlite acts on it (the sql.js drivers fsync every commit).
  const durability = config?.durability ?? "normal";
  synchronousFor(durability);
  const lockTimeoutMs = lockTimeoutFor(config?.lockTimeoutMs);
  if (storage === "postgres") {
    postgresUrlFor(config);
    postgresSchemaFor(config);
  }
  loadWasm();
  const { db, persist, release } = await openDatabase(path, storage, durability, lockTimeoutMs, options, config);
  try {
    // `synchronous()`: the open connection's PRAGMA synchronous (node:sqlite only), for tests.
    const handle = createHandle({ db, config, persist });
    // `backupTo(dest)`: a consistent copy of the database in a new file (the explorer takes
    // one before a repair); sql.js exports the in-memory database, which holds every commit.
    const backupTo = (dest) => (db.backupTo ? db.backupTo(dest) : writeFileSync(dest, db.export(), { flag: "wx" }));
    const close = async () => {
      await handle.flush();
      if (release) release();
      else db.close();
    };
    // `importLosslessClaw(lcmDbPath)`: opens the source read-only on this thread and imports it.
    const importFrom = (source) => importLosslessClaw(handle, source);
    // `storageStats()`: what the driver counted (PostgreSQL: statements sent), for measurements.
    return Object.assign(handle, {
      storage,
      path,
      thread: "main",
      backupTo,
      close,
      importLosslessClaw: importFrom,
      synchronous: () => db.synchronous?.(),
      storageStats: () => db.stats?.(),
    });
  } catch (err) {
    release?.();
    throw err;
  }
}
