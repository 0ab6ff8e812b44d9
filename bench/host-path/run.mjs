// One host-path measurement in a fresh process (so RSS and cold start are the plugin's own):
// drives the built plugin (dist/pkg) exactly as OpenClaw's embedded runner does — the factory
// every turn, assemble with the host's whole history, then afterTurn with the whole history (or
// commitTurn with the turn's messages, as 2026.9 does), then maintain — with an instant scripted
// summarizer. Prints one JSON object. Asserts nothing about speed.
//
//   node --expose-gc bench/host-path/run.mjs --size 10000 --storage node:sqlite [--shape mixed]
//        [--turns 30] [--commit afterTurn|commitTurn] [--dir /tmp/x] [--fresh]
//
// --fresh: the host rebuilds its history from its transcript before every call (new objects with
// equal content, every call), as a host that keeps no message objects between turns does. The
// copies are made before the turn's clock starts: they are the host's cost, not the plugin's.
import { mkdtempSync, rmSync, statSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createRequire } from "node:module";
import { transcriptBytes } from "./messages.mjs";
import { assembleParams, cpu, endTurn, hostHistory, llm, loadPlugin, PKG, quantile, session } from "./host.mjs";

const { values: args } = parseArgs({
  options: {
    size: { type: "string", default: "1000" },
    storage: { type: "string", default: "node:sqlite" },
    shape: { type: "string", default: "mixed" },
    turns: { type: "string", default: "30" },
    commit: { type: "string", default: "afterTurn" },
    grow: { type: "string" },
    dir: { type: "string" },
    keep: { type: "boolean", default: false },
    profile: { type: "string" },
    fresh: { type: "boolean", default: false },
  },
});
const size = Number(args.size);
const turns = Number(args.turns);
// Messages added through afterTurn after the bootstrap, in tool-loop turns.
const grow = Number(args.grow ?? Math.min(1000, Math.max(40, Math.floor(size / 10))));
const dir = args.dir ?? mkdtempSync(join(tmpdir(), "lossless-bench-"));
const dbPath = join(dir, "lossless.sqlite");
const gc = globalThis.gc ?? (() => {});
// What the host hands the plugin: its own objects, or (--fresh) a copy rebuilt from the
// transcript for each call.
const rebuilt = (messages) => (args.fresh ? JSON.parse(JSON.stringify(messages)) : messages);

// The host's history exists before the plugin loads; its memory is not the plugin's.
const { history, more } = hostHistory(args.shape, size, grow + turns * 8);
gc();
const rssBefore = process.memoryUsage().rss;

// A minimal host: register synchronously, then call the factory once per turn.
const startedLoad = performance.now();
const factory = await loadPlugin(dbPath, args.storage);
let engine = await factory({ config: {} });
const t0 = performance.now();
await engine.bootstrap({ ...session, messages: history });
const bootstrapMs = performance.now() - t0;
const loadMs = t0 - startedLoad;

/** CPU time of the host's thread so far, in ms (null where Node lacks threadCpuUsage). */
const hostThreadCpu = () => {
  const u = process.threadCpuUsage?.();
  return u ? (u.user + u.system) / 1000 : null;
};

// Growth on the host path: afterTurn with the whole history (or commitTurn with the turn's
// messages), one tool-loop turn at a time, each followed by maintain as the host does (maintain
// is not part of the ingest time).
let next = 0;
let growMs = 0;
let grown = 0;
while (grown < grow) {
  const turn = [];
  while (turn.length < 4 && next < more.length) turn.push(more[next++]);
  const pre = history.length;
  history.push(...turn);
  const [toEngine, turnToEngine] = args.commit === "afterTurn" ? [rebuilt(history), turn] : [history, rebuilt(turn)];
  const start = performance.now();
  await endTurn(engine, args.commit, toEngine, turnToEngine, pre);
  growMs += performance.now() - start;
  grown += turn.length;
  await engine.maintain({ ...session, runtimeContext: { llm } });
}
// Let compaction catch up with the imported history before measuring, as in a session that has
// run for a while: the host's compact() (a sweep to its target) until it has nothing to do.
let settleRounds = 0;
const settleStarted = performance.now();
while (settleRounds < 100) {
  const swept = await engine.compact({ ...session, tokenBudget: 128_000, force: true, runtimeContext: { llm, modelContextWindow: 128_000 } });
  if (!swept.compacted) break;
  settleRounds++;
}
while (settleRounds < 200 && (await engine.maintain({ ...session, runtimeContext: { llm } })).changed) settleRounds++;
const settleMs = performance.now() - settleStarted;

