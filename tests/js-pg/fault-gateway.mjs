// Child process for the PostgreSQL fault tests (faults.test.mjs): one "gateway" on a shared
// store, driven line by line over stdin so the test decides when each step happens, and
// reporting line by line on stdout what a host would see and log. Its LLM is scripted: it
// reports each summary request and answers only once the test says "release" (never, when the
// test kills the process first).
//
// Usage: node fault-gateway.mjs <schema> <name> <sessionKey> [openclaw]   (LCM_PG_TEST_URL set;
// LCM_PG_LOCK_TIMEOUT_MS, when set, is its config `lockTimeoutMs`)
// Commands (stdin)                     Replies (stdout)
//   turns N   N turns, one after another   "ack <key>" | "fail <key> <message>" each, then "turns-done"
//   loop      turns until "stop"           the same per turn, then "stopped"
//   compact B a forced compaction to B's target "compacted <report json>" | "fail compact <message>"
//   release   answer held requests, and every later one at once
// The LLM: "asked <name> <first key> <last key> <prompt hash>" per request; "answered <name>"
// when it answers. The engine's log: "log <level> <line>".
import { createHash } from "node:crypto";
import { writeSync } from "node:fs";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { createContextEngine } from "../../dist/pkg/shim/engine/context-engine.js";
import { openNodeEngine } from "../../dist/pkg/shim/node/engine.js";

// A fourth argument "openclaw": the engine as the OpenClaw plugin makes it (summaries in the
// background, requests recorded with this process's runner id, and leased once it stored turns).
const [schema, name, sessionKey, mode] = process.argv.slice(2);
const say = (line) => writeSync(1, `${line}\n`);
// One line per report, whatever the text holds, so the test can tell a one-line error from a
// multi-line one by looking at the raw text: newlines are shown as "\n".
const oneLine = (text) => String(text).replaceAll("\n", "\\n");

const config = {
  storage: "postgres", postgresUrl: process.env.LCM_PG_TEST_URL, postgresSchema: schema,
  freshTailCount: 4, leafChunkTokens: 1000, leafBudgetHeadroomFactor: 0, leafSkipReductionThreshold: 0, summarizer: "host",
  ...(process.env.LCM_PG_LOCK_TIMEOUT_MS ? { lockTimeoutMs: Number(process.env.LCM_PG_LOCK_TIMEOUT_MS) } : {}),
};

let released = false;
const held = [];
const llm = {
  complete: async (request) => {
    const prompt = request.messages.map((m) => m.content).join("\n");
    const keys = prompt.match(new RegExp(`\\b[A-Z]+-\\d+(?=:)`, "g")) ?? [];
    say(`asked ${name} ${keys[0]} ${keys.at(-1)} ${createHash("sha256").update(prompt).digest("hex").slice(0, 16)}`);
    if (!released) await new Promise((resolve) => held.push(resolve));
    say(`answered ${name}`);
    // Each answer names its range: an answer made only of the previous summary's lines is an
    // echo (docs/summarization.md), and a real summarizer says something new about new messages.
    return { text: `## Goal\n- keep the harbor plan moving (summary written by ${name})\n## Progress\n- answered the questions ${keys[0]} to ${keys.at(-1)}`, provider: "scripted", model: `scripted-${name}` };
  },
};
const logger = { info: (line) => say(`log info ${oneLine(line)}`), warn: (line) => say(`log warn ${oneLine(line)}`) };
const engine = createContextEngine(() => openNodeEngine("unused", config), { logger, config, hostLlm: () => llm, summariesInBackground: mode === "openclaw" });

let turn = 0;
/** One host turn: the view, then the turn's two messages; what the host would log on failure. */
async function oneTurn() {
  const key = `${name}-${turn++}`;
  const ts = Date.now() * 1000 + turn;
  try {
    await engine.assemble({ sessionId: sessionKey, sessionKey, messages: [], tokenBudget: 100_000 });
    await engine.commitTurn({
      sessionId: sessionKey, sessionKey, advancementKey: key,
      messages: [
        { role: "user", content: `${key}: ${"a question about the harbor plan ".repeat(12)}`, timestamp: ts },
        { role: "assistant", content: [{ type: "text", text: `${key}: ${"an answer about the harbor plan ".repeat(12)}` }], timestamp: ts + 1 },
      ],
    });
    say(`ack ${key}`);
  } catch (err) {
    say(`fail ${key} ${oneLine(err?.message ?? err)}`);
  }
}

let looping = null;
const commands = {
  async turns(n) {
    for (let i = 0; i < Number(n); i++) await oneTurn();
    say("turns-done");
  },
  loop() {
    let stop = false;
    looping = {
      stop: () => { stop = true; },
      // Paced so a long outage does not become a busy loop; the test never relies on the pace.
      done: (async () => { while (!stop) { await oneTurn(); await sleep(20); } })(),
    };
  },
  async stop() {
    looping?.stop();
    await looping?.done;
    say("stopped");
  },
  async compact(budget) {
    try {
      const report = await engine.compact({ sessionId: sessionKey, sessionKey, force: true, tokenBudget: Number(budget), runtimeContext: { trigger: "manual" } });
      say(`compacted ${JSON.stringify(report)}`);
    } catch (err) {
      say(`fail compact ${oneLine(err?.message ?? err)}`);
    }
  },
  release() {
    released = true;
    for (const resolve of held.splice(0)) resolve();
  },
};

// Commands run as they arrive (a "release" must reach a compaction that is waiting).
for await (const line of createInterface({ input: process.stdin })) {
  const [command, ...args] = line.trim().split(/\s+/);
  if (!commands[command]) { say(`error unknown command ${command}`); continue; }
  commands[command](...args);
}
