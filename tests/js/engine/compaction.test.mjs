// Compaction through the shim: the trigger at commitTurn, pending work run by maintain with the
// host's LLM from runtimeContext, the host's compact(), failures that change nothing, and the
// extractive fallback when there is no LLM.
import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, test } from "node:test";
import { createFakeHost } from "../fake-host.mjs";
import { assistant, loadPlugin, PKG, query, STORAGES, tempDir, user } from "../support.mjs";

const plugin = await loadPlugin();
const { classifyError } = await import(new URL("shim/engine/compaction-driver.js", PKG));
const SMALL = { freshTailCount: 4, leafChunkTokens: 1000, leafBudgetHeadroomFactor: 0, leafSkipReductionThreshold: 0 };

function scriptedLlm(reply) {
  const calls = [];
  return {
    calls,
    complete: async (request) => {
      calls.push(request);
      return reply(request, calls.length);
    },
  };
}

const summaryText = () => ({ text: "## Goal\n- keep the parser working\n## Progress\n- answered many questions", provider: "fake", model: "fake-summarizer" });

async function talk(h, turns, { sessionKey = "agent:main:c", budget = 50_000 } = {}) {
  const history = [];
  const results = [];
  for (let i = 0; i < turns; i++) {
    const turn = [user(`question ${i}: ${"please explain the parser ".repeat(12)}`), assistant(`answer ${i}: ${"the parser works like this ".repeat(12)}`)];
    results.push(await h.runTurn("lossless-wasm", { sessionId: "s1", sessionKey, history: [...history], turn, tokenBudget: budget }));
    history.push(...turn);
  }
  return { history, results };
}

for (const storage of STORAGES) describe(`storage ${storage}`, () => {
  function host(llm, config = {}) {
    const dir = tempDir("compaction");
    const dbPath = join(dir, "db.sqlite");
    const h = createFakeHost({ pluginConfig: { dbPath, storage, ...SMALL, ...config }, stateDir: dir, llm });
    h.load(plugin);
    return { h, dbPath };
  }

  test("maintain runs the pending compaction with the host LLM and every message is kept", async () => {
    const llm = scriptedLlm(summaryText);
    const { h, dbPath } = host(llm);
    const { history, results } = await talk(h, 14);
    assert.ok(llm.calls.length > 0, "the LLM was asked for a summary");
    assert.match(llm.calls[0].messages[0].content, /^\[lossless-wasm:summarize\]/);
    assert.ok(llm.calls[0].maxTokens > 0 && typeof llm.calls[0].purpose === "string");
    assert.ok(results.some((r) => r.maintained?.changed), "some maintain compacted");
    assert.deepEqual(await query(dbPath, "SELECT COUNT(*) FROM messages"), [[history.length]]);
    const [[summaries, model]] = await query(dbPath, "SELECT COUNT(*), MAX(model) FROM summaries");
    assert.ok(summaries >= 1);
    assert.equal(model, "fake-summarizer");
    const { view } = await h.runTurn("lossless-wasm", { sessionId: "s1", sessionKey: "agent:main:c", history, turn: [user("one more")] });
    assert.match(view.messages[0].content, /<lossless-summary id="\d+" depth="0"/);
  });

  test("a failing LLM leaves the messages intact, logs why, and the view shows the extractive fallback", async () => {
    const llm = scriptedLlm(() => { throw Object.assign(new Error("503 upstream overloaded"), { status: 503 }); });
    const { h, dbPath } = host(llm);
    const { history } = await talk(h, 14);
    assert.ok(llm.calls.length > 0);
    // Nothing of the failure is stored: the ranges get the extractive summary, at level fallback.
    const [[total, fallbacks, withError]] = await query(dbPath, "SELECT COUNT(*), SUM(level = 'fallback' AND summarizer = 'extractive'), SUM(content LIKE '%503%' OR content LIKE '%overloaded%') FROM summaries");
    assert.ok(total >= 1 && fallbacks === total && withError === 0, `${total} summaries, ${fallbacks} fallbacks, ${withError} with the error`);
    assert.deepEqual(await query(dbPath, "SELECT COUNT(*) FROM messages"), [[history.length]]);
    const failure = h.logs.find(([level, m]) => level === "warn" && /compaction failed \(.*503.*\); all \d+ original messages preserved/.test(m));
    assert.ok(failure, `failure logged: ${JSON.stringify(h.logs.slice(-5))}`);
    const { view } = await h.runTurn("lossless-wasm", { sessionId: "s1", sessionKey: "agent:main:c", history, turn: [user("still there?")] });
    assert.match(view.messages[0].content, /<lossless-summary id="\d+" depth="0"/, "the older history is in the view as its fallback summary");
    assert.deepEqual(view.messages.at(-1), history.at(-1), "the conversation keeps answering");
  });

  test("an LLM answer with stopReason error is a failure, not an empty summary", async () => {
    const llm = scriptedLlm(() => ({ text: "", stopReason: "error", provider: "fake", model: "fake" }));
    const { h, dbPath } = host(llm, { summarizer: "host" });
    await talk(h, 14);
    assert.deepEqual(await query(dbPath, "SELECT COUNT(*) FROM summaries WHERE level <> 'fallback' OR content = ''"), [[0]], "only extractive fallbacks");
    const [[reason]] = await query(dbPath, "SELECT reason FROM compaction_events WHERE outcome = 'failed' LIMIT 1");
    assert.match(reason, /stopReason "error"/);
  });

  test("without an LLM the extractive summarizer compacts", async () => {
    const { h, dbPath } = host(undefined);
    await talk(h, 14);
    const [[count, summarizer]] = await query(dbPath, "SELECT COUNT(*), MAX(summarizer) FROM summaries");
    assert.ok(count >= 1);
    assert.equal(summarizer, "extractive");
  });

  test("summarizer host without an LLM waits instead of falling back", async () => {
    const { h, dbPath } = host(undefined, { summarizer: "host" });
    const { results } = await talk(h, 14);
    assert.deepEqual(await query(dbPath, "SELECT COUNT(*) FROM summaries"), [[0]]);
    assert.ok(results.some((r) => /no LLM/.test(r.maintained?.reason ?? "")));
  });

  test("the host's compact() sweeps the context under the target", async () => {
    const llm = scriptedLlm(summaryText);
    const { h, dbPath } = host(llm, { summarizer: "host" });
    await talk(h, 6, { budget: 200_000 });
    const result = await h.compact("lossless-wasm", { sessionId: "s1", sessionKey: "agent:main:c", tokenBudget: 1_000, currentTokenCount: 5_000 });
    assert.equal(result.ok, true, result.reason);
    assert.equal(result.compacted, true, result.reason);
    assert.ok(result.result.tokensAfter < result.result.tokensBefore);
    assert.ok((await query(dbPath, "SELECT COUNT(*) FROM summaries"))[0][0] >= 1);
  });
});

