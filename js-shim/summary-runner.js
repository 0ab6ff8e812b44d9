// Runs compaction jobs so that a host call waits for a summary only as long as the engine allows.
// Each summary request the engine hands out says how long the caller may hold the host's call for
// its answer (`holdMs`; null: until it arrives). When that time passes, the call returns and the
// job goes on in the background: its answer is applied when it arrives (the engine checks it
// against what changed meanwhile), or is lost with the process, which the engine notices later.
// One job per session at a time: a later call joins the running job instead of asking again.
// Scheduling and waiting only; every decision is the engine's (core/compaction/hold.rs).

import { runCompaction } from "./compaction-driver.js";

/** This process's id in the engine's record of summary requests (see `runner` in compactionStart).
 *  Web Crypto, so the shim runs in browsers too. */
export const RUNNER_ID = globalThis.crypto.randomUUID();

/** A promise with its resolve function. */
function signal() {
  let resolve;
  const promise = new Promise((r) => { resolve = r; });
  return { promise, resolve };
}

const IN_FLIGHT = Symbol("in flight");

/**
 * @param {object} [options]
 * @param {(report: object, job: {key: string, startedAt: number}) => void} [options.onDetachedReport]
 *        called with the report of a job that finished after every caller stopped waiting
 * @param {(err: Error, job: {key: string}) => void} [options.onDetachedError]
 * @param {(job: {key: string}) => void} [options.onCatchUp] a request the turn waits for in full
 *        went out (a catch-up, core/compaction/hold.rs)
 */
export function createSummaryRunner({ onDetachedReport, onDetachedError, onCatchUp } = {}) {
  /** session key -> the job running for it */
  const running = new Map();

  /**
   * Starts a job: runCompaction through a handle that notes each summary request's hold.
   * The host's abort signal is followed only while a caller still waits on the job.
   */
  function start(key, handle, params, driver) {
    const controller = new AbortController();
    const job = {
      key,
      startedAt: Date.now(),
      /** When the current request's hold ends (Infinity: no limit, or no request out yet). */
      holdUntil: Infinity,
      catchUp: false,
      settled: false,
      report: undefined,
      error: undefined,
      waiters: 0,
      changed: null,
      controller,
    };
    const notify = () => {
      const wake = job.changed;
      job.changed = null;
      wake?.resolve();
    };
    const observed = {
      ...handle,
      call(method, p) {
        const out = handle.call(method, p);
        const note = (step) => {
          if (step?.type === "needSummary") {
            job.holdUntil = typeof step.holdMs === "number" ? Date.now() + step.holdMs : Infinity;
            job.catchUp = step.catchUp === true;
            if (job.catchUp) onCatchUp?.(job);
          } else {
            job.holdUntil = Infinity;
          }
          notify();
          return step;
        };
        return typeof out?.then === "function" ? out.then(note) : note(out);
      },
    };
    job.promise = runCompaction(observed, { ...params, runner: RUNNER_ID }, { ...driver, signal: controller.signal }).then(
      (report) => {
        job.report = report;
      },
      (err) => {
        job.error = err;
      },
    ).finally(() => {
      job.settled = true;
      if (running.get(key) === job) running.delete(key);
      if (job.waiters === 0) {
        if (job.error) onDetachedError?.(job.error, job);
        else onDetachedReport?.(job.report, job);
      }
      notify();
    });
    return job;
  }

  /**
   * Waits for `job`: until it ends, or (when `held`) until its current request's hold runs out.
   * A held caller that joined a job another call started waits only within a hold that job was
   * given for a turn (a background job's or a catch-up's request has none: the turn does not
   * wait for it here). Returns the job's report, or IN_FLIGHT. A host abort during the wait
   * aborts the job's request.
   */
  async function wait(job, { held, joined = false, hostSignal }) {
    job.waiters += 1;
    const onAbort = () => job.controller.abort(hostSignal.reason);
    if (hostSignal?.aborted) onAbort();
    else hostSignal?.addEventListener?.("abort", onAbort, { once: true });
    try {
      for (;;) {
        if (job.settled) break;
        const until = joined && !Number.isFinite(job.holdUntil) ? 0 : job.holdUntil;
        const left = held ? until - Date.now() : Infinity;
        if (left <= 0) return IN_FLIGHT;
        job.changed ??= signal();
        let timer;
        const timeout = Number.isFinite(left) ? new Promise((resolve) => { timer = setTimeout(resolve, left); }) : null;
        await Promise.race([job.changed.promise, ...(timeout ? [timeout] : [])]);
        clearTimeout(timer);
      }
    } finally {
      job.waiters -= 1;
      hostSignal?.removeEventListener?.("abort", onAbort);
    }
    if (job.error) throw job.error;
    return job.report;
  }

  return {
    /**
     * Runs one compaction for a session. With `turnWaits`, the call returns when the engine's
     * hold for the current request runs out, with `{inFlight: true, catchUp}`; the job goes on.
     * A job already running for the session is waited for first (as long as this call may
     * wait); then this call's own job runs — the engine asks for no second summary while one is
     * in flight, so a job that starts beside a running one only shrinks the view.
     * @param {string} key the session
     * @param {{call: Function}} handle the engine handle
     * @param {object} params compactionStart params (without `summarizer`, `turnWaits`, `runner`)
     * @param {object} options
     * @param {boolean} [options.turnWaits] the host's turn waits for this call
     * @param {AbortSignal} [options.hostSignal]
     * @param {object} options.driver runCompaction options (choice, llm, timeoutMs)
     */
    async run(key, handle, params, { turnWaits = false, hostSignal, driver }) {
      for (let current = running.get(key); current; current = running.get(key)) {
        const joined = await wait(current, { held: turnWaits, joined: true, hostSignal });
        if (joined === IN_FLIGHT) break;
      }
      const job = start(key, handle, { ...params, turnWaits }, driver);
      if (!running.has(key)) running.set(key, job);
      const report = await wait(job, { held: turnWaits, hostSignal });
      if (report !== IN_FLIGHT) return report;
      return { inFlight: true, catchUp: job.catchUp, startedAt: job.startedAt };
    },
    /** The job running for a session, if any (for tests and status). */
    running(key) {
      const job = running.get(key);
      return job && { startedAt: job.startedAt, catchUp: job.catchUp, holdUntil: job.holdUntil };
    },
    /** Resolves when every job running now has ended (tests, orderly shutdown). */
    async idle() {
      while (running.size) await Promise.allSettled([...running.values()].map((j) => j.promise));
    },
  };
}
