// The second process of a host-path case (run.mjs starts it on the database it built): the
// plugin's cold start against a database that already holds the history (load wasm and the
// storage driver, open, first assemble with the host's whole history) and the memory it adds
// while serving turns — without the one-off cost of importing the history, which run.mjs reports.
// Prints one JSON object.
//
//   node --expose-gc bench/host-path/reopen.mjs --dir D --storage S --shape SH --size N --used K
//        [--turns 30] [--commit afterTurn|commitTurn]
import { join } from "node:path";
import { parseArgs } from "node:util";
import { assembleParams, cpu, endTurn, hostHistory, llm, loadPlugin, quantile, session } from "./host.mjs";

const { values: args } = parseArgs({
  options: {
    dir: { type: "string" },
    storage: { type: "string", default: "node:sqlite" },
    shape: { type: "string", default: "mixed" },
    size: { type: "string" },
    used: { type: "string" },
    turns: { type: "string", default: "30" },
    commit: { type: "string", default: "afterTurn" },
  },
});
const turns = Number(args.turns);
const used = Number(args.used);
const { history, more } = hostHistory(args.shape, Number(args.size), used + turns * 8);
history.push(...more.slice(0, used));
let next = used;
globalThis.gc?.();
const rssBefore = process.memoryUsage().rss;

const started = performance.now();
const factory = await loadPlugin(join(args.dir, "lossless.sqlite"), args.storage);
let engine = await factory({ config: {} });
const first = await engine.assemble(assembleParams(history));
const coldStartMs = performance.now() - started;

const cpuTimes = [];
for (let t = 0; t < turns; t++) {
  const turn = more.slice(next, next + 4);
  next += turn.length;
  const c0 = cpu();
  engine = await factory({ config: {} });
  await engine.assemble(assembleParams(history));
  const pre = history.length;
  history.push(...turn);
  await endTurn(engine, args.commit, history, turn, pre);
  const maintained = await engine.maintain({ ...session, runtimeContext: { llm } });
  if (!maintained.changed) cpuTimes.push(cpu() - c0);
}
await engine.dispose?.();
console.log(JSON.stringify({
  coldStartMs,
  firstViewMessages: first.messages.length,
  reopenTurnCpuP50: quantile(cpuTimes, 0.5),
  reopenRssAddedMiB: (process.resourceUsage().maxRSS * 1024 - rssBefore) / 1048576,
}));
