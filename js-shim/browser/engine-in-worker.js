// openBrowserEngineInWorker: the browser engine in a dedicated worker, so none of its work
// (opening, importing a long history, compaction, checkpoints) holds the page's main thread.
// The page keeps a stand-in with the same calls, each a message to engine-worker-main.js and back;
// summary requests come back to the page's `llm`. Params and results must be plain data
// (structured-cloneable); errors cross both ways as errors.js's wire objects. Owns only the page
// side of the protocol.
import { fromWire, toWire } from "../errors.js";

const CALLS = [
  "bootstrap",
  "ingest",
  "ingestBatch",
  "afterTurn",
  "commitTurn",
  "assemble",
  "compact",
  "maintain",
  "search",
  "reset",
  "dispose",
  "describe",
  "expand",
  "compactionEvents",
  "close",
];

/**
 * @param {object} options the options of openBrowserEngine, without `SQL`, plus:
 * @param {string|URL} options.sqlJsUrl where the worker loads sql.js (`sql-wasm.js`) from; its
 *        .wasm is looked up beside it
 * @param {string|URL} [options.workerUrl] engine-worker-main.js (default: beside this file)
 * @param {{complete: Function}} [options.llm] the page's LLM for summaries
 */
export async function openBrowserEngineInWorker({ sqlJsUrl, workerUrl, llm, lockManager, wasm, ...options } = {}) {
  if (!sqlJsUrl)
    throw new TypeError(
      "openBrowserEngineInWorker: pass `sqlJsUrl`, the URL of sql.js's sql-wasm.js, for the worker to load",
    );
  const worker = new Worker(workerUrl ?? new URL("./engine-worker-main.js", import.meta.url));
  const pending = new Map();
  let nextId = 1;
  let dead;
  const fail = (err) => {
    dead ??= err;
    for (const { reject } of pending.values()) reject(dead);
    pending.clear();
  };
  worker.onerror = (event) => {
    event.preventDefault?.();
    fail(new Error(`lossless-wasm: the engine's worker failed: ${event.message ?? "unknown error"}`));
  };
  worker.onmessage = async ({ data }) => {
    if (data.type === "llm") {
      let answer;
      try {
        if (!llm) throw new Error("no LLM on the page");
        answer = { result: await llm.complete(data.request) };
      } catch (err) {
        answer = { error: toWire(err, "the page") };
      }
      worker.postMessage({ type: "llmResult", id: data.id, ...answer });
      return;
    }
    const waiting = pending.get(data.id);
    pending.delete(data.id);
    if (data.error) waiting?.reject(fromWire(data.error));
    else waiting?.resolve(data.result);
  };
  const send = (message) => {
    if (dead) return Promise.reject(dead);
    const id = nextId++;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      worker.postMessage({ ...message, id });
    });
  };
  let opened;
  try {
    opened = await send({
      type: "open",
      sqlJsUrl: new URL(sqlJsUrl, globalThis.location?.href).href,
      libraryUrl: new URL("./open-engine.js", import.meta.url).href,
      errorsUrl: new URL("../errors.js", import.meta.url).href,
      options: {
        ...options,
        ...(wasm === undefined ? {} : { wasm: String(new URL(wasm, globalThis.location?.href)) }),
      },
      hasLlm: Boolean(llm),
      useLease: lockManager === null,
    });
  } catch (err) {
    worker.terminate();
    throw err;
  }
  const engine = { info: opened.info, dataLoss: opened.dataLoss ?? null };
  let closing;
  for (const method of CALLS) {
    engine[method] = (params) =>
      closing
        ? Promise.reject(new Error(`lossless-wasm: ${method}() called after close(); open the engine again to use it`))
        : send({ type: "call", method, params });
  }
  engine.close = () => {
    // The worker's engine closes (flush, release the lock) before the worker goes.
    closing ??= send({ type: "call", method: "close" })
      .catch((err) => (dead ? undefined : Promise.reject(err)))
      .finally(() => {
        worker.terminate();
        fail(new Error("lossless-wasm: close() was called; open the engine again to use it"));
      });
    return closing;
  };
  return engine;
}
