// The worker side of openBrowserEngineInWorker (engine-in-worker.js): a classic dedicated worker
// that loads sql.js and library.js, opens the browser engine here (IndexedDB, the store's write
// lock and every wasm call run on this thread, never on the page's), and answers the page's
// calls. Summary requests go back to the page's LLM. A classic worker, because sql.js is a
// classic script (importScripts); library.js comes in through import(). Owns only the message
// protocol; the engine is library.js's. errors.js comes by its URL with the first message, so
// errors cross to the page (and back from its LLM) as its wire objects.
/* global initSqlJs -- sql.js, loaded by importScripts in open() */

let engine;
let opening;
let nextLlmId = 1;
const llmWaiting = new Map();
/** errors.js, imported by the first message (a classic worker has no static import). */
let errors;

/** An error as it crosses to the page, where engine-in-worker.js throws it again; before
 *  errors.js has loaded, its name and message. */
const errorData = (err) =>
  errors?.toWire(err, "the engine's worker") ?? { name: err?.name ?? "Error", message: err?.message ?? String(err) };

/** The page's LLM, reached by message: only plain data crosses (an abort signal stays here). */
const pageLlm = {
  complete({ signal, ...request }) {
    const id = nextLlmId++;
    return new Promise((resolve, reject) => {
      llmWaiting.set(id, { resolve, reject });
      signal?.addEventListener("abort", () => {
        llmWaiting.delete(id);
        reject(signal.reason ?? new errors.AbortError("summary request aborted"));
      });
      self.postMessage({ type: "llm", id, request });
    });
  },
};

async function open({ sqlJsUrl, libraryUrl, options, hasLlm, useLease }) {
  importScripts(sqlJsUrl);
  const SQL = await initSqlJs({ locateFile: (file) => new URL(file, sqlJsUrl).href });
  const { openBrowserEngine } = await import(libraryUrl);
  engine = await openBrowserEngine({
    ...options,
    SQL,
    llm: hasLlm ? pageLlm : undefined,
    ...(useLease ? { lockManager: null } : {}),
  });
  return { info: engine.info, dataLoss: engine.dataLoss };
}

self.onmessage = async ({ data }) => {
  if (data.type === "llmResult") {
    const waiting = llmWaiting.get(data.id);
    llmWaiting.delete(data.id);
    if (data.error) waiting?.reject(errors.fromWire(data.error));
    else waiting?.resolve(data.result);
    return;
  }
  let reply;
  try {
    if (data.type === "open") {
      errors ??= await import(data.errorsUrl);
      opening ??= open(data);
      reply = { result: await opening };
    } else {
      if (!engine) throw new Error("lossless-wasm: the worker's engine is not open");
      reply = { result: await engine[data.method](data.params) };
    }
  } catch (err) {
    reply = { error: errorData(err) };
  }
  self.postMessage({ type: "reply", id: data.id, ...reply });
};
