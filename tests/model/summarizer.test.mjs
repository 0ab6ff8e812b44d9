// A real small instruct model (SmolLM2-135M-Instruct, llama.cpp on the CPU; serve-model.mjs) is
// the summarizer of a coding session driven through the built OpenClaw plugin on node:sqlite,
// with the shim's own OpenAI-compatible client (js-shim/operator/openai-llm.js). Small models answer
// summary requests with loops, echoes and answers cut off at the output limit; whatever it
// answers, only real summaries may be stored, every message stays stored and the view stays
// within the budget. What it answered and what was stored or rejected is logged as diagnostics
// (docs/summarization.md, "A real small model").
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { createFakeHost } from "../js/fake-host.mjs";
import { loadPlugin, PKG, query, tempDir } from "../js/support.mjs";
import { defects, findEcho, findLoop, madeFrom, narrativeBullets, REASONING } from "./answer-checks.mjs";
import { turnMessages } from "./coding-session.mjs";
import { startModelServer } from "./model-server.mjs";

const plugin = await loadPlugin();
const { createOpenAiLlm } = await import(new URL("shim/operator/openai-llm.js", PKG));

const BUDGET = 4_000;
const TURNS = 26;
// Small chunks and short targets keep each request to the CPU model at ~1.5K prompt tokens and
// at most 128 (leaf) or 192 (condensed) answer tokens, so the session asks for several summaries
// in a few minutes; a fanout of 2 makes it merge summaries too.
const CONFIG = {
  storage: "node:sqlite",
  summarizer: "host",
  summaryTimeoutMs: 120_000,
  freshTailCount: 4,
  leafChunkTokens: 1_000,
  leafTargetTokens: 64,
  condensedTargetTokens: 96,
  condensedFanout: 2,
};
const MARKER = "[lossless-wasm:summarize]";

/** Tokens of a view as a provider would roughly count its text (characters / 4). */
function textTokens(messages) {
  let chars = 0;
  for (const m of messages) {
    if (typeof m.content === "string") chars += m.content.length;
    else for (const part of m.content ?? []) chars += (part.text ?? "").length + (part.arguments ? JSON.stringify(part.arguments).length : 0);
  }
  return Math.ceil(chars / 4);
}

const clip = (text, n = 160) => (text.length > n ? `${text.slice(0, n)}…` : text).replace(/\n/g, "\\n");

