// A worker thread for errors.test.mjs: throws the error a message asks for and posts it back
// as errors.js's wire object, or rebuilds an error sent to it and reports what it got. Loads
// errors.js from the built package, as the shim's own threads do.
import { readFileSync } from "node:fs";
import { parentPort } from "node:worker_threads";

const errors = await import(new URL("../../dist/pkg/shim/errors.js", import.meta.url));
const { fromWire, toWire } = errors;

/** What to throw, by name. */
const THROWS = {
  HistoryNeeded: () => new errors.HistoryNeeded(),
  ToolInputError: () => new errors.ToolInputError("limit", 'expected a number, got "many"'),
  HttpError: () => new errors.HttpError(404, "no such conversation"),
  LlmHttpError: () => new errors.LlmHttpError(401, "http://llm/v1/chat/completions answered HTTP 401: no key"),
  UsageError: () => new errors.UsageError("no command given"),
  CopyConflict: () => new errors.CopyConflict("the target already holds another store's rows"),
  StorageOpenError: () =>
    new errors.StorageOpenError("lossless-wasm: the database cannot be opened: config `dbPath` is /x: ENOTDIR", {
      code: "ENOTDIR",
    }),
  DatabaseLockedError: () => new errors.DatabaseLockedError("lossless-wasm: /x stayed locked by pid 7 for 1.0 s"),
  PostgresError: () =>
    new errors.PostgresError("PostgreSQL ERROR 23505: duplicate key value", { code: "23505", details: { table: "t" } }),
  StoreBusyError: () => new errors.StoreBusyError('lossless-wasm: IndexedDB "db" key "k" is open for writing'),
  LeaseLostError: () => new errors.LeaseLostError("k", "owner-2"),
  AbortError: () => new errors.AbortError("compaction aborted by the host"),
  TimeoutError: () => new errors.TimeoutError("summarizer timed out after 5 ms"),
  LosslessError: () => new errors.LosslessError("plain", { details: { n: 1 } }),
  withCause: () =>
    new errors.PostgresError("the connection broke", {
      code: "LOSSLESS_POSTGRES_BROKEN",
      cause: Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }),
    }),
  withFunction: () => Object.assign(new errors.HttpError(500, "kept"), { retry: () => {}, note: "also kept" }),
  osError: () => readFileSync("/nonexistent/lossless-wasm/errors-test"),
  typeError: () => null.property,
  string: () => "a thrown string",
  number: () => 42,
  undefined: () => undefined,
  object: () => ({ reason: "an object without a message" }),
};

parentPort.on("message", (msg) => {
  if (msg.throw) {
    let thrown;
    try {
      const made = THROWS[msg.throw]();
      // Builders return what to throw; those that throw themselves (osError, typeError) land below.
      throw made;
    } catch (err) {
      thrown = err;
    }
    parentPort.postMessage({ wire: toWire(thrown, "the test's worker"), stack: thrown?.stack });
    return;
  }
  const err = fromWire(msg.wire);
  const Class = errors[msg.expect];
  parentPort.postMessage({
    isClass: err instanceof Class,
    isBase: err instanceof errors.LosslessError,
    name: err.name,
    code: err.code,
    message: err.message,
    wire: toWire(err, "the test's worker"),
  });
});
