// The Node side: keeps one engine per database path for the life of the process (the host calls
// the factory every turn), by default in a worker thread (engine-thread.js; config
// `storageThread`), which opens the database there with open-here.js (the same call opens it on
// the host's thread for `storageThread: "main"`). Storage is node:sqlite
// when available (file-backed, WAL; config `durability` says whether each commit is fsynced,
// sqlite.js) or sql.js with a journal file
// (journal-file.js: each write appended and fsynced, the whole file rewritten only at
// checkpoints); config `storage` overrides the choice. A sql.js file is locked to one process
// (file-lock.js): a second process gets a clear error instead of silently losing writes.
// node:sqlite does not read sql.js journals, so before it opens a path that sql.js used, the
// journal is folded into the file (under the same lock) and removed.
// `storage: "postgres"` keeps the store on a PostgreSQL server instead (postgres/database.js; config
// `postgresUrl`, `postgresSchema`), which several gateway processes can share; it runs only in
// the worker, and one engine per server and schema (the URL shown without its password is the
// key; `dbPath` is not used).
// A hot reload of the plugin's config registers the plugin again in the same process, with the
// module state kept (OpenClaw requires the entry again, and Node caches ES modules): a later
// registration (`generation`) whose config differs closes the engine the earlier one opened,
// after its calls in flight, and opens one with its own config; the earlier registration's
// callers then get the newer engine, never the old config back.
import { resolve } from "node:path";
import { postgresSchemaFor, postgresUrlFor, redactedUrl } from "../postgres/config.js";
import { openEngineThread } from "./engine-thread.js";
import { chooseStorage, chooseThread, openHere } from "./open-here.js";

export { chooseStorage, chooseThread, openHere };

/** key -> {pending, config (its JSON), generation} */
const handles = new Map();

/** A config's identity: its JSON with keys in order (the host's config is plain JSON). */
const fingerprint = (config) =>
  JSON.stringify(config ?? {}, (_key, value) =>
    value && typeof value === "object" && !Array.isArray(value)
      ? Object.fromEntries(
          Object.keys(value)
            .sort()
            .map((k) => [k, value[k]]),
        )
      : value,
  );

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
 * (engine-thread.js) unless config `storageThread` is "main". Every call of the handle may
 * return a promise; callers await them.
 * @param {object} [options] for tests, used only by the first open of a path: `checkpointBytes`,
 *        the sql.js journal's least checkpoint size (made small so kills land inside
 *        checkpoints); `statementGraceMs`, the PostgreSQL driver's (postgres/database.js timeoutsFor;
 *        shortened so a server that stopped answering fails the call in seconds)
 * @param {{generation?: number}} [owner] the plugin registration asking (a counter, newest
 *        highest): a newer one with another config replaces the open engine; without it, the
 *        engine open for the path is returned whatever its config
 */
export function openNodeEngine(dbPath, config, options, { generation } = {}) {
  let path;
  try {
    path = engineKey(dbPath, config);
  } catch (err) {
    return Promise.reject(err);
  }
  const current = handles.get(path);
  const wanted = fingerprint(config);
  if (current && (current.config === wanted || generation === undefined || generation <= current.generation))
    return current.pending;
  // No engine yet, or a newer registration with another config: the old engine (if any) closes
  // after its calls in flight, then the new one opens.
  const before = current?.pending.then(retire, () => {});
  const entry = { config: wanted, generation: generation ?? 0, pending: undefined };
  const forget = () => {
    if (handles.get(path) === entry) handles.delete(path);
  };
  entry.pending = (async () => {
    await before;
    if (chooseThread(config) === "main") return openHere(path, config, options);
    // A worker that stopped (crashed) is opened anew by the next call.
    return openEngineThread(path, config, options, { onStop: forget });
  })();
  // A failed open is not cached, so a fixed config or file is picked up on the next turn.
  entry.pending.catch(forget);
  handles.set(path, entry);
  return entry.pending;
}

/** Closes an engine a newer config replaced; its users see `retired` (dispose flushes nothing). */
async function retire(handle) {
  handle.retired = true;
  try {
    await handle.close();
  } catch {
    // Closed already (its worker stopped): nothing is left open.
  }
}
