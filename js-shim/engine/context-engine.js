// The OpenClaw ContextEngine object: maps each host call onto the wasm engine. It only picks the
// plain-data fields the engine needs (host params also carry functions, Sets and AbortSignals)
// and shapes results as the host contract expects. No context logic lives here.
// OpenClaw makes one per logical turn and disposes it after the turn (after its deferred
// maintenance; `instancePerTurn`): `dispose` settles within DISPOSE_BOUND_MS whatever is in
// flight and leaves no work of this instance behind (docs/reliability.md, "Dispose and reload").

import { createSummaryRunner, noteTurnStored } from "./summary-runner.js";

export const ENGINE_ID = "lossless-wasm";
export const ENGINE_VERSION = "0.1.0";

/** How long `dispose` may take at most: under OpenClaw's cleanup bounds (5 s for a plugin's
 *  cleanup hooks, 10 s per agent cleanup step), so a reload's drain never waits on us. */
export const DISPOSE_BOUND_MS = 4_000;

/** Resolves true when `work` settles, false when `ms` pass first; the timer never keeps the
 *  process alive. */
async function settlesWithin(work, ms) {
  let timer;
  const late = new Promise((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
    timer.unref?.();
  });
  try {
    return await Promise.race([work.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

// OpenClaw 2026.7.x types compact()'s sessionKey as optional (its runtimeContext may carry
// one). A call without a key is about the session this process last saw under that id, so the
// key is completed from there instead of opening a conversation keyed by the bare id.
const keysBySessionId = new Map();
const text = (v) => (typeof v === "string" && v ? v : undefined);
const session = (p) => {
  const sessionKey = text(p.sessionKey) ?? text(p.runtimeContext?.sessionKey) ?? keysBySessionId.get(p.sessionId);
  if (sessionKey && text(p.sessionId)) keysBySessionId.set(p.sessionId, sessionKey);
  return { sessionId: p.sessionId, sessionKey };
};

/** The host's `availableTools` (a Set in OpenClaw, or an array) as a list of names; undefined
 *  when the host passes none or something else, which the engine reads as "not said". */
const toolNames = (tools) => {
  if (!(tools instanceof Set) && !Array.isArray(tools)) return undefined;
  return [...tools].filter((name) => typeof name === "string");
};

const finite = (n) => (typeof n === "number" && Number.isFinite(n) ? n : undefined);

// One summary runner per open engine: the host makes a new ContextEngine object every turn, and a
// job one of them left running in the background must be seen by the next (summary-runner.js).
const runners = new WeakMap();
function runnerOf(handle, logger, { startSuccessor, endsWithTurn, outlivesTurns }) {
  let runner = runners.get(handle);
  if (!runner) {
    runner = createSummaryRunner({
      endsWithTurn,
      outlivesTurns,
      onHandOver:
        startSuccessor &&
        ((session) => {
          try {
            startSuccessor(session);
            logger?.info?.(
              `[lossless-wasm] summaries of ${session.sessionKey ?? session.sessionId} go on in a successor process (lcm summarize): this process exits before they could be answered`,
            );
          } catch (err) {
            logger?.warn?.(
              `[lossless-wasm] could not start the successor that writes summaries after this process exits: ${err?.message ?? err}`,
            );
          }
        }),
      onDetachedReport: (report) => {
        for (const line of report?.failures ?? []) logger?.warn?.(`[lossless-wasm] ${line}`);
        if (report?.compacted) logger?.info?.(`[lossless-wasm] in the background: ${report.reason}`);
      },
      onDetachedError: (err) => logger?.warn?.(`[lossless-wasm] background compaction failed: ${err?.message ?? err}`),
      onCatchUp: () =>
        logger?.info?.(
          "[lossless-wasm] catch-up: this turn waits for one summary (those sent after earlier turns were lost when their process exited)",
        ),
    });
    runners.set(handle, runner);
  }
  return runner;
}

/**
 * The room to leave for the reply, from the host's `runtimeSettings.limits.maxOutputTokens`
 * (OpenClaw 2026.9 reports its compaction reserve there, min(20000, window/4)). A host whose
 * limits mean something else passes its own `limits` (OpenClaw 2026.7: openclaw/host-limits.js).
 */
const replyRoom = (p) => ({ maxOutputTokens: p.runtimeSettings?.limits?.maxOutputTokens });

/**
 * @param {() => Promise<{call: Function, flush: Function}>} openHandle the shared engine
 * @param {object} [options]
 * @param {{info?: Function, warn?: Function}} [options.logger]
 * @param {object} [options.config] plugin config (`summarizer`, `summaryTimeoutMs`)
 * @param {() => ({complete: Function}|undefined)} [options.hostLlm] the plugin-wide LLM, used
 *        when a call's runtimeContext carries none
 * @param {boolean} [options.fullHistory] the host passes its whole visible history to assemble
 *        (OpenClaw does), so an empty history while we hold messages means a reset, when the
 *        host also holds a transcript of the session (it called `bootstrap` for it first)
 * @param {boolean} [options.summariesInBackground] true (OpenClaw): the host runs turn maintenance
 *        in the background, and a call its turn waits on (maintenance before a turn, preflight
 *        compact()) waits for a summary only as long as the engine allows, then leaves it to the
 *        background (docs/summarization.md, "A slow summarizer"). false (the default, for
 *        embedders that call compact() to get summaries): every call waits for its summaries.
 * @param {(session: {sessionId?: string, sessionKey?: string}) => void} [options.startSuccessor]
 *        starts a process that writes a session's summaries after this one exits (OpenClaw:
 *        `openclaw lcm summarize`), for jobs that hand them over (with summariesInBackground)
 * @param {() => boolean} [options.endsWithTurn] this process ends with the turn it runs (a
 *        one-shot command): with startSuccessor, no summary is asked here, a successor asks
 * @param {() => boolean} [options.outlivesTurns] this process outlives its turns (a gateway):
 *        summaries are asked here even when an earlier process (one that crashed) left requests
 *        unanswered, instead of handing them to a successor
 * @param {{catchUp: Function}} [options.transcriptCatchUp] reads the host's transcript at each
 *        `bootstrap` and stores what no turn committed (openclaw/transcript-catch-up.js; OpenClaw 2026.7 and >= 2026.9)
 * @param {boolean} [options.instancePerTurn] true (OpenClaw): the host makes this object for one
 *        logical turn and disposes it after; dispose then ends it (its summary jobs no call waits
 *        for are released, and calls still running start none). false (the library's one object
 *        for the engine's life): dispose only flushes.
 * @param {(p: object) => {maxOutputTokens?: number, preflightReserveTokens?: number, hostEstimateSafety?: number}} [options.limits]
 *        what the host leaves beside the view for a call `p`: its reply budget, and its
 *        preflight reserve and estimate padding where they are not OpenClaw 2026.9's
 *        (openclaw/host-limits.js). Default: the reply room from `runtimeSettings` (`replyRoom`)
 *        and the engine's own reserve and padding.
 * @param {(session: {sessionId?: string, sessionKey?: string}, tokens: number) => void} [options.onModelWindow]
 *        the model's context window the host reported for a session (the recall tools size their
 *        answers under it: openclaw/result-size.js)
 */
export function createContextEngine(
  openHandle,
  {
    logger,
    config = {},
    hostLlm,
    fullHistory = false,
    summariesInBackground = false,
    startSuccessor,
    endsWithTurn,
    outlivesTurns,
    transcriptCatchUp,
    instancePerTurn = false,
    limits = replyRoom,
    onModelWindow,
  } = {},
) {
  // The engine this instance used (dispose flushes it and never opens one), the token its
  // summary jobs carry (dispose releases them), and whether the host disposed it.
  let opened;
  const owner = { disposed: false };
  const handleNow = async () => (opened = await openHandle());
  const call = async (method, params) => (await handleNow()).call(method, params);
  /** `tokens` (the window the host reported for `p`'s session), passed on and returned. */
  const window = (p, tokens) => {
    if (tokens !== undefined) onModelWindow?.(session(p), tokens);
    return tokens;
  };
  // The sessions the host holds a transcript of: OpenClaw calls `bootstrap` before `assemble`
  // only for a session with transcript state. Without one (a session new to this host, such as
  // one continued from another gateway sharing a PostgreSQL store) its empty history says
  // nothing about a reset, and the stored conversation goes on.
  const hostTranscripts = new Set();
  const sessionTag = (p) => `${p?.sessionKey ?? ""}\u0000${p?.sessionId ?? ""}`;
  const llmFor = (p) => p?.runtimeContext?.llm ?? hostLlm?.();
  /** The host's reply budget, preflight reserve and estimate padding for call `p`, finite
   *  numbers only. */
  const hostLimits = (p) => {
    const out = limits(p) ?? {};
    return {
      maxOutputTokens: finite(out.maxOutputTokens),
      preflightReserveTokens: finite(out.preflightReserveTokens),
      hostEstimateSafety: finite(out.hostEstimateSafety),
    };
  };
  const onLeaseError = (err) =>
    logger?.warn?.(
      `[lossless-wasm] could not renew a summary request's lease (another process may start its own): ${err?.message ?? err}`,
    );
  /** Runs a compaction job for the call's session; `turnWaits`: the host's turn waits on this call. */
  const runJob = async (p, params, turnWaits) => {
    const handle = await handleNow();
    const s = session(p);
    // A call still running when the host disposed this instance starts no work it would own.
    if (owner.disposed)
      return {
        ok: true,
        compacted: false,
        reason: "nothing to compact: the host disposed this engine instance; a later turn compacts",
        failures: [],
      };
    return runnerOf(handle, logger, {
      startSuccessor: summariesInBackground ? startSuccessor : undefined,
      endsWithTurn,
      outlivesTurns,
    }).run(
      s.sessionKey ?? s.sessionId,
      handle,
      { ...s, ...params },
      {
        turnWaits: turnWaits && summariesInBackground,
        record: summariesInBackground,
        hostSignal: p?.abortSignal,
        owner,
        driver: {
          choice: config.summarizer ?? "auto",
          llm: llmFor(p),
          timeoutMs: config.summaryTimeoutMs,
          onLeaseError,
        },
      },
    );
  };
  const compaction = async (p, params, { turnWaits = false } = {}) => {
    let report = await runJob(p, params, turnWaits);
    if (report.inFlight)
      logger?.info?.("[lossless-wasm] summary continues in the background; the turn goes on without it");
    // compact() must still bring the prompt under the host's target now: the next job finds the
    // summary in flight, asks for none, and shrinks the view (the engine decides). Its own
    // request can only be in flight if the first ended meanwhile, so this ends.
    for (let again = 0; report.inFlight && params.mode === "sweep" && again < 3; again++)
      report = await runJob(p, params, turnWaits);
    if (report.inFlight)
      report = {
        ok: true,
        compacted: false,
        reason: "nothing to compact: a summary is still being written in the background; it is applied when it arrives",
        failures: [],
      };
    for (const line of report.failures ?? []) logger?.warn?.(`[lossless-wasm] ${line}`);
    // A host that aborted does not wait for a result; claim no progress we did not store.
    if (p?.abortSignal?.aborted && !report.summaryIds?.length) {
      return { ...report, ok: false, compacted: false, reason: `compaction aborted by the host; ${report.reason}` };
    }
    // Every forced compaction explains itself, including "nothing to compact".
    if (report.compacted || params.force) logger?.info?.(`[lossless-wasm] ${report.reason}`);
    return report;
  };
  return {
    info: {
      id: ENGINE_ID,
      name: "Lossless context (wasm)",
      version: ENGINE_VERSION,
      ownsCompaction: true,
      // Summaries are written after the turn, never in its way (OpenClaw >= 2026.7 defers
      // maintain(); docs/summarization.md, "A slow summarizer").
      ...(summariesInBackground ? { turnMaintenanceMode: "background" } : {}),
      transcriptSemantics: {
        currentTurnFence: "before-current-turn-entry-v1",
        turnAdvancementIdempotency: "atomic-idempotent-v1",
      },
      acceptedHostParams: ["sessionKey", "prompt", "runtimeSettings", "runtimeContext", "sessionTarget"],
    },

    async bootstrap(p) {
      hostTranscripts.add(sessionTag(p));
      const messages = Array.isArray(p.messages) ? p.messages : [];
      const result = await call("bootstrap", { ...session(p), messages });
      // OpenClaw calls bootstrap before every turn of a session it holds a transcript of: the
      // place to store what a turn whose commit never came left in it (a crash, a re-run).
      if (transcriptCatchUp) {
        try {
          // 2026.7 names the transcript file; its whole-transcript reader takes it (the catch-up
          // passes it on when it is a path).
          await transcriptCatchUp.catchUp({ ...session(p), sessionFile: p.sessionFile });
        } catch (err) {
          logger?.warn?.(
            `[lossless-wasm] could not catch up from the host's transcript of ${p.sessionKey ?? p.sessionId} (tried again next turn): ${err?.message ?? err}`,
          );
        }
      }
      return result;
    },

    async ingest(p) {
      const inserted = await call("ingest", { ...session(p), messages: [p.message] });
      return { ingested: inserted > 0 };
    },

    async ingestBatch(p) {
      return { ingestedCount: await call("ingest", { ...session(p), messages: p.messages }) };
    },

    async afterTurn(p) {
      noteTurnStored(`${p.sessionKey ?? p.sessionId}:${p.prePromptMessageCount}`);
      await call("afterTurn", {
        ...session(p),
        messages: p.messages,
        prePromptMessageCount: p.prePromptMessageCount,
        // Hosts that call afterTurn (OpenClaw 2026.7) have no commitTurn to report the window;
        // theirs passes it as tokenBudget here.
        modelContextWindow: window(
          p,
          finite(p.runtimeContext?.modelContextWindow) ?? (fullHistory ? finite(p.tokenBudget) : undefined),
        ),
      });
    },

    async commitTurn(p) {
      noteTurnStored(`${p.sessionKey ?? p.sessionId}:${p.advancementKey}`);
      const out = await call("commitTurn", {
        ...session(p),
        advancementKey: p.advancementKey,
        messages: p.messages,
        admission: { entryId: p.admission?.entryId },
        terminal: { entryId: p.terminal?.entryId },
        modelContextWindow: window(p, finite(p.runtimeContext?.modelContextWindow)),
      });
      if (out.warning) logger?.warn?.(`[lossless-wasm] ${out.warning}`);
      if (out.compaction?.pending)
        logger?.info?.(`[lossless-wasm] compaction pending (${out.compaction.pending}): ${out.compaction.logLine}`);
      return { status: out.status };
    },

    async assemble(p) {
      const budget = typeof p.tokenBudget === "number" ? p.tokenBudget : undefined;
      const messages = Array.isArray(p.messages) ? p.messages : [];
      const view = await (
        await handleNow()
      ).assemble({
        ...session(p),
        messages,
        tokenBudget: budget,
        historyIsComplete: fullHistory && Array.isArray(p.messages) && hostTranscripts.has(sessionTag(p)),
        // The prompt and the reply share the window with our view (docs/prompt-accounting.md).
        prompt: typeof p.prompt === "string" ? p.prompt : undefined,
        ...hostLimits(p),
        // The tools the model can call this turn (a Set from OpenClaw): the addition names only
        // the recall tools among them. Absent (older hosts): the engine names all four.
        availableTools: toolNames(p.availableTools),
      });
      // Once per conversation: the current and previous turn were over the budget (excerpts).
      if (view.notice) logger?.warn?.(`[lossless-wasm] ${view.notice}`);
      // The array is the host's to keep; its message objects are shared with later views
      // (view-handover.js checks they come back unchanged).
      // No recall tool callable (tools.profile "minimal", the host's memory-flush runs): no
      // addition at all rather than an empty one.
      return {
        messages: view.messages,
        estimatedTokens: view.estimatedTokens,
        ...(view.systemPromptAddition ? { systemPromptAddition: view.systemPromptAddition } : {}),
      };
    },

    /**
     * Brings the prompt under the host's target: summaries, and a view that fits what the host
     * counts (`currentTokenCount`: its preflight projection or an overflowed prompt). OpenClaw
     * passes the model's window as `tokenBudget`.
     */
    async compact(p) {
      // OpenClaw 2026.7's check after each CLI turn (`trigger: "cli_budget"`) counts the host's
      // own whole transcript, not the prompt our view makes, and fails the command unless the
      // answer is "compacted" or "under target": compact by our own rules and accounting then.
      const transcriptCheck = p.runtimeContext?.trigger === "cli_budget";
      const report = await compaction(
        p,
        {
          mode: "sweep",
          force: p.force === true && !transcriptCheck,
          tokenBudget: finite(p.tokenBudget),
          currentTokenCount: transcriptCheck
            ? undefined
            : (finite(p.currentTokenCount) ?? finite(p.runtimeContext?.currentTokenCount)),
          // OpenClaw's compact() budget is the window; an embedder's may be a view budget.
          contextWindow:
            finite(p.runtimeContext?.modelContextWindow) ?? (fullHistory ? finite(p.tokenBudget) : undefined),
          ...hostLimits(p),
          // A user's /compact waits for its summaries; the host's own checks (preflight, overflow
          // recovery, 2026.7's check after a CLI turn) hold the turn, so they do not.
        },
        { turnWaits: p.runtimeContext?.trigger !== "manual" },
      );
      let reason = report.reason;
      const hostSkip =
        /below threshold|already under target|already compacted/.test(reason) &&
        !/nothing to compact|no real conversation messages/.test(reason);
      if (transcriptCheck && report.ok && !report.compacted && !hostSkip) {
        // assemble sizes the view to the prompt budget, so the prompt is under the host's target
        // whatever its transcript holds; say it in the words the host accepts as a skip.
        // The host reads "nothing to compact" before "under target", so the engine's own reason
        // goes to the log, not into the answer.
        logger?.info?.(`[lossless-wasm] ${reason}`);
        reason = `already under target: the view is sized to the prompt budget at assemble (the host counted its whole transcript, ${finite(p.currentTokenCount) ?? "?"} tokens)`;
      }
      return {
        ok: report.ok,
        compacted: report.compacted,
        reason,
        result: { tokensBefore: report.tokensBefore, tokensAfter: report.tokensAfter },
      };
    },

    /** Runs the compaction the trigger left pending (this call carries the host's LLM), then the
     *  upkeep that belongs after a turn rather than in it (search indexing, WAL checkpoints).
     *  OpenClaw runs it in the background after a turn (`allowDeferredCompactionExecution`),
     *  where it may wait for summaries; and inline before a turn, where the turn waits. */
    async maintain(p) {
      const background = p?.runtimeContext?.allowDeferredCompactionExecution === true;
      const report = await compaction(p, { mode: "pending" }, { turnWaits: !background });
      let reason = report.reason;
      try {
        await (await handleNow()).housekeep();
      } catch (err) {
        // Upkeep is retried next turn; the compaction outcome still stands.
        reason = `${reason}; upkeep failed: ${err?.message ?? err}`;
      }
      return { changed: report.compacted, bytesFreed: 0, rewrittenEntries: 0, reason };
    },

    /** Searches stored messages and summaries (not part of the host contract; the base of lcm_grep). */
    async search(p) {
      return call("search", { ...session(p), pattern: p.pattern, mode: p.mode, scope: p.scope, limit: p.limit });
    },

    /** The host reported a reset or rollover of this session: start a new conversation. */
    async reset(p) {
      return call("reset", { ...session(p), cause: p.cause });
    },

    /**
     * Ends this instance within DISPOSE_BOUND_MS. The engine itself is shared across turns and
     * stays open. With `instancePerTurn` (OpenClaw), this instance's summary jobs that no call
     * waits for any more (the host gave up on the calls that waited: an aborted turn, a
     * reload's drain) have their pending request aborted, since the host counts that LLM call
     * as this instance's work (one a call still waits for is aborted when that call stops
     * waiting). Then what this instance wrote is flushed (every call already persisted its
     * commit; this waits for a call still queued, such as a commitTurn the host did not
     * await). Opens nothing.
     */
    async dispose() {
      if (instancePerTurn) owner.disposed = true;
      const handle = opened;
      // A newer config's engine replaced this one (a hot reload): closing it flushed it.
      if (!handle || handle.retired) return;
      const work = (async () => {
        if (instancePerTurn) await runners.get(handle)?.release(owner);
        await handle.flush();
      })();
      let failed;
      const settled = await settlesWithin(
        work.catch((err) => {
          failed = err;
        }),
        DISPOSE_BOUND_MS,
      );
      if (failed) logger?.warn?.(`[lossless-wasm] dispose: could not flush the store: ${failed?.message ?? failed}`);
      if (!settled)
        logger?.warn?.(
          `[lossless-wasm] dispose: this turn's work did not settle within ${DISPOSE_BOUND_MS} ms; it goes on in the background (what was committed is stored)`,
        );
    },
  };
}
