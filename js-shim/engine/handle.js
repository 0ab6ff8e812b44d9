// One open engine: a database (sql.js, or node:sqlite behind the same interface), the wasm engine
// over it, and the persistence step that runs after every call that committed a write.
// Host-independent: the OpenClaw entry, the library entry and the tests all use it.
import { WasmEngine } from "../../wasm/lossless_wasm.js";
import { createViewHandover } from "./view-handover.js";

/**
 * The view for an `assemble` call from `views` (view-handover.js) and `fetch(heldToken)`, the
 * raw view (a promise when it comes from another thread): `{messages, estimatedTokens,
 * systemPromptAddition, storedMessages, notice?}` (notice: a line for the host's log).
 */
export function assembleWith(views, params, fetch) {
  const shape = ({ out, messages }) => ({
    messages,
    estimatedTokens: out.estimatedTokens,
    systemPromptAddition: out.systemPromptAddition,
    storedMessages: out.storedMessages,
    notice: out.notice,
  });
  const view = views.assemble(params.sessionKey ?? params.sessionId, fetch);
  return typeof view?.then === "function" ? view.then(shape) : shape(view);
}

/** Calls that may write many pages in one transaction (see NodeSqliteDatabase.afterBulkWrite). */
const BULK_WRITES = new Set(["bootstrap", "ingest", "importLosslessClaw"]);

/**
 * @param {object} options
 * @param {object} options.db       an open sql.js Database (or NodeSqliteDatabase)
 * @param {object} [options.config] engine config (validated by the engine; errors name the key)
 * @param {(bytes: Uint8Array) => void|Promise<void>} [options.save] persists the database after
 *        each write (a returned promise is awaited before the call resolves); omit it for
 *        databases that persist themselves (node:sqlite) or live only in memory
 * @param {(exportDatabase: () => Uint8Array) => void|Promise<void>} [options.persist] instead of
 *        `save`: persists incrementally (journal.js), exporting the whole database only when it
 *        decides to checkpoint
 */
export function createHandle({ db, config, save, persist }) {
  // The engine's time for a caller's `now`: a database with a clock of its own (PostgreSQL) moves
  // it by `db.clockOffsetMs` to the server's.
  const engineTime = (now) => now + (db.clockOffsetMs ?? 0);
  let engine;
  try {
    engine = new WasmEngine(db, config ?? {}, engineTime(Date.now()));
  } catch (err) {
    db.close();
    throw err;
  }
  // A write that could not be saved stays pending until a later save succeeds.
  let unsaved = false;
  // The decoded views last handed to the host, per session (view-handover.js).
  const views = createViewHandover();
  const handle = {
    /** Config values the engine clamped, one sentence each. */
    configWarnings: engine.configWarnings(),
    /** Calls an engine method with the current time (methods that need none ignore it; a
     *  handle in another thread passes the time of the caller's thread; `engineTime` moves it
     *  to a shared store's clock), then persists what it committed; a promise when the save is
     *  asynchronous. */
    call(method, params, now = Date.now()) {
      const out = engine[method](params, engineTime(now));
      if (BULK_WRITES.has(method)) db.afterBulkWrite?.();
      const saving = handle.flush();
      return saving ? saving.then(() => out) : out;
    },
    /** The view for an `assemble` call: `{messages, estimatedTokens, systemPromptAddition,
     *  storedMessages}`, parsing only the messages this handle has not handed out before. */
    assemble(params) {
      return assembleWith(views, params, (held) => handle.assembleView(params, held));
    },
    /** The engine's raw view for `assemble` (keys, fresh flags, the JSON of the entries new to
     *  `held`), persisted first; what a handle in another thread hands back (node/engine-thread.js). */
    assembleView(params, held, now = Date.now()) {
      const out = engine.assembleView(params, held, engineTime(now));
      const saving = handle.flush();
      return saving ? saving.then(() => out) : out;
    },
    /** After-turn upkeep, for the host's `maintain`: indexes the messages waiting for search once
     *  a batch has gathered, and lets the database driver do its own (node:sqlite checkpoints
     *  its WAL now and then). Returns how many messages it indexed (a promise when saving is
     *  asynchronous). */
    housekeep() {
      const indexed = engine.indexSearchBatch();
      db.housekeep?.();
      const saving = handle.flush();
      return saving ? saving.then(() => indexed) : indexed;
    },
    /** From now on a turn's calls leave their messages' vectors to `backfillVectors`, which the
     *  caller runs once the turn is answered (node/engine-thread-main.js: after `housekeep`). */
    deferTurnEmbedding() {
      engine.deferTurnEmbedding();
    },
    /** Embeds one bounded batch of the messages and summaries without a vector; returns how
     *  many (a promise when saving is asynchronous). */
    backfillVectors() {
      const embedded = engine.backfillVectors();
      const saving = handle.flush();
      return saving ? saving.then(() => embedded) : embedded;
    },
    /** True when a message or summary still waits for its vector. */
    vectorsWaiting() {
      return engine.vectorsWaiting();
    },
    /** Saves when something committed since the last save; a promise for asynchronous saves. */
    flush() {
      if (!(save || persist) || !(engine.takeDirty() || unsaved)) return undefined;
      unsaved = true;
      const result = persist ? persist(() => engine.exportDatabase()) : save(engine.exportDatabase());
      if (typeof result?.then === "function")
        return result.then(() => {
          unsaved = false;
        });
      unsaved = false;
      return undefined;
    },
  };
  handle.flush();
  return handle;
}
