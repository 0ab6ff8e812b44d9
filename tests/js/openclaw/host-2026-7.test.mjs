// The plugin under OpenClaw 2026.7.1's call order and parameter shapes, as observed in the real
// host (docs/openclaw-host-observed.md §11): no commitTurn, no runtimeContext in bootstrap or
// assemble, afterTurn twice per turn (once in the tool-loop hook before the model call, once at
// the end) with the agent's message array and prePromptMessageCount, maintain with the LLM, and
// compact() with a JSONL sessionFile, an optional sessionKey and no LLM.
import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, test } from "node:test";
import { assistant, loadPlugin, query, STORAGES, tempDir, user } from "../support.mjs";

const plugin = await loadPlugin();
const KEY = "agent:main:compat";

/** A 2026.7.1-shaped host around the plugin: `turn()` runs one logical turn, `compact()` the CLI budget compaction. */
function host71(storage, { llm, runtimeLlm, overhead, reserve = 1000 } = {}) {
  const dir = tempDir("host71");
  const dbPath = join(dir, "db.sqlite");
  let factory;
  const warnings = [];
  const api = {
    id: "lossless-wasm",
    registrationMode: "full",
    pluginConfig: { dbPath, storage, freshTailCount: 2, leafChunkTokens: 1000, leafBudgetHeadroomFactor: 0, leafSkipReductionThreshold: 0 },
    logger: { info() {}, debug() {}, warn: (m) => warnings.push(m), error: (m) => warnings.push(m) },
    runtime: { version: "2026.7.1", state: { resolveStateDir: () => dir }, ...(runtimeLlm ? { llm: runtimeLlm } : {}) },
    on() {},
    registerContextEngine: (id, f) => (factory = f),
  };
  plugin.register(api);
  const sessionId = "0868bae4-73ff-48fb-ba33-7f6a9121bb42";
  const sessionFile = join(dir, "agents", "main", "sessions", `${sessionId}.jsonl`);
  const history = []; // the host's own transcript
  // 2026.7.1 reports its compaction reserve as maxOutputTokens (4000 at an 8000 window).
  const runtimeSettings = { schemaVersion: 1, limits: { promptTokenBudget: 4000, maxOutputTokens: reserve } };
  // A provider's count of a request: the host's own overhead plus characters / 4.
  const usageFor = (messages) => {
    if (overhead == null) return {};
    const chars = messages.reduce((n, m) => n + (typeof m.content === "string" ? m.content : JSON.stringify(m.content)).length, 0);
    return { usage: { input: overhead + Math.ceil(chars / 4), output: 60, cacheRead: 0, cacheWrite: 0 } };
  };
  return {
    dbPath,
    warnings,
    async turn(text, { tokenBudget = 4000 } = {}) {
      const engine = await factory({ config: {}, agentDir: join(dir, "agent"), workspaceDir: dir });
      assert.equal(typeof engine.afterTurn, "function");
      try {
        if (history.length) {
          await engine.bootstrap({ sessionId, sessionKey: KEY, sessionFile, runtimeSettings });
          await engine.maintain({ sessionId, sessionKey: KEY, sessionFile, runtimeSettings, runtimeContext: { sessionKey: KEY, tokenBudget, llm } });
        }
        const first = await engine.assemble({ sessionId, sessionKey: KEY, messages: [...history], tokenBudget, availableTools: new Set(), model: "m", runtimeSettings, prompt: text });
        const u = user(text);
        // The tool-loop hook: afterTurn with what the agent holds (the assembled view + the
        // pending user message), then assemble again with that.
        const loop = [...first.messages, u];
        await engine.afterTurn({ sessionId, sessionKey: KEY, sessionFile, messages: loop, prePromptMessageCount: first.messages.length, tokenBudget, runtimeContext: { llm }, runtimeSettings, isHeartbeat: false });
        const second = await engine.assemble({ sessionId, sessionKey: KEY, messages: loop, tokenBudget, model: "m", runtimeSettings });
        const a = { ...assistant(`reply to ${text.slice(0, 30)} ${"words ".repeat(30)}`), ...usageFor(second.messages) };
        const final = [...loop, a];
        await engine.afterTurn({ sessionId, sessionKey: KEY, sessionFile, messages: final, prePromptMessageCount: loop.length, tokenBudget, runtimeSettings, runtimeContext: { llm }, isHeartbeat: false });
        await engine.maintain({ sessionId, sessionKey: KEY, sessionFile, runtimeSettings, runtimeContext: { sessionKey: KEY, tokenBudget, llm } });
        history.push(u, a);
        return { first, second, user: u, assistant: a };
      } finally {
        await engine.dispose();
      }
    },
    /** The post-turn "cli_budget" compaction; 2026.7.1 types sessionKey as optional. */
    async compact({ withKey, tokenBudget = 4000, currentTokenCount }) {
      const engine = await factory({ config: {} });
      try {
        return await engine.compact({
          sessionId, ...(withKey ? { sessionKey: KEY } : {}), sessionFile, tokenBudget, currentTokenCount, force: true, compactionTarget: "budget",
          runtimeContext: { tokenBudget, currentTokenCount, trigger: "cli_budget" }, runtimeSettings,
        });
      } finally {
        await engine.dispose();
      }
    },
  };
}