// --profile FILE: a CPU profile of the measured turns only.
let profiler;
if (args.profile) {
  const { Session } = await import("node:inspector/promises");
  profiler = new Session();
  profiler.connect();
  await profiler.post("Profiler.enable");
  await profiler.post("Profiler.setSamplingInterval", { interval: 50 });
}
const profiles = [];

// Garbage collections on the host's thread while a measured turn runs (count and ms): a call that
// yields to the event loop lets V8's scheduled collections of the host's own garbage run inside it.
const { PerformanceObserver } = await import("node:perf_hooks");
const gcEntries = [];
const turnWindows = [];
const gcObserver = new PerformanceObserver((list) => gcEntries.push(...list.getEntries().map((e) => [e.startTime, e.duration])));
gcObserver.observe({ entryTypes: ["gc"] });

// The measured turns: factory, assemble, afterTurn or commitTurn, maintain.
// Turns whose maintain summarized are counted apart: the budget is for turns that do not.
const perTurn = { cpu: [], hostThread: [], wall: [], assemble: [], commit: [], maintain: [] };
const compacting = { count: 0, wall: [] };
let viewMessages = 0;
for (let t = 0; t < turns; t++) {
  const turn = [];
  while (turn.length < 4 && next < more.length) turn.push(more[next++]);
  const pre = history.length;
  // The history before the turn (a copy of the array: the host's own grows below).
  const forAssemble = args.fresh ? rebuilt(history) : history.slice();
  history.push(...turn);
  const [forEnd, turnForEnd] = args.commit === "afterTurn" ? [rebuilt(history), turn] : [history, rebuilt(turn)];
  if (profiler) await profiler.post("Profiler.start");
  const c0 = cpu();
  const h0 = hostThreadCpu();
  const w0 = performance.now();
  engine = await factory({ config: {} });
  const view = await engine.assemble(assembleParams(forAssemble));
  const w1 = performance.now();
  viewMessages = view.messages.length;
  await endTurn(engine, args.commit, forEnd, turnForEnd, pre);
  const w2 = performance.now();
  const maintained = await engine.maintain({ ...session, runtimeContext: { llm } });
  const w3 = performance.now();
  const c3 = cpu();
  const h3 = hostThreadCpu();
  turnWindows.push([w0, w3]);
  if (profiler) {
    const { profile } = await profiler.post("Profiler.stop");
    if (!maintained.changed) profiles.push(profile);
  }
  if (maintained.changed) {
    compacting.count++;
    compacting.wall.push(w3 - w0);
    continue;
  }
  perTurn.cpu.push(c3 - c0);
  perTurn.hostThread.push(h3 - h0);
  perTurn.wall.push(w3 - w0);
  perTurn.assemble.push(w1 - w0);
  perTurn.commit.push(w2 - w1);
  perTurn.maintain.push(w3 - w2);
}
// The journal a live session keeps beside its database (node:sqlite's WAL, sql.js's journal):
// disk the plugin holds while the host runs. Closing the last connection removes a WAL.
const journalBytesOpen = ["-wal", ".lwjournal"].reduce((n, suffix) => n + (existsSync(dbPath + suffix) ? statSync(dbPath + suffix).size : 0), 0);
// Entries arrive after the collection; wait for the last turn's.
await new Promise((resolve) => setTimeout(resolve, 10));
gcObserver.disconnect();
const turnGc = gcEntries.filter(([at]) => turnWindows.some(([from, to]) => at >= from && at <= to));
await engine.dispose?.();
// The profiles of the turns that did not summarize, as a JSON array.
if (profiler) (await import("node:fs")).writeFileSync(args.profile, JSON.stringify(profiles));
const peakRss = process.resourceUsage().maxRSS * 1024;

