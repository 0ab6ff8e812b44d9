// A fake OpenClaw host for shim tests. It follows the real host's rules and call order
// (../shared/reference/openclaw-host-contract.md §3.3): synchronous register with api calls
// ignored once it returns, the factory called once per logical turn and disposed after it,
// contract validation of the factory's result, bootstrap -> assemble -> commitTurn -> maintain.

/**
 * @param {object} [options]
 * @param {{complete: Function}} [options.llm] the session-bound LLM the host passes to maintain
 *        and compact in `runtimeContext.llm` (absent from assemble and commitTurn, as observed)
 */
/** The tools a default-profile agent can call: some of the host's own and the plugin's four
 *  recall tools (the host passes them to assemble as `availableTools`, a Set). */
export const DEFAULT_TOOLS = ["read", "exec", "lcm_grep", "lcm_describe", "lcm_expand", "lcm_ask"];

export function createFakeHost({ pluginConfig = {}, stateDir, llm } = {}) {
  const engines = new Map();
  const hooks = new Map();
  const logs = [];
  let registering = false;
  const guarded = (fn) => (...args) => (registering ? fn(...args) : undefined);
  const api = {
    id: "lossless-wasm",
    registrationMode: "full",
    pluginConfig,
    logger: {
      debug: (m) => logs.push(["debug", m]),
      info: (m) => logs.push(["info", m]),
      warn: (m) => logs.push(["warn", m]),
      error: (m) => logs.push(["error", m]),
    },
    runtime: { version: "2026.9.6", state: { resolveStateDir: () => stateDir } },
    on: guarded((name, handler) => hooks.set(name, [...(hooks.get(name) ?? []), handler])),
    registerContextEngine: guarded((id, factory) => {
      if (id === "legacy") throw new Error("context engine id legacy is reserved by core");
      if (typeof factory !== "function") throw new Error("factory must be a function");
      engines.set(id, factory);
    }),
  };

  async function resolveEngine(id) {
    const factory = engines.get(id);
    if (!factory) throw new Error(`context engine "${id}" is not registered`);
    const engine = await factory({ config: {}, agentDir: "/fake/agent", workspaceDir: "/fake/ws" });
    const missing = ["ingest", "assemble", "compact"].filter((m) => typeof engine?.[m] !== "function");
    if (!engine?.info?.id || !engine?.info?.name || missing.length) {
      throw new Error(`Context engine "${id}" factory returned an invalid ContextEngine: missing ${missing.join(", ") || "info"}`);
    }
    const ts = engine.info.transcriptSemantics ?? {};
    if (ts.currentTurnFence !== "before-current-turn-entry-v1" || ts.turnAdvancementIdempotency !== "atomic-idempotent-v1" || typeof engine.commitTurn !== "function") {
      throw new Error(`Context engine "${id}" degraded to "legacy": durable turn contract not declared`);
    }
    return engine;
  }

  return {
    api,
    logs,
    engines,
    load(plugin) {
      registering = true;
      let result;
      try {
        result = plugin.register(api);
      } finally {
        registering = false;
      }
      if (result && typeof result.then === "function") throw new Error("plugin register must be synchronous");
    },
    resolveEngine,
    /** Runs a typed hook's handlers, as the host does around resets and session ends. */
    async fireHook(name, event, ctx) {
      for (const handler of hooks.get(name) ?? []) await handler(event, ctx);
    },
    /** The host's overflow recovery: compact with force, budget and its own token count. */
    async compact(id, { sessionId, sessionKey, tokenBudget, currentTokenCount }) {
      const engine = await resolveEngine(id);
      try {
        return await engine.compact({ sessionId, sessionKey, tokenBudget, currentTokenCount, force: true, compactionTarget: "budget", runtimeContext: llm ? { llm } : {} });
      } finally {
        await engine.dispose?.();
      }
    },
    /** One durable logical turn: factory, bootstrap, assemble, commitTurn, maintain, dispose.
     *  `deferredMaintenance`: the turn's maintain runs as a gateway runs it after a turn, as
     *  deferred work (`allowDeferredCompactionExecution`), which the host lets finish before the
     *  session's next turn: it waits for its summaries. Without it, maintain is the inline kind
     *  whose wait for a summary is held to `summaryTurnWaitMs`. */
    async runTurn(id, { sessionId, sessionKey, history, turn, tokenBudget = 100_000, advancementKey, deferredMaintenance = false, hasTranscript = history.length > 0, availableTools = DEFAULT_TOOLS }) {
      const engine = await resolveEngine(id);
      try {
        const sessionFile = `sqlite:main:${sessionId}:/fake/agent.sqlite`;
        // As OpenClaw: bootstrap only for a session the host holds a transcript of (after a
        // reset it still does, with an empty visible history).
        if (hasTranscript) await engine.bootstrap?.({ sessionId, sessionKey, sessionFile });
        const view = await engine.assemble({ sessionId, sessionKey, messages: history, tokenBudget, availableTools: new Set(availableTools), model: "fake", prompt: "hi" });
        if (!Array.isArray(view?.messages)) throw new Error("assemble result must have a messages array");
        const commit = await engine.commitTurn({
          advancementKey: advancementKey ?? `turn-${sessionId}-${history.length}`,
          admission: { entryId: "e1" }, terminal: { entryId: "e2" },
          messages: turn, sessionId, sessionKey, runtimeContext: { provider: "fake", modelId: "fake", tokenBudget },
        });
        const runtimeContext = { ...(llm ? { llm } : {}), ...(deferredMaintenance ? { allowDeferredCompactionExecution: true } : {}) };
        const maintained = await engine.maintain?.({ sessionId, sessionKey, sessionFile, runtimeContext });
        return { view, commit, maintained, engine };
      } finally {
        await engine.dispose?.();
      }
    },
  };
}
