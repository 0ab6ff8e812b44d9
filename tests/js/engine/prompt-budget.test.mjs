// Prompt accounting at scale, with the default config, in a simulated OpenClaw agent loop
// (host-simulator.mjs): the view leaves room for the host's system prompt, tool schemas, the
// prompt and the reply; forced compaction always makes progress; summaries keep up after a
// failure; with every summary failing, turns are still answered and nothing is lost.
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { createSimulatedHost } from "../host-simulator.mjs";
import { loadPlugin, query, tempDir } from "../support.mjs";

const plugin = await loadPlugin();
const SUMMARY_TAG = "<lossless-summary";
const OMISSION = /earlier messages of this conversation are stored/;

/** Deterministic pseudo-random numbers (a fixed LCG), so every run sees the same traffic. */
function random(seed) {
  let x = seed >>> 0;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x / 2 ** 32;
  };
}

function summarizer({ failOn = () => false } = {}) {
  const calls = [];
  return {
    calls,
    complete: async (request) => {
      calls.push(request);
      const n = calls.length;
      if (failOn(n)) return { text: "", stopReason: "error", errorMessage: "HTTP 500" };
      return { text: `## Goal\n- keep going (summary ${n})\n## Progress\n- summarized ${request.messages[0].content.length} characters`, model: "sim-summarizer" };
    },
  };
}

function simulate(name, options) {
  const dir = tempDir(name);
  const dbPath = join(dir, "db.sqlite");
  const sim = createSimulatedHost({ plugin, pluginConfig: { dbPath }, stateDir: dir, ...options });
  return { sim, dbPath };
}

const viewText = (view) => view.map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content))).join("\n");

function assertEveryTurnFit(sim) {
  const { stats } = sim;
  assert.deepEqual(stats.overWindow, [], "a request exceeded the window");
  assert.deepEqual(stats.replyCut.slice(0, 5), [], `${stats.replyCut.length} requests left less than the reply budget`);
  assert.deepEqual(stats.forcedFailed.slice(0, 5), [], `${stats.forcedFailed.length} forced compactions failed the turn`);
}

async function assertStoredOnce(dbPath, sim) {
  const [[count, distinct]] = await query(dbPath, "SELECT COUNT(*), COUNT(DISTINCT raw_json) FROM messages");
  assert.equal(count, sim.history.length, "every message the host holds is stored");
  assert.equal(distinct, sim.history.length, "and stored once");
}

test("128K window, 10.8K-token system prompt, 2K-8K tool results, 300 turns: every prompt fits with its reply budget", { timeout: 600_000 }, async () => {
  const llm = summarizer();
  const { sim, dbPath } = simulate("scale", { window: 128_000, maxTokens: 16_000, systemTokens: 10_800, toolTokens: 3_000, llm });
  const rnd = random(128);
  for (let i = 0; i < 300; i++) {
    const tools = Array.from({ length: 1 + Math.floor(rnd() * 2) }, () => 2_000 + Math.floor(rnd() * 6_000));
    await sim.turn("agent:main:scale", `Turn ${i}: ${"please look at the next file ".repeat(5 + Math.floor(rnd() * 40))}`, { toolResultTokens: tools });
  }
  assertEveryTurnFit(sim);
  await assertStoredOnce(dbPath, sim);
  assert.ok(llm.calls.length > 0, "summaries were written");
  assert.ok(llm.calls.length <= 300, `summaries cost at most one request per turn (${llm.calls.length} in 300 turns)`);
  assert.equal(sim.stats.forced, 0, "with room in the window the host never had to force a compaction");
  const late = sim.stats.views.slice(100);
  const withSummary = late.filter((v) => viewText(v).includes(SUMMARY_TAG)).length;
  assert.equal(withSummary, late.length, `only ${withSummary} of the last ${late.length} views carry summaries (a sliding window)`);
  assert.ok(sim.stats.maxPrompt > 64_000, `the window was used (largest prompt ${sim.stats.maxPrompt})`);
});

