// What makes a summarizer's answer unfit to store, judged here independently of the engine's own
// rules (src/core/compaction/plausibility.rs and friends) so the tests can catch the engine
// storing one: reasoning, repetition loops, echoes of the input or of the instructions, and
// answers cut off at the output limit. Also which answer a stored summary was made from. Not a
// test file itself.

/** A reasoning block's tags, as reasoning models write them into the answer. */
export const REASONING = /<\/?(think|thinking|reasoning)\b[^>]*>/i;

const words = (text) => String(text).toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
const normalized = (text) => words(text).join(" ");

/** A short stretch (1–10 characters, with a letter or digit) written 30 or more times in a row. */
const STUTTER = /([^\n]{1,10}?)\1{29,}/u;
const SEGMENT_MIN_WORDS = 3;
const SEGMENT_MAX_REPEATS = 2;
const RUN_WORDS = 8;
const RUN_MAX_REPEATS = 3;

/**
 * Where `text` loops, or null: a sentence or line (3+ words) written 3 or more times, an 8-word
 * run written 4 or more times (a loop without line or sentence breaks), or a stutter such as
 * "1000000…". A real summary states each thing once.
 */
export function findLoop(text) {
  const stutter = STUTTER.exec(text);
  if (stutter && /[\p{L}\p{N}]/u.test(stutter[1])) return { kind: "stutter", sample: stutter[0].slice(0, 40) };
  const counts = new Map();
  for (const segment of String(text).split(/\n+|(?<=[.!?])\s+/)) {
    const key = normalized(segment);
    if (key.split(" ").length < SEGMENT_MIN_WORDS) continue;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  for (const [key, n] of counts) if (n > SEGMENT_MAX_REPEATS) return { kind: "sentence", times: n, sample: key.slice(0, 80) };
  const w = words(text);
  const runs = new Map();
  for (let i = 0; i + RUN_WORDS <= w.length; i++) {
    const key = w.slice(i, i + RUN_WORDS).join(" ");
    const n = (runs.get(key) ?? 0) + 1;
    if (n > RUN_MAX_REPEATS) return { kind: "run", times: n, sample: key };
    runs.set(key, n);
  }
  return null;
}

const SHINGLE_WORDS = 6;
const MIN_SHINGLES = 10;
/** An answer with at least this share of its 6-word runs copied from a text is an echo of it. */
export const ECHO_SHARE = 0.5;

function shingles(text) {
  const w = words(text);
  const out = [];
  for (let i = 0; i + SHINGLE_WORDS <= w.length; i++) out.push(w.slice(i, i + SHINGLE_WORDS).join(" "));
  return out;
}

/** The share of `answer`'s 6-word runs found word for word in `source`; null when it is too short to judge. */
export function copiedShare(answer, source) {
  const own = shingles(answer);
  if (own.length < MIN_SHINGLES) return null;
  const theirs = new Set(shingles(source));
  return own.filter((s) => theirs.has(s)).length / own.length;
}

const BLOCKS = ["messages", "summaries", "previous_summary"];

/** A summary prompt's parts: the data blocks it carries and the instructions around them. */
export function promptParts(prompt) {
  const data = {};
  let instructions = String(prompt);
  for (const tag of BLOCKS) {
    const m = new RegExp(`<${tag}>\\n([\\s\\S]*?)\\n</${tag}>`).exec(instructions);
    if (m) {
      data[tag] = m[1];
      instructions = instructions.replace(m[0], "");
    }
  }
  return { data, instructions };
}

/**
 * Whether `answer` echoes its prompt instead of summarizing it: mostly copied from the
 * transcript it was given (a leaf prompt's messages and the previous summary), or from the
 * instructions (the output template, the rules). Merging summaries legitimately restates them,
 * so a condensed prompt's summaries are not counted as input to echo.
 */
export function findEcho(answer, prompt) {
  const { data, instructions } = promptParts(prompt);
  if (data.messages !== undefined) {
    const share = copiedShare(answer, `${data.messages}\n${data.previous_summary ?? ""}`);
    if (share !== null && share >= ECHO_SHARE) return { kind: "input", share };
  }
  const share = copiedShare(answer, instructions);
  if (share !== null && share >= ECHO_SHARE) return { kind: "instructions", share };
  return null;
}

/** Everything wrong with one served answer (empty when it could be stored). */
export function defects(request) {
  const found = [];
  if (REASONING.test(request.content)) found.push("reasoning");
  if (findLoop(request.content)) found.push("loop");
  if (findEcho(request.content, request.prompt)) found.push("echo");
  if (request.finishReason === "length") found.push("truncated");
  return found;
}

const NARRATIVE = new Set(["## goal", "## progress", "## decisions"]);

/**
 * The bullets of a stored summary that come from the summarizer's words: Goal, Progress and
 * Decisions. Artifacts and the latest request are filled from the source messages by the engine.
 */
export function narrativeBullets(summary) {
  const out = [];
  let inNarrative = false;
  for (const line of String(summary).split("\n")) {
    if (line.startsWith("## ")) {
      inNarrative = NARRATIVE.has(line.trim().toLowerCase());
      continue;
    }
    if (inNarrative && line.startsWith("- ")) out.push(line.slice(2).replace(/…$/u, ""));
  }
  return out;
}

/**
 * Whether a stored summary was made from `answer`: every narrative bullet it has is in the
 * answer, word for word (the engine reshapes an answer into bullets, clips long ones and drops
 * repeats, but keeps the words). False for a summary with no narrative bullet.
 */
export function madeFrom(summary, answer) {
  const bullets = narrativeBullets(summary).map(normalized).filter(Boolean);
  if (!bullets.length) return false;
  const said = normalized(answer);
  return bullets.every((b) => said.includes(b));
}
