// Soak driver: realistic agent traffic (tool calls, large tool results) through the built plugin
// and the fake host, with a summarizer that fails the way real providers do. Used by the short
// soak test (soak.test.mjs) and the long run (scripts/reliability.sh -> soak-run.mjs).
// Reports what a user would check: lost or duplicated messages, garbage in summaries, per-turn
// time and database bytes per message over the run, and how backoff and the breaker behaved.
import { statSync } from "node:fs";
import { join } from "node:path";
import { createFakeHost } from "./fake-host.mjs";
import { prng } from "./prng.mjs";
import { loadPlugin, query, tempDir } from "./support.mjs";

export const FAULTS = ["throw", "timeout", "empty", "longer", "html502", "echo", "stopError", "lateAfterAbort", "refusal"];

/** Text no stored summary may ever contain: each fault's output carries one of these. */
export const GARBAGE = [/<html/i, /Bad Gateway/, /I'm sorry/, /\[Truncated/, /LATE-CANARY/, /LONGER-CANARY/, /\| toolResult\]/, /stopReason/];

const BAD_GATEWAY = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.25.3</center>\r\n</body>\r\n</html>\r\n";

/** The good answer: a short summary naming how many messages the prompt held. */
export const summaryFor = (prompt) => {
  const messages = (prompt.match(/\n\[[^\]\n]*\| (user|assistant|toolResult)\]\n/g) ?? []).length;
  return `## Goal\n- keep the build green while refactoring the parser\n## Progress\n- covered ${messages || "several"} messages of tool work: files were read, tests were run, fixes applied\n## Decisions\n- keep the public API unchanged`;
};

const waitForAbort = (signal) => new Promise((resolve) => {
  if (signal?.aborted) return resolve();
  signal?.addEventListener("abort", () => resolve(), { once: true });
});

/**
 * A summarizer that fails `rate` of the time, cycling through every fault kind. `authOutage`
 * (a predicate on the call number) makes calls fail with 401 to exercise the breaker.
 */
export function faultyLlm({ seed = 1, rate = 0.2, authOutage = () => false, answer = summaryFor } = {}) {
  const random = prng(seed);
  const stats = { calls: 0, good: 0, faults: Object.fromEntries(FAULTS.map((f) => [f, 0])), auth: 0, hung: 0, hungAborted: 0, signalMissing: 0 };
  let next = 0;
  const complete = async ({ messages, signal }) => {
    stats.calls++;
    if (!signal) stats.signalMissing++;
    const prompt = messages?.[0]?.content ?? "";
    if (authOutage()) {
      stats.auth++;
      throw Object.assign(new Error("401 Unauthorized: invalid api key"), { status: 401 });
    }
    if (random() >= rate) {
      stats.good++;
      return { text: answer(prompt), stopReason: "stop", provider: "fake", model: "soak-summarizer" };
    }
    const fault = FAULTS[next++ % FAULTS.length];
    stats.faults[fault]++;
    switch (fault) {
      case "throw": throw Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
      case "timeout":
      case "lateAfterAbort": {
        stats.hung++;
        await waitForAbort(signal);
        stats.hungAborted++;
        if (fault === "timeout") throw Object.assign(new Error("This operation was aborted"), { name: "AbortError" });
        return { text: `${summaryFor(prompt)}\n- LATE-CANARY`, stopReason: "stop", model: "soak-summarizer" };
      }
      case "empty": return { text: "", stopReason: "stop" };
      case "longer": return { text: "LONGER-CANARY lorem ipsum dolor sit amet ".repeat(Math.ceil(prompt.length / 12)), stopReason: "length" };
      case "html502": return { text: BAD_GATEWAY, stopReason: "stop" };
      case "echo":
        // A leaf prompt's transcript sent back; on another prompt (a merge) this sends most of
        // the prompt back, which is judged by the other checks (the template lines go, the rest
        // is not shorter than its source).
        if (prompt.includes("\n<messages>\n")) stats.leafEchoes = (stats.leafEchoes ?? 0) + 1;
        return { text: prompt.slice(prompt.lastIndexOf("<messages>\n") + 11, -12), stopReason: "stop" };
      case "stopError": return { text: "", stopReason: "error", errorMessage: "stopReason error: upstream 529 overloaded" };
      case "refusal": return { text: "I'm sorry, but I can't help with summarizing this conversation.", stopReason: "stop" };
      default: throw new Error(`unknown fault ${fault}`);
    }
  };
  return { complete, stats };
}

