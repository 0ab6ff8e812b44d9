// One open engine: a database (sql.js, or node:sqlite behind the same interface), the wasm engine
// over it, and the persistence step that runs after every call that committed a write.
// Host-independent: the OpenClaw entry, the library entry and the tests all use it.
import { WasmEngine } from "../wasm/lossless_wasm.js";

/**
 * @param {object} options
 * @param {object} options.db       an open sql.js Database (or NodeSqliteDatabase)
 * @param {object} [options.config] engine config (validated by the engine; errors name the key)
 * @param {(bytes: Uint8Array) => void} [options.save] persists the database after each write;
 *        omit it for databases that persist themselves (node:sqlite) or live only in memory
 */
export function createHandle({ db, config, save }) {
  let engine;
  try {
    engine = new WasmEngine(db, config ?? {}, Date.now());
  } catch (err) {
    db.close();
    throw err;
  }
  // A write that could not be saved stays pending until a later save succeeds.
  let unsaved = false;
  const handle = {
    /** Calls an engine method with the current time (methods that need none ignore it),
     *  then persists what it committed. */
    call(method, params) {
      const out = engine[method](params, Date.now());
      handle.flush();
      return out;
    },
    flush() {
      if (engine.takeDirty() || unsaved) {
        if (!save) return;
        unsaved = true;
        save(engine.exportDatabase());
        unsaved = false;
      }
    },
  };
  handle.flush();
  return handle;
}