describe("a real small model as the summarizer", { timeout: 30 * 60_000 }, () => {
  let server;
  const run = { views: [], sent: [], clientAnswers: [], startedAt: 0, ms: 0 };

  before(async () => {
    server = await startModelServer();
    const dir = tempDir("real-model");
    run.dbPath = join(dir, "db.sqlite");
    // The shim's client, recording what it hands the engine for each answer.
    const client = createOpenAiLlm({ baseUrl: server.url, model: server.model });
    const llm = {
      async complete(request) {
        const result = await client.complete(request);
        run.clientAnswers.push({ text: result.text, stopReason: result.stopReason, turn: run.views.length + 1 });
        return result;
      },
    };
    const host = createFakeHost({ pluginConfig: { dbPath: run.dbPath, ...CONFIG }, stateDir: dir, llm });
    host.load(plugin);
    run.startedAt = Date.now();
    let clock = 1_790_000_000_000;
    for (let i = 0; i < TURNS; i++) {
      const turn = turnMessages(i, clock);
      clock += 60_000;
      // As a gateway does: the turn's maintain is deferred work the host lets finish before the
      // session's next turn, so it waits for the CPU model's summaries (a held, inline maintain
      // would leave them in the background and the session would end before any answer).
      const { view } = await host.runTurn("lossless-wasm", { sessionId: "real", sessionKey: "agent:main:real-model", history: [...run.sent], turn, tokenBudget: BUDGET, deferredMaintenance: true });
      const summary = view.messages.some((m) => typeof m.content === "string" && m.content.includes("<lossless-summary"));
      const stored = (await query(run.dbPath, "SELECT COUNT(*) FROM summaries"))[0][0];
      run.views.push({ turn: i + 1, estimated: view.estimatedTokens, text: textTokens(view.messages), summary, stored });
      run.sent.push(...turn);
    }
    run.ms = Date.now() - run.startedAt;
    run.requests = (await server.requests()).filter((r) => r.prompt.startsWith(MARKER));
    for (const r of run.requests) r.defects = defects(r);
    const rows = await query(run.dbPath, "SELECT id, kind, depth, level, summarizer, model, content FROM summaries ORDER BY id");
    run.summaries = rows.map(([id, kind, depth, level, summarizer, model, content]) => {
      const from = run.requests.filter((r) => madeFrom(content, r.content));
      return { id, kind, depth, level, summarizer, model, content, from };
    });
    run.events = await query(run.dbPath, "SELECT pass, level, outcome, reason FROM compaction_events WHERE pass != 'trigger' ORDER BY id");
    [[run.stored]] = await query(run.dbPath, "SELECT COUNT(*) FROM messages");
  }, { timeout: 25 * 60_000 });

  after(async () => {
    await server?.stop();
  });

  /** Stored summaries made only from answers with this defect. */
  const storedWith = (defect) => run.summaries.filter((s) => s.from.length > 0 && s.from.every((r) => r.defects.includes(defect)));

  test("summaries are asked of the real model, and what it answered is logged", (t) => {
    assert.ok(run.requests.length > 0, "the session asked the model for summaries");
    const count = (list) => Object.entries(list.reduce((m, k) => ({ ...m, [k]: (m[k] ?? 0) + 1 }), {})).map(([k, n]) => `${k} ${n}`).join(", ") || "none";
    t.diagnostic(`model ${server.model} (${server.threads} thread(s)); ${TURNS} turns (${run.sent.length} messages, ${textTokens(run.sent)} tokens) at a ${BUDGET}-token budget in ${(run.ms / 1000).toFixed(0)} s`);
    t.diagnostic(`requests: ${run.requests.length} (finish: ${count(run.requests.map((r) => r.finishReason))}); model time ${(run.requests.reduce((n, r) => n + r.ms, 0) / 1000).toFixed(0)} s; prompt tokens ${run.requests.map((r) => r.usage.prompt_tokens).join("/")}`);
    t.diagnostic(`answers with defects: ${count(run.requests.flatMap((r) => r.defects))}; clean answers: ${run.requests.filter((r) => !r.defects.length).length}`);
    t.diagnostic(`stored summaries: ${run.summaries.length} (${count(run.summaries.map((s) => `${s.kind}/${s.level}`))}); made from answers with defects: ${count(run.summaries.flatMap((s) => (s.from.length && s.from.every((r) => r.defects.length) ? [...new Set(s.from.flatMap((r) => r.defects))] : [])))}`);
    t.diagnostic(`rejected: ${count(run.events.filter(([, , outcome]) => outcome === "failed").map(([pass, , , reason]) => `${pass}: ${reason.replace(/; all \d+ original messages preserved/, "").replace(/\d+/g, "N")}`))}`);
    const turnOf = new Map(run.clientAnswers.map((a) => [a.text, a.turn]));
    for (const r of run.requests) t.diagnostic(`answer ${r.index} (turn ${turnOf.get(r.content) ?? "?"}) [${r.finishReason}; ${r.defects.join(",") || "ok"}; ${r.usage.prompt_tokens}+${r.usage.completion_tokens} tokens, ${r.ms} ms]: ${clip(r.content)}`);
    for (const s of run.summaries) t.diagnostic(`summary ${s.id} (${s.kind}, ${s.level}) from answer ${s.from.map((r) => r.index).join("/") || "?"}: ${clip(narrativeBullets(s.content).join(" | "))}`);
  });

  test("the shim's client reports an answer cut off at the output limit as stopReason length", () => {
    assert.ok(run.requests.length > 0, "the model was asked for summaries");
    const byText = new Map(run.clientAnswers.map((a) => [a.text, a.stopReason]));
    for (const r of run.requests.filter((q) => !q.aborted)) {
      assert.equal(byText.get(r.content), r.finishReason === "length" ? "length" : "stop", `answer ${r.index} (finish_reason ${r.finishReason})`);
    }
  });

  test("every stored summary is traced to the answer it was made from, or is the extractive fallback", () => {
    // Without this the checks below could pass by matching nothing.
    assert.ok(run.requests.length > 0, "the model was asked for summaries");
    for (const s of run.summaries) {
      if (s.level === "fallback") {
        // The range's answers were unusable: the engine's own extract of it, never an answer.
        assert.deepEqual([s.summarizer, s.model], ["extractive", null], `fallback summary ${s.id} is the extractive one`);
        assert.deepEqual(s.from.map((r) => r.index), [], `fallback summary ${s.id} holds nothing of an answer:\n${s.content}`);
        continue;
      }
      assert.deepEqual([s.summarizer, s.model], ["llm", server.model], `summary ${s.id} came from the model`);
      if (narrativeBullets(s.content).length) assert.ok(s.from.length > 0, `summary ${s.id} matches no answer the model gave:\n${s.content}`);
    }
  });

  test("the view holds a summary on at least 90 % of the turns after the first one was stored", (t) => {
    const after = run.views.filter((v, i) => i > 0 && run.views[i - 1].stored > 0);
    assert.ok(after.length > 0, "a summary was stored before the last turn");
    const withSummary = after.filter((v) => v.summary).length;
    t.diagnostic(`turns with a summary in view after the first compaction: ${withSummary} of ${after.length}`);
    assert.ok(withSummary * 100 >= after.length * 90, `${withSummary} of ${after.length}: ${JSON.stringify(after)}`);
  });

  test("no stored summary holds the model's reasoning", () => {
    assert.ok(run.requests.length > 0, "the model was asked for summaries");
    const leaked = run.summaries.filter((s) => REASONING.test(s.content)).concat(storedWith("reasoning"));
    assert.deepEqual(leaked.map((s) => s.id), [], leaked.map((s) => s.content).join("\n---\n"));
  });

  test("no repetition loop the model wrote is stored", () => {
    assert.ok(run.requests.length > 0, "the model was asked for summaries");
    const looped = storedWith("loop");
    assert.deepEqual(looped.map((s) => s.id), [], looped.map((s) => `summary ${s.id} from answer ${s.from[0].index} ${JSON.stringify(findLoop(s.from[0].content))}: ${clip(s.from[0].content, 300)}`).join("\n"));
  });

  test("no echo of the model's input or instructions is stored", () => {
    assert.ok(run.requests.length > 0, "the model was asked for summaries");
    const echoed = storedWith("echo");
    assert.deepEqual(echoed.map((s) => s.id), [], echoed.map((s) => `summary ${s.id} from answer ${s.from[0].index} ${JSON.stringify(findEcho(s.from[0].content, s.from[0].prompt))}: ${clip(s.from[0].content, 300)}`).join("\n"));
  });

  test("no answer cut off at the output limit is stored", () => {
    assert.ok(run.requests.length > 0, "the model was asked for summaries");
    const cut = storedWith("truncated");
    assert.deepEqual(cut.map((s) => s.id), [], cut.map((s) => `summary ${s.id} from answer ${s.from[0].index}, which hit max_tokens ${s.from[0].maxTokens}: ${clip(s.from[0].content, 300)}`).join("\n"));
  });

  test("a request whose answers were unusable is not sent again unchanged before its backoff", () => {
    // A deterministic CPU model answers the same prompt the same way: repeating it every turn
    // would only repeat the rejection. The default backoff is 30 s, doubling per repeat.
    const rejected = run.requests.filter((r) => r.defects.length > 0);
    assert.ok(rejected.length > 0, "the model gave answers that were rejected");
    const early = [];
    for (const [j, r] of run.requests.entries()) {
      const before = run.requests.slice(0, j).filter((q) => q.prompt === r.prompt);
      const last = before.at(-1);
      if (last && r.startedAt - (last.startedAt + last.ms) < 30_000) early.push(`answer ${r.index} repeats answer ${last.index} after ${r.startedAt - last.startedAt - last.ms} ms`);
    }
    assert.deepEqual(early, []);
  });

  test("every message sent stays stored", () => {
    assert.ok(run.sent.length > 0 && run.requests.length > 0, "messages were sent and summaries asked for");
    assert.equal(run.stored, run.sent.length);
  });

  test("the assembled view stays within the budget on every turn", () => {
    assert.equal(run.views.length, TURNS);
    assert.ok(textTokens(run.sent) > BUDGET, `the session (${textTokens(run.sent)} tokens) outgrew the ${BUDGET}-token budget`);
    const over = run.views.filter((v) => v.estimated > BUDGET || v.text > BUDGET);
    assert.deepEqual(over, [], "views over the budget");
  });
});