/** One turn of agent traffic: a request, tool calls with large results, an answer. */
export function agentTurn(n, random, clock) {
  const t = clock();
  const calls = 1 + Math.floor(random() * 3);
  const turn = [{ role: "user", content: `msg-${n}-u: please look at module ${n % 97} and fix the failing test ${n}`, timestamp: t }];
  for (let c = 0; c < calls; c++) {
    const id = `call_${n}_${c}`;
    const size = random() < 0.05 ? 20_000 : 500 + Math.floor(random() * 3_500);
    turn.push({
      role: "assistant", api: "openai-completions", provider: "mock", model: "m", stopReason: "toolUse", timestamp: t + 1 + c * 2,
      usage: { input: 1, output: 1 },
      content: [{ type: "toolCall", id, name: c % 2 ? "exec" : "read", arguments: c % 2 ? { command: `cargo test -p mod${n % 97}` } : { path: `src/mod${n % 97}.rs` } }],
    });
    const line = `msg-${n}-r${c} line of output from the tool, with some varied text ${(n * 7919 + c) % 100_003}\n`;
    turn.push({ role: "toolResult", toolCallId: id, toolName: c % 2 ? "exec" : "read", isError: false, timestamp: t + 2 + c * 2, content: [{ type: "text", text: line.repeat(Math.ceil(size / line.length)) }] });
  }
  turn.push({ role: "assistant", api: "openai-completions", provider: "mock", model: "m", stopReason: "stop", usage: { input: 1, output: 1 }, timestamp: t + 2 + calls * 2, content: [{ type: "text", text: `msg-${n}-a: fixed module ${n % 97}; the test passes now.` }] });
  return turn;
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length - 1) * p))];

function dbBytes(dbPath) {
  const size = (p) => { try { return statSync(p).size; } catch { return 0; } };
  // node:sqlite's WAL, or sql.js's journal (node/journal-file.js): both hold writes not yet in the file.
  return size(dbPath) + size(`${dbPath}-wal`) + size(`${dbPath}.lwjournal`);
}

/**
 * Runs `turns` turns and returns the figures. `window` turns per row of the per-window table.
 * Config defaults make compaction frequent (6K budget) and faults cheap (1 s timeout, 1 s backoff).
 */
