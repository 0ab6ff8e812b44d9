// The engine in a worker thread (config `storageThread: "worker"`, the default in Node): the
// wasm engine and its database (node:sqlite or sql.js) run in engine-thread-main.js, so nothing
// storage does — importing a long history, waiting out another process's write lock, a WAL
// checkpoint, `doctor` on a large database — holds the host's event loop. This side keeps a
// handle with the same calls as engine/handle.js's, each a message to the worker and back.
//
// What still runs on the host's thread: copying a call's params into the worker (only the part
// of the host's history the engine reads, host-history.js; a long list goes in parts of
// MESSAGES_PER_PART, with the event loop let through between parts) and decoding the view's new
// messages (engine/view-handover.js). Owns only the message protocol.
//
// A reply comes back on a port of its own, and the host's thread first waits for it blocked, for
// at most BLOCKING_WAIT_MS (Atomics.wait on a counter the worker bumps after each reply), and
// only then lets its event loop run until it arrives. A turn's calls take a fraction of a
// millisecond in the worker: handing the loop over at each of them gave the host's own scheduled
// work (V8's collections of the host's garbage, ~13 ms each with a long history) a free moment
// inside the plugin's call, four times a turn (docs/benchmarks.md, issue 39 item 6). A call that
// takes longer (an import, another process's write lock) still frees the loop after
// BLOCKING_WAIT_MS, so the longest stall stays within DESIGN.md's budget.
import { MessageChannel, receiveMessageOnPort, Worker } from "node:worker_threads";
import { setImmediate as nextTurnOfTheLoop } from "node:timers/promises";
import { assembleWith } from "../engine/handle.js";
import { createViewHandover } from "../engine/view-handover.js";
import { elide, IN_PARTS } from "./host-history.js";
import { fromWire } from "../errors.js";

/** Messages per part when a call hands over a long history: a structured copy of 256 host
 *  messages takes a few milliseconds of the host's thread. */
export const MESSAGES_PER_PART = 256;

/** How long the host's thread waits for a reply without letting its event loop run. */
export const BLOCKING_WAIT_MS = 8;

/** Levels plainCopy keeps; the engine refuses messages nested deeper than 100. */
const COPY_DEPTH = 128;

/**
 * What the engine reads of `value`, as plain data a structured copy accepts: what JSON would
 * keep (toJSON honoured, functions and symbols left out), and below COPY_DEPTH levels an empty
 * object, so a message nested too deep still reaches the engine too deep, and its error names
 * where. Dates and other cloneable values are kept as they are.
 */
export function plainCopy(value, depth = 0) {
  if (value === null || typeof value !== "object")
    return typeof value === "function" || typeof value === "symbol" ? undefined : value;
  if (depth >= COPY_DEPTH) return {};
  if (value instanceof Date) return value;
  if (typeof value.toJSON === "function") return plainCopy(value.toJSON(), depth);
  if (Array.isArray(value)) return value.map((item) => plainCopy(item, depth + 1) ?? null);
  const out = {};
  for (const key of Object.keys(value)) {
    const item = plainCopy(value[key], depth + 1);
    if (item !== undefined) out[key] = item;
  }
  return out;
}

/**
 * Opens the engine for `path` in a new worker thread.
 * @param {string} path the database file (resolved)
 * @param {object} config the plugin config (validated again by the engine in the worker)
 * @param {object} [options] openNodeEngine's options
 * @param {object} [hooks]
 * @param {(err: Error) => void} [hooks.onStop] the worker stopped (crashed or was closed); the
 *        handle fails every later call with `err`, so the caller opens a new one
 * @returns {Promise<object>} the handle (engine/handle.js's calls, each returning a promise)
 */
