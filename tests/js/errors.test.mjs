// errors.js: an error thrown in a worker thread comes back to the thread that waits for it as
// the same class, with the same code, message and own fields, and a stack that is the
// thrower's plus a line naming its thread; unknown kinds and codes arrive as the base class,
// and anything thrown that is not an Error arrives as one. Through a real worker_threads
// Worker (the structured copy of postMessage), and through the engine's own worker thread.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { Worker } from "node:worker_threads";
import { PKG, tempDir } from "./support.mjs";

const errors = await import(new URL("shim/errors.js", PKG));
const { ERROR_CLASSES, fromWire, LosslessError, toWire } = errors;

let worker;
let queue = Promise.resolve();
/** Sends `msg` to the worker and resolves with its answer (one at a time). */
function ask(msg) {
  const answer = queue.then(
    () =>
      new Promise((resolve, reject) => {
        worker.once("message", resolve);
        worker.once("error", reject);
        worker.postMessage(msg);
      }),
  );
  queue = answer.catch(() => {});
  return answer;
}

/** The error the worker throws for `what`, as this thread rebuilds it. */
async function thrownInWorker(what) {
  const { wire, stack } = await ask({ throw: what });
  return { err: fromWire(wire), wire, stack };
}

before(async () => {
  worker = new Worker(new URL("./errors-thread.mjs", import.meta.url));
  await new Promise((resolve, reject) => {
    worker.once("online", resolve);
    worker.once("error", reject);
  });
});
after(() => worker.terminate());

