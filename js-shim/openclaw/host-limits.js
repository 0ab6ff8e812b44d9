// What OpenClaw leaves beside the engine's view in a prompt, as the engine's accounting needs it
// (docs/prompt-accounting.md): the reply budget the host requests and, where they are not
// 2026.9's, the reserve below the window at which its preflight check asks for compaction and the
// padding of its own prompt estimate when it decides how much room the reply has.
//
// 2026.9 reports its reserve, min(20000, window/4), as `runtimeSettings.limits.maxOutputTokens`,
// and the engine's accounting is written around that host. 2026.7 differs
// (docs/openclaw-host-observed.md §11.7, §12.4):
// - its `limits.maxOutputTokens` is half of a small window (4000 at 8000), not a reply budget;
//   the reply budget it requests is the model's `maxTokens` from its config;
// - its preflight check (the gateway's reply path; the `agent` path has none) and memory flush
//   start at `window − reserveTokensFloor − memoryFlush.softThresholdTokens` (20000 + 4000 by
//   default): below a 24K window it makes no such check at all;
// - its OpenAI-compatible transport cuts the reply budget to `window − estimate − 1`, the
//   estimate being the request's characters (tool schemas included) / 4 × 1.25 (2026.9: 1.2).
// Without these the engine kept 2026.9's reserve at 8K, and through a 2026.7.1 gateway (whose
// system prompt is ~270 tokens longer than `agent --local`'s) no summary fitted beside the
// current and previous turn.

const finite = (n) => (typeof n === "number" && Number.isFinite(n) && n >= 0 ? n : undefined);

/** OpenClaw 2026.7's defaults for the preflight threshold's two parts (memory-core's flush plan). */
export const OPENCLAW_7_RESERVE_FLOOR = 20_000;
export const OPENCLAW_7_SOFT_THRESHOLD = 4_000;
/** OpenClaw 2026.7's padding of its prompt estimate (`OPENAI_COMPLETIONS_INPUT_TOKEN_SAFETY_MARGIN`). */
export const OPENCLAW_7_ESTIMATE_SAFETY = 1.25;

/** Whether `version` is an OpenClaw release before 2026.8 (2026.7.x and older). */
export const isOpenclaw7 = (version) => /^2026\.[0-7]\./.test(version ?? "");

/**
 * The configured `maxTokens` of the model a call runs on: `runtimeSettings.model` names the
 * provider and model where the host says; otherwise the model id (`params.model`) is looked up
 * in every provider, and used only when all that list it agree. Undefined when the config does
 * not list the model (a provider's built-in catalog): the caller then keeps its own rule.
 */
export function configuredMaxTokens(hostConfig, params) {
  const providers = hostConfig?.models?.providers;
  if (!providers || typeof providers !== "object") return undefined;
  const wanted = params?.runtimeSettings?.model;
  const id =
    (typeof wanted?.resolved === "string" && wanted.resolved) || (typeof params?.model === "string" && params.model);
  if (!id) return undefined;
  const of = (provider) =>
    (Array.isArray(provider?.models) ? provider.models : [])
      .filter((m) => m?.id === id)
      .map((m) => finite(m.maxTokens))
      .filter((n) => n !== undefined && n > 0);
  const named = typeof wanted?.provider === "string" ? providers[wanted.provider] : undefined;
  const found = named ? of(named) : Object.values(providers).flatMap(of);
  return found.length > 0 && found.every((n) => n === found[0]) ? found[0] : undefined;
}

/** 2026.7's reserve below the window for its preflight check and memory flush. */
export function preflightReserve7(hostConfig) {
  const compaction = hostConfig?.agents?.defaults?.compaction;
  const floor = finite(compaction?.reserveTokensFloor) ?? OPENCLAW_7_RESERVE_FLOOR;
  const soft = finite(compaction?.memoryFlush?.softThresholdTokens) ?? OPENCLAW_7_SOFT_THRESHOLD;
  return Math.floor(floor) + Math.floor(soft);
}

/**
 * The limits for one host call `p`: `{maxOutputTokens, preflightReserveTokens,
 * hostEstimateSafety}`, each undefined where the engine should use its defaults.
 * @param {object} options
 * @param {string} [options.hostVersion] `api.runtime.version`
 * @param {() => object|undefined} [options.hostConfig] the host's current config (OpenClaw's
 *        `openclaw.json`, as `api.runtime.config.current()` or `api.config` give it)
 */
export function openclawLimits({ hostVersion, hostConfig } = {}) {
  if (!isOpenclaw7(hostVersion)) {
    return (p) => ({
      maxOutputTokens: finite(p?.runtimeSettings?.limits?.maxOutputTokens),
      preflightReserveTokens: undefined,
      hostEstimateSafety: undefined,
    });
  }
  return (p) => {
    let config;
    try {
      config = hostConfig?.();
    } catch {
      config = undefined;
    }
    return {
      maxOutputTokens: configuredMaxTokens(config, p),
      preflightReserveTokens: preflightReserve7(config),
      hostEstimateSafety: OPENCLAW_7_ESTIMATE_SAFETY,
    };
  };
}
