// Crash safety beyond commitTurn (durability.test.mjs covers that): SIGKILL at random points of
// compaction apply, bootstrap import and schema migration, per storage driver. After every kill
// the database opens, passes integrity_check, holds everything acknowledged, and has no
// half-applied write: no summary without its DAG edges, no context item pointing at nothing, no
// partial import, no half-run migration. LOSSLESS_KILLS sets the kills per driver and write
// point (20 here; scripts/reliability.sh runs 100).
import assert from "node:assert/strict";
import { copyFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { runUntilKilled } from "../kill-harness.mjs";
import { inspectSoak } from "../soak-host.mjs";
import { withStored } from "../stored-db.mjs";
import { STORAGES, tempDir } from "../support.mjs";

const KILLS = Number(process.env.LOSSLESS_KILLS ?? 20);
const IMPORT_SIZE = 150;
const writer = new URL("../crash-writer.mjs", import.meta.url).pathname;
/** Runs the writer and SIGKILLs it `delayMs` after it is ready (a writer may also finish by itself). */
const killWriter = (args, delayMs, options = {}) => runUntilKilled(writer, args, delayMs, { ...options, mustBeKilled: false });
const { DatabaseSync } = process.getBuiltinModule?.("node:sqlite") ?? {};


/** Reads the stored state as the engine sees it (a sql.js file with its journal replayed). */
const read = (dbPath, fn) => withStored(dbPath, (db) => fn((sql) => db.all(sql)), { readOnly: false });

/** A database as schema version 1 wrote it, with `n` messages, for the migration kills. */
function oldDatabase(path, n) {
  const db = new DatabaseSync(path);
  db.exec(readFileSync(new URL("../../../src/store/backend/migrations/001_conversations_messages.sql", import.meta.url), "utf8"));
  db.exec("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL); INSERT INTO schema_migrations VALUES (1, 0);");
  db.exec("INSERT INTO conversations (id, session_key, session_id, created_at, message_count) VALUES (1, 'm', 'm', 0, " + n + ")");
  const insert = db.prepare("INSERT INTO messages (conversation_id, seq, role, content, token_count, identity_hash, host_timestamp, raw_json, created_at) VALUES (1, ?, 'user', ?, 60, ?, ?, ?, 0)");
  db.exec("BEGIN");
  for (let i = 1; i <= n; i++) {
    const content = `old message ${i} ${"lorem ipsum dolor ".repeat(12)}`;
    insert.run(i, content, `h${i}`, i, JSON.stringify({ role: "user", content, timestamp: i }));
  }
  db.exec("COMMIT");
  db.close();
}

const delay = (run, max) => Math.floor(Math.random() * (run < 3 ? 20 : max));

if (!DatabaseSync) throw new Error("the crash tests read the database with node:sqlite; run them with Node >= 22.5");

for (const storage of STORAGES) describe(`storage ${storage}`, () => {
  test(`SIGKILL during compaction apply (${KILLS} kills): acknowledged turns kept, no half-applied compaction`, { timeout: 900_000 }, async (t) => {
    const dbPath = join(tempDir(`crash-compaction-${storage.replace(":", "")}`), "db.sqlite");
    const acked = [];
    for (let run = 0; run < KILLS; run++) {
      acked.push(...(await killWriter([dbPath, storage, "compaction", `r${run}`], delay(run, 400))).acks);
      const turns = read(dbPath, (q) => new Set(q("SELECT advancement_key AS k FROM turn_advancements").map((r) => r.k)));
      const state = await inspectSoak(dbPath, { length: turns.size * 2 });
      assert.equal(state.integrity, "ok", `integrity after kill ${run}`);
      assert.deepEqual(acked.filter((k) => !turns.has(k)), [], `acknowledged turns missing after kill ${run}`);
      assert.equal(state.storedMessages, turns.size * 2, `every stored turn whole after kill ${run}`);
      assert.equal(state.reachableMessages, state.storedMessages, `every message reachable after kill ${run}`);
      assert.equal(state.halfApplied, 0, `half-applied compaction after kill ${run}`);
    }
    const [{ n }] = read(dbPath, (q) => q("SELECT COUNT(*) AS n FROM summaries"));
    assert.ok(n > 0, "compactions were applied between the kills");
    t.diagnostic(`${acked.length} turns acknowledged, ${n} summaries, ${KILLS} kills`);
  });

  test(`SIGKILL during bootstrap import (${KILLS} kills): acknowledged imports whole, no partial import`, { timeout: 900_000 }, async (t) => {
    const dbPath = join(tempDir(`crash-bootstrap-${storage.replace(":", "")}`), "db.sqlite");
    const acked = [];
    for (let run = 0; run < KILLS; run++) {
      acked.push(...(await killWriter([dbPath, storage, "bootstrap", `r${run}`], delay(run, 300))).acks);
      const counts = read(dbPath, (q) => new Map(q("SELECT c.session_key AS k, COUNT(m.id) AS n FROM conversations c LEFT JOIN messages m ON m.conversation_id = c.id GROUP BY c.id").map((r) => [r.k, r.n])));
      const [{ integrity_check }] = read(dbPath, (q) => q("PRAGMA integrity_check"));
      assert.equal(integrity_check, "ok");
      for (const key of acked) assert.equal(counts.get(key), IMPORT_SIZE, `acknowledged import ${key} after kill ${run}`);
      for (const [key, n] of counts) if (key.startsWith("import-")) assert.ok(n === IMPORT_SIZE || n === 0, `partial import ${key}: ${n} after kill ${run}`);
    }
    t.diagnostic(`${acked.length} imports of ${IMPORT_SIZE} messages acknowledged, ${KILLS} kills`);
  });

  test(`SIGKILL during schema migration (${KILLS} kills): each migration all or nothing, data kept, the next open finishes it`, { timeout: 900_000 }, async (t) => {
    const dir = tempDir(`crash-migration-${storage.replace(":", "")}`);
    const template = join(dir, "v1.sqlite");
    const N = 3000;
    oldDatabase(template, N);
    let interrupted = 0;
    for (let run = 0; run < KILLS; run++) {
      const dbPath = join(dir, `run${run}.sqlite`);
      copyFileSync(template, dbPath);
      const { acks } = await killWriter([dbPath, storage, "migration", `r${run}`], 30 + Math.floor(Math.random() * 400), { waitReady: false });
      const state = read(dbPath, (q) => ({
        integrity: q("PRAGMA integrity_check")[0].integrity_check,
        version: q("SELECT MAX(version) AS v FROM schema_migrations")[0].v,
        messages: q("SELECT COUNT(*) AS n FROM messages")[0].n,
        items: q("SELECT COUNT(*) AS n FROM sqlite_master WHERE name = 'context_items'")[0].n ? q("SELECT COUNT(*) AS n FROM context_items")[0].n : null,
      }));
      assert.equal(state.integrity, "ok", `integrity after kill ${run}`);
      assert.equal(state.messages, N, "no message lost");
      if (state.version === 1) assert.equal(state.items, null, "version 1 has no half-created version 2 tables");
      else assert.equal(state.items, N, "version 2 complete: every message has its context item");
      if (!acks.includes("migrated")) interrupted++;
      // The next open completes the migration.
      const again = await killWriter([dbPath, storage, "migration", `again${run}`], 60_000, { waitReady: false });
      assert.deepEqual(again.acks, ["migrated"]);
      const after = read(dbPath, (q) => ({ version: q("SELECT MAX(version) AS v FROM schema_migrations")[0].v, messages: q("SELECT COUNT(*) AS n FROM messages")[0].n }));
      assert.ok(after.version >= 3, `migrated to ${after.version}`);
      assert.equal(after.messages, N);
    }
    t.diagnostic(`${interrupted} of ${KILLS} migrations killed before they finished`);
  });
});