describe("every class crosses a worker boundary as itself", () => {
  for (const Class of ERROR_CLASSES) {
    test(Class.kind, async () => {
      const { err, stack } = await thrownInWorker(Class.kind);
      assert.ok(err instanceof Class, `${err.name} is not a ${Class.kind}`);
      assert.ok(err instanceof LosslessError);
      assert.ok(err instanceof Error);
      assert.equal(err.name, Class.kind);
      assert.equal(typeof err.code, "string");
      if (!["StorageOpenError", "PostgresError"].includes(Class.kind)) assert.equal(err.code, Class.code);
      assert.ok(err.message.length > 0);
      // The thrower's stack, then where it came from.
      assert.ok(err.stack.startsWith(stack), err.stack);
      assert.match(err.stack, /\n {4}\(thrown in the test's worker, rebuilt here\)$/);
      assert.match(stack, /errors-thread\.mjs/);
    });
  }
});

test("messages, codes and fields arrive unchanged", async () => {
  const { err: input } = await thrownInWorker("ToolInputError");
  assert.equal(input.message, 'invalid input at `limit`: expected a number, got "many"');
  assert.equal(input.code, "LOSSLESS_TOOL_INPUT");

  const { err: pg } = await thrownInWorker("PostgresError");
  assert.equal(pg.message, "PostgreSQL ERROR 23505: duplicate key value");
  assert.equal(pg.code, "23505", "the server's SQLSTATE stays the code");
  assert.deepEqual(pg.details, { table: "t" });

  const { err: open } = await thrownInWorker("StorageOpenError");
  assert.equal(open.code, "ENOTDIR", "the system's code stays the code");

  const { err: http } = await thrownInWorker("HttpError");
  assert.equal(http.status, 404);
  assert.equal(http.message, "no such conversation");

  const { err: lease } = await thrownInWorker("LeaseLostError");
  assert.equal(
    lease.message,
    'lossless-wasm: this engine lost its write lease on key "k" (another tab or worker took it over after it expired); nothing was written — open the engine again',
  );
});

test("a cause crosses with its error", async () => {
  const { err } = await thrownInWorker("withCause");
  assert.ok(err instanceof errors.PostgresError);
  assert.equal(err.code, "LOSSLESS_POSTGRES_BROKEN");
  assert.ok(err.cause instanceof Error, "the cause was not rebuilt");
  assert.equal(err.cause.message, "read ECONNRESET");
  assert.equal(err.cause.code, "ECONNRESET");
  assert.equal(Object.keys(err).includes("cause"), false, "cause is not enumerable, as a native one");
});

test("a field a structured copy refuses is left out; the rest arrives", async () => {
  const { err } = await thrownInWorker("withFunction");
  assert.ok(err instanceof errors.HttpError);
  assert.equal(err.note, "also kept");
  assert.equal(err.retry, undefined);
});

test("errors of other libraries arrive as the base class with their name, code and fields", async () => {
  const { err: os } = await thrownInWorker("osError");
  assert.ok(os instanceof LosslessError);
  assert.equal(os.constructor, LosslessError);
  assert.equal(os.name, "Error");
  assert.equal(os.code, "ENOENT");
  assert.equal(os.syscall, "open");
  assert.equal(os.path, "/nonexistent/lossless-wasm/errors-test");
  assert.match(os.message, /^ENOENT: no such file or directory/);

  const { err: type } = await thrownInWorker("typeError");
  assert.equal(type.constructor, LosslessError);
  assert.equal(type.name, "TypeError");
  assert.equal(type.code, undefined, "no code was thrown, none arrives");
  assert.match(type.message, /null/);
});

test("unknown kinds and codes degrade to the base class, keeping name and code", async () => {
  const wire = { kind: "FromANewerVersion", name: "FromANewerVersion", code: "LOSSLESS_NEWER", message: "m" };
  const got = await ask({ wire, expect: "LosslessError" });
  assert.equal(got.isBase, true);
  assert.equal(got.name, "FromANewerVersion");
  assert.equal(got.code, "LOSSLESS_NEWER");
  assert.equal(got.message, "m");
  const here = fromWire(wire);
  assert.equal(here.constructor, LosslessError);
  assert.equal(here.stack.includes("rebuilt here"), false, "a wire without a stack keeps the local one");
  // A known code without a kind (a hand-made wire) finds its class.
  const locked = await ask({
    wire: { message: "locked", code: "LOSSLESS_DATABASE_LOCKED" },
    expect: "DatabaseLockedError",
  });
  assert.equal(locked.isClass, true);
  assert.equal(locked.name, "DatabaseLockedError");
});

test("an error rebuilt in the worker crosses back as the same class (both directions)", async () => {
  const sent = new errors.StoreBusyError("busy", { details: { holder: "tab 2" } });
  const got = await ask({ wire: toWire(sent, "the test"), expect: "StoreBusyError" });
  assert.equal(got.isClass, true);
  assert.equal(got.name, "StoreBusyError");
  assert.equal(got.code, "LOSSLESS_STORE_BUSY");
  const back = fromWire(got.wire);
  assert.ok(back instanceof errors.StoreBusyError);
  assert.deepEqual(back.details, { holder: "tab 2" });
  assert.equal(back.message, "busy");
});

describe("anything thrown that is not an Error arrives as one", () => {
  for (const [what, message] of [
    ["string", "a thrown string"],
    ["number", "42"],
    ["undefined", "undefined"],
    ["object", "[object Object]"],
  ]) {
    test(what, async () => {
      const { err, wire } = await thrownInWorker(what);
      assert.equal(typeof wire, "object");
      assert.ok(err instanceof LosslessError);
      assert.equal(err.message, message);
      assert.equal(err.name, "Error");
    });
  }
  test("fromWire of something that is not a wire", () => {
    for (const bad of [null, undefined, "text", 7]) {
      const err = fromWire(bad);
      assert.ok(err instanceof LosslessError, String(bad));
      assert.equal(typeof err.message, "string");
    }
  });
});

test("every class has its own kind and code, and the base class a code by default", () => {
  assert.equal(new Set(ERROR_CLASSES.map((c) => c.kind)).size, ERROR_CLASSES.length);
  assert.equal(new Set(ERROR_CLASSES.map((c) => c.code)).size, ERROR_CLASSES.length);
  for (const Class of ERROR_CLASSES) assert.match(Class.code, /^LOSSLESS_[A-Z_]+$/);
  const err = new LosslessError("m");
  assert.equal(err.code, "LOSSLESS_ERROR");
  assert.equal(err.name, "LosslessError");
  assert.equal(new LosslessError("m", { code: "X" }).code, "X");
});

test("the engine's worker thread: a database that cannot open rejects as StorageOpenError with the system's code", async () => {
  const { openNodeEngine } = await import(new URL("shim/node/engine.js", PKG));
  const dir = tempDir("errors");
  const blocker = join(dir, "file");
  writeFileSync(blocker, "a file where a folder should be");
  const dbPath = join(blocker, "db", "lossless.sqlite");
  await assert.rejects(openNodeEngine(dbPath, {}), (err) => {
    assert.ok(err instanceof errors.StorageOpenError, `${err.name}: ${err.message}`);
    assert.equal(err.code, "ENOTDIR");
    assert.ok(err.message.includes(`config \`dbPath\` is ${dbPath}: ENOTDIR`), err.message);
    assert.match(err.stack, /\(thrown in the engine's worker thread, rebuilt here\)$/);
    return true;
  });
});
