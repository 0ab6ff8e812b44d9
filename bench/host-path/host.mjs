// What the host-path benchmark's processes share: the host's history (deterministic), a minimal
// OpenClaw host that loads the built plugin, an instant summarizer, and the measures.
import { transcript } from "./messages.mjs";

/**
 * The host's history of `size` messages, and the messages that later turns will add. Each message
 * goes through JSON once, as OpenClaw's do (it reads its transcript with JSON.parse): the
 * generator builds strings by concatenation, and the plugin's first JSON.stringify of such a
 * string makes V8 flatten it into a new copy — tens of MiB at 100K messages that the plugin's
 * memory would be charged for, and that a real host's flat strings never cost.
 */
export function hostHistory(shape, size, extra) {
  const source = transcript(shape, 7);
  const asHostHas = (messages) => messages.map((m) => JSON.parse(JSON.stringify(m)));
  const history = [];
  while (history.length < size) history.push(...asHostHas(source.turn()));
  history.length = size;
  const more = [];
  while (more.length < extra) more.push(...asHostHas(source.turn()));
  return { history, more };
}

/** The built package under test. */
export const PKG = process.env.LOSSLESS_WASM_PKG ? new URL(`file://${process.env.LOSSLESS_WASM_PKG.replace(/\/?$/, "/")}`) : new URL("../../dist/pkg/", import.meta.url);

/** The plugin's engine factory, registered as OpenClaw registers it. LOSSLESS_WASM_PKG points
 *  at another built package (for before/after comparisons); LOSSLESS_WASM_CONFIG adds plugin
 *  config keys (JSON, e.g. '{"toolOutputStubs": false}'). */
export async function loadPlugin(dbPath, storage) {
  const plugin = (await import(new URL("shim/index.js", PKG))).default;
  let factory;
  plugin.register({
    id: "lossless-wasm",
    registrationMode: "full",
    pluginConfig: { dbPath, storage, ...JSON.parse(process.env.LOSSLESS_WASM_CONFIG ?? "{}") },
    logger: { debug() {}, info() {}, warn() {}, error() {} },
    runtime: { version: "2026.9.6" },
    on() {},
    registerTool() {},
    registerCommand() {},
    registerContextEngine(_id, f) {
      factory = f;
    },
  });
  return factory;
}

export const session = { sessionId: "bench-session", sessionKey: "agent:main:main" };

/** An instant summarizer: a short fixed-shape summary for any prompt. */
export const llm = { complete: async () => ({ text: "Summary: the user asked for changes; the assistant read files and made them. Decisions kept; no open questions." }) };

/**
 * Hands a finished turn to the engine as the host does (`history` already ends with `turn`;
 * `pre` is its length before): OpenClaw 2026.7 calls `afterTurn` with its whole history, 2026.9
 * `commitTurn` with the turn's messages and an idempotency key.
 */
export function endTurn(engine, mode, history, turn, pre) {
  if (mode === "commitTurn") {
    return engine.commitTurn({ ...session, advancementKey: `turn-${pre}`, messages: turn, admission: { entryId: `a${pre}` }, terminal: { entryId: `t${pre}` } });
  }
  if (mode !== "afterTurn") throw new Error(`unknown host call ${JSON.stringify(mode)} (afterTurn or commitTurn)`);
  return engine.afterTurn({ ...session, messages: history, prePromptMessageCount: pre });
}

/** The assemble call of a turn, as OpenClaw makes it (128K budget). */
export const assembleParams = (history) => ({ ...session, messages: history, tokenBudget: 128_000, prompt: "next task", runtimeSettings: { limits: { maxOutputTokens: 8192 } } });

/** CPU time of this process so far, in ms. */
export function cpu() {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

export const quantile = (xs, q) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))] : null);
