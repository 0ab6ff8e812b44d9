// How long the plugin's calls hold the host's event loop (issue 24, item 1): the longest gap
// between the ticks of a 1 ms timer while each call is pending, on the moments the issue names:
// the first turn of an agent with a long history (imported on that call), a turn while another
// process holds the database's write lock, ordinary turns after the import, lcm_grep for a
// common word over the whole history, and /lcm doctor. One fresh process per case; drives the
// built plugin as OpenClaw does (bench/host-path/host.mjs). Asserts nothing about speed.
// PostgreSQL (worker only: the driver refuses the main thread) runs when LCM_PG_TEST_URL names a
// server (`bash scripts/pg-server.sh run node bench/event-loop.mjs --report`), in a schema of its
// own; there the lock is another process's transaction holding the conversation's row.
//
//   node bench/event-loop.mjs [--size 20000] [--storage node:sqlite|sql.js|postgres] [--thread worker|main]
//        [--lock-ms 3000] [--turns 30]       prints one JSON object
//   node bench/event-loop.mjs --report [--size 20000]   runs every storage × thread, prints a table
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { assembleParams, endTurn, hostHistory, llm, loadPlugin, PKG, session } from "./host-path/host.mjs";

const { values: args } = parseArgs({
  options: {
    size: { type: "string", default: "20000" },
    storage: { type: "string", default: "node:sqlite" },
    thread: { type: "string", default: "worker" },
    "lock-ms": { type: "string", default: "3000" },
    turns: { type: "string", default: "30" },
    report: { type: "boolean", default: false },
  },
});

if (args.report) {
  const rows = [];
  for (const storage of ["node:sqlite", "sql.js", ...(process.env.LCM_PG_TEST_URL ? ["postgres"] : [])]) {
    for (const thread of storage === "postgres" ? ["worker"] : ["main", "worker"]) {
      const run = spawnSync(process.execPath, [fileURLToPath(import.meta.url), "--size", args.size, "--storage", storage, "--thread", thread, "--lock-ms", args["lock-ms"], "--turns", args.turns], { encoding: "utf8", maxBuffer: 1 << 24 });
      if (run.status !== 0) throw new Error(`${storage}/${thread} failed: ${run.stderr}`);
      rows.push(JSON.parse(run.stdout.trim().split("\n").pop()));
    }
  }
  const ms = (x) => (x == null ? "–" : `${x.toFixed(0)} ms`);
  console.log(`| storage | storageThread | first turn, ${Number(args.size).toLocaleString("en-US")} messages imported | turn while another process holds the lock ${args["lock-ms"]} ms | ordinary turns (max) | lcm_grep | /lcm doctor |`);
  console.log("|---|---|---|---|---|---|---|");
  for (const r of rows) {
    console.log(`| ${r.storage} | ${r.thread} | ${ms(r.stall.firstTurn)} (call ${ms(r.wall.firstTurn)}) | ${r.stall.lockedTurn == null ? "n/a (sql.js: one process per file)" : `${ms(r.stall.lockedTurn)} (call ${ms(r.wall.lockedTurn)})`} | ${ms(r.stall.ordinaryTurns)} | ${ms(r.stall.grep)} | ${ms(r.stall.doctor)} |`);
  }
  process.exit(0);
}

const size = Number(args.size);
const lockMs = Number(args["lock-ms"]);
const dir = mkdtempSync(join(tmpdir(), "lossless-event-loop-"));
const dbPath = join(dir, "lossless.sqlite");
const postgres = args.storage === "postgres" ? { postgresUrl: process.env.LCM_PG_TEST_URL, postgresSchema: `event_loop_${process.pid}` } : {};
if (args.storage === "postgres" && !postgres.postgresUrl) throw new Error("--storage postgres needs LCM_PG_TEST_URL: run through bash scripts/pg-server.sh run");
process.env.LOSSLESS_WASM_CONFIG = JSON.stringify({ ...JSON.parse(process.env.LOSSLESS_WASM_CONFIG ?? "{}"), storageThread: args.thread, ...postgres });

/** Runs `work` with a 1 ms probe timer; the longest gap between its ticks (beyond the 1 ms), and the call's wall time. */
async function probed(work) {
  let last = performance.now();
  let worst = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last - 1);
    last = now;
  }, 1);
  const started = performance.now();
  last = started;
  try {
    const result = await work();
    const now = performance.now();
    worst = Math.max(worst, now - last - 1);
    return { stall: Math.max(0, worst), wall: now - started, result };
  } finally {
    clearInterval(timer);
  }
}