const summarizer = () => {
  let n = 0;
  return { complete: async () => ({ text: `## Summary\n- compat summary ${++n}`, model: "m" }) };
};

for (const storage of STORAGES) describe(`storage ${storage}`, () => {
  test("afterTurn with the agent's whole message array each turn stores every message once, never our own summaries", async () => {
    const h = host71(storage, { llm: summarizer() });
    const sent = [];
    for (let i = 0; i < 12; i++) sent.push(await h.turn(`turn ${i}: ${"please note the tide tables ".repeat(20)}`));
    const rows = await query(h.dbPath, "SELECT m.conversation_id, m.role, t.content FROM messages m JOIN messages_text t ON t.rowid = m.id ORDER BY m.conversation_id, m.seq");
    assert.equal(rows.length, 24, "two messages per turn, no duplicates from the two afterTurn calls");
    assert.deepEqual(new Set(rows.map((r) => r[0])).size, 1, "one conversation: no turn looked like a reset");
    for (const [i, s] of sent.entries()) {
      assert.equal(rows[2 * i][2], s.user.content, `turn ${i}'s user message in order`);
      assert.equal(rows[2 * i][1], "user");
      assert.equal(rows[2 * i + 1][1], "assistant");
    }
    assert.ok(!rows.some((r) => r[2].includes("lossless-summary") || r[2].includes("compat summary")), "a summary from the view was stored as a message");
    const summaries = await query(h.dbPath, "SELECT COUNT(*) FROM summaries WHERE summarizer = 'llm'");
    assert.ok(summaries[0][0] >= 1, "maintain wrote summaries with the LLM 2026.7.1 passes it");
    // The view the loop hook handed back in later turns carried those summaries.
    assert.ok(sent.at(-1).first.messages.some((m) => JSON.stringify(m.content).includes("lossless-summary")), "the view has no summary");
    assert.deepEqual(h.warnings, []);
  });

  test("compact() without a sessionKey works on the session's conversation, not a new one keyed by its id", async () => {
    const h = host71(storage);
    for (let i = 0; i < 6; i++) await h.turn(`turn ${i}: ${"long notes about the harbour ".repeat(25)}`);
    const withoutKey = await h.compact({ withKey: false, currentTokenCount: 3900 });
    assert.equal(withoutKey.ok, true, JSON.stringify(withoutKey));
    const conversations = await query(h.dbPath, "SELECT session_key FROM conversations");
    assert.deepEqual(conversations, [[KEY]], "compact() opened a conversation of its own");
    assert.ok(withoutKey.result.tokensBefore > 0, JSON.stringify(withoutKey));
  });

  test("the post-turn cli_budget check counts the host's whole transcript: a down summarizer gets a skip the host accepts, and the view keeps the recent turns", async () => {
    const down = { complete: async () => ({ text: "", stopReason: "error" }) };
    const h = host71(storage, { llm: down, runtimeLlm: down });
    for (let i = 0; i < 8; i++) await h.turn(`turn ${i}: ${"long notes about the harbour ".repeat(25)}`);
    // The host's estimate of its own JSONL, far over the window (our view is not what it counts).
    const out = await h.compact({ withKey: true, currentTokenCount: 50_000 });
    assert.equal(out.ok, true, JSON.stringify(out));
    if (!out.compacted) assert.match(out.reason, /already under target|below threshold|already compacted/, "2026.7.1 fails the command on any other reason");
    const next = await h.turn("turn 8: what did I note last?");
    const texts = next.first.messages.map((m) => JSON.stringify(m.content));
    assert.ok(texts.some((t) => t.includes("turn 7:")), `the host's transcript count emptied the view: ${texts.map((t) => t.slice(0, 60)).join(" | ")}`);
  });

  test("with the host's half-window reserve as maxOutputTokens and a learned overhead, every model request keeps the current message", async () => {
    const h = host71(storage, { llm: summarizer(), overhead: 3600, reserve: 4000 });
    for (let i = 0; i < 10; i++) {
      const t = await h.turn(`note ${i}: ${"the keeper logged wind and tide. ".repeat(72)}`, { tokenBudget: 8000 });
      const last = t.second.messages.at(-1);
      assert.equal(last?.content, t.user.content, `turn ${i}: the view the model gets lost the current message (${t.second.messages.length} messages)`);
      const chars = t.second.messages.reduce((n, m) => n + JSON.stringify(m.content).length, 0);
      assert.ok(3600 + chars / 4 + 1024 <= 8000, `turn ${i}: ${Math.round(3600 + chars / 4)} prompt tokens leave no room for a 1024-token reply`);
    }
  });
});
