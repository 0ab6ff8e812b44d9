// The recall tools (lcm_grep, lcm_describe, lcm_expand) through the plugin entry, on the built
// package and real sql.js / node:sqlite: registered per session under the host's rules (every
// name declared in contracts.tools, profiles for coding and messaging), they bring back what was
// summarized away, and a session of one agent cannot read another agent's history.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { createFakeHost } from "./fake-host.mjs";
import { assistant, loadPlugin, PKG, STORAGES, tempDir, user } from "./support.mjs";

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
    assert.deepEqual(factories.flatMap((f) => f.names).sort(), ["lcm_describe", "lcm_expand", "lcm_grep"]);
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
    const expanded = await t.lcm_expand.execute("c3", { messageId: hit.id, maxTokens: 16000 });
    assert.ok(expanded.content[0].text.includes(outputs[0]), "expand returns the output whole");
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
    await assert.rejects(theirs.lcm_expand.execute("c", { messageId: hit.id }), /no message \d+ in this agent's history/);
    await assert.rejects(theirs.lcm_describe.execute("c", { summaryId: hit.coveredBy }), /no summary \d+ in this agent's history/);
    await assert.rejects(theirs.lcm_expand.execute("c", { summaryId: `sum_${hit.coveredBy}`, messages: true }), /in this agent's history/);
  });

  test("bad arguments get errors that name the argument", async () => {
    const { h, tools } = host(storage);
    await plantedConversation(h, "agent:main:chat", "anything");
    const t = tools({ sessionId: "agent:main:chat-s", sessionKey: "agent:main:chat" });
    await assert.rejects(t.lcm_grep.execute("c", { pattern: "x", since: "last tuesday-ish" }), /since: expected an ISO 8601 time/);
    await assert.rejects(t.lcm_grep.execute("c", { pattern: "\"unbalanced", mode: "full_text" }), /invalid full-text query/);
    await assert.rejects(t.lcm_expand.execute("c", {}), /summaryId or messageId/);
    await assert.rejects(t.lcm_expand.execute("c", { summaryId: "1; DROP TABLE messages" }), /`summaryId`: expected a numeric id/);
    const literal = await t.lcm_grep.execute("c", { pattern: "a OR b NEAR c*" });
    assert.equal(literal.details.hits.length, 0, "FTS syntax in a plain pattern is text, not a query");
  });
});
