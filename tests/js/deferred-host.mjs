// One OpenClaw 2026.9 logical turn around the plugin, as the real host runs it when the engine
// declares `turnMaintenanceMode: "background"` (../shared/reference/openclaw-host-contract.md
// §3.3; docs/summarization.md, "A slow summarizer"): the factory, then bootstrap and the
// maintenance before the turn (inline), the preflight compact() when the projected prompt is over
// the threshold (inline, `trigger: "budget"`), assemble, the model (here: a reply made up at
// once), commitTurn, and the turn's maintenance scheduled in the background with
// `allowDeferredCompactionExecution` — not awaited: `openclaw agent --local` prints its reply
// and exits without waiting for it — and the engine disposed after it, as the host's lease does.
// Not a test file itself.
import { createFakeHost } from "./fake-host.mjs";

const chars = (m) => (typeof m.content === "string" ? m.content.length : (m.content ?? []).reduce((n, b) => n + String(b?.text ?? "").length, 0));
const tokens = (messages) => messages.reduce((n, m) => n + Math.ceil(chars(m) / 4) + 4, 0);

/**
 * @param {object} o
 * @param {object} o.plugin the loaded plugin
 * @param {object} o.pluginConfig
 * @param {string} o.stateDir
 * @param {{complete: Function}} o.llm the summarizer the host offers to maintain and compact
 * @param {number} [o.window] the model's context window
 * @param {number} [o.systemTokens] the host's system prompt
 */
export function createDeferredHost({ plugin, pluginConfig, stateDir, llm, window = 8_000, systemTokens = 3_000 }) {
  const fake = createFakeHost({ pluginConfig, stateDir, llm });
  fake.load(plugin);
  const threshold = window - Math.min(20_000, Math.floor(window / 4));
  // Distinct per process too: a child process per turn must not repeat an earlier turn's stamps.
  let clock = Date.now() * 1_000;
  let n = 0;
  // The previous request as the provider counted it: the host projects the next prompt from it.
  let last = null;

  return {
    fake,
    logs: fake.logs,
    /**
     * One turn: `text` from the user and a reply of `replyChars`. Resolves when the host would
     * print the reply; `deferred` is the turn maintenance still running in the background
     * (none with `skipDeferred`: the process exited before it started); `disposed` settles
     * when the engine's dispose after it did.
     * `calls` lists each host call with how long it took (ms).
     */
    async turn(sessionKey, history, text, { replyChars = 600, skipDeferred = false } = {}) {
      n += 1;
      const sessionId = "sess";
      const calls = [];
      const timed = async (name, run) => {
        const t0 = performance.now();
        try {
          return await run();
        } finally {
          calls.push({ name, ms: performance.now() - t0 });
        }
      };
      const engine = await fake.resolveEngine("lossless-wasm");
      const runtimeContext = { llm, modelContextWindow: window, tokenBudget: window };
      // The host disposes the engine after the turn's deferred maintenance, if any (its lease).
      let deferred;
      try {
        if (history.length) {
          await timed("bootstrap", () => engine.bootstrap({ sessionId, sessionKey, sessionFile: sessionKey }));
          await timed("maintain(bootstrap)", () => engine.maintain({ sessionId, sessionKey, sessionFile: sessionKey, runtimeContext }));
        }
        const budget = Math.max(1, threshold - systemTokens - Math.ceil(text.length / 4));
        let view = await timed("assemble", () => engine.assemble({ sessionId, sessionKey, messages: [...history], tokenBudget: budget, prompt: text }));
        // The host's projection: the last prompt as reported, its reply, and the new prompt.
        const projection = last ? last.prompt + last.output + Math.ceil(text.length / 4) : 0;
        let preflight;
        if (projection >= threshold) {
          preflight = await timed("compact(preflight)", () => engine.compact({
            sessionId, sessionKey, tokenBudget: window, currentTokenCount: projection, force: true, compactionTarget: "budget",
            runtimeContext: { ...runtimeContext, trigger: "budget", currentTokenCount: projection },
          }));
          view = await timed("assemble", () => engine.assemble({ sessionId, sessionKey, messages: [...history], tokenBudget: budget, prompt: text }));
        }
        const turn = [
          { role: "user", content: text, timestamp: clock++ },
          { role: "assistant", content: [{ type: "text", text: `Reply to message ${history.length + 1}: ${"noted. ".repeat(Math.ceil(replyChars / 7))}`.slice(0, replyChars) }], usage: { input: 1, output: 1 }, stopReason: "stop", timestamp: clock++ },
        ];
        last = { prompt: systemTokens + tokens(view.messages) + tokens([turn[0]]), output: tokens([turn[1]]) };
        await timed("commitTurn", () => engine.commitTurn({
          sessionId, sessionKey, advancementKey: `turn-${n}-${history.length}`, messages: turn,
          admission: { entryId: `u${n}` }, terminal: { entryId: `a${n}` },
          runtimeContext: { provider: "fake", modelId: "fake", modelContextWindow: window, tokenBudget: window },
        }));
        const background = engine.info.turnMaintenanceMode === "background";
        const maintaining = () => engine.maintain({ sessionId, sessionKey, sessionFile: sessionKey, runtimeContext: { ...runtimeContext, ...(background ? { allowDeferredCompactionExecution: true } : {}) } });
        // `skipDeferred`: the process exited before the deferred maintenance started.
        deferred = background && !skipDeferred ? maintaining() : undefined;
        if (!background) await timed("maintain(turn)", maintaining);
        const disposed = (deferred ?? Promise.resolve()).catch(() => {}).then(() => engine.dispose?.());
        if (!deferred) await disposed;
        return { view, preflight, turn, calls, deferred, disposed, background };
      } catch (err) {
        await (deferred ?? Promise.resolve()).catch(() => {});
        await engine.dispose?.();
        throw err;
      }
    },
  };
}
