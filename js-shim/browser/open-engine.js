// Opening an engine over a sql.js module the embedder provides (browser pages, plain Node): the
// implementation behind library.js. `openEngine` keeps the database in memory and hands its bytes
// to `save` after every write; `openBrowserEngine` persists to IndexedDB incrementally
// (engine/journal.js) and holds its key's write lock (store-lock.js) from open to close. The
// worker (engine-worker-main.js) imports this module, not library.js, so no module loads itself
// back through a worker URL.
import init from "../../wasm/lossless_wasm.js";
import { createContextEngine } from "../engine/context-engine.js";
import { makeClosable } from "../engine/closable.js";
import { createHandle } from "../engine/handle.js";
import { openIndexedDbStore } from "./indexeddb-store.js";
import { entrySize, journalPersister, replaySliced } from "../engine/journal.js";
import { acquireStoreLock } from "./store-lock.js";
import { LeaseLostError } from "../errors.js";

/** How long openBrowserEngine waits for another tab's writer by default (a reload's old page
 *  releases its lock as it unloads, well inside this). */
const DEFAULT_LOCK_TIMEOUT_MS = 5_000;

let wasmReady;

function requireSqlJs(SQL, caller) {
  if (!SQL?.Database)
    throw new TypeError(`${caller}: pass the initialized sql.js module as \`SQL\` (the result of initSqlJs())`);
}

/**
 * The engine over `db`, with close(): the running calls settle, what is unsaved is flushed, the
 * database closed, then `release` runs (it runs too when opening fails).
 */
async function openOn({ db, config, save, persist, wasm, llm, readOnly, broken, release = () => {} }) {
  wasmReady ??= init(wasm === undefined ? undefined : { module_or_path: wasm });
  let handle;
  try {
    await wasmReady;
  } catch (err) {
    wasmReady = undefined;
    db.close();
    await release();
    throw err;
  }
  try {
    handle = createHandle({ db, config, save, persist });
  } catch (err) {
    // createHandle has closed the database (the engine refused it or the config).
    await release();
    throw err;
  }
  const engine = withInspection(
    createContextEngine(async () => handle, { config, hostLlm: () => llm }),
    handle,
  );
  return makeClosable(
    engine,
    async () => {
      try {
        await handle.flush();
      } finally {
        db.close();
        handle = undefined;
        await release();
      }
    },
    { readOnly, broken },
  );
}

/** Adds the engine's read-only inspection calls (the base of lcm_describe / lcm_expand). */
function withInspection(engine, handle) {
  return Object.assign(engine, {
    describe: async (p) => handle.call("describe", { ...p }),
    expand: async (p) => handle.call("expand", { ...p }),
    compactionEvents: async (p) => handle.call("compactionEvents", { ...p }),
  });
}

/**
 * An engine over an in-memory sql.js database (see types/library.d.ts for every option).
 * @param {object} options
 * @param {object} options.SQL the initialized sql.js module
 * @param {Uint8Array} [options.bytes] an existing database to open
 * @param {object} [options.config] engine config
 * @param {(bytes: Uint8Array) => void|Promise<void>} [options.save] called with the whole
 *        database after every write; a returned promise is awaited before the call resolves
 * @param {BufferSource|WebAssembly.Module|URL|string} [options.wasm] where to load our wasm from
 *        (default: next to this package's JS, fetched)
 * @param {{complete: Function}} [options.llm] an LLM for summaries (`complete({messages,
 *        maxTokens, purpose})` resolving to `{text}`); without one the extractive summarizer runs
 */
export async function openEngine({ SQL, bytes, config, save, wasm, llm } = {}) {
  requireSqlJs(SQL, "openEngine");
  return openOn({ db: new SQL.Database(bytes), config, save, wasm, llm });
}

/**
 * A browser engine whose database persists in IndexedDB (`idbName`, entry `key`): reopened with
 * everything stored by earlier page loads. Each write is appended to a journal in one durable
 * IndexedDB transaction before the call resolves; the whole database is written only at
 * checkpoints (when the journal outgrows a sixteenth of it and `checkpointBytes`, default 2 MiB).
 * `engine.dataLoss` is `{at, message}` once the browser has discarded the IndexedDB database as
 * corrupt (indexeddb-store.js), null otherwise.
 */
export async function openBrowserEngine({
  SQL,
  config,
  wasm,
  llm,
  idbName = "lossless-wasm",
  key = "default",
  checkpointBytes,
  readOnly = false,
  lockTimeoutMs = DEFAULT_LOCK_TIMEOUT_MS,
  lockManager = globalThis.navigator?.locks ?? null,
  leaseMs,
} = {}) {
  requireSqlJs(SQL, "openBrowserEngine");
  if (!(typeof lockTimeoutMs === "number" && lockTimeoutMs >= 0)) {
    throw new TypeError(
      `openBrowserEngine: \`lockTimeoutMs\` must be a number of milliseconds >= 0 (or Infinity), got ${String(lockTimeoutMs)}`,
    );
  }
  if (leaseMs !== undefined && !(typeof leaseMs === "number" && leaseMs >= 100 && Number.isFinite(leaseMs))) {
    throw new TypeError(
      `openBrowserEngine: \`leaseMs\` must be a finite number of milliseconds >= 100, got ${String(leaseMs)}`,
    );
  }
  const store = await openIndexedDbStore(idbName);
  let lock;
  const release = async () => {
    try {
      await lock?.release();
    } finally {
      store.close();
    }
  };
  let db;
  let persister;
  let dataLoss = null;
  // A write refused because the lease moved on leaves this engine behind the store for good.
  let lostWrite;
  const fenced = (write) =>
    write.catch((err) => {
      if (err instanceof LeaseLostError) lostWrite = err;
      throw err;
    });
  try {
    // The lock comes first: what is read below is then everything the last writer committed.
    // A reader takes none: it reads snapshot and journal in one transaction, committed state only.
    if (!readOnly)
      lock = await acquireStoreLock({ store, idbName, key, timeoutMs: lockTimeoutMs, locks: lockManager, leaseMs });
    const { snapshot, entries, lastSeq, loss } = await store.loadJournaled(key);
    dataLoss = loss ?? null;
    if (store.observedLoss) {
      console.warn(
        `lossless-wasm: the browser discarded IndexedDB "${idbName}" (${store.observedLoss.message}) and recreated it empty; what was stored there before is gone (engine.dataLoss)`,
      );
    }
    db = new SQL.Database(snapshot);
    // In slices: a reopen may replay ~1,000 turns, about a second of work on the tab's thread.
    await replaySliced(db, entries);
    const fence = lock?.fence;
    persister = readOnly
      ? { db, persist: () => undefined }
      : journalPersister({
          db,
          snapshotBytes: snapshot?.length ?? 0,
          journalBytes: entries.reduce((n, e) => n + entrySize(e), 0),
          nextSeq: lastSeq + 1,
          append: (seq, list) => fenced(store.append(key, seq, list, fence)),
          checkpoint: (bytes) => fenced(store.checkpoint(key, bytes, fence)),
          minCheckpointBytes: checkpointBytes,
        });
  } catch (err) {
    db?.close();
    await release();
    throw err;
  }
  const engine = await openOn({
    db: persister.db,
    config,
    persist: persister.persist,
    wasm,
    llm,
    readOnly,
    broken: () => lostWrite ?? lock?.lost(),
    release,
  });
  return Object.defineProperty(engine, "dataLoss", { value: dataLoss, enumerable: true });
}