test("the independent checks recognise loops, echoes, reasoning and a real summary", () => {
  const [loop, echo, judge] = [findLoop, findEcho, defects];
  // Shapes a 135M model produced here.
  assert.equal(loop("The AI agent has a list of 1000000000000000000000000000000000000000000000")?.kind, "stutter");
  assert.equal(loop("The summary is:\n\nThe summary is:\n\nThe summary is:\n\nThe summary is:")?.kind, "sentence");
  assert.equal(loop("it went on and on and on and on and on and on and on and on and on and on and on and on and on and on")?.kind, "run");
  const transcript = "[2026-09-21 14:13 UTC | assistant]\nThe test fails because tax is applied twice: total_with_tax adds net * rate, and the handler multiplies by (1 + rate) again on line 88.";
  const prompt = `${MARKER} leaf summary, normal level\nReply with the summary only.\n## Goal\n- what the user is trying to achieve\n\n<messages>\n${transcript}\n</messages>`;
  assert.equal(echo("The test fails because tax is applied twice: total_with_tax adds net * rate, and the handler multiplies by (1 + rate) again on line 88.", prompt)?.kind, "input");
  const good = "## Goal\n- fix the doubled tax on invoices\n## Progress\n- found that the handler applies the tax a second time after total_with_tax; the fix keeps total_with_tax as the only place\n## Decisions\n- the invoice's own tax rate wins over the customer's";
  assert.equal(loop(good), null);
  assert.equal(echo(good, prompt), null);
  assert.deepEqual(judge({ content: good, prompt, finishReason: "stop" }), []);
  assert.deepEqual(judge({ content: `<think>the user wants a summary</think>\n${good}`, prompt, finishReason: "length" }), ["reasoning", "truncated"]);
});
