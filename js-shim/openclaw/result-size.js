// How large a recall tool's result is where the host cuts it, and the pager every tool uses to
// stay under that limit without losing anything.
//
// OpenClaw (2026.7.1 and 2026.9.6, `installToolResultContextGuard`) cuts every tool result whose
// estimate passes the model's context window in tokens, counting each character of a result's
// text twice (2026.9.6 counts CJK and other scripts higher still): about 4,096 characters at an
// 8K window. On 2026.9.6 Tool Search is on by default and a plugin tool is called through
// `tool_call`, whose result text is the JSON of `{tool, result}` (our text and `details`
// included, indented): cut, it is broken JSON. So every result is measured as that JSON, with
// an upper bound of the host's weights, and a longer answer is paged (the result says how to get
// the rest) instead of cut. The limit is config `toolResultMaxChars` (core/config.rs).

/** The default limit, in characters as {@link hostChars} counts them (core/config.rs). */
export const TOOL_RESULT_DEFAULT_MAX_CHARS = 3_500;

/** Common CJK, Hangul and full-width forms: two characters each (the host counts them as 4/2). */
const WIDE = [
  [0x3000, 0x319f],
  [0x4e00, 0x9fa5],
  [0xac00, 0xd7af],
  [0xff01, 0xff60],
];

/**
 * A text's size in characters as the host's tool-result guard counts them, never less: plain
 * text (Latin, Greek, Cyrillic, general punctuation and symbols) 1 each, the middle dot and
 * common CJK 2, spacing modifiers 4, other characters of the Basic Multilingual Plane 6, and
 * characters beyond it 8.
 */
export function hostChars(text) {
  let n = 0;
  for (const ch of text) {
    const cp = ch.codePointAt(0);
    if (cp < 0x80) n += 1;
    else if (cp === 0xb7) n += 2;
    else if (cp < 0x2c7) n += 1;
    else if (cp < 0x324) n += 4;
    else if (cp < 0x1100 || (cp >= 0x2000 && cp < 0x2c00)) n += 1;
    else if (cp > 0xffff) n += 8;
    else n += WIDE.some(([lo, hi]) => cp >= lo && cp <= hi) ? 2 : 6;
  }
  return n;
}

/** The text Tool Search's `tool_call` gives the model for `result` of tool `name`. */
export function toolCallText(name, result) {
  return JSON.stringify({ tool: { id: `openclaw:lossless-wasm:${name}`, name, source: "openclaw" }, result }, null, 2);
}

/** Whether `result` of tool `name` fits `limit`, reached directly or through `tool_call`. */
export function fitsLimit(name, result, limit) {
  return hostChars(toolCallText(name, result)) <= limit;
}

/**
 * The tool-result limit: config `toolResultMaxChars` when set (validated by the engine; see
 * core/config.rs); else the default, lowered for a session whose model window the host reported
 * smaller than 8K: the host lets `max(1024, window)` through at two per character, so half of
 * that, less 5 % (a reported window at least as large as the host's budget only ever keeps the
 * default).
 */
export function resultLimit(configured, modelWindow) {
  if (Number.isInteger(configured) && configured > 0) return configured;
  if (!(Number.isFinite(modelWindow) && modelWindow > 0)) return TOOL_RESULT_DEFAULT_MAX_CHARS;
  return Math.min(TOOL_RESULT_DEFAULT_MAX_CHARS, Math.floor((Math.max(1024, modelWindow) / 2) * 0.95));
}

/** The largest n in [lo, hi] for which `ok(n)` holds (`ok` monotone: true up to some n), or lo - 1. */
export function largest(lo, hi, ok) {
  let best = lo - 1;
  while (lo <= hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (ok(mid)) {
      best = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return best;
}

/** The first `n` code points of `text` (an offset the engine counts the same way: Unicode scalars). */
export const codePoints = (text, n) => {
  let out = "";
  let i = 0;
  for (const ch of text) {
    if (i++ >= n) break;
    out += ch;
  }
  return out;
};

/** How many code points `text` has. */
export const codePointCount = (text) => {
  let n = 0;
  for (const _ of text) n++;
  return n;
};

/**
 * The last resort for an answer no pager could fit (a limit below the frame of one page): its
 * text cut to fit with a line saying so, and `details` reduced to `{cut: true}`, so that what
 * reaches the model is still whole JSON.
 */
export function cutToFit(name, result, limit) {
  if (fitsLimit(name, result, limit)) return result;
  const text = result.content?.[0]?.text ?? "";
  const note = "\n[cut: the rest of this answer did not fit the host's tool-result limit (config toolResultMaxChars)]";
  const shaped = (n) => ({ content: [{ type: "text", text: codePoints(text, n) + note }], details: { cut: true } });
  const n = largest(0, codePointCount(text), (k) => fitsLimit(name, shaped(k), limit));
  return shaped(Math.max(0, n));
}
