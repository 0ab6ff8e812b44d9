// Library entry for embedders outside OpenClaw (browser pages, plain Node): open an engine on a
// sql.js module you provide. `openEngine` keeps the database in memory and hands you its bytes
// after every write (`save`), if you want them; `openBrowserEngine` persists to IndexedDB
// incrementally (journal.js: each write appends the transaction, not the whole database). The
// returned object speaks the same ContextEngine contract as the plugin, plus `search` and the
// read-only inspection calls `describe`, `expand` and `compactionEvents`. Types: ../types/.
import init from "../wasm/lossless_wasm.js";
import { createContextEngine } from "./context-engine.js";
import { createHandle } from "./engine-handle.js";
import { openIndexedDbStore } from "./indexeddb-store.js";
import { entrySize, journalPersister, replay } from "./journal.js";

let wasmReady;

function requireSqlJs(SQL, caller) {
  if (!SQL?.Database) throw new TypeError(`${caller}: pass the initialized sql.js module as \`SQL\` (the result of initSqlJs())`);
}

async function openOn({ db, config, save, persist, wasm, llm }) {
  wasmReady ??= init(wasm === undefined ? undefined : { module_or_path: wasm });
  try {
    await wasmReady;
  } catch (err) {
    wasmReady = undefined;
    throw err;
  }
  const handle = createHandle({ db, config, save, persist });
  return withInspection(createContextEngine(async () => handle, { config, hostLlm: () => llm }), handle);
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
 */
export async function openBrowserEngine({ SQL, config, wasm, llm, idbName = "lossless-wasm", key = "default", checkpointBytes } = {}) {
  requireSqlJs(SQL, "openBrowserEngine");
  const store = await openIndexedDbStore(idbName);
  const { snapshot, entries, lastSeq } = await store.loadJournaled(key);
  const db = new SQL.Database(snapshot);
  try {
    replay(db, entries);
  } catch (err) {
    db.close();
    store.close();
    throw err;
  }
  const persister = journalPersister({
    db,
    snapshotBytes: snapshot?.length ?? 0,
    journalBytes: entries.reduce((n, e) => n + entrySize(e), 0),
    nextSeq: lastSeq + 1,
    append: (seq, list) => store.append(key, seq, list),
    checkpoint: (bytes) => store.checkpoint(key, bytes),
    minCheckpointBytes: checkpointBytes,
  });
  return openOn({ db: persister.db, config, persist: persister.persist, wasm, llm });
}
