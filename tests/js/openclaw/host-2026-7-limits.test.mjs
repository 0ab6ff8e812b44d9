// OpenClaw 2026.7's reply budget and preflight reserve (js-shim/openclaw/host-limits.js), and the
// failure they fix (issue 42, docs/openclaw-host-observed.md §12.4): through a 2026.7.1 gateway at
// an 8K window no model request carried a summary. The gateway's system prompt is ~270 tokens
// longer than `agent --local`'s, and under 2026.9's preflight reserve the view had room for the
// current and previous turn and the omission line only; 2026.7 makes no preflight check below a
// 24K window; the reply budget it requests is the model's configured `maxTokens`, cut when its
// estimate of the prompt (padded by 1.25) and the reply pass the window.
import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, test } from "node:test";
import { configuredMaxTokens, openclawLimits, preflightReserve7 } from "../../../js-shim/openclaw/host-limits.js";
import { assistant, loadPlugin, query, tempDir, user } from "../support.mjs";

const plugin = await loadPlugin();

const MODEL_CONFIG = { models: { providers: { mock: { models: [{ id: "mock-model", contextWindow: 8000, maxTokens: 1024 }] } } } };

describe("host limits", () => {
  test("2026.9 passes its runtimeSettings reserve as the reply room and keeps the engine's preflight rule", () => {
    const limits = openclawLimits({ hostVersion: "2026.9.6", hostConfig: () => MODEL_CONFIG });
    assert.deepEqual(limits({ model: "mock-model", runtimeSettings: { limits: { maxOutputTokens: 2000 } } }), {
      maxOutputTokens: 2000,
      preflightReserveTokens: undefined,
      hostEstimateSafety: undefined,
    });
  });

  test("2026.7 takes the reply budget from the model's config, the reserve from its compaction settings and pads by 1.25", () => {
    const limits = openclawLimits({ hostVersion: "2026.7.1", hostConfig: () => MODEL_CONFIG });
    // Its limits.maxOutputTokens (4000 at 8000) is a compaction reserve, not a reply budget.
    assert.deepEqual(limits({ model: "mock-model", runtimeSettings: { limits: { maxOutputTokens: 4000 } } }), {
      maxOutputTokens: 1024,
      preflightReserveTokens: 24_000,
      hostEstimateSafety: 1.25,
    });
    const tuned = { ...MODEL_CONFIG, agents: { defaults: { compaction: { reserveTokensFloor: 1000, memoryFlush: { softThresholdTokens: 500 } } } } };
    assert.equal(preflightReserve7(tuned), 1500);
    assert.equal(preflightReserve7(undefined), 24_000, "the host's defaults when its config is not readable");
  });

  test("the model's maxTokens is found by provider when the host names it, else only when every provider agrees", () => {
    const two = {
      models: {
        providers: {
          a: { models: [{ id: "m", maxTokens: 1024 }] },
          b: { models: [{ id: "m", maxTokens: 4096 }, { id: "n", maxTokens: 2048 }] },
        },
      },
    };
    assert.equal(configuredMaxTokens(two, { model: "m", runtimeSettings: { model: { provider: "b", resolved: "m" } } }), 4096);
    assert.equal(configuredMaxTokens(two, { model: "m" }), undefined, "two providers disagree: not a guess");
    assert.equal(configuredMaxTokens(two, { model: "n" }), 2048);
    assert.equal(configuredMaxTokens(two, { model: "unlisted" }), undefined);
    assert.equal(configuredMaxTokens(undefined, { model: "m" }), undefined);
    assert.equal(configuredMaxTokens({ models: { providers: { a: { models: [{ id: "m", maxTokens: "big" }] } } } }, { model: "m" }), undefined);
  });
});

/**
 * A 2026.7.1 gateway around the plugin at an 8K window: one process (the plugin registered once),
 * an engine object per turn, afterTurn twice per turn (tool loop, end), the provider's usage a
 * 3,826-token host prompt plus the view, and the plugin's default config (only `dbPath`).
 */