test("8K window, fast tool loops, one failed summary: the next attempt comes within a few turns and summaries keep up", { timeout: 600_000 }, async () => {
  let failedAtCall = null;
  const llm = summarizer({ failOn: (n) => n === 3 && (failedAtCall = n) });
  const { sim, dbPath } = simulate("recover", { window: 8_000, maxTokens: 512, systemTokens: 1_500, toolTokens: 500, llm });
  const rnd = random(8);
  const callsBefore = [];
  for (let i = 0; i < 300; i++) {
    callsBefore.push(llm.calls.length);
    const tools = rnd() < 0.5 ? [200 + Math.floor(rnd() * 400)] : [];
    await sim.turn("agent:main:recover", `Note ${i}: ${"the keeper logged the tide ".repeat(4 + Math.floor(rnd() * 80))}`, { toolResultTokens: tools, replyChars: 300 });
  }
  assertEveryTurnFit(sim);
  await assertStoredOnce(dbPath, sim);
  assert.equal(failedAtCall, 3, "the scripted failure happened");
  const failedTurn = callsBefore.findIndex((c) => c >= 3);
  const retryTurn = callsBefore.findIndex((c) => c >= 4);
  assert.ok(retryTurn - failedTurn <= 3, `after the failure in turn ~${failedTurn} the next attempt came in turn ${retryTurn}`);
  const views = sim.stats.views.slice(30);
  const withSummary = views.filter((v) => viewText(v).includes(SUMMARY_TAG)).length;
  assert.ok(withSummary >= views.length * 0.95, `only ${withSummary} of ${views.length} views carry a summary: a sliding window`);
  const [[events]] = await query(dbPath, "SELECT COUNT(*) FROM compaction_events WHERE outcome = 'compacted'");
  assert.ok(events >= 20, `summaries kept being written (${events})`);
  assert.ok(llm.calls.length <= 450, `summaries cost about one request per turn, not a sweep each (${llm.calls.length} in 300 turns)`);
});

test("8K window, every summary failing: every turn answered, the view says what it left out, nothing lost", { timeout: 600_000 }, async () => {
  const llm = summarizer({ failOn: () => true });
  const { sim, dbPath } = simulate("failing", { window: 8_000, maxTokens: 1_024, systemTokens: 3_000, toolTokens: 0, llm });
  for (let i = 0; i < 40; i++) {
    await sim.turn("agent:main:failing", `Note ${i}: ${"n".repeat(2_400)}`, { replyChars: 200 });
  }
  assertEveryTurnFit(sim);
  await assertStoredOnce(dbPath, sim);
  assert.ok(llm.calls.length >= 1, "summaries were attempted");
  assert.deepEqual(await query(dbPath, "SELECT COUNT(*) FROM summaries"), [[0]]);
  const last = viewText(sim.stats.views.at(-1));
  assert.match(last, OMISSION);
  assert.ok(!last.includes(SUMMARY_TAG) && !/truncated/i.test(last), "no summary or truncated text in the view");
  const [[failures]] = await query(dbPath, "SELECT COUNT(*) FROM compaction_events WHERE outcome = 'failed' AND reason LIKE '%original messages preserved'");
  assert.ok(failures >= 1);
  assert.ok(failures <= 40 / 2, `a failing provider is not asked on every turn (${failures} failures in 40 turns)`);
});

test("16K window, a host prompt of 60 % of it, 5K-token tool results: every view holds the previous turn whole or as excerpts, and the log says so once", { timeout: 600_000 }, async () => {
  const llm = summarizer();
  const { sim, dbPath } = simulate("fixed-60", { window: 16_000, maxTokens: 1_024, systemTokens: 9_000, toolTokens: 600, llm });
  let previous = null;
  for (let i = 0; i < 12; i++) {
    const { view, turn } = await sim.turn("agent:main:fixed", `Task ${i}: change module ${i}`, { toolResultTokens: [5_000], replyChars: 300 });
    if (previous) {
      assert.ok(view.length > 0, `turn ${i + 1}: empty view`);
      const text = viewText(view);
      for (const m of previous) {
        if (m.role === "toolResult") {
          assert.ok(view.some((v) => v.toolCallId === m.toolCallId), `turn ${i + 1}: the previous turn's tool output is in the view`);
        } else {
          const body = typeof m.content === "string" ? m.content : m.content.find((b) => b.type === "text")?.text;
          if (body) assert.ok(text.includes(body.slice(0, 60)), `turn ${i + 1}: the previous turn's ${m.role} text is in the view`);
        }
      }
    }
    previous = turn;
  }
  await assertStoredOnce(dbPath, sim);
  assert.ok(sim.stats.views.some((v) => viewText(v).includes("head and tail shown above")), "big outputs of the active task became excerpts");
  const notices = sim.logs.filter(([level, m]) => level === "warn" && /do not fit the view budget/.test(m));
  assert.ok(notices.length <= 1, `logged once per conversation at most (${notices.length})`);
});
