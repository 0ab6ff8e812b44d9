// The Node side: keeps one engine per database path for the life of the process (the host calls
// the factory every turn), by default in a worker thread (node-engine-thread.js; config
// `storageThread`), which loads the wasm module and opens the database there. Storage is node:sqlite
// when available (file-backed, WAL; config `durability` says whether each commit is fsynced,
// node-sqlite.js) or sql.js with a journal file
// (journal-file.js: each write appended and fsynced, the whole file rewritten only at
// checkpoints); config `storage` overrides the choice. A sql.js file is locked to one process
// (file-lock.js): a second process gets a clear error instead of silently losing writes.
// node:sqlite does not read sql.js journals, so before it opens a path that sql.js used, the
// journal is folded into the file (under the same lock) and removed.
// `storage: "postgres"` keeps the store on a PostgreSQL server instead (postgres-db.js; config
// `postgresUrl`, `postgresSchema`), which several gateway processes can share; it runs only in
// the worker, and one engine per server and schema (the URL shown without its password is the
// key; `dbPath` is not used).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, resolve } from "node:path";
import { initSync } from "../wasm/lossless_wasm.js";
import { createHandle } from "./engine-handle.js";
import { isOsOpenError, storageOpenError } from "./db-path.js";
import { lockDatabaseFile } from "./file-lock.js";
import { foldJournal, journalPath, openJournaledFile } from "./journal-file.js";
import { lockTimeoutFor, NodeSqliteDatabase, nodeSqliteAvailable, synchronousFor } from "./node-sqlite.js";
import { openEngineThread } from "./node-engine-thread.js";
import { importLosslessClaw } from "./import-lossless-claw.js";
import { PostgresDatabase } from "./postgres-db.js";
import { postgresSchemaFor, postgresUrlFor, redactedUrl } from "./pg-config.js";

const require = createRequire(import.meta.url);
const STORAGE = ["auto", "sql.js", "node:sqlite", "postgres"];
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

/** The error for `storage: "postgres"` on the host's thread: each statement waits for the
 *  server, and that wait must never hold the host's event loop. */
const POSTGRES_ON_MAIN =
  'invalid config `storageThread`: "main" cannot be used with `storage: "postgres"` (each statement waits for the server, which would hold the gateway\'s event loop); remove `storageThread` or set it to "worker"';

/** Where the engine for `dbPath` and `config` is kept: the database file, or for PostgreSQL
 *  the server (password hidden) and schema. Throws the config's errors, naming the key. */
export function engineKey(dbPath, config) {
  if (chooseStorage(config) !== "postgres") return resolve(dbPath);
  if (chooseThread(config) === "main") throw new Error(POSTGRES_ON_MAIN);
  return `${redactedUrl(postgresUrlFor(config))}#${postgresSchemaFor(config)}`;
}

/**
 * The engine for `dbPath`, opened on first use and shared afterwards: in a worker thread
 * (node-engine-thread.js) unless config `storageThread` is "main". Every call of the handle may
 * return a promise; callers await them.
 * @param {object} [options] for tests, used only by the first open of a path: `checkpointBytes`,
 *        the sql.js journal's least checkpoint size (made small so kills land inside
 *        checkpoints); `statementGraceMs`, the PostgreSQL driver's (postgres-db.js timeoutsFor;
 *        shortened so a server that stopped answering fails the call in seconds)
 */
export function openNodeEngine(dbPath, config, options) {
  let path;
  try {
    path = engineKey(dbPath, config);
  } catch (err) {
    return Promise.reject(err);
  }
  let pending = handles.get(path);
  if (!pending) {
    const forget = () => {
      if (handles.get(path) === pending) handles.delete(path);
    };
    pending = (async () => {
      if (chooseThread(config) === "main") return openHere(path, config, options);
      // A worker that stopped (crashed) is opened anew by the next call.
      return openEngineThread(path, config, options, { onStop: forget });
    })();
    // A failed open is not cached, so a fixed config or file is picked up on the next turn.
    pending.catch(forget);
    handles.set(path, pending);
  }
  return pending;
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