function gateway71({ hostConfig }) {
  const dir = tempDir("gw71");
  const dbPath = join(dir, "db.sqlite");
  let factory;
  const warnings = [];
  let summaries = 0;
  // A summary the size the e2e mock's are (~500 characters).
  const llm = {
    complete: async () => ({
      text: `## Goal\n- summary ${++summaries}: keep the logbook\n## Progress\n${[1, 2, 3, 4, 5, 6, 7, 8].map((k) => `- note ${k * summaries}: ${k * 3} ships passed at ${k + 4} knots of wind`).join("\n")}`,
      model: "mock-model",
    }),
  };
  const api = {
    id: "lossless-wasm",
    registrationMode: "full",
    pluginConfig: { dbPath },
    config: hostConfig,
    logger: { info() {}, debug() {}, warn: (m) => warnings.push(m), error: (m) => warnings.push(m) },
    runtime: { version: "2026.7.1", state: { resolveStateDir: () => dir } },
    on() {},
    registerContextEngine: (id, f) => (factory = f),
  };
  plugin.register(api);
  const sessionId = "5e0a3f0c-8a53-4d3b-9a3e-2f2f7f0b6a71";
  const sessionKey = "agent:main:gw71";
  const sessionFile = join(dir, `${sessionId}.jsonl`);
  const runtimeSettings = { schemaVersion: 1, limits: { promptTokenBudget: 1, maxOutputTokens: 4000 } };
  const overhead = 3826;
  const history = [];
  return {
    dbPath,
    warnings,
    async turn(text) {
      const engine = await factory({ config: hostConfig, agentDir: join(dir, "agent"), workspaceDir: dir });
      try {
        if (history.length) {
          await engine.bootstrap({ sessionId, sessionKey, sessionFile, runtimeSettings });
          await engine.maintain({ sessionId, sessionKey, sessionFile, runtimeSettings, runtimeContext: { sessionKey, tokenBudget: 8000, llm } });
        }
        const first = await engine.assemble({ sessionId, sessionKey, messages: [...history], tokenBudget: 1, availableTools: new Set(), model: "mock-model", runtimeSettings, prompt: text });
        const u = user(text);
        const loop = [...first.messages, u];
        await engine.afterTurn({ sessionId, sessionKey, sessionFile, messages: loop, prePromptMessageCount: first.messages.length, tokenBudget: 8000, runtimeContext: { llm }, runtimeSettings, isHeartbeat: false });
        const second = await engine.assemble({ sessionId, sessionKey, messages: loop, tokenBudget: 8000, model: "mock-model", runtimeSettings });
        const chars = second.messages.reduce((n, m) => n + JSON.stringify(m.content).length, 0);
        const prompt = overhead + Math.ceil(chars / 4);
        const a = { ...assistant(`Mock reply to ${text.slice(0, 40)}`), usage: { input: prompt, output: 15, cacheRead: 0, cacheWrite: 0 } };
        await engine.afterTurn({ sessionId, sessionKey, sessionFile, messages: [...loop, a], prePromptMessageCount: loop.length, tokenBudget: 8000, runtimeSettings, runtimeContext: { llm }, isHeartbeat: false });
        await engine.maintain({ sessionId, sessionKey, sessionFile, runtimeSettings, runtimeContext: { sessionKey, tokenBudget: 8000, llm, allowDeferredCompactionExecution: true } });
        history.push(u, a);
        return { view: second.messages, prompt };
      } finally {
        await engine.dispose();
      }
    },
  };
}

const note = (i) => `Note ${i}: please keep these logbook notes. ${"The keeper recorded wind, tide and passing ships. ".repeat(47)}`;
const carriesSummary = (view) => view.some((m) => JSON.stringify(m.content).includes("<lossless-summary"));

describe("a 2026.7.1 gateway at an 8K window", () => {
  test("with the model's reply budget in the host's config, summaries reach the model's view and the reply keeps its budget", async () => {
    const gw = gateway71({ hostConfig: MODEL_CONFIG });
    const turns = [];
    for (let i = 1; i <= 12; i++) turns.push(await gw.turn(note(i)));
    const written = await query(gw.dbPath, "SELECT COUNT(*) FROM summaries WHERE summarizer = 'llm'");
    assert.ok(written[0][0] >= 1, "no summary was written");
    const withSummary = turns.filter((t) => carriesSummary(t.view));
    assert.ok(withSummary.length >= 1, `no view carried a summary: ${turns.map((t) => t.view.length).join(", ")} messages`);
    assert.ok(carriesSummary(turns.at(-1).view), "the last turn's view carries no summary");
    for (const [i, t] of turns.entries()) {
      // 2026.7's transport: characters / 4 × 1.25 plus the reply within the window.
      assert.ok(t.prompt * 1.25 + 1024 <= 8000, `turn ${i + 1}: a ${t.prompt}-token prompt leaves the host no room for the 1024-token reply`);
      assert.equal(t.view.at(-1).content, note(i + 1), `turn ${i + 1}: the view lost the current message`);
    }
    assert.deepEqual(gw.warnings.filter((w) => /failed/.test(w)), []);
  });

  test("without it (a model the config does not list) the engine keeps 2026.9's reserve, and no summary fits beside the active task", async () => {
    const gw = gateway71({ hostConfig: {} });
    const turns = [];
    for (let i = 1; i <= 8; i++) turns.push(await gw.turn(note(i)));
    const written = await query(gw.dbPath, "SELECT COUNT(*) FROM summaries WHERE summarizer = 'llm'");
    assert.ok(written[0][0] >= 1, "no summary was written");
    assert.deepEqual(turns.filter((t) => carriesSummary(t.view)).length, 0, "a summary fitted under the 2026.9 reserve: this host no longer shows the failure this file is about");
  });
});
