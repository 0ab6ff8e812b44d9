// Per-turn cost of storage "postgres" through the Node shim (engine worker + I/O worker + pg),
// against node:sqlite with the same harness, at several sizes of stored history. For each size:
// a session with STORED messages imported first (bootstrap), then 3 warm-up turns and TURNS
// timed turns of afterTurn (2 messages) + assemble, timed on the host's side (or commitTurn,
// OpenClaw 2026.9's call, with the turn's 2 messages and a fresh advancement key + assemble). PostgreSQL runs
// four ways, each on a schema imported afresh over the direct connection: direct (loopback) and
// through bench/pg-proxy.mjs (a delay each way, a 3 ms round trip), each with the driver's
// deferred statements off (every statement waits: LOSSLESS_WASM_POSTGRES_DEFER=0) and on. The
// proxy is the precise one (examples/delay_proxy.rs, a process of its own): it adds RTT_MS
// (default 3), half each way, to every round trip.
// Statements and waits per turn are the driver's own counts (storageStats); a wait is one round
// trip to the server. Needs LCM_PG_TEST_URL (a loopback server):
//   bash scripts/pg-server.sh run "$NODE26_BIN/node" bench/postgres-node.mjs [stored,…] [turns] [afterTurn|commitTurn] [rtt ms]
// e.g. bench/postgres-node.mjs 1000,10000 50 commitTurn 3
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createContextEngine } from "../dist/pkg/shim/engine/context-engine.js";
import { openNodeEngine } from "../dist/pkg/shim/node/engine.js";
import { startPreciseProxy } from "./pg-proxy.mjs";

const SIZES = String(process.argv[2] ?? "1000,10000").split(",").map(Number);
const TURNS = Number(process.argv[3] ?? 50);
const CALL = process.argv[4] ?? "afterTurn";
const WARMUP = 3;
// The round trip the proxy adds, half towards the server and half back.
const RTT_MS = Number(process.argv[5] ?? 3);
const HALF_US = Math.round((RTT_MS * 1000) / 2);
const DEFER_ENV = "LOSSLESS_WASM_POSTGRES_DEFER";

const url = process.env.LCM_PG_TEST_URL;
if (!url) throw new Error("LCM_PG_TEST_URL is not set: run through bash scripts/pg-server.sh run");
const server = new URL(url);
if (!/^(127\.|::1$|\[::1\]$|localhost$)/.test(server.hostname)) throw new Error(`only a loopback server, not ${server.hostname}`);
if (!SIZES.every((n) => Number.isInteger(n) && n > 0 && n <= 200_000) || !(TURNS > 0 && TURNS <= 1000) || !["afterTurn", "commitTurn"].includes(CALL) || !(RTT_MS >= 0 && RTT_MS <= 100)) {
  throw new Error("usage: postgres-node.mjs [stored,… ≤ 200000] [turns ≤ 1000] [afterTurn|commitTurn] [rtt ms ≤ 100]");
}
const pg = createRequire(import.meta.url)("pg");

async function admin(sql) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(sql)).rows;
  } finally {
    await c.end();
  }
}
for (const ext of ["pg_trgm", "unaccent"]) await admin(`CREATE EXTENSION IF NOT EXISTS ${ext} SCHEMA public`);

const proxy = await startPreciseProxy({ target: { host: server.hostname, port: Number(server.port) }, upUs: HALF_US, downUs: HALF_US });
const proxied = new URL(url);
proxied.port = String(proxy.port);

/** p50 of 100 `SELECT 1` round trips over `connectionString`. */
async function rtt(connectionString) {
  const c = new pg.Client({ connectionString });
  await c.connect();
  const times = [];
  for (let i = 0; i < 100; i++) {
    const t = performance.now();
    await c.query("SELECT 1");
    times.push(performance.now() - t);
  }
  await c.end();
  return times.sort((a, b) => a - b)[50];
}

let clock = 1_790_000_000_000;
const msg = (i) => (i % 2
  ? { role: "assistant", content: [{ type: "text", text: `reply ${i}: the parser handles this case by reading ahead one token and backing off` }], timestamp: clock++ }
  : { role: "user", content: `question ${i}: how does the parser deal with a trailing comma in a list literal?`, timestamp: clock++ });
const session = { sessionId: "s", sessionKey: "agent:main:bench" };
const history = (n) => Array.from({ length: n }, (_, i) => msg(i));

