// The shim's errors: one coded base class, LosslessError, and its subclasses in one list, so an
// error keeps its class, `code`, message and stack when it crosses a thread. Three boundaries
// carry errors as messages: the host's thread and the engine's worker thread
// (node/engine-thread.js), the engine's thread and the PostgreSQL I/O thread
// (postgres/database.js), and a page and the browser engine's worker (browser/engine-in-worker.js,
// both ways). The sending side posts `toWire(err)`, a plain object a structured copy takes; the
// receiving side throws `fromWire(wire)`: the same class when the sender's was one of ours, with
// the same code, message and own fields, and a stack that is the sender's plus a line naming
// the thread it came from. Anything else thrown (another library's Error, a string) arrives as
// a LosslessError with what it carried (name, code, message, fields).
//
// Codes and names are part of the contract (users and tests match on them): a code, once
// given, is never renamed. The engine's own errors (Rust, src/error/) are plain Errors whose
// message starts with what went wrong ("invalid input at `…`", "invalid config `…`",
// "storage error: …", "stale plan: …") and whose `code` says which (LOSSLESS_INVALID_INPUT with
// `field`, LOSSLESS_INVALID_CONFIG with `key`, LOSSLESS_STORAGE_BUSY / _CONSTRAINT / _CORRUPT /
// _DIALECT / _IO / _DATA / _OTHER with `storageKind` and the backend's `backendCode`,
// LOSSLESS_STALE; src/wasm/mod.rs js_error); they cross as foreign errors, message, code and
// fields unchanged.
// Owns only the classes and the wire format; this module imports nothing, so every thread,
// the browser's included, can load it.

/** The base class: every error the shim makes has a `code` (a stable string to match on), a
 *  message that says what is wrong and what to do, and optionally `details` (plain data). */
export class LosslessError extends Error {
  /** The class's name on the wire and as `err.name` (kept even when a bundler renames classes). */
  static kind = "LosslessError";
  /** The code an error of this class has when its thrower gives none. */
  static code = "LOSSLESS_ERROR";

  /**
   * @param {string} message
   * @param {{code?: string, details?: object, cause?: unknown}} [options]
   */
  constructor(message, { code, details, cause } = {}) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = new.target.kind;
    this.code = code ?? new.target.code;
    if (details !== undefined) this.details = details;
  }
}

/** Thrown (worker side) when the engine reads an element of a host history that was not sent
 *  (node/host-history.js): the host's side sends the call again with the whole history. */
export class HistoryNeeded extends LosslessError {
  static kind = "HistoryNeeded";
  static code = "LOSSLESS_HISTORY_NEEDED";
  constructor() {
    super("the engine needs the host's whole history");
  }
}

/** A recall tool's argument the model got wrong; `argument` names it (openclaw/tool-input.js).
 *  The message has the engine's own shape for bad input, so both read alike to the model. */
export class ToolInputError extends LosslessError {
  static kind = "ToolInputError";
  static code = "LOSSLESS_TOOL_INPUT";
  constructor(argument, reason) {
    super(`invalid input at \`${argument}\`: ${reason}`);
  }
}

