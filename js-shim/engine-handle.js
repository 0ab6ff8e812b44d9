// One open engine: a sql.js database, the wasm engine over it, and the persistence step that
// runs after every call that committed a write. Host-independent: Node and browsers both use it.
import { WasmEngine } from "../wasm/lossless_wasm.js";

/**
 * @param {object} options
 * @param {object} options.SQL      the initialized sql.js module (`await initSqlJs()`)
 * @param {Uint8Array} [options.bytes] an existing database file's bytes
 * @param {object} [options.config] plugin config (validated by the engine; errors name the key)
 * @param {(bytes: Uint8Array) => void} [options.save] persists the database after each write
 */
export function createHandle({ SQL, bytes, config, save }) {
  const db = bytes ? new SQL.Database(bytes) : new SQL.Database();
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
      if (!save) return;
      if (engine.takeDirty() || unsaved) {
        unsaved = true;
        save(engine.exportDatabase());
        unsaved = false;
      }
    },
    /** The database as SQLite file bytes. */
    exportDatabase() {
      return engine.exportDatabase();
    },
  };
  handle.flush();
  return handle;
}
