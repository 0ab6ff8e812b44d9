// What the recall tools do with the arguments a model actually sends: numbers as strings,
// floats, huge or negative limits, "true" for booleans, missing or empty fields, ids of
// another agent. Arguments are normalized where the intent is plain (a limit of 1e9 means "as
// many as allowed"); anything else becomes one sentence the model can act on, returned as an
// ordinary tool result. A thrown error would be reported by the host as a tool failure (the
// anchor's users counted over half of all their tool failures in its grep tool), and the model
// learns nothing from it. No recall logic lives here: the engine validates and clamps.

import { ToolInputError } from "../errors.js";

/**
 * An integer argument: numbers and numeric strings are truncated and clamped to [min, max]
 * (the engine clamps again to its own range); absent stays absent.
 */
export function intArg(name, value, min, max) {
  if (value === undefined || value === null || value === "") return undefined;
  const n = typeof value === "number" ? value : typeof value === "string" && value.trim() !== "" ? Number(value) : NaN;
  if (Number.isNaN(n)) throw new ToolInputError(name, `expected a number, got ${JSON.stringify(value)}`);
  if (n === Infinity) return max;
  if (n === -Infinity) return min;
  return Math.min(max, Math.max(min, Math.trunc(n)));
}

/** A boolean argument: true/false, or "true"/"false"/"yes"/"no"/1/0 as models write them. */
export function boolArg(name, value) {
  if (value === undefined || value === null || value === "") return undefined;
  if (typeof value === "boolean") return value;
  const s = String(value).trim().toLowerCase();
  if (["true", "yes", "1"].includes(s)) return true;
  if (["false", "no", "0"].includes(s)) return false;
  throw new ToolInputError(name, `expected true or false, got ${JSON.stringify(value)}`);
}

/** A string argument: strings pass, numbers become strings, absent stays absent. */
export function stringArg(name, value) {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string") return value;
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  throw new ToolInputError(name, `expected a string, got ${JSON.stringify(value)?.slice(0, 80)}`);
}

/** `params` without its undefined fields (the engine reads null as "given but empty"). */
export function defined(params) {
  return Object.fromEntries(Object.entries(params).filter(([, v]) => v !== undefined));
}

const cut = (text, n) => (text.length > n ? `${text.slice(0, n)}…` : text);

/**
 * The tool result for a call that could not run: one sentence naming the argument when the
 * input was at fault. `details` has no `status`/`ok`/`error` key: hosts grade those as failures.
 */
export function problemResult(tool, err) {
  const message = String(err?.message ?? err)
    .replace(/\s+/g, " ")
    .trim();
  const input = message.match(/^invalid input at `([^`]+)`: (.*)$/);
  if (input) {
    const argument = input[1].endsWith(" params") ? undefined : input[1];
    const reason = cut(input[2].replace(/\.$/, ""), 300);
    const text = argument
      ? `${tool} did not run: ${reason} (argument \`${argument}\`). Fix that argument and call ${tool} again.`
      : `${tool} did not run: ${reason}. Fix the arguments and call ${tool} again.`;
    return { content: [{ type: "text", text }], details: { problem: "invalid-argument", argument: argument ?? null } };
  }
  const text = `${tool} could not run (${cut(message, 300)}). Call it again; if this repeats, use another recall tool.`;
  return { content: [{ type: "text", text }], details: { problem: "internal", argument: null } };
}

/** Runs a tool body, turning any failure into {@link problemResult}. */
export async function answering(tool, body) {
  try {
    return await body();
  } catch (err) {
    return problemResult(tool, err);
  }
}
