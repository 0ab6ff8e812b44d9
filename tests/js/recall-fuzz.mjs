// A deterministic generator of realistic model calls to the recall tools — the ones models
// actually send: right and wrong argument names, numbers as strings, floats, negative and huge
// limits, empty and whitespace patterns, regex and FTS syntax, quotes, SQL, CJK and emoji, ids
// with prefixes, ids of another agent, unknown ids, bad cursors, null/array/object values,
// missing arguments, absurdly long strings — and a runner that counts how each call ended.
// Shared by tests/js/openclaw/recall-fuzz.test.mjs (asserts 0 thrown) and bench/recall-fuzz.mjs (the
// before/after figures in docs/recall.md).
import { prng } from "./prng.mjs";

const PATTERNS = [
  "ZX-4471", "launch code", "", "   ", "*", ".*", "foo|bar", "^turn \\d+$", "[a-z]+", "(unclosed", "\"unbalanced", "a OR b", "NOT x",
  "x AND", "NEAR(a b)", "code*", "'; DROP TABLE messages; --", "%", "_", "静默", "部署窗口", "🚀", "kv/stg", "\\", "\u0000", "x".repeat(1_500),
  "filler", "routine work", "reply", "turn 3", "NULL", "undefined", "{\"a\":1}",
];
const IDS = ["1", 1, 2, 3, "sum_1", "sum_2", "msg_3", "s1", "#3", "m3", 0, -1, 1.5, 999_999, "999999", "", " ", null, [], {}, [1, 2], true, "12; DROP", 2 ** 53, "1e3", "NaN"];
const LIMITS = [undefined, 1, 5, 20, "20", 0, -3, 1e9, 1.7, "lots", null, Infinity, "∞", 200, 201, [], {}];
const TIMES = [undefined, "2026-11-23T09:00:00Z", "yesterday", 0, -1, 1_790_000_000_000, "1790000000000", 1e300, "", null, {}, "2026-13-45"];
const MODES = [undefined, "text", "full_text", "regex", "fts", "", 3, null];
const KINDS = [undefined, "both", "messages", "summaries", "message", "all", null];
const SCOPES = [undefined, "conversation", "agent", "all", "global", "", null, 1];
const QUESTIONS = [
  "What was the secret launch code ZX-4471?", "what did we decide?", "", "  ", null, 42, "?", "Where is kv/stg/db kept?", "部署窗口是谁负责的？",
  "What about 🚀 releases?", "q".repeat(3_000), "tell me everything about turn 3 and the filler", "launch code", ["array"], { q: 1 },
];

/** `count` calls `{tool, args, foreign}` from `seed`; `foreign` marks calls made by another agent's session. */
export function fuzzCalls(seed, count) {
  const rnd = prng(seed);
  const pick = (list) => list[Math.floor(rnd() * list.length)];
  const maybe = (p, value) => (rnd() < p ? value : undefined);
  const calls = [];
  for (let i = 0; i < count; i++) {
    const tool = pick(["lcm_grep", "lcm_grep", "lcm_describe", "lcm_expand", "lcm_expand", "lcm_ask"]);
    let args;
    switch (tool) {
      case "lcm_grep":
        args = { pattern: maybe(0.93, pick(PATTERNS)), mode: pick(MODES), kind: pick(KINDS), scope: pick(SCOPES), since: maybe(0.2, pick(TIMES)), before: maybe(0.2, pick(TIMES)), limit: pick(LIMITS) };
        if (rnd() < 0.05) args = { query: pick(PATTERNS) };
        break;
      case "lcm_describe":
        args = rnd() < 0.5 ? { summaryId: pick(IDS) } : { messageId: pick(IDS) };
        if (rnd() < 0.1) args = { summaryId: pick(IDS), messageId: pick(IDS) };
        if (rnd() < 0.05) args = { id: pick(IDS) };
        break;
      case "lcm_expand":
        args = rnd() < 0.6 ? { summaryId: pick(IDS) } : { messageId: pick(IDS) };
        Object.assign(args, { cursor: maybe(0.3, pick(["0", "10", 5, "abc", -2, "", null, 1e20])), maxTokens: maybe(0.4, pick(LIMITS)), messages: maybe(0.3, pick([true, false, "true", "no", "maybe", 1, null])) });
        break;
      default:
        args = { question: pick(QUESTIONS), pattern: maybe(0.3, pick(PATTERNS)), summaryIds: maybe(0.3, pick([[1], ["sum_2"], [999_999], "sum_1", [], Array.from({ length: 12 }, (_, k) => k + 1), [null], 3])), scope: maybe(0.3, pick(SCOPES)), since: maybe(0.15, pick(TIMES)), before: maybe(0.15, pick(TIMES)) };
    }
    if (rnd() < 0.02) args = pick([null, undefined, "pattern", [], 42]);
    calls.push({ tool, args, foreign: rnd() < 0.15 });
  }
  return calls;
}