export function openEngineThread(path, config, options, { onStop } = {}) {
  // Replies: a port the host's thread can read without its event loop, and a counter the worker
  // bumps (and notifies) after posting each one.
  const replies = new MessageChannel();
  const replied = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(new URL("./engine-thread-main.js", import.meta.url), {
    workerData: { path, config, options, replies: replies.port2, replied },
    transferList: [replies.port2],
  });
  const pending = new Map();
  let nextId = 1;
  let stopped;
  let onOpen;

  // The worker keeps the process alive only while a call waits on it: an idle engine must not
  // keep a finished CLI command or `openclaw agent --local` from exiting.
  const waiting = () => (pending.size > 0 || onOpen ? worker.ref() : worker.unref());

  const stop = (err) => {
    if (stopped) return;
    stopped = err;
    for (const { reject } of pending.values()) reject(err);
    pending.clear();
    onOpen?.reject(err);
    onOpen = undefined;
    worker.unref();
    onStop?.(err);
  };
  worker.on("message", (msg) => {
    if (msg.type !== "opened") return;
    const open = onOpen;
    onOpen = undefined;
    waiting();
    if (msg.error) open?.reject(fromWire(msg.error));
    else open?.resolve(msg.info);
  });
  /** Settles the call a reply answers (read blocked or from the event loop, whichever first). */
  const settle = (msg) => {
    const call = pending.get(msg.id);
    if (!call) return;
    pending.delete(msg.id);
    waiting();
    if (msg.error) call.reject(fromWire(msg.error));
    else call.resolve(msg.result);
  };
  replies.port1.on("message", settle);
  // The worker's ref (waiting()) is what keeps the process alive while a call waits.
  replies.port1.unref();

  /** Waits, blocked, up to BLOCKING_WAIT_MS for call `id`'s reply and settles it when it came;
   *  a reply that takes longer arrives through the event loop (settle). */
  const awaitBlocked = (id) => {
    const until = performance.now() + BLOCKING_WAIT_MS;
    while (pending.has(id) && !stopped) {
      // Read after the counter: a reply posted since is already on the port (the worker posts,
      // then bumps), and one posted later changes the counter, so the wait returns at once.
      const seen = Atomics.load(replied, 0);
      const got = receiveMessageOnPort(replies.port1);
      if (got) {
        settle(got.message);
        continue;
      }
      const left = until - performance.now();
      if (left <= 0) return;
      Atomics.wait(replied, 0, seen, left);
    }
  };
  worker.on("error", (err) =>
    stop(
      new Error(
        `lossless-wasm: the storage worker failed: ${err?.message ?? err}; the next call opens the database again`,
      ),
    ),
  );
  worker.on("exit", (code) =>
    stop(
      new Error(
        `lossless-wasm: the storage worker stopped (exit code ${code}); the next call opens the database again`,
      ),
    ),
  );

  /** Posts `message`; one a structured copy refuses (a function in a host object, nesting too
   *  deep for the copy's stack) goes as its plain copy (plainCopy). */
  const post = (message) => {
    try {
      worker.postMessage(message);
    } catch {
      worker.postMessage(plainCopy(message));
    }
  };

  /** Sends one call; of the host's history only what the engine reads (host-history.js), and
   *  a long list of messages first, in parts. `whole`: send the history whole. */
  async function send(op, params, extra, { whole = false } = {}) {
    if (stopped) throw stopped;
    // The engine's clock is the caller's (the worker's Date.now is its own).
    const now = Date.now();
    const id = nextId++;
    const reply = new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
    waiting();
    const elided = whole ? undefined : elide(op === "call" ? extra : op, params);
    let sent = elided ? { ...params, messages: elided.messages } : params;
    const messages = sent?.messages;
    try {
      if (Array.isArray(messages) && messages.length > MESSAGES_PER_PART) {
        for (let at = 0; at < messages.length; at += MESSAGES_PER_PART) {
          if (at > 0) await nextTurnOfTheLoop();
          // A worker that stopped meanwhile rejected `reply` already (stop()).
          if (stopped) return reply;
          post({ type: "part", id, messages: messages.slice(at, at + MESSAGES_PER_PART) });
        }
        sent = { ...sent, messages: IN_PARTS };
      }
      post({ type: op, id, params: sent, extra, now, elided: elided?.elided });
    } catch (err) {
      // Not sent (a value not even its plain copy can carry): nothing waits for a reply. Parts
      // that went ahead are dropped by the worker with the next call's.
      pending.delete(id);
      waiting();
      throw err;
    }
    awaitBlocked(id);
    return reply;
  }

  return new Promise((resolve, reject) => {
    onOpen = { resolve, reject };
    waiting();
  }).then(
    (info) => {
      const views = createViewHandover();
      const handle = {
        configWarnings: info.configWarnings,
        storage: info.storage,
        path,
        thread: "worker",
        call: (method, params) => send("call", params, method),
        assemble: (params) =>
          assembleWith(views, params, async (held) => {
            const out = await send("assembleView", params, held);
            return out.needHistory ? (await send("assembleView", params, held, { whole: true })).view : out.view;
          }),
        housekeep: () => send("housekeep"),
        /** What the driver counted (PostgreSQL: statements sent since opening). */
        storageStats: () => send("storageStats"),
        flush: () => send("flush"),
        backupTo: (dest) => send("backupTo", undefined, dest),
        /** Imports a lossless-claw `lcm.db`, opened read-only in the worker. */
        importLosslessClaw: (source) => send("importLosslessClaw", undefined, source),
        /** The connection's PRAGMA synchronous (node:sqlite), read when it opened. */
        synchronous: () => info.synchronous,
        /** Closes the database and ends the worker; the handle fails every later call. */
        close: async () => {
          if (stopped) return;
          await send("close");
          stop(new Error("lossless-wasm: this engine was closed; open it again to use it"));
          await worker.terminate();
        },
      };
      return handle;
    },
    async (err) => {
      await worker.terminate();
      throw err;
    },
  );
}
