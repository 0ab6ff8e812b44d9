// Child process for slow-summarizer.test.mjs: one `openclaw agent --local` turn, as OpenClaw
// 2026.9 runs it (deferred-host.mjs), with a summarizer that answers after `delayMs`; like the
// real CLI, the process exits as soon as the reply is out, whatever is still in flight. Prints one
// JSON line: when the turn's reply was ready, every summary request with its start and answer
// times (null: never answered in this process), and the catch-up log lines.
//   node slow-summarizer-child.mjs <dbPath> <historyJsonPath> <turnIndex> <delayMs> <configJson>
import { readFileSync, writeSync } from "node:fs";
import { createDeferredHost } from "./deferred-host.mjs";
import { loadPlugin } from "./support.mjs";
import { delayedLlm, longNote } from "./slow-llm.mjs";

const [dbPath, historyPath, index, delayMs, configJson] = process.argv.slice(2);
const history = JSON.parse(readFileSync(historyPath, "utf8"));
const llm = delayedLlm({ delayMs: Number(delayMs) });
const host = createDeferredHost({ plugin: await loadPlugin(), pluginConfig: { dbPath, ...JSON.parse(configJson) }, stateDir: dbPath + ".state", llm });
const started = Date.now();
const out = await host.turn("agent:main:slow", history, longNote(Number(index)));
const replied = Date.now();
writeSync(1, JSON.stringify({
  started,
  replied,
  turn: out.turn,
  preflight: out.preflight ?? null,
  requests: llm.requests.map((r) => ({ startedAt: r.startedAt, answeredAt: r.answeredAt ?? null })),
  logs: host.logs.filter(([, m]) => /background|catch-up|unanswered/.test(m)).map(([, m]) => m),
}) + "\n");
// `openclaw agent --local` (2026.9.6) exits right after its output: deferred maintenance and any
// summary request still out die with the process.
process.exit(0);
