// Runs compaction jobs so that a host call waits for a summary only as long as the engine allows.
// Each summary request the engine hands out says how long the caller may hold the host's call for
// its answer (`holdMs`; null: until it arrives). When that time passes, the call returns and the
// job goes on in the background: its answer is applied when it arrives (the engine checks it
// against what changed meanwhile), or is lost with the process, which the engine notices later.
// One job per session at a time: a later call joins the running job instead of asking again.
// A job belongs to the engine instance whose call started it; once the host disposed that
// instance and no call of it waits for the job any more, the job's pending request is aborted
// (`release`): the host accounts the request's LLM call to that instance's work and waits for it
// before its dispose (and a reload) settles.
// Scheduling and waiting only; every decision is the engine's (core/compaction/hold.rs).

import { AbortError } from "../errors.js";
import { runCompaction } from "./compaction-driver.js";

/** This process's id in the engine's record of summary requests (see `runner` in compactionStart).
 *  Web Crypto, so the shim loads in browsers too (randomUUID only exists in secure contexts). */
export const RUNNER_ID =
  globalThis.crypto?.randomUUID?.() ??
  Array.from(globalThis.crypto?.getRandomValues?.(new Uint32Array(4)) ?? [Date.now(), Math.random() * 2 ** 32], (n) =>
    n.toString(16),
  ).join("-");

let turnsStored = 0;
let firstTurn;
/** A turn was stored in this process (commitTurn's advancement key; afterTurn, which a tool loop
 *  calls several times per turn, by its session and where the turn began). A process that
 *  stored two different turns is long-lived (a gateway): its background work outlives its turns.
 *  Counts 0, 1, 2 (= more than one). */
export function noteTurnStored(turn) {
  if (turnsStored === 0) {
    firstTurn = turn;
    turnsStored = 1;
  } else if (turn !== firstTurn) {
    turnsStored = 2;
  }
}

/** Turns this process stored: 0, 1, or 2 (more than one). */
export function storedTurns() {
  return turnsStored;
}

/** Why a disposed instance's summary request was aborted. */
const disposedError = () =>
  new AbortError("the host disposed the engine instance that started this summary; a later turn asks again");