/**
 * Runs the calls on the tools of two sessions (`mine`, and `theirs` for foreign calls) and
 * counts: `thrown` (the host would report a tool failure), `problems` (a sentence about the
 * input), `answered` (a normal result). A call to a tool a session lacks is `missing`; with
 * `fits(tool, result)`, a result it refuses (over the host's tool-result limit) is `oversized`.
 */
export async function runFuzz(calls, mine, theirs, { onThrow, fits } = {}) {
  const counts = { calls: calls.length, thrown: 0, problems: 0, answered: 0, missing: 0, oversized: 0, byTool: {} };
  for (const [n, { tool, args, foreign }] of calls.entries()) {
    const tools = foreign ? theirs : mine;
    const per = (counts.byTool[tool] ??= { calls: 0, thrown: 0 });
    if (!tools[tool]) {
      counts.missing += 1;
      continue;
    }
    per.calls += 1;
    try {
      const out = await tools[tool].execute(`fuzz-${n}`, args);
      if (typeof out?.content?.[0]?.text !== "string" || !out.content[0].text) throw new Error("a result without text");
      if (fits && !fits(tool, out)) counts.oversized += 1;
      if (out.details?.problem) counts.problems += 1;
      else counts.answered += 1;
    } catch (err) {
      counts.thrown += 1;
      per.thrown += 1;
      onThrow?.({ tool, args, foreign, err });
    }
  }
  return counts;
}

/**
 * The plugin from the package at `pkgUrl` in a fake host, with two agents' conversations
 * planted and compacted, and a stub LLM for lcm_ask. Returns both sessions' tools.
 */
export async function fuzzSessions(pkgUrl, { dir, storage = "sql.js" }) {
  const { createFakeHost } = await import("./fake-host.mjs");
  const { user, assistant } = await import("./support.mjs");
  const plugin = (await import(new URL("shim/index.js", pkgUrl))).default;
  const { join } = await import("node:path");
  const h = createFakeHost({ pluginConfig: { dbPath: join(dir, "db.sqlite"), storage, freshTailCount: 2 }, stateDir: dir });
  const factories = [];
  h.api.registerTool = (tool) => factories.push(tool);
  h.load(plugin);
  for (const [key, fact] of [["agent:main:chat", "secret launch code is ZX-4471; 部署窗口 周五 🚀 kv/stg/db"], ["agent:other:chat", "unrelated note"]]) {
    const history = [];
    for (let i = 0; i < 24; i++) {
      const turn = [user(i === 1 ? fact : `turn ${i} about routine work ${"filler ".repeat(60)}`), assistant(`ok ${i} ${"reply ".repeat(40)}`)];
      await h.runTurn("lossless-wasm", { sessionId: `${key}-s`, sessionKey: key, history: [...history], turn });
      history.push(...turn);
    }
    await h.compact("lossless-wasm", { sessionId: `${key}-s`, sessionKey: key, tokenBudget: 1500 });
  }
  h.api.runtime.llm = { complete: async ({ messages }) => ({ text: `Answer from ${messages[0].content.match(/\[m\d+\]/)?.[0] ?? "nothing"}.`, stopReason: "stop" }) };
  const tools = (ctx) => Object.fromEntries(factories.flatMap((f) => (typeof f === "function" ? f(ctx) ?? [] : [f])).map((t) => [t.name, t]));
  return {
    mine: tools({ sessionId: "agent:main:chat-s", sessionKey: "agent:main:chat" }),
    theirs: tools({ sessionId: "agent:other:chat-s", sessionKey: "agent:other:chat" }),
  };
}