// Storage against the host's own transcript of the same messages.
let dbBytes = 0;
let tables = {};
// What the database holds, read back as the engine will see it: node:sqlite's file and WAL, or
// sql.js's snapshot plus its journal (replayed in memory by the package's own reader).
let storedInDatabase = null;
if (args.storage === "node:sqlite") {
  const { DatabaseSync } = await import("node:sqlite");
  const db = new DatabaseSync(dbPath);
  db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  storedInDatabase = db.prepare("SELECT COUNT(*) AS n FROM messages").get().n;
  try {
    for (const row of db.prepare("SELECT name, SUM(pgsize) AS bytes FROM dbstat GROUP BY name ORDER BY bytes DESC").all()) tables[row.name] = row.bytes;
  } catch {
    tables = {};
  }
  db.close();
} else {
  const { readJournaledFile } = await import(new URL("shim/node/journal-file.js", PKG));
  const SQL = await createRequire(import.meta.url)(new URL("vendor/sql.js/sql-wasm.cjs", PKG).pathname)();
  const db = readJournaledFile(SQL, dbPath);
  storedInDatabase = db.exec("SELECT COUNT(*) FROM messages")[0].values[0][0];
  db.close();
}
for (const suffix of ["", "-wal", ".lwjournal"]) if (existsSync(dbPath + suffix)) dbBytes += statSync(dbPath + suffix).size;

const result = {
  size,
  storage: args.storage,
  shape: args.shape,
  commit: args.commit,
  fresh: args.fresh,
  storedMessages: history.length,
  storedInDatabase,
  // Messages of the continuation used (reopen.mjs rebuilds the same history from it).
  used: next,
  viewMessages,
  loadMs,
  bootstrapMs,
  bootstrapRate: size / (bootstrapMs / 1000),
  // Wall time, including the fsync that makes each turn durable.
  hostIngestRate: grown / (growMs / 1000),
  settleRounds,
  settleMs,
  measuredTurns: perTurn.cpu.length,
  compactingTurns: compacting.count,
  compactingWallP50: compacting.count ? quantile(compacting.wall, 0.5) : null,
  turnCpuP50: quantile(perTurn.cpu, 0.5),
  turnCpuP95: quantile(perTurn.cpu, 0.95),
  turnCpuMean: perTurn.cpu.reduce((a, b) => a + b, 0) / Math.max(1, perTurn.cpu.length),
  // The host's thread alone (process.threadCpuUsage): the process's figure also counts the
  // worker and V8's helper threads (concurrent marking of the host's heap among them).
  turnHostThreadCpuP50: quantile(perTurn.hostThread, 0.5),
  turnHostThreadCpuMean: perTurn.hostThread.reduce((a, b) => a + b, 0) / Math.max(1, perTurn.hostThread.length),
  // Collections on the host's thread inside the measured turns (all of them, summarizing or not).
  gcInTurns: turnGc.length,
  gcMsPerTurn: turnGc.reduce((ms, [, d]) => ms + d, 0) / Math.max(1, turns),
  turnWallP50: quantile(perTurn.wall, 0.5),
  turnWallP95: quantile(perTurn.wall, 0.95),
  assembleP50: quantile(perTurn.assemble, 0.5),
  commitP50: quantile(perTurn.commit, 0.5),
  maintainP50: quantile(perTurn.maintain, 0.5),
  dbBytes,
  journalBytesOpen,
  transcriptBytes: transcriptBytes(history),
  tables,
  // Peak memory while importing the history and serving the turns (see reopen.mjs for serving
  // turns alone).
  importRssAddedMiB: (peakRss - rssBefore) / 1048576,
};
result.storageRatio = result.dbBytes / result.transcriptBytes;
console.log(JSON.stringify(result));
if (!args.keep && !args.dir) rmSync(dir, { recursive: true, force: true });