/** A child process holding the database's write lock for `ms` once it says "locked". */
function holdLock(ms) {
  const code = `
    const { DatabaseSync } = require("node:sqlite");
    const db = new DatabaseSync(process.argv[1]);
    db.exec("PRAGMA busy_timeout = 10000; BEGIN IMMEDIATE; CREATE TABLE IF NOT EXISTS bench_lock (x)");
    process.stdout.write("locked\\n");
    setTimeout(() => { db.exec("COMMIT"); db.close(); }, Number(process.argv[2]));
  `;
  const child = spawn(process.execPath, ["-e", code, dbPath, String(ms)], { stdio: ["ignore", "pipe", "inherit"] });
  return lockHeld(child);
}

/** A child process holding the PostgreSQL conversation's row for `ms` once it says "locked". */
function holdRow(ms) {
  const code = `
    const pg = require(${JSON.stringify(createRequire(import.meta.url).resolve("pg"))});
    const c = new pg.Client({ connectionString: process.env.LCM_PG_TEST_URL });
    (async () => {
      await c.connect();
      await c.query("BEGIN");
      const { rowCount } = await c.query("SELECT 1 FROM ${postgres.postgresSchema}.conversations WHERE session_key = $1 FOR UPDATE", [process.argv[1]]);
      if (rowCount !== 1) throw new Error("no conversation row to lock");
      process.stdout.write("locked\\n");
      setTimeout(async () => { await c.query("COMMIT"); await c.end(); }, Number(process.argv[2]));
    })();
  `;
  const child = spawn(process.execPath, ["-e", code, session.sessionKey, String(ms)], { stdio: ["ignore", "pipe", "inherit"] });
  return lockHeld(child);
}

/** The lock holder `child`: `locked` resolves once it holds the lock, `exited` when it is done. */
function lockHeld(child) {
  const locked = new Promise((resolve, reject) => {
    child.stdout.on("data", (c) => { if (String(c).includes("locked")) resolve(); });
    child.on("exit", (code) => reject(new Error(`lock holder exited (${code})`)));
  });
  return { locked, exited: new Promise((resolve) => child.on("exit", resolve)) };
}

const { history, more } = hostHistory("mixed", size, 8 * (Number(args.turns) + 4));
const factory = await loadPlugin(dbPath, args.storage);
let next = 0;
const nextTurn = () => {
  const turn = [];
  while (turn.length < 4 && next < more.length) turn.push(more[next++]);
  return turn;
};

/** One host turn: factory, bootstrap (first turn only), assemble, commitTurn, maintain. */
async function turn(first) {
  const engine = await factory({ config: {} });
  if (first) await engine.bootstrap({ ...session, messages: history });
  await engine.assemble(assembleParams(history));
  const added = nextTurn();
  const pre = history.length;
  history.push(...added);
  await endTurn(engine, "commitTurn", history, added, pre);
  await engine.maintain({ ...session, runtimeContext: { llm } });
}

const stall = {};
const wall = {};
const firstTurn = await probed(() => turn(true));
stall.firstTurn = firstTurn.stall;
wall.firstTurn = firstTurn.wall;

if (args.storage !== "sql.js") {
  const holder = args.storage === "postgres" ? holdRow(lockMs) : holdLock(lockMs);
  await holder.locked;
  const locked = await probed(() => turn(false));
  stall.lockedTurn = locked.stall;
  wall.lockedTurn = locked.wall;
  await holder.exited;
} else {
  stall.lockedTurn = null;
}

let worstTurn = 0;
for (let t = 0; t < Number(args.turns); t++) worstTurn = Math.max(worstTurn, (await probed(() => turn(false))).stall);
stall.ordinaryTurns = worstTurn;

const plugin = (await import(new URL("shim/index.js", PKG))).default;
let tools;
let command;
plugin.register({
  id: "lossless-wasm", registrationMode: "full",
  pluginConfig: { dbPath, storage: args.storage, storageThread: args.thread, ...postgres },
  logger: { debug() {}, info() {}, warn() {}, error() {} }, runtime: { version: "2026.9.6" }, on() {},
  registerTool(f) { tools = f(session); }, registerCommand(c) { command = c; }, registerContextEngine() {},
});
const grepTool = tools.find((t) => t.name === "lcm_grep");
await grepTool.execute("warm", { pattern: "the", limit: 20 });
const grep = await probed(() => grepTool.execute("g1", { pattern: "the", limit: 20 }));
stall.grep = grep.stall;
const doctor = await probed(() => command.handler({ args: "doctor --dry-run", ...session, channel: "bench", isAuthorizedSender: true }));
stall.doctor = doctor.stall;

console.log(JSON.stringify({ size, storage: args.storage, thread: args.thread, lockMs, stall, wall, grepAnswered: Boolean(grep.result?.content?.[0]?.text), doctorAnswered: Boolean(doctor.result?.text) }));
rmSync(dir, { recursive: true, force: true });
process.exit(0);
