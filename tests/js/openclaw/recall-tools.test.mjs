// The recall tools (lcm_grep, lcm_describe, lcm_expand) through the plugin entry, on the built
// package and real sql.js / node:sqlite: registered per session under the host's rules (every
// name declared in contracts.tools, profiles for coding and messaging), they bring back what was
// summarized away, and a session of one agent cannot read another agent's history.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { createFakeHost } from "../fake-host.mjs";
import { assistant, loadPlugin, PKG, STORAGES, tempDir, user } from "../support.mjs";

const plugin = await loadPlugin();
const manifest = JSON.parse(readFileSync(new URL("openclaw.plugin.json", PKG), "utf8"));

/** The fake host plus registerTool as the real host checks it (registry-registrars-tools-hooks). */
function host(storage) {
  const dir = tempDir("recall");
  const h = createFakeHost({ pluginConfig: { dbPath: join(dir, "db.sqlite"), storage, freshTailCount: 2 }, stateDir: dir });
  const factories = [];
  h.api.registerTool = (tool, opts = {}) => {
    const declared = manifest.contracts?.tools ?? [];
    if (!declared.length) throw new Error("plugin must declare contracts.tools before registering agent tools");
    const names = opts.names ?? (opts.name ? [opts.name] : [tool.name]);
    const missing = names.filter((n) => !declared.includes(n));
    if (missing.length) throw new Error(`plugin must declare contracts.tools for: ${missing.join(", ")}`);
    factories.push({ tool, names });
  };
  h.load(plugin);
  /** The tools as the host builds them for one session. */
  const tools = (ctx) => {
    const built = factories.flatMap(({ tool }) => (typeof tool === "function" ? tool(ctx) ?? [] : [tool]));
    return Object.fromEntries(built.map((t) => [t.name, t]));
  };
  return { h, tools, factories };
}

/** A conversation with a fact planted early, then compacted down to a small budget. */
async function plantedConversation(h, sessionKey, fact) {
  const history = [];
  for (let i = 0; i < 24; i++) {
    const text = i === 1 ? fact : `turn ${i} about routine work ${"filler ".repeat(60)}`;
    const turn = [user(text), assistant(`ok ${i} ${"reply ".repeat(40)}`)];
    await h.runTurn("lossless-wasm", { sessionId: `${sessionKey}-s`, sessionKey, history: [...history], turn });
    history.push(...turn);
  }
  const report = await h.compact("lossless-wasm", { sessionId: `${sessionKey}-s`, sessionKey, tokenBudget: 1500 });
  assert.ok(report.compacted, JSON.stringify(report));
}

