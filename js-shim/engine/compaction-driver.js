// Drives a compaction job: the engine plans and judges, this loop only carries its summary
// requests to the host's LLM and the answers (or errors) back. No compaction logic lives here.
import { AbortError, TimeoutError } from "../errors.js";

/** Error kinds the engine's retry policy distinguishes. */
export function classifyError(err) {
  const status = err?.status ?? err?.statusCode ?? err?.response?.status;
  const text = `${err?.name ?? ""} ${err?.code ?? ""} ${err?.message ?? err ?? ""}`;
  if (
    status === 401 ||
    status === 403 ||
    /unauthori[sz]ed|forbidden|invalid api key|authentication|\bauth\b/i.test(text)
  )
    return "auth";
  if (/AbortError|TimeoutError|timed? ?out|ETIMEDOUT/i.test(text)) return "timeout";
  return "other";
}

/** The provider's token counts, when the result carries them (host: inputTokens/outputTokens). */
function usageOf(usage) {
  const count = (v) => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : undefined);
  const inputTokens = count(usage?.inputTokens ?? usage?.input);
  const outputTokens = count(usage?.outputTokens ?? usage?.output);
  return inputTokens === undefined && outputTokens === undefined ? undefined : { inputTokens, outputTokens };
}

/** How often a recorded request's lease is renewed while its answer is awaited (the engine's
 *  LEASE_RENEW_MS, core/compaction/hold.rs: a quarter of the lease). */
export const LEASE_RENEW_MS = 5_000;

/**
 * Renews job `jobId`'s lease every LEASE_RENEW_MS until the returned function is called, so
 * other processes take its request for live (and neither start their own nor count it lost).
 * The timer never keeps a process alive; a failed renewal is only logged: the lease then runs
 * out, and the request is treated as abandoned, as if this process had died.
 */
function keepLeased(handle, jobId, onError) {
  const timer = setInterval(() => {
    Promise.resolve()
      .then(() => handle.call("compactionRenew", { jobId }))
      .catch((err) => onError?.(err));
  }, LEASE_RENEW_MS);
  timer.unref?.();
  return () => clearInterval(timer);
}

/**
 * Runs one LLM request under its own AbortController, linked to the host's signal: the time
 * limit or a host abort rejects at once *and* aborts the request, so an abandoned request stops
 * (and stops being billed) instead of running on until the provider gives up. An answer that
 * arrives after the abort is discarded, never used as a summary.
 */
export async function completeWithin(llm, request, ms, hostSignal, what = "summarizer") {
  const controller = new AbortController();
  let timer;
  let onHostAbort;
  const stopped = new Promise((_, reject) => {
    timer = setTimeout(() => {
      const err = new TimeoutError(`${what} timed out after ${ms} ms`);
      controller.abort(err);
      reject(err);
    }, ms);
    onHostAbort = () => {
      const err = new AbortError(`${what === "summarizer" ? "compaction" : what} aborted by the host`);
      controller.abort(err);
      reject(err);
    };
    hostSignal?.addEventListener?.("abort", onHostAbort, { once: true });
  });
  try {
    const result = await Promise.race([llm.complete({ ...request, signal: controller.signal }), stopped]);
    if (controller.signal.aborted) throw controller.signal.reason ?? new AbortError("the summary request was aborted");
    return result;
  } finally {
    clearTimeout(timer);
    hostSignal?.removeEventListener?.("abort", onHostAbort);
    // The losing side of the race must not surface as an unhandled rejection.
    stopped.catch(() => {});
  }
}

/**
 * Runs one compaction job to its end and returns the engine's report.
 * @param {{call: Function}} handle the engine handle
 * @param {object} params compactionStart params without `summarizer`
 * @param {object} options
 * @param {"auto"|"host"|"extractive"} [options.choice] config `summarizer`
 * @param {{complete: Function}} [options.llm] the host's LLM capability, when there is one
 * @param {number} [options.timeoutMs] per summary request; when it passes, the request is aborted
 * @param {AbortSignal} [options.signal] the host's abort signal (compact() gets one); an abort
 *        aborts the pending request and fails the summary like a timeout, so nothing is written
 * @param {(err: Error) => void} [options.onLeaseError] a lease renewal failed (params.runner only)
 */
export async function runCompaction(
  handle,
  params,
  { choice = "auto", llm, timeoutMs = 120_000, signal, onLeaseError } = {},
) {
  const hasLlm = typeof llm?.complete === "function";
  if (choice === "host" && !hasLlm) {
    return {
      type: "done",
      ok: true,
      compacted: false,
      reason: 'summarizer is "host" but the host offered no LLM in this call; compaction waits',
      failures: [],
    };
  }
  const summarizer = choice === "extractive" || !hasLlm ? "extractive" : "host";
  let step = await handle.call("compactionStart", { ...params, summarizer });
  while (step.type === "needSummary") {
    let answer;
    // A request the engine records (a runner id) is leased while it is awaited.
    const release = params.runner ? keepLeased(handle, step.jobId, onLeaseError) : () => {};
    try {
      if (signal?.aborted) throw new AbortError("compaction aborted by the host");
      const request = {
        messages: [{ role: "user", content: step.prompt }],
        maxTokens: step.maxTokens,
        purpose: step.purpose,
      };
      const result = await completeWithin(llm, request, timeoutMs, signal);
      // OpenClaw resolves a failed provider call with stopReason "error" and empty text rather
      // than throwing; that is a summarizer error, not an empty summary.
      if (result?.stopReason === "error" || result?.stopReason === "aborted") {
        const detail = result.errorMessage ?? result.error?.message ?? "no detail given";
        answer = {
          error: {
            kind: result.stopReason === "aborted" ? "timeout" : "other",
            message: `the host LLM call ended with stopReason "${result.stopReason}" (${detail})`,
          },
        };
      } else if (typeof result?.text === "string") {
        // Only `text` is the answer: reasoning a host or provider returns beside it (`reasoning`,
        // `thinking`, `reasoning_content`) is never read. `stopReason: "length"` tells the engine
        // the text was cut off; `usage` is what the call cost.
        answer = {
          text: result.text,
          model: typeof result.model === "string" ? result.model : undefined,
          stopReason: typeof result.stopReason === "string" ? result.stopReason : undefined,
          usage: usageOf(result.usage),
        };
      } else {
        answer = { error: { kind: "other", message: "the LLM's answer had no text" } };
      }
    } catch (err) {
      // A host that aborted says nothing about the provider: the engine keeps no backoff for it.
      answer = {
        error: { kind: signal?.aborted ? "aborted" : classifyError(err), message: String(err?.message ?? err) },
      };
    } finally {
      release();
    }
    step = await handle.call("compactionContinue", { jobId: step.jobId, ...answer });
  }
  return step;
}
