// Library entry for embedders outside OpenClaw (browser pages, plain Node): open an engine on a
// sql.js module you provide. `openEngine` keeps the database in memory and hands you its bytes
// after every write (`save`), if you want them; `openBrowserEngine` persists to IndexedDB
// incrementally (engine/journal.js: each write appends the transaction, not the whole database). The
// returned object speaks the same ContextEngine contract as the plugin, plus `search` and the
// read-only inspection calls `describe`, `expand` and `compactionEvents`, and `close()`.
// A browser engine holds its key's write lock (browser/store-lock.js) from open to close. Types: ../types/.
export { openBrowserEngine, openEngine } from "./browser/open-engine.js";
export { openBrowserEngineInWorker } from "./browser/engine-in-worker.js";
