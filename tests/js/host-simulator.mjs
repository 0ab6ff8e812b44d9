// A simulated OpenClaw 2026.9 agent loop around the plugin, for prompt-accounting tests at
// scale. It does what the real host does with the numbers (../../docs/prompt-accounting.md):
//
// - before a turn, the preflight check: its projection (the last request's prompt tokens as
//   the provider reported them + the last reply + the new prompt) at or over the threshold
//   (window − min(20000, window/4)) calls `compact({force, currentTokenCount, tokenBudget:
//   window})`, and any result other than compacted or a benign skip fails the turn;
// - `assemble` twice, with the host's budgets (#1: threshold − system prompt − prompt; #2: the
//   window), the second receiving the first's result; the model gets the second's;
// - the model request is system prompt + tool schemas + view + the turn's messages; its size is
//   counted like a provider would (characters / 4), checked against the window with the reply
//   budget intact, and reported as `usage` on the assistant message;
// - tool loops: each tool call is another request with the turn so far;
// - `commitTurn` with the turn, then `maintain` with the summarizer.
// Not a test file itself.
import { createFakeHost } from "./fake-host.mjs";

const chars = (content) => {
  if (typeof content === "string") return content.length;
  if (!Array.isArray(content)) return 0;
  let n = 0;
  for (const block of content) {
    if (typeof block?.text === "string") n += block.text.length;
    if (block?.type === "toolCall") n += JSON.stringify(block.arguments ?? {}).length + String(block.name ?? "").length;
  }
  return n;
};

/** A provider's count of a request (characters / 4, plus a few tokens of framing per message). */
export const providerTokens = (messages) => messages.reduce((n, m) => n + Math.ceil(chars(m?.content) / 4) + 4, 0);

export function hostThreshold(window) {
  return window - Math.min(20_000, Math.floor(window / 4));
}

/**
 * @param {object} o
 * @param {object} o.plugin the loaded plugin
 * @param {object} o.pluginConfig
 * @param {string} o.stateDir
 * @param {number} o.window the model's context window
 * @param {number} o.maxTokens the reply budget
 * @param {number} o.systemTokens the host's system prompt
 * @param {number} o.toolTokens the tool schemas
 * @param {{complete: Function}} o.llm the summarizer the host offers
 */
export function createSimulatedHost({ plugin, pluginConfig, stateDir, window, maxTokens, systemTokens, toolTokens, llm }) {
  const fake = createFakeHost({ pluginConfig, stateDir, llm });
  fake.load(plugin);
  const system = { role: "system", content: "s".repeat(systemTokens * 4) };
  const tools = { role: "system", content: "t".repeat(toolTokens * 4) };
  const stats = { turns: 0, requests: 0, maxPrompt: 0, overWindow: [], replyCut: [], forced: 0, forcedFailed: [], views: [] };
  const history = [];
  let clock = 1_800_000_000_000;
  let last = null; // { prompt, output } of the last request

  async function preflight(engine, sessionKey, prompt) {
    if (!last) return;
    const projection = last.prompt + last.output + Math.ceil(prompt.length / 4);
    if (projection < hostThreshold(window)) return;
    stats.forced += 1;
    const result = await engine.compact({
      sessionId: "sim", sessionKey, tokenBudget: window, currentTokenCount: projection, force: true, compactionTarget: "budget",
      runtimeContext: { llm, tokenBudget: window, currentTokenCount: projection },
      runtimeSettings: { limits: { maxOutputTokens: maxTokens } },
    });
    const benign = !result.compacted && (/below threshold|already under target|already compacted/.test(result.reason) || (result.ok && /nothing to compact/.test(result.reason)));
    if (!(result.ok && result.compacted) && !benign) stats.forcedFailed.push({ turn: stats.turns + 1, projection, reason: result.reason });
  }

  function request(view, turnSoFar) {
    const messages = [system, tools, ...view, ...turnSoFar];
    const prompt = providerTokens(messages);
    stats.requests += 1;
    stats.maxPrompt = Math.max(stats.maxPrompt, prompt);
    if (prompt > window) stats.overWindow.push({ turn: stats.turns + 1, prompt });
    // The host shortens the reply budget when the prompt nears the window.
    if (prompt + maxTokens > window) stats.replyCut.push({ turn: stats.turns + 1, prompt, replyBudget: Math.max(0, window - prompt) });
    return prompt;
  }

  return {
    stats,
    history,
    /** What the plugin logged through the host's logger: `[level, message]`. */
    logs: fake.logs,
    /**
     * One turn: `text` from the user, then a tool call for each of `toolResultTokens`, then a reply.
     * Returns what the model saw (the view) and the turn's messages.
     */
    async turn(sessionKey, text, { toolResultTokens = [], replyChars = 400 } = {}) {
      const engine = await fake.resolveEngine("lossless-wasm");
      try {
        if (history.length) await engine.bootstrap({ sessionId: "sim", sessionKey, sessionFile: sessionKey });
        await preflight(engine, sessionKey, text);
        const budget1 = Math.max(1, hostThreshold(window) - systemTokens - Math.ceil(text.length / 4));
        const first = await engine.assemble({
          sessionId: "sim", sessionKey, messages: [...history], tokenBudget: budget1, prompt: text,
          runtimeSettings: { limits: { promptTokenBudget: budget1, maxOutputTokens: maxTokens } },
        });
        const second = await engine.assemble({
          sessionId: "sim", sessionKey, messages: first.messages, tokenBudget: window - 40, prompt: text,
          runtimeSettings: { limits: { promptTokenBudget: window, maxOutputTokens: maxTokens } },
        });
        const view = second.messages;
        stats.views.push(view);
        const turn = [{ role: "user", content: text, timestamp: clock++ }];
        for (const [i, size] of toolResultTokens.entries()) {
          const prompt = request(view, turn);
          const id = `call-${stats.turns}-${i}`;
          turn.push({
            role: "assistant", content: [{ type: "toolCall", id, name: "read", arguments: { path: `src/file_${stats.turns}_${i}.rs` } }],
            usage: { input: prompt, output: 20, cacheRead: 0, cacheWrite: 0 }, stopReason: "toolUse", timestamp: clock++,
          });
          turn.push({ role: "toolResult", toolCallId: id, toolName: "read", content: [{ type: "text", text: `file ${stats.turns}.${i}: ${"x".repeat(size * 4)}` }], isError: false, timestamp: clock++ });
        }
        const prompt = request(view, turn);
        const reply = `Reply to turn ${stats.turns + 1}: ${"the work goes on. ".repeat(Math.ceil(replyChars / 18))}`.slice(0, replyChars);
        const output = Math.ceil(reply.length / 4);
        turn.push({ role: "assistant", content: [{ type: "text", text: reply }], usage: { input: prompt, output, cacheRead: 0, cacheWrite: 0 }, stopReason: "stop", timestamp: clock++ });
        last = { prompt, output };
        stats.turns += 1;
        await engine.commitTurn({
          sessionId: "sim", sessionKey, advancementKey: `sim-${stats.turns}`, messages: turn,
          admission: { entryId: `u${stats.turns}` }, terminal: { entryId: `a${stats.turns}` },
          runtimeContext: { provider: "sim", modelId: "sim", modelContextWindow: window, tokenBudget: window },
        });
        await engine.maintain({ sessionId: "sim", sessionKey, sessionFile: sessionKey, runtimeContext: { llm, modelContextWindow: window, tokenBudget: window } });
        history.push(...turn);
        return { view, turn };
      } finally {
        await engine.dispose?.();
      }
    },
  };
}