/** Imports `messages` with a fresh engine and closes it; returns the import's milliseconds. */
async function importHistory(dbPath, config, messages) {
  const engine = createContextEngine(() => openNodeEngine(dbPath, config));
  const t = performance.now();
  await engine.bootstrap({ ...session, messages });
  const ms = performance.now() - t;
  await (await openNodeEngine(dbPath, config)).close();
  return ms;
}

/** Warm-up then timed turns on an engine opened afresh; per-turn statements, waits, p50, p95. */
async function turns(dbPath, config, messages) {
  const engine = createContextEngine(() => openNodeEngine(dbPath, config));
  const handle = await openNodeEngine(dbPath, config);
  const turn = async () => {
    const fresh = [msg(messages.length), msg(messages.length + 1)];
    messages.push(...fresh);
    if (CALL === "commitTurn") {
      const out = await engine.commitTurn({ ...session, advancementKey: `turn-${messages.length}`, messages: fresh });
      if (out.status !== "committed") throw new Error(`commitTurn answered ${JSON.stringify(out)}`);
    } else {
      await engine.afterTurn({ ...session, messages, prePromptMessageCount: messages.length - 2 });
    }
    await engine.assemble({ ...session, messages, tokenBudget: 100_000 });
  };
  for (let i = 0; i < WARMUP; i++) await turn();
  const before = await handle.storageStats();
  const times = [];
  for (let i = 0; i < TURNS; i++) {
    const t = performance.now();
    await turn();
    times.push(performance.now() - t);
  }
  const after = await handle.storageStats();
  await handle.close();
  times.sort((a, b) => a - b);
  const pct = (p) => times[Math.min(times.length - 1, Math.floor(p * times.length))];
  const per = (key) => (before?.[key] === undefined ? undefined : (after[key] - before[key]) / TURNS);
  return { statements: per("statements"), waits: per("waits"), p50: pct(0.5), p95: pct(0.95) };
}

const rows = [];
const row = (label, stored, importMs, r) => {
  const n = (v) => (v === undefined ? "—" : v.toFixed(1));
  const line = `| ${label} | ${stored >= 1000 ? `${stored / 1000}K` : stored} | ${importMs.toFixed(0)} ms | ${n(r.statements)} | ${n(r.waits)} | ${r.p50.toFixed(2)} / ${r.p95.toFixed(2)} ms |`;
  rows.push(line);
  console.error(line);
};

const directRtt = await rtt(url);
const proxyRtt = await rtt(proxied.href);
console.error(`SELECT 1 round trip p50: direct ${directRtt.toFixed(2)} ms, through the proxy (+${RTT_MS} ms) ${proxyRtt.toFixed(2)} ms`);

const MODES = [
  { label: "postgres direct, deferral off", url, defer: "0" },
  { label: "postgres direct, deferral on", url, defer: "1" },
  { label: `postgres +${RTT_MS} ms RTT, deferral off`, url: proxied.href, defer: "0" },
  { label: `postgres +${RTT_MS} ms RTT, deferral on`, url: proxied.href, defer: "1" },
];

try {
  for (const stored of SIZES) {
    const dir = mkdtempSync(join(tmpdir(), "pg-bench-"));
    const sqlite = { storage: "node:sqlite" };
    const file = join(dir, "db.sqlite");
    const messages = history(stored);
    const importMs = await importHistory(file, sqlite, messages);
    row("node:sqlite (worker)", stored, importMs, await turns(file, sqlite, messages));
    rmSync(dir, { recursive: true, force: true });
    for (const [i, mode] of MODES.entries()) {
      const schema = `bench_${process.pid}_${stored}_${i}`;
      const history_ = history(stored);
      // Imported over the direct connection: only the turns are measured through the proxy.
      const ms = await importHistory("unused", { storage: "postgres", postgresUrl: url, postgresSchema: schema }, history_);
      process.env[DEFER_ENV] = mode.defer;
      try {
        row(mode.label, stored, ms, await turns("unused", { storage: "postgres", postgresUrl: mode.url, postgresSchema: schema }, history_));
      } finally {
        delete process.env[DEFER_ENV];
        await admin(`DROP SCHEMA ${schema} CASCADE`);
      }
    }
  }
} finally {
  await proxy.close();
}

console.log(`SELECT 1 round trip p50: direct ${directRtt.toFixed(2)} ms, through the proxy ${proxyRtt.toFixed(2)} ms; ${TURNS} timed turns (${CALL} + assemble) after ${WARMUP} warm-up turns`);
console.log("");
console.log("| backend | stored | import | statements per turn | waits (round trips) per turn | turn p50 / p95 |");
console.log("|---|---|---|---|---|---|");
for (const line of rows) console.log(line);
