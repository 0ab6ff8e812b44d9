// Recall tool answers fit the host's tool-result limit (js-shim/openclaw/result-size.js): OpenClaw
// cuts a tool result past about half the model's window in tokens, and through Tool Search's
// `tool_call` (on by default in 2026.9.6) the result is the JSON of `{tool, result}`, so a cut
// leaves broken JSON. Every answer here is checked as `tool_call` shows it: whole JSON, within
// `toolResultMaxChars`, and — where the installed 2026.9.6 host is at hand — within what the
// host's own estimate lets through at an 8K window. Long answers come in pages, and following
// the pages recovers the stored text exactly.
import assert from "node:assert/strict";
import { existsSync, readdirSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { createFakeHost } from "../fake-host.mjs";
import { assistant, loadPlugin, PKG, STORAGES, tempDir, user } from "../support.mjs";

const plugin = await loadPlugin();
const { hostChars, toolCallText, TOOL_RESULT_DEFAULT_MAX_CHARS } = await import(new URL("shim/openclaw/result-size.js", PKG));

// The host's own estimate (2026.9.6's cjk-chars module), when its package is in the e2e cache.
const HOST_DIST = join(homedir(), ".cache/lossless-wasm/openclaw-2026.9.6/node_modules/openclaw/dist");
const hostModule = existsSync(HOST_DIST) ? readdirSync(HOST_DIST).find((f) => /^cjk-chars-.*\.mjs$/.test(f)) : undefined;
const hostEstimate = hostModule ? (await import(join(HOST_DIST, hostModule))).r : undefined;

/**
 * Asserts what `tool_call` would show for `out` is whole JSON under `limit`, and (with the host
 * at hand) under the host's cut at an 8K window: its estimate, two per character and more for
 * CJK, at most the window in tokens. Returns the result.
 */
function assertFits(name, out, limit = TOOL_RESULT_DEFAULT_MAX_CHARS, window = 8_000) {
  assert.equal(typeof out?.content?.[0]?.text, "string", `${name} returned no text`);
  const text = toolCallText(name, out);
  assert.deepEqual(JSON.parse(text).result, JSON.parse(JSON.stringify(out)), `${name}: tool_call's text is whole JSON`);
  assert.ok(hostChars(text) <= limit, `${name}: ${hostChars(text)} characters as the host counts them, over ${limit}`);
  if (hostEstimate && limit <= TOOL_RESULT_DEFAULT_MAX_CHARS) {
    const estimate = hostEstimate(text, { minimumRawWeight: 2 });
    assert.ok(estimate <= Math.max(1024, window), `${name}: the host estimates ${estimate}, over a ${window}-token window's cut`);
  }
  return out;
}

function host(storage, config = {}, dir = tempDir("toolsize"), llm = undefined) {
  const h = createFakeHost({ pluginConfig: { dbPath: join(dir, "db.sqlite"), storage, freshTailCount: 2, ...config }, stateDir: dir, llm });
  const factories = [];
  h.api.registerTool = (tool) => factories.push(tool);
  h.load(plugin);
  const tools = (ctx) => Object.fromEntries(factories.flatMap((f) => f(ctx) ?? []).map((t) => [t.name, t]));
  return { h, tools };
}

/** A 50,000-character note: lines with quotes, backslashes and tabs (JSON escapes them), CJK and emoji. */
function longNote() {
  let s = "";
  for (let i = 0; s.length < 50_000; i++) {
    s += i % 7 === 3
      ? `第${i}行：静默的港口记录，潮汐与风向 🔑🚢\n`
      : `line ${i}: "quoted" path C:\\logs\\run-${i}.txt\tvalue=${i * 37} — checked ✓\n`;
  }
  return s.slice(0, 50_000);
}

/** A summarizer whose summaries are long (~1,700 characters, CJK among them), so one takes
 *  pages; each in words of its own, so none reads as a copy of its input. */
function longSummaries() {
  const words = "amber basalt cobalt dune ember fjord garnet heron iris jade kelp lumen marl nectar onyx pumice quartz reed slate tarn umber vale willow xenon yarrow zinc".split(" ");
  let calls = 0;
  return {
    complete: async () => {
      calls += 1;
      const w = (k) => words[k % words.length];
      const lines = Array.from({ length: 30 }, (_, i) => `- 记录${calls}-${i}: ${w(calls * 7 + i)} ${w(calls * 3 + i * 5)} 整理 "${calls}.${i}" ⚓`);
      return { text: `## Goal\n- ${w(calls)} ledger\n## Progress\n${lines.join("\n")}\n## Artifacts\n- modified: log-${calls}.md`, stopReason: "stop" };
    },
  };
}

/** The item text of one expand page of a message, as the model reads it. */
function pageContent(text) {
  const body = text.slice(text.indexOf("\n") + 1);
  const m = body.match(/^--- message \d+ \([^)]*\) ---\n([\s\S]*?)(?:\n\[cut to fit this page; [^\n]*\])?\n(?:More: lcm_expand [^\n]*|End of this expansion\.)$/);
  assert.ok(m, `an expand page the model cannot read back:\n${text.slice(0, 300)}`);
  return m[1];
}