for (const storage of STORAGES) describe(`storage ${storage}`, () => {
  test("the manifest declares the tools and keeps them in the coding and messaging profiles", () => {
    const { factories } = host(storage);
    assert.deepEqual(factories.flatMap((f) => f.names).sort(), ["lcm_ask", "lcm_describe", "lcm_expand", "lcm_grep"]);
    for (const name of manifest.contracts.tools) {
      assert.deepEqual(manifest.toolMetadata[name].profiles, ["coding", "messaging"], name);
    }
  });

  test("no session, no tools: the factory returns nothing to scope", () => {
    const { tools } = host(storage);
    assert.deepEqual(tools({}), {});
  });

  test("grep finds a fact that was summarized away and expand brings back its original text", async () => {
    const { h, tools } = host(storage);
    const fact = "The staging database password rotates every 17 days; the vault path is kv/stg/db-🔑-静默.";
    await plantedConversation(h, "agent:main:chat", fact);
    const t = tools({ sessionId: "agent:main:chat-s", sessionKey: "agent:main:chat" });
    for (const tool of Object.values(t)) {
      assert.equal(tool.parameters.type, "object");
      assert.equal(typeof tool.execute, "function");
    }
    const grep = await t.lcm_grep.execute("call-1", { pattern: "kv/stg/db-🔑-静默" });
    const hit = grep.details.hits.find((x) => x.kind === "message");
    assert.ok(hit, grep.content[0].text);
    assert.equal(hit.inView, false, "the fact is no longer in the view");
    assert.ok(hit.coveredBy, "a summary in the view covers it");
    assert.match(grep.content[0].text, new RegExp(`message ${hit.id}`));

    // details carry ids and counts, never the text (a host may show the model both).
    assert.ok(!JSON.stringify(grep.details).includes("kv/stg"), JSON.stringify(grep.details));

    const byMessage = await t.lcm_expand.execute("call-2", { messageId: hit.id });
    assert.ok(!JSON.stringify(byMessage.details).includes("password"), "expand details hold no text");
    assert.ok(byMessage.content[0].text.includes(fact), byMessage.content[0].text);

    const bySummary = await t.lcm_expand.execute("call-3", { summaryId: String(hit.coveredBy), messages: true, maxTokens: 16000 });
    assert.ok(bySummary.content[0].text.includes(fact), "expanding the summary in view reaches the original message");

    const described = await t.lcm_describe.execute("call-4", { summaryId: hit.coveredBy });
    assert.match(described.content[0].text, /level normal/);
    assert.match(described.content[0].text, /covers messages #\d+\.\.#\d+/);
    const message = await t.lcm_describe.execute("call-5", { messageId: hit.id });
    assert.match(message.content[0].text, new RegExp(`summaries above it \\(lowest first\\): .*${hit.coveredBy}`));
  });

  test("an old tool output in the view is a stub: describe says so and how big, grep finds it, expand returns it whole", async () => {
    const { h, tools } = host(storage);
    const sessionKey = "agent:main:tools";
    const history = [];
    const outputs = [];
    for (let i = 0; i < 3; i++) {
      const id = `call_${i}`;
      const text = Array.from({ length: 120 }, (_, n) => `tool${i}out line ${n}: cargo test result for module ${i}`).join("\n");
      outputs.push(text);
      const turn = [
        user(`turn ${i}: run the tests`),
        { role: "assistant", content: [{ type: "toolCall", id, name: "bash", arguments: { command: `cargo test -p m${i}` } }], api: "openai-completions", provider: "mock", model: "m", usage: { input: 1, output: 1 }, stopReason: "toolUse", timestamp: Date.now() },
        { role: "toolResult", toolCallId: id, toolName: "bash", content: [{ type: "text", text }], isError: i === 0, timestamp: Date.now() },
        assistant(`tests of module ${i} looked at`),
      ];
      await h.runTurn("lossless-wasm", { sessionId: `${sessionKey}-s`, sessionKey, history: [...history], turn });
      history.push(...turn);
    }
    const t = tools({ sessionId: `${sessionKey}-s`, sessionKey });
    const grep = await t.lcm_grep.execute("c1", { pattern: "tool0out" });
    const hit = grep.details.hits.find((x) => x.kind === "message" && x.role === "toolResult");
    assert.ok(hit, grep.content[0].text);
    assert.equal(hit.inView, true);
    assert.equal(hit.stubbed, true, "the oldest output is shown as a stub");
    assert.match(grep.content[0].text, new RegExp(`shown as a stub in your view; lcm_expand \\{"messageId": ${hit.id}\\} reads it whole`));
    const described = await t.lcm_describe.execute("c2", { messageId: hit.id });
    const text = described.content[0].text;
    assert.match(text, /in the current view: yes, as a one-line stub of \d+ tokens \(lcm_expand \{"messageId": \d+\} returns all \d+\)/, text);
    assert.match(text, new RegExp(`stub: \\[tool output stored: bash \\{"command":"cargo test -p m0"\\} → [\\d,]+ tokens, 120 lines, error; lcm_expand \\{"messageId": ${hit.id}\\}\\]`), text);
    assert.equal(described.details.shownAs, "stub");
    assert.ok(!("stubLine" in described.details), "details carry no text");
    // Whole over its pages: one tool result holds what the host takes (tool-result-size.test.mjs).
    let whole = "";
    for (let cursor, n = 0; n === 0 || cursor; n++) {
      const page = await t.lcm_expand.execute(`c3-${n}`, { messageId: hit.id, maxTokens: 16000, ...(cursor ? { cursor } : {}) });
      whole += page.content[0].text.match(/\n--- message \d+ \([^)]*\) ---\n([\s\S]*?)(?:\n\[cut to fit this page; [^\n]*\])?\n(?:More: |End of this expansion\.)/)?.[1] ?? "";
      cursor = page.details.nextCursor;
    }
    assert.equal(whole, outputs[0], "expand returns the output whole");
    const newest = (await t.lcm_grep.execute("c4", { pattern: "tool2out" })).details.hits.find((x) => x.kind === "message");
    assert.equal(newest.stubbed, false, "the previous turn's output is whole");
  });

  test("another agent's session cannot read this agent's history through any tool", async () => {
    const { h, tools } = host(storage);
    await plantedConversation(h, "agent:main:chat", "secret launch code is ZX-4471");
    await plantedConversation(h, "agent:other:chat", "unrelated note");
    const mine = tools({ sessionId: "agent:main:chat-s", sessionKey: "agent:main:chat" });
    const hit = (await mine.lcm_grep.execute("c", { pattern: "ZX-4471" })).details.hits.find((x) => x.kind === "message");
    assert.ok(hit);
    const theirs = tools({ sessionId: "agent:other:chat-s", sessionKey: "agent:other:chat" });
    for (const scope of ["conversation", "agent"]) {
      const out = await theirs.lcm_grep.execute("c", { pattern: "ZX-4471", scope });
      assert.equal(out.details.hits.length, 0, scope);
    }
    // Refused like an unknown id, as a sentence (a tool result, not a thrown failure).
    const refused = async (tool, args, pattern) => {
      const out = await theirs[tool].execute("c", args);
      assert.match(out.content[0].text, pattern, tool);
      assert.equal(out.details.problem, "invalid-argument");
      assert.ok(!out.content[0].text.includes("ZX-4471"));
    };
    await refused("lcm_expand", { messageId: hit.id }, /no message \d+ in this agent's history \(argument `messageId`\)/);
    await refused("lcm_describe", { summaryId: hit.coveredBy }, /no summary \d+ in this agent's history/);
    await refused("lcm_expand", { summaryId: `sum_${hit.coveredBy}`, messages: true }, /in this agent's history/);
    await refused("lcm_ask", { question: "what is the launch code?", summaryIds: [hit.coveredBy] }, /no summary \d+ in this agent's history/);
    const asked = await theirs.lcm_ask.execute("c", { question: "what was the secret launch code ZX-4471?", scope: "agent" });
    assert.equal(asked.details.outcome, "nothing_found", asked.content[0].text);
    assert.ok(!asked.details.evidenceMessageIds.includes(hit.id));
  });

  test("bad arguments get errors that name the argument", async () => {
    const { h, tools } = host(storage);
    await plantedConversation(h, "agent:main:chat", "anything");
    const t = tools({ sessionId: "agent:main:chat-s", sessionKey: "agent:main:chat" });
    const says = async (tool, args, pattern) => {
      const out = await t[tool].execute("c", args);
      assert.match(out.content[0].text, pattern, `${tool} ${JSON.stringify(args)}`);
      assert.ok(!("error" in out.details) && !("status" in out.details), "no reserved key marks it failed");
    };
    await says("lcm_grep", { pattern: "x", since: "last tuesday-ish" }, /^lcm_grep did not run: expected an ISO 8601 time .* \(argument `since`\)\. Fix that argument/);
    await says("lcm_grep", { pattern: "\"unbalanced", mode: "full_text" }, /invalid full-text query/);
    await says("lcm_expand", {}, /summaryId or messageId/);
    await says("lcm_expand", { summaryId: "1; DROP TABLE messages" }, /expected a numeric id .*\(argument `summaryId`\)/);
    await says("lcm_grep", {}, /`pattern`/);
    await says("lcm_grep", { pattern: "x", limit: "lots" }, /expected a number.*`limit`/);
    const literal = await t.lcm_grep.execute("c", { pattern: "a OR b NEAR c*" });
    assert.equal(literal.details.hits.length, 0, "FTS syntax in a plain pattern is text, not a query");
  });
});

for (const storage of STORAGES.slice(0, 1)) describe(`lcm_ask (${storage})`, () => {
  /** A host whose plugin-wide LLM is `complete`. */
  async function asked(complete, pluginConfig = {}) {
    const made = host(storage);
    Object.assign(made.h.api.pluginConfig, pluginConfig);
    // Compaction (extractive here) first; the stub LLM only answers lcm_ask.
    await plantedConversation(made.h, "agent:main:chat", "The staging vault path is kv/stg/db-QX17 and it rotates every 17 days.");
    made.h.api.runtime.llm = complete ? { complete } : undefined;
    return made.tools({ sessionId: "agent:main:chat-s", sessionKey: "agent:main:chat" });
  }

  test("the model asks, one LLM call gets the summarized-away original, the answer comes back short with the ids it rests on", async () => {
    const requests = [];
    const t = await asked(async (req) => {
      requests.push(req);
      const id = req.messages[0].content.match(/\[m(\d+)\] user[^\n]*\n[^\n]*kv\/stg\/db-QX17/)?.[1];
      return { text: `The vault path is kv/stg/db-QX17 [m${id}].`, model: "stub", stopReason: "stop" };
    });
    const out = await t.lcm_ask.execute("a1", { question: "Where is the staging vault path kv/stg/db-QX17 kept?" });
    assert.equal(requests.length, 1, "exactly one LLM call");
    assert.ok(requests[0].messages[0].content.startsWith("[lossless-wasm:ask]"));
    assert.ok(requests[0].messages[0].content.includes("kv/stg/db-QX17 and it rotates every 17 days"), "the original reached the request");
    assert.equal(out.details.outcome, "answered", out.content[0].text);
    assert.equal(out.details.citedMessageIds.length, 1);
    assert.match(out.content[0].text, new RegExp(`Rests on: m${out.details.citedMessageIds[0]}`));
    assert.ok(out.details.evidenceMessageIds.includes(out.details.citedMessageIds[0]));
    assert.ok(out.details.tokens <= 400);
    const original = await t.lcm_expand.execute("a2", { messageId: out.details.citedMessageIds[0] });
    assert.ok(original.content[0].text.includes("kv/stg/db-QX17"), "the cited id is the original message");
  });

  test("an LLM that fails, hangs past askTimeoutMs, or is absent gives a clear result that still carries the evidence ids", async () => {
    const failing = await asked(async () => {
      throw Object.assign(new Error("HTTP 503 upstream overloaded"), { status: 503 });
    });
    const failed = await failing.lcm_ask.execute("b1", { question: "the vault path kv/stg/db-QX17?" });
    assert.equal(failed.details.outcome, "llm_failed");
    assert.match(failed.content[0].text, /^No answer: the LLM call failed \(HTTP 503 upstream overloaded\)/);
    assert.ok(failed.details.evidenceMessageIds.length >= 1 && failed.content[0].text.includes(`m${failed.details.evidenceMessageIds[0]}`));

    let aborted = false;
    const hanging = await asked(async ({ signal }) => {
      signal.addEventListener("abort", () => { aborted = true; });
      await sleep(5_000, undefined, { signal }).catch(() => {});
      return { text: "too late" };
    }, { askTimeoutMs: 1000 });
    const late = await hanging.lcm_ask.execute("b2", { question: "the vault path kv/stg/db-QX17?" });
    assert.equal(late.details.outcome, "timed_out", late.content[0].text);
    assert.ok(aborted, "the LLM request was aborted");
    assert.match(late.content[0].text, /did not answer in time \(lcm_ask's LLM call timed out after 1000 ms\)/);
    assert.ok(late.details.evidenceMessageIds.length >= 1);

    const none = await asked(undefined);
    const noLlm = await none.lcm_ask.execute("b3", { question: "the vault path kv/stg/db-QX17?" });
    assert.equal(noLlm.details.outcome, "no_llm");
    assert.ok(noLlm.details.evidenceMessageIds.length >= 1);
  });

  test("nothing found makes no LLM call and says what to try", async () => {
    let calls = 0;
    const t = await asked(async () => {
      calls += 1;
      return { text: "x" };
    });
    const out = await t.lcm_ask.execute("c1", { question: "what about the zebra-quill-99 outage?" });
    assert.equal(calls, 0);
    assert.equal(out.details.outcome, "nothing_found");
    assert.match(out.content[0].text, /^Nothing found for this question \(searched for: zebra-quill-99/);
  });
});
