// close() for library engines: lets the calls already running finish, then runs the engine's own
// shutdown (flush what is unsaved, close the database, release the store's write lock) once.
// Every call after close() rejects with an error saying the engine is closed; close() itself is
// idempotent (every call returns the same promise). It also refuses the writing calls of an
// engine opened read-only. Knows nothing of storage: `shutdown` is handed in.

/** The calls a read-only engine serves: they read the store (search only indexes in memory). */
const READ_CALLS = new Set(["search", "describe", "expand", "compactionEvents", "dispose"]);

/**
 * Wraps every method of `engine` in place and adds `close()`.
 * @param {object} engine the engine object (its function-valued properties are its calls)
 * @param {() => Promise<void>|void} shutdown runs once, after the running calls settle
 * @param {object} [options]
 * @param {boolean} [options.readOnly] refuse the calls that write
 * @param {() => Error|undefined} [options.broken] an error that makes every further call fail
 *        (the write lock was lost)
 */
export function makeClosable(engine, shutdown, { readOnly = false, broken } = {}) {
  let closing;
  const running = new Set();
  for (const [name, fn] of Object.entries(engine)) {
    if (typeof fn !== "function") continue;
    engine[name] = (...args) => {
      if (closing)
        return Promise.reject(
          new Error(`lossless-wasm: ${name}() called after close(); open the engine again to use it`),
        );
      if (readOnly && !READ_CALLS.has(name)) {
        return Promise.reject(
          new Error(
            `lossless-wasm: ${name}() writes, and this engine was opened with readOnly: true; open it without readOnly (one writer per key) to write`,
          ),
        );
      }
      const lost = broken?.();
      if (lost) return Promise.reject(lost);
      let call;
      try {
        call = Promise.resolve(fn.apply(engine, args));
      } catch (err) {
        call = Promise.reject(err);
      }
      running.add(call);
      const forget = () => running.delete(call);
      call.then(forget, forget);
      return call;
    };
  }
  engine.close = () => {
    closing ??= (async () => {
      await Promise.allSettled([...running]);
      await shutdown();
    })();
    return closing;
  };
  return engine;
}