/** A promise with its resolve function. */
function signal() {
  let resolve;
  const promise = new Promise((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/**
 * @param {object} [options]
 * @param {(report: object, job: {key: string, startedAt: number}) => void} [options.onDetachedReport]
 *        called with the report of a job that finished after every caller stopped waiting
 * @param {(err: Error, job: {key: string}) => void} [options.onDetachedError]
 * @param {(job: {key: string}) => void} [options.onCatchUp] a request the turn waits for in full
 *        went out (a catch-up, core/compaction/hold.rs)
 * @param {(session: {sessionId?: string, sessionKey?: string}) => void} [options.onHandOver] a job
 *        handed its session's summaries to a successor process, for the caller to start
 *        (`canHandOver` in the job's params; core/compaction/hold.rs)
 * @param {() => boolean} [options.endsWithTurn] this process ends with the turn it runs (a
 *        one-shot command): with onHandOver, its jobs hand over from their first request
 * @param {() => boolean} [options.outlivesTurns] this process outlives its turns (a gateway): its
 *        jobs ask themselves, even where an earlier process left requests unanswered
 */
export function createSummaryRunner({
  onDetachedReport,
  onDetachedError,
  onCatchUp,
  onHandOver,
  endsWithTurn,
  outlivesTurns,
} = {}) {
  /** session key -> the job running for it */
  const running = new Map();
  /** Every job not yet ended (one started beside a running job is not in `running`). */
  const live = new Set();

  /**
   * Starts a job: runCompaction through a handle that notes each summary request's hold.
   * The host's abort signal is followed only while the call that started the job waits on it.
   */
  function start(key, handle, params, driver, record, owner) {
    const controller = new AbortController();
    const job = {
      key,
      owner,
      startedAt: Date.now(),
      /** When the current request's hold ends (Infinity: no limit, or no request out yet). */
      holdUntil: Infinity,
      catchUp: false,
      settled: false,
      report: undefined,
      error: undefined,
      /** The call that started the job still waits for it (else it reports on its own). */
      starterWaits: true,
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
        // Only the steps of the job move its hold (not lease renewals).
        if (method !== "compactionStart" && method !== "compactionContinue") return out;
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
    const recorded = record
      ? {
          runner: RUNNER_ID,
          runnerTurns: turnsStored,
          canHandOver: Boolean(onHandOver),
          endsWithTurn: Boolean(onHandOver && endsWithTurn?.()),
          outlivesTurns: Boolean(outlivesTurns?.()),
        }
      : {};
    job.promise = runCompaction(observed, { ...params, ...recorded }, { ...driver, signal: controller.signal })
      .then(
        (report) => {
          job.report = report;
          if (report?.handOver) onHandOver?.({ sessionId: params.sessionId, sessionKey: params.sessionKey });
        },
        (err) => {
          job.error = err;
        },
      )
      .finally(() => {
        job.settled = true;
        live.delete(job);
        if (running.get(key) === job) running.delete(key);
        if (!job.starterWaits) {
          if (job.error) onDetachedError?.(job.error, job);
          else onDetachedReport?.(job.report, job);
        }
        notify();
      });
    live.add(job);
    return job;
  }

  /**
   * Waits for `job`: until it ends, or (when `held`) until its current request's hold runs out;
   * returns true when it ended. A held caller that joined a job another call started waits only
   * within a hold that job was given for a turn (a background job's or a catch-up's request has
   * none: the turn does not wait for it here).
   */
  async function settles(job, { held, joined, hostAborted }) {
    while (!job.settled) {
      // A host that gave up on a joined job's call does not wait for that job.
      if (joined && hostAborted?.done) return false;
      const until = joined && !Number.isFinite(job.holdUntil) ? 0 : job.holdUntil;
      const left = held ? until - Date.now() : Infinity;
      if (left <= 0) return false;
      job.changed ??= signal();
      let timer;
      const timeout = Number.isFinite(left)
        ? new Promise((resolve) => {
            timer = setTimeout(resolve, left);
          })
        : null;
      await Promise.race([
        job.changed.promise,
        ...(timeout ? [timeout] : []),
        ...(joined && hostAborted ? [hostAborted.promise] : []),
      ]);
      clearTimeout(timer);
    }
    return true;
  }

  /** The host's abort as a promise with a flag (null without a signal). */
  function abortOf(hostSignal) {
    if (!hostSignal) return null;
    const state = { done: hostSignal.aborted, promise: null };
    state.promise = state.done
      ? Promise.resolve()
      : new Promise((resolve) =>
          hostSignal.addEventListener?.(
            "abort",
            () => {
              state.done = true;
              resolve();
            },
            { once: true },
          ),
        );
    return state;
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
     * @param {boolean} [options.record] let the engine record each request with this process's
     *        id, so a later process can tell one this process left unanswered (only where calls
     *        the turn waits on come, which can catch up: an OpenClaw host)
     * @param {AbortSignal} [options.hostSignal]
     * @param {object} options.driver runCompaction options (choice, llm, timeoutMs)
     * @param {{disposed?: boolean}} [options.owner] the engine instance whose call this is
     *        (see `release`)
     */
    async run(key, handle, params, { turnWaits = false, record = false, hostSignal, driver, owner }) {
      // A job another call started: its outcome is that call's to report, and only that call's
      // host may abort it.
      const hostAborted = abortOf(hostSignal);
      for (let current = running.get(key); current; current = running.get(key)) {
        if (!(await settles(current, { held: turnWaits, joined: true, hostAborted }))) break;
      }
      const job = start(key, handle, { ...params, turnWaits }, driver, record, owner);
      if (!running.has(key)) running.set(key, job);
      const onAbort = () => job.controller.abort(hostSignal.reason);
      if (hostSignal?.aborted) onAbort();
      else hostSignal?.addEventListener?.("abort", onAbort, { once: true });
      let ended = false;
      try {
        ended = await settles(job, { held: turnWaits, joined: false });
      } finally {
        hostSignal?.removeEventListener?.("abort", onAbort);
        // A job that ended while this call was returning is still this call's to report.
        ended ||= job.settled;
        job.starterWaits = ended;
      }
      if (!ended) {
        // The host disposed the instance while this call waited: nothing of it goes on.
        if (owner?.disposed) job.controller.abort(disposedError());
        return { inFlight: true, catchUp: job.catchUp, startedAt: job.startedAt };
      }
      if (job.error) throw job.error;
      return job.report;
    },

    /**
     * The host disposed `owner` (it sets `owner.disposed` first): aborts the jobs it started
     * that no call waits for any more (their pending summary request fails as aborted: nothing
     * is written for it, no backoff is kept, and a later turn asks again) and resolves when they
     * have ended. A job one of its calls still waits for is that call's: it ends with it, or is
     * aborted when the call stops waiting (`run`).
     * @param {object} owner the engine instance the host disposes
     */
    release(owner) {
      const detached = [...live].filter((job) => job.owner === owner && !job.starterWaits);
      for (const job of detached) job.controller.abort(disposedError());
      return Promise.allSettled(detached.map((job) => job.promise));
    },
  };
}