for (const storage of STORAGES) describe(`storage ${storage}`, () => {
  test("a 50,000-character message comes back in pages of whole JSON under the limit, and following nextCursor recovers it exactly", { timeout: 120_000 }, async () => {
    const { h, tools } = host(storage);
    const note = longNote();
    const key = "agent:main:long";
    const history = [];
    for (const [i, text] of ["start the log", note, "thanks, noted"].entries()) {
      const turn = [user(text), assistant(`ok ${i}`)];
      await h.runTurn("lossless-wasm", { sessionId: "s", sessionKey: key, history: [...history], turn });
      history.push(...turn);
    }
    const t = tools({ sessionId: "s", sessionKey: key });
    const grep = assertFits("lcm_grep", await t.lcm_grep.execute("g", { pattern: "run-777.txt" }));
    const hit = grep.details.hits.find((x) => x.kind === "message" && x.role === "user");
    assert.ok(hit, grep.content[0].text);

    let recovered = "";
    let cursor;
    let pages = 0;
    for (;;) {
      const page = assertFits("lcm_expand", await t.lcm_expand.execute(`e${pages}`, { messageId: hit.id, ...(cursor ? { cursor } : {}) }));
      pages += 1;
      assert.equal(page.details.total, [...note].length, "the page says how long the message is");
      recovered += pageContent(page.content[0].text);
      cursor = page.details.nextCursor;
      if (!cursor) break;
      assert.match(page.content[0].text, new RegExp(`More: lcm_expand \\{"messageId": ${hit.id}, "cursor": "${cursor}"\\}`), "the text says how to get the rest");
      assert.ok(pages < 100, "pages make progress");
    }
    assert.ok(pages >= 15, `a 50K message takes many pages under the limit (${pages})`);
    assert.equal(recovered, note, "the pages joined are the message, character for character");

    // A page asked larger than the limit is still within it.
    assertFits("lcm_expand", await t.lcm_expand.execute("big", { messageId: hit.id, maxTokens: 16000 }));
    // describe of the message: a preview only, within the limit.
    assertFits("lcm_describe", await t.lcm_describe.execute("d", { messageId: hit.id }));
  });

  test("in a session whose model window the host reported at 4,096 tokens, answers fit that window's smaller cut", { timeout: 120_000 }, async () => {
    const { h, tools } = host(storage);
    const key = "agent:main:small-window";
    const note = longNote().slice(0, 12_000);
    const history = [user("start"), assistant("ok")];
    await h.runTurn("lossless-wasm", { sessionId: "s", sessionKey: key, history: [], turn: history });
    // The tools are built before the host reports the window (as in a turn: factory, then commit).
    const t = tools({ sessionId: "s", sessionKey: key });
    // The host reports the model's window with the turn's commit.
    const engine = await h.resolveEngine("lossless-wasm");
    await engine.commitTurn({
      sessionId: "s", sessionKey: key, advancementKey: "w1", messages: [user(note), assistant("noted")],
      admission: { entryId: "u1" }, terminal: { entryId: "a1" }, runtimeContext: { provider: "fake", modelId: "fake", modelContextWindow: 4_096 },
    });
    await engine.dispose();
    const limit = Math.floor((4_096 / 2) * 0.95);
    const hit = (await t.lcm_grep.execute("g", { pattern: "run-77.txt" })).details.hits.find((x) => x.role === "user");
    assert.ok(hit, "the long note was stored");
    let recovered = "";
    let pages = 0;
    for (let cursor; pages === 0 || cursor; pages++) {
      const page = assertFits("lcm_expand", await t.lcm_expand.execute(`e${pages}`, { messageId: hit.id, ...(cursor ? { cursor } : {}) }), limit, 4_096);
      recovered += pageContent(page.content[0].text);
      cursor = page.details.nextCursor;
    }
    assert.equal(recovered, note, "the pages joined are the message");
    assert.ok(pages >= 7, `pages of at most ${limit} characters (${pages})`);
  });

  test("many hits come back in pages by offset: every page fits, and together they are every hit once", { timeout: 120_000 }, async () => {
    const { h, tools } = host(storage);
    const key = "agent:main:hits";
    const history = [];
    for (let i = 0; i < 60; i++) {
      const turn = [user(`entry ${i}: the zebra-crossing survey counted ${i * 11} cars "near" gate ${i}; ${"detail ".repeat(30)}`), assistant(`zebra-crossing entry ${i} filed`)];
      await h.runTurn("lossless-wasm", { sessionId: "s", sessionKey: key, history: [...history], turn });
      history.push(...turn);
    }
    const t = tools({ sessionId: "s", sessionKey: key });
    const seen = [];
    let offset = 0;
    let total;
    for (let n = 0; offset !== null; n++) {
      const page = assertFits("lcm_grep", await t.lcm_grep.execute(`g${n}`, { pattern: "zebra-crossing", limit: 200, offset }));
      total ??= page.details.total;
      assert.equal(page.details.total, total, "the same search on every page");
      assert.ok(page.details.hits.length >= 1, "each page shows at least one hit");
      seen.push(...page.details.hits.map((x) => `${x.kind}:${x.id}`));
      if (page.details.nextOffset !== null)
        assert.match(page.content[0].text, new RegExp(`"offset": ${page.details.nextOffset}\\.`), "the text says how to get the rest");
      offset = page.details.nextOffset;
      assert.ok(n < 200, "pages make progress");
    }
    assert.ok(total >= 100, `the search found the hits (${total})`);
    assert.equal(seen.length, total, "every hit is shown once");
    assert.equal(new Set(seen).size, total, "no hit is shown twice");
  });

  test("at the smallest limit every tool still answers whole JSON: a summary's children and content come in pages that recover it", { timeout: 120_000 }, async () => {
    const limit = 1_500;
    const dir = tempDir("toolsize-small");
    const config = { summarizer: "host", leafChunkTokens: 3000, leafTargetTokens: 1200 };
    const { h, tools } = host(storage, { ...config, toolResultMaxChars: limit }, dir, longSummaries());
    const key = "agent:main:small";
    const history = [];
    for (let i = 0; i < 40; i++) {
      const turn = [user(`turn ${i}: harbour note ${i} — ${"wind, tide and ships recorded. ".repeat(40)}`), assistant(`noted ${i} ${"fine. ".repeat(30)}`)];
      await h.runTurn("lossless-wasm", { sessionId: "s", sessionKey: key, history: [...history], turn });
      history.push(...turn);
    }
    const report = await h.compact("lossless-wasm", { sessionId: "s", sessionKey: key, tokenBudget: 6000 });
    assert.ok(report.compacted, JSON.stringify(report));
    const t = tools({ sessionId: "s", sessionKey: key });
    const grep = assertFits("lcm_grep", await t.lcm_grep.execute("g", { pattern: "harbour note 1", kind: "messages" }), limit);
    const hit = grep.details.hits.find((x) => x.kind === "message" && x.coveredBy);
    assert.ok(hit, grep.content[0].text);
    const summaryId = hit.coveredBy;

    // The summary's content, in pages; the reference is the same call on the same store with the
    // largest limit, which shows it whole.
    const wide = host(storage, { ...config, toolResultMaxChars: 200_000 }, dir).tools({ sessionId: "s", sessionKey: key });
    const whole = (await wide.lcm_describe.execute("w", { summaryId })).content[0].text.match(/\ncontent:\n([\s\S]*)$/)?.[1];
    assert.ok(whole && hostChars(whole) > limit, `the summary's content is longer than one answer (${whole?.length})`);
    let content = "";
    let cursor;
    for (let n = 0; ; n++) {
      const page = assertFits("lcm_describe", await t.lcm_describe.execute(`d${n}`, { summaryId, ...(cursor ? { cursor } : {}) }), limit);
      const text = page.content[0].text;
      const m = text.match(/(?:^|\n)(?:summary \d+ )?content(?:, characters \d+-\d+ of \d+)?:\n([\s\S]*?)(?:\nMore: lcm_describe [^\n]*)?$/);
      assert.ok(m, text);
      content += m[1];
      cursor = page.details.nextCursor;
      if (!cursor) break;
      assert.ok(n < 100, "pages make progress");
    }
    assert.equal(content, whole, "the pages joined are the summary's content");

    // Every original message under the summary, listed page by page (each item whole or continued).
    const ids = [];
    cursor = undefined;
    for (let n = 0; ; n++) {
      const page = assertFits("lcm_expand", await t.lcm_expand.execute(`x${n}`, { summaryId, messages: true, ...(cursor ? { cursor } : {}) }), limit);
      assert.ok(page.details.items.length >= 1, "each page shows at least one item");
      ids.push(...page.details.items.map((i) => i.id));
      cursor = page.details.nextCursor;
      if (!cursor) {
        assert.equal(ids.length, page.details.total, "every message under the summary was listed");
        break;
      }
      assert.ok(n < 200, "pages make progress");
    }
    assert.ok(ids.includes(hit.id), "the message grep found is among them");
    assert.equal(new Set(ids).size, ids.length, "none twice");

    // lcm_ask without an LLM: its evidence list still fits.
    assertFits("lcm_ask", await t.lcm_ask.execute("a", { question: "What did harbour note 1 record about the wind?" }), limit);
  });
});