export async function runSoak({ turns, storage, seed = 7, rate = 0.2, window = 1_000, budget = 6_000, config = {}, authOutageTurns = [0, 0], log = () => {}, answer = summaryFor }) {
  const plugin = await loadPlugin();
  const dir = tempDir(`soak-${storage.replace(":", "")}`);
  const dbPath = join(dir, "db.sqlite");
  let turn = 0;
  const llm = faultyLlm({ seed, rate, authOutage: () => turn >= authOutageTurns[0] && turn < authOutageTurns[1], answer });
  const pluginConfig = { dbPath, storage, summarizer: "host", summaryTimeoutMs: 1_000, backoffBaseMs: 1_000, backoffMaxMs: 4_000, freshTailCount: 8, leafChunkTokens: 8_000, ...config };
  const h = createFakeHost({ pluginConfig, stateDir: dir, llm });
  h.load(plugin);
  const random = prng(seed + 1);
  let ms = 1_800_000_000_000;
  const clock = () => (ms += 10);
  const history = [];
  const windows = [];
  let times = [];
  const maintainReasons = { compacted: 0, failed: 0, backingOff: 0, breakerOpen: 0, other: 0 };
  // Backoff and the breaker run on the engine's clock (Date.now in the shim). Each turn advances
  // it by one virtual second, so "1 s base, 4 s cap" means "1 turn, 4 turns" whatever the
  // machine's speed, and the breaker's probe after its cooldown happens within the run.
  const realNow = Date.now;
  Date.now = () => realNow() + turn * 1_000;
  const started = realNow();
  try {
  for (turn = 0; turn < turns; turn++) {
    const messages = agentTurn(turn, random, clock);
    const t0 = performance.now();
    const { maintained } = await h.runTurn("lossless-wasm", { sessionId: "soak", sessionKey: "agent:main:soak", history, turn: messages, tokenBudget: budget, advancementKey: `t${turn}` });
    times.push(performance.now() - t0);
    history.push(...messages);
    const reason = maintained?.reason ?? "";
    // While the summarizer backs off (or its breaker is open) a maintain still writes extractive
    // fallbacks, so it may have changed the context and say why the summarizer was not asked.
    if (maintained?.changed && /breaker/.test(reason)) maintainReasons.breakerOpen++;
    else if (maintained?.changed && /backing off/.test(reason)) maintainReasons.backingOff++;
    if (maintained?.changed) {
      maintainReasons.compacted++;
      if (turn >= authOutageTurns[1] && maintainReasons.firstCompactedAfterOutage === undefined) maintainReasons.firstCompactedAfterOutage = turn;
    } else if (/breaker/.test(reason)) maintainReasons.breakerOpen++;
    else if (/compaction failed/.test(reason)) maintainReasons.failed++;
    else if (/backing off/.test(reason)) maintainReasons.backingOff++;
    else maintainReasons.other++;
    if ((turn + 1) % window === 0 || turn + 1 === turns) {
      const sorted = [...times].sort((a, b) => a - b);
      const row = { turns: turn + 1, messages: history.length, p50Ms: +percentile(sorted, 0.5).toFixed(2), p95Ms: +percentile(sorted, 0.95).toFixed(2), dbBytesPerMessage: Math.round(dbBytes(dbPath) / history.length) };
      windows.push(row);
      log(row);
      times = [];
    }
  }
  } finally {
    Date.now = realNow;
  }
  const figures = await inspectSoak(dbPath, history);
  return { dbPath, storage, turns, seconds: (realNow() - started) / 1000, llm: llm.stats, maintainReasons, windows, ...figures, logs: h.logs };
}

/** Everything a soak asserts, read back from the database. */
export async function inspectSoak(dbPath, sent) {
  const one = async (sql) => (await query(dbPath, sql))[0][0];
  const reachable = `WITH RECURSIVE live(id) AS (
      SELECT summary_id FROM context_items WHERE summary_id IS NOT NULL
      UNION SELECT s.source_summary_id FROM summary_sources s JOIN live ON s.condensed_summary_id = live.id)`;
  const summaries = await query(dbPath, "SELECT id, content FROM summaries");
  return {
    sentMessages: sent.length,
    storedMessages: await one("SELECT COUNT(*) FROM messages"),
    distinctMessages: await one("SELECT COUNT(DISTINCT identity_hash) FROM messages"),
    reachableMessages: await one(`${reachable} SELECT COUNT(*) FROM messages m WHERE m.id IN (SELECT message_id FROM context_items WHERE message_id IS NOT NULL)
      OR m.id IN (SELECT sm.message_id FROM summary_messages sm JOIN live ON sm.summary_id = live.id)`),
    summaries: summaries.length,
    fallbackSummaries: (await query(dbPath, "SELECT COUNT(*) FROM summaries WHERE level = 'fallback'"))[0][0],
    garbageSummaries: summaries.filter(([, text]) => GARBAGE.some((re) => re.test(text))).map(([id]) => id),
    halfApplied: await one(`SELECT
      (SELECT COUNT(*) FROM summaries s WHERE s.kind = 'leaf' AND NOT EXISTS (SELECT 1 FROM summary_messages WHERE summary_id = s.id))
    + (SELECT COUNT(*) FROM summaries s WHERE s.kind = 'condensed' AND NOT EXISTS (SELECT 1 FROM summary_sources WHERE condensed_summary_id = s.id))
    + (SELECT COUNT(*) FROM context_items c WHERE c.message_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM messages WHERE id = c.message_id))
    + (SELECT COUNT(*) FROM context_items c WHERE c.summary_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM summaries WHERE id = c.summary_id))`),
    failedEvents: await one("SELECT COUNT(*) FROM compaction_events WHERE outcome = 'failed'"),
    failureReasons: (await query(dbPath, "SELECT reason FROM compaction_events WHERE outcome = 'failed'")).map(([r]) => r),
    integrity: await one("PRAGMA integrity_check"),
  };
}