/** A request to the explorer's API that is answered with HTTP `status` (explorer/route.js). */
export class HttpError extends LosslessError {
  static kind = "HttpError";
  static code = "LOSSLESS_HTTP_STATUS";
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/** An LLM provider that answered with an HTTP error (operator/openai-llm.js); `status` lets the
 *  compaction driver tell an auth failure from other errors. */
export class LlmHttpError extends LosslessError {
  static kind = "LlmHttpError";
  static code = "LOSSLESS_LLM_HTTP";
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/** A command line the operator CLI cannot run (operator/cli.js): it prints the message and
 *  its usage, and exits 2. */
export class UsageError extends LosslessError {
  static kind = "UsageError";
  static code = "LOSSLESS_USAGE";
}

/** The copy's target holds another store's rows (operator/copy-to-postgres.js); the CLI shows
 *  the message as it is. */
export class CopyConflict extends LosslessError {
  static kind = "CopyConflict";
  static code = "LOSSLESS_COPY_CONFLICT";
}

/** The database file cannot be opened for a reason of the operating system's (node/db-path.js).
 *  Its `code` is the system's (ENOTDIR, EACCES, …) when it gave one. */
export class StorageOpenError extends LosslessError {
  static kind = "StorageOpenError";
  static code = "LOSSLESS_STORAGE_OPEN";
}

/** Another process kept a node:sqlite database locked past every attempt (node/sqlite.js). */
export class DatabaseLockedError extends LosslessError {
  static kind = "DatabaseLockedError";
  static code = "LOSSLESS_DATABASE_LOCKED";
}

/** A failure of the PostgreSQL driver (postgres/): `code` is LOSSLESS_POSTGRES_CONNECT, _LOCKED,
 *  _POOLED or _BROKEN when it is about the server or the connection (the engine then leaves the
 *  statement's text out of its message, src/wasm/sqljs.rs), else the server's SQLSTATE. */
export class PostgresError extends LosslessError {
  static kind = "PostgresError";
  static code = "LOSSLESS_POSTGRES";
}

/** Another tab or worker of the origin holds a browser store for writing (browser/store-lock.js). */
export class StoreBusyError extends LosslessError {
  static kind = "StoreBusyError";
  static code = "LOSSLESS_STORE_BUSY";
}

/** A fenced IndexedDB write whose lease is no longer its own (browser/indexeddb-store.js). */
export class LeaseLostError extends LosslessError {
  static kind = "LeaseLostError";
  static code = "LOSSLESS_LEASE_LOST";
  constructor(key, holder) {
    super(
      `lossless-wasm: this engine lost its write lease on key ${JSON.stringify(key)} (${holder ? "another tab or worker took it over after it expired" : "it expired and was released"}); nothing was written — open the engine again`,
    );
  }
}

/** A request abandoned because its caller aborted it; named "AbortError" as the platform's are,
 *  which is what hosts and fetch look for. */
export class AbortError extends LosslessError {
  static kind = "AbortError";
  static code = "LOSSLESS_ABORTED";
}

/** A request that ran past its time limit; named "TimeoutError" as the platform's are. */
export class TimeoutError extends LosslessError {
  static kind = "TimeoutError";
  static code = "LOSSLESS_TIMED_OUT";
}

/** Every class fromWire can rebuild, the base first. */
export const ERROR_CLASSES = [
  LosslessError,
  HistoryNeeded,
  ToolInputError,
  HttpError,
  LlmHttpError,
  UsageError,
  CopyConflict,
  StorageOpenError,
  DatabaseLockedError,
  PostgresError,
  StoreBusyError,
  LeaseLostError,
  AbortError,
  TimeoutError,
];

const BY_KIND = new Map(ERROR_CLASSES.map((c) => [c.kind, c]));
const BY_CODE = new Map(ERROR_CLASSES.map((c) => [c.code, c]));

/** Own properties the wire carries by name, not among an error's `fields`. */
const CARRIED = new Set(["name", "message", "stack", "cause", "code", "__proto__"]);
/** How many causes deep the wire follows `cause`. */
const MAX_CAUSES = 4;

/** `value` when a structured copy takes it, else undefined (a function, a socket, a class
 *  instance holding one). */
function cloneable(value) {
  if (value === null || (typeof value !== "object" && typeof value !== "function")) {
    return typeof value === "symbol" ? undefined : value;
  }
  if (typeof value === "function") return undefined;
  try {
    return structuredClone(value);
  } catch {
    return undefined;
  }
}

/** The kind of the nearest class in ERROR_CLASSES that `err` is an instance of, or undefined. */
function kindOf(err) {
  for (let proto = Object.getPrototypeOf(err); proto && proto !== Error.prototype;) {
    const Class = proto.constructor;
    if (typeof Class === "function" && BY_KIND.get(Class.kind) === Class) return Class.kind;
    proto = Object.getPrototypeOf(proto);
  }
  return undefined;
}

/**
 * `err` as a plain object a structured copy (postMessage) takes; fromWire makes the error again.
 * Anything may be thrown: a non-Error (a string, a number, an object without a message)
 * becomes a message of its text.
 * @param {unknown} err
 * @param {string} [thread] the sending thread, as the receiver's stack names it ("the engine's
 *        worker thread")
 * @returns {{kind?: string, name: string, message: string, code?: string|number, stack?: string, thread?: string, fields?: object, cause?: object}}
 */
export function toWire(err, thread) {
  return wireOf(err, thread, 0);
}

/** toWire for an error `depth` causes down. */
function wireOf(err, thread, depth) {
  const errorLike = err !== null && typeof err === "object" && typeof err.message === "string";
  if (!errorLike) {
    let message;
    try {
      message = String(err);
    } catch {
      message = Object.prototype.toString.call(err);
    }
    return { name: "Error", message, ...(thread ? { thread } : {}) };
  }
  const wire = { name: typeof err.name === "string" ? err.name : "Error", message: err.message };
  const kind = kindOf(err);
  if (kind) wire.kind = kind;
  const code = cloneable(err.code);
  if (code !== undefined && code !== null) wire.code = code;
  if (typeof err.stack === "string") wire.stack = err.stack;
  if (thread) wire.thread = thread;
  const fields = {};
  for (const key of Object.keys(err)) {
    if (CARRIED.has(key)) continue;
    const value = cloneable(err[key]);
    if (value !== undefined) fields[key] = value;
  }
  if (Object.keys(fields).length > 0) wire.fields = fields;
  if (err.cause !== undefined && depth < MAX_CAUSES) wire.cause = wireOf(err.cause, undefined, depth + 1);
  return wire;
}

/**
 * The error `wire` (toWire's object) describes: an instance of the class it was made as (by its
 * kind, else by its code), else a LosslessError carrying its name and code; never throws. Its
 * stack is the sender's with a last line naming the thread it came from.
 * @param {object} wire
 * @returns {LosslessError}
 */
export function fromWire(wire) {
  const data = wire !== null && typeof wire === "object" ? wire : { message: String(wire) };
  const Class = BY_KIND.get(data.kind) ?? BY_CODE.get(data.code) ?? LosslessError;
  const message = typeof data.message === "string" ? data.message : "unknown error (it carried no message)";
  // Made without running the class's own constructor (whose parameters differ by class), as a
  // real Error whose prototype is the class's.
  const err = Reflect.construct(Error, [message], Class);
  const known = BY_KIND.has(data.kind) || BY_CODE.has(data.code);
  err.name = known ? Class.kind : typeof data.name === "string" ? data.name : "Error";
  if (data.code !== undefined) err.code = data.code;
  for (const [key, value] of Object.entries(data.fields ?? {})) if (!CARRIED.has(key)) err[key] = value;
  if (data.cause !== undefined) {
    Object.defineProperty(err, "cause", {
      value: fromWire(data.cause),
      writable: true,
      configurable: true,
      enumerable: false,
    });
  }
  if (typeof data.stack === "string") {
    err.stack = `${data.stack}\n    (thrown in ${data.thread ?? "another thread"}, rebuilt here)`;
  }
  return err;
}
