// Library entry for embedders outside OpenClaw (browser pages, plain Node): open an engine on a
// sql.js module you provide, with an optional `save` callback that receives the database bytes
// after every write. The returned object speaks the same ContextEngine contract as the plugin,
// plus read-only inspection (`describe`, `expand`, `compactionEvents`) and `search`.
import init from "../wasm/lossless_wasm.js";
import { createContextEngine } from "./context-engine.js";
import { createHandle } from "./engine-handle.js";
import { openIndexedDbStore } from "./indexeddb-store.js";

let wasmReady;

/**
 * @param {object} options
 * @param {object} options.SQL the initialized sql.js module
 * @param {Uint8Array} [options.bytes] an existing database to open
 * @param {object} [options.config] engine config
 * @param {(bytes: Uint8Array) => void} [options.save] persistence callback
 * @param {BufferSource|WebAssembly.Module|URL|string} [options.wasm] where to load our wasm from
 *        (default: next to this package's JS, fetched)
 * @param {{complete: Function}} [options.llm] an LLM for summaries (`complete({messages,
 *        maxTokens, purpose})` resolving to `{text}`); without one the extractive summarizer runs
 */
export async function openEngine({ SQL, bytes, config, save, wasm, llm } = {}) {
  if (!SQL?.Database) throw new Error("openEngine: pass the initialized sql.js module as `SQL`");
  wasmReady ??= init(wasm === undefined ? undefined : { module_or_path: wasm });
  await wasmReady;
  const handle = createHandle({ db: new SQL.Database(bytes), config, save });
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
 * A browser engine whose database persists in IndexedDB (`idbName`, entry `key`): reopened with
 * everything stored by earlier page loads, saved after every write.
 */
export async function openBrowserEngine({ SQL, config, wasm, llm, idbName = "lossless-wasm", key = "default" } = {}) {
  const store = await openIndexedDbStore(idbName);
  const bytes = await store.load(key);
  return openEngine({ SQL, bytes, config, wasm, llm, save: (data) => store.save(key, data) });
}
