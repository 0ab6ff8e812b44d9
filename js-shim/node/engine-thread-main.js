// The worker side of engine-thread.js: opens the engine for one database on this thread
// (engine.js's in-thread open: wasm, node:sqlite or sql.js, the journal and its locks) and
// answers the host thread's calls in the order they arrive. Owns only the message protocol.
import { parentPort, workerData } from "node:worker_threads";
import { openHere } from "./open-here.js";
import { IN_PARTS, restore } from "./host-history.js";
import { toWire } from "../errors.js";

/** An error as it crosses to the host's thread, where engine-thread.js throws it again. */
const errorData = (err) => toWire(err, "the engine's worker thread");

/** Why the last embedding after a turn failed, until the next `housekeep` reports it. */
let embeddingFailed;

/** Messages sent ahead of their call, by call id. */
const parts = new Map();

// Replies go on a port of their own, each followed by a bump of the shared counter `replied`
// (engine-thread.js waits on it, briefly blocked, before it lets its event loop run).
const { replies, replied } = workerData;

let handle;
try {
  const { path, config, options } = workerData;
  handle = await openHere(path, { ...config, storageThread: "main" }, options);
  // The turn's new messages are embedded here after the turn is answered (below), not inside
  // its write: the host's thread waits for none of it.
  handle.deferTurnEmbedding();
  parentPort.postMessage({
    type: "opened",
    info: { configWarnings: handle.configWarnings, storage: handle.storage, synchronous: handle.synchronous() },
  });
} catch (err) {
  parentPort.postMessage({ type: "opened", error: errorData(err) });
}

// Each call gets its params, the envelope's `extra` and `now` (the time on the host's thread
// when it made the call: the engine's clock — backoff, the breaker, timestamps — is the
// host's), and `read`, which says whether the engine read an elided history.
const run = {
  call: (params, method, now) => handle.call(method, params, now),
  // A view whose elided history the engine needed answers `{needHistory: true}`: the host's
  // side sends the call again with the whole history (host-history.js).
  assembleView: async (params, held, now, read) => {
    try {
      return { view: await handle.assembleView(params, held, now) };
    } catch (err) {
      if (read.history) return { needHistory: true };
      throw err;
    }
  },
  // Also reports the last embedding after a turn that failed (it is tried again after this one).
  housekeep: async () => {
    const indexed = await handle.housekeep();
    const failed = embeddingFailed;
    embeddingFailed = undefined;
    if (failed) throw new Error(`embedding the last turn's messages failed: ${failed.message ?? failed}`);
    return indexed;
  },
  storageStats: () => handle.storageStats(),
  flush: () => handle.flush(),
  backupTo: (_params, dest) => handle.backupTo(dest),
  importLosslessClaw: (_params, source) => handle.importLosslessClaw(source),
  close: () => {
    closed = true;
    return handle.close();
  },
};

/** Set by `close`: no batch of `embedWaiting` runs after it. */
let closed = false;

parentPort.on("message", async (msg) => {
  if (msg.type === "part") {
    const list = parts.get(msg.id);
    if (list) for (const m of msg.messages) list.push(m);
    else parts.set(msg.id, msg.messages);
    return;
  }
  let params = msg.params;
  if (params?.messages === IN_PARTS) params = { ...params, messages: parts.get(msg.id) ?? [] };
  // Calls run in the order sent, so parts of an earlier id whose call never came are orphans.
  for (const id of parts.keys()) if (id <= msg.id) parts.delete(id);
  const read = { history: false };
  if (msg.elided > 0) {
    const method = msg.type === "call" ? msg.extra : msg.type;
    params = {
      ...params,
      messages: restore(method, params.messages, msg.elided, () => {
        read.history = true;
      }),
    };
  }
  let reply;
  try {
    if (!handle) throw new Error("lossless-wasm: the storage worker has no open database");
    const op = run[msg.type];
    if (!op) throw new Error(`lossless-wasm: the storage worker has no call ${JSON.stringify(msg.type)}`);
    reply = { result: await op(params, msg.extra, msg.now, read) };
  } catch (err) {
    reply = { error: errorData(err) };
  }
  reply = { type: "reply", id: msg.id, ...reply };
  try {
    replies.postMessage(reply);
  } catch (err) {
    // A result a structured copy refuses: the call fails with why, instead of never answering.
    replies.postMessage({ type: "reply", id: msg.id, error: errorData(err) });
  }
  // After the post: the host's thread, waiting on the counter, finds the reply on its port.
  Atomics.add(replied, 0, 1);
  Atomics.notify(replied, 0);
  // After the turn's last call (`maintain`'s housekeeping), with the host's thread answered:
  // the vectors of the turn's messages (handle.deferTurnEmbedding), before any later call runs.
  if (msg.type === "housekeep" && handle) await embedWaiting();
});

/** True while `embedWaiting` has a batch under way or scheduled. */
let embedding = false;

/** Embeds what has no vector yet: one batch now, then, while more waits (a history imported or
 *  stored before vectors existed), one batch per turn of the event loop, so that a call arriving
 *  meanwhile waits for one batch at most and a long history is indexed in the worker's idle
 *  time rather than one batch a turn. */
async function embedWaiting() {
  if (embedding || closed) return;
  embedding = true;
  try {
    if ((await handle.backfillVectors()) > 0 && handle.vectorsWaiting()) {
      setImmediate(() => {
        embedding = false;
        embedWaiting();
      });
      return;
    }
  } catch (err) {
    embeddingFailed = err;
  }
  embedding = false;
}
