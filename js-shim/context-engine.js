// The OpenClaw ContextEngine object: maps each host call onto the wasm engine. It only picks the
// plain-data fields the engine needs (host params also carry functions, Sets and AbortSignals)
// and shapes results as the host contract expects. No context logic lives here.

export const ENGINE_ID = "lossless-wasm";
export const ENGINE_VERSION = "0.1.0";

const session = (p) => ({ sessionId: p.sessionId, sessionKey: p.sessionKey });

/**
 * @param {() => Promise<{call: Function, flush: Function}>} openHandle the shared engine
 * @param {{warn: Function}} [logger]
 */
export function createContextEngine(openHandle, logger) {
  const call = async (method, params) => (await openHandle()).call(method, params);
  return {
    info: {
      id: ENGINE_ID,
      name: "Lossless context (wasm)",
      version: ENGINE_VERSION,
      ownsCompaction: true,
      transcriptSemantics: {
        currentTurnFence: "before-current-turn-entry-v1",
        turnAdvancementIdempotency: "atomic-idempotent-v1",
      },
      acceptedHostParams: ["sessionKey", "prompt", "runtimeSettings", "runtimeContext", "sessionTarget"],
    },

    async bootstrap(p) {
      const messages = Array.isArray(p.messages) ? p.messages : [];
      return call("bootstrap", { ...session(p), messages });
    },

    async ingest(p) {
      const inserted = await call("ingest", { ...session(p), messages: [p.message] });
      return { ingested: inserted > 0 };
    },

    async ingestBatch(p) {
      return { ingestedCount: await call("ingest", { ...session(p), messages: p.messages }) };
    },

    async afterTurn(p) {
      await call("afterTurn", { ...session(p), messages: p.messages, prePromptMessageCount: p.prePromptMessageCount });
    },

    async commitTurn(p) {
      const out = await call("commitTurn", { ...session(p), advancementKey: p.advancementKey, messages: p.messages });
      if (out.warning) logger?.warn?.(`[lossless-wasm] ${out.warning}`);
      return { status: out.status };
    },

    async assemble(p) {
      const budget = typeof p.tokenBudget === "number" ? p.tokenBudget : undefined;
      const out = await call("assemble", { ...session(p), messages: p.messages ?? [], tokenBudget: budget });
      return {
        messages: JSON.parse(out.messagesJson),
        estimatedTokens: out.estimatedTokens,
        systemPromptAddition: out.systemPromptAddition,
      };
    },

    async compact(p) {
      return call("compact", { ...session(p), force: p.force === true });
    },

    async maintain() {
      return { changed: false, bytesFreed: 0, rewrittenEntries: 0, reason: "no deferred work in this build" };
    },

    async dispose() {
      // The engine is shared across turns; only make sure nothing committed is left unsaved.
      await (await openHandle()).flush();
    },
  };
}
