// Per-turn cost of storage "postgres" through the Node shim (engine worker + I/O worker + pg),
// against node:sqlite with the same harness: a session with STORED messages imported first
// (bootstrap), then TURNS turns of afterTurn (2 messages) + assemble, timed on the host's side.
// Statements per turn come from the driver's own count (storageStats). Needs LCM_PG_TEST_URL:
//   bash scripts/pg-server.sh run "$NODE26_BIN/node" bench/postgres-node.mjs [stored] [turns]
import { mkdtempSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createContextEngine } from "../dist/pkg/shim/context-engine.js";
import { openNodeEngine } from "../dist/pkg/shim/node-engine.js";

const STORED = Number(process.argv[2] ?? 1000);
const TURNS = Number(process.argv[3] ?? 100);
const url = process.env.LCM_PG_TEST_URL;
if (!url) throw new Error("LCM_PG_TEST_URL is not set: run through bash scripts/pg-server.sh run");
const pg = createRequire(import.meta.url)("pg");
const admin = new pg.Client({ connectionString: url });
await admin.connect();
for (const ext of ["pg_trgm", "unaccent"]) await admin.query(`CREATE EXTENSION IF NOT EXISTS ${ext} SCHEMA public`);
await admin.end();

let clock = 1_790_000_000_000;
const msg = (i) => (i % 2
  ? { role: "assistant", content: [{ type: "text", text: `reply ${i}: the parser handles this case by reading ahead one token and backing off` }], timestamp: clock++ }
  : { role: "user", content: `question ${i}: how does the parser deal with a trailing comma in a list literal?`, timestamp: clock++ });

async function run(label, config, dbPath) {
  const engine = createContextEngine(() => openNodeEngine(dbPath, config));
  const session = { sessionId: "s", sessionKey: "agent:main:bench" };
  const messages = Array.from({ length: STORED }, (_, i) => msg(i));
  let t = performance.now();
  await engine.bootstrap({ ...session, messages });
  const importMs = performance.now() - t;
  const handle = await openNodeEngine(dbPath, config);
  const times = [];
  const before = (await handle.storageStats())?.statements;
  for (let i = 0; i < TURNS; i++) {
    messages.push(msg(messages.length), msg(messages.length + 1));
    t = performance.now();
    await engine.afterTurn({ ...session, messages, prePromptMessageCount: messages.length - 2 });
    await engine.assemble({ ...session, messages, tokenBudget: 100_000 });
    times.push(performance.now() - t);
  }
  const after = (await handle.storageStats())?.statements;
  times.sort((a, b) => a - b);
  const pct = (p) => times[Math.min(times.length - 1, Math.floor(p * times.length))].toFixed(2);
  const perTurn = before === undefined ? "n/a" : ((after - before) / TURNS).toFixed(1);
  console.log(`| ${label} | ${STORED} | ${importMs.toFixed(0)} ms | ${perTurn} | ${pct(0.5)} / ${pct(0.95)} ms |`);
  await handle.close();
}

console.log("| backend | stored | import | statements per turn | turn p50 / p95 |");
console.log("|---|---|---|---|---|");
await run("node:sqlite (worker)", { storage: "node:sqlite" }, join(mkdtempSync(join(tmpdir(), "pg-bench-")), "db.sqlite"));
await run("postgres, loopback (worker + I/O worker)", { storage: "postgres", postgresUrl: url, postgresSchema: `bench_${process.pid}` }, "unused");