test("an aborted compact() writes nothing and reports the failure", async () => {
  const dir = tempDir("abort");
  const llm = scriptedLlm(summaryText);
  const h = createFakeHost({ pluginConfig: { dbPath: join(dir, "db.sqlite"), ...SMALL, summarizer: "host" }, stateDir: dir, llm });
  h.load(plugin);
  await talk(h, 6, { budget: 200_000 });
  const engine = await h.resolveEngine("lossless-wasm");
  const controller = new AbortController();
  controller.abort();
  const result = await engine.compact({ sessionId: "s1", sessionKey: "agent:main:c", tokenBudget: 1000, force: true, abortSignal: controller.signal, runtimeContext: { llm } });
  assert.equal(result.ok, false);
  assert.equal(result.compacted, false);
  assert.match(result.reason, /aborted/);
  assert.deepEqual(await query(join(dir, "db.sqlite"), "SELECT COUNT(*) FROM summaries"), [[0]]);
});

test("LLM errors are classified for the retry policy", () => {
  assert.equal(classifyError(Object.assign(new Error("nope"), { status: 401 })), "auth");
  assert.equal(classifyError(new Error("Invalid API key provided")), "auth");
  assert.equal(classifyError(Object.assign(new Error("x"), { name: "TimeoutError" })), "timeout");
  assert.equal(classifyError(new Error("request timed out")), "timeout");
  assert.equal(classifyError(new Error("500 internal error")), "other");
  assert.equal(classifyError("a string"), "other");
});

test("compaction prepares a fixed set of statements, not one per pass (node:sqlite)", { skip: !STORAGES.includes("node:sqlite") && "node:sqlite is missing" }, async () => {
  // Each prepared statement holds native memory, and the statement cache keeps what it
  // prepared: a statement text per pass (ids spelled into the SQL) grew the host's memory by
  // ~1 MiB per sweep round of a large import.
  const { NodeSqliteDatabase } = await import(new URL("shim/node/sqlite.js", PKG));
  const prepared = new Set();
  const original = NodeSqliteDatabase.prototype.prepare;
  NodeSqliteDatabase.prototype.prepare = function (sql) {
    prepared.add(sql);
    return original.call(this, sql);
  };
  try {
    const dir = tempDir("statements");
    const dbPath = join(dir, "db.sqlite");
    const llm = scriptedLlm(summaryText);
    const h = createFakeHost({ pluginConfig: { dbPath, storage: "node:sqlite", ...SMALL }, stateDir: dir, llm });
    h.load(plugin);
    const summaries = async () => (await query(dbPath, "SELECT COUNT(*) FROM summaries"))[0][0];
    const { history } = await talk(h, 20);
    const firstPasses = await summaries();
    const firstTexts = prepared.size;
    // Twenty more turns, each pair of them compacted again by maintain.
    const more = [];
    for (let i = 20; i < 40; i++) {
      const turn = [user(`question ${i}: ${"please explain the parser ".repeat(12)}`), assistant(`answer ${i}: ${"the parser works like this ".repeat(12)}`)];
      await h.runTurn("lossless-wasm", { sessionId: "s1", sessionKey: "agent:main:c", history: [...history, ...more], turn, tokenBudget: 50_000 });
      more.push(...turn);
    }
    const laterPasses = (await summaries()) - firstPasses;
    assert.ok(firstPasses >= 2 && laterPasses >= 4, `compaction ran in both halves (${firstPasses}, then ${laterPasses} summaries)`);
    // Statements that differ only in numbers are one statement with values spelled in.
    const shapes = new Map();
    for (const sql of prepared) {
      const shape = sql.replace(/\d+(\s*,\s*\d+)*/g, "#");
      shapes.set(shape, [...(shapes.get(shape) ?? []), sql]);
    }
    const spelled = [...shapes.values()].filter((texts) => texts.length > 1);
    assert.deepEqual(spelled, [], "no statement is prepared again with other numbers in its text");
    assert.ok(prepared.size - firstTexts < laterPasses + 6, `${laterPasses} more passes prepared ${prepared.size - firstTexts} new statement texts`);
  } finally {
    NodeSqliteDatabase.prototype.prepare = original;
  }
});
