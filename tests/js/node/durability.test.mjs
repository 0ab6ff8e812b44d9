// Crash safety: a process committing turns is killed with SIGKILL at random points, many times.
// After every kill the database must open, pass PRAGMA integrity_check, and hold every turn that
// was acknowledged before the kill — each with both of its messages (commits are atomic). For
// sql.js that is the snapshot plus its journal (kills land in appends and in checkpoints), and
// the next writer's open must succeed on whatever the kill left. node:sqlite runs with the default
// config (durability "normal": commits are not fsynced, yet a killed process loses none of them)
// and with the opt-in durability "full".
import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, test } from "node:test";
import { runUntilKilled } from "../kill-harness.mjs";
import { withStored } from "../stored-db.mjs";
import { PKG, STORAGES, tempDir } from "../support.mjs";

const { journalPath, readJournal } = await import(new URL("shim/node/journal-file.js", PKG));
const { openNodeEngine } = await import(new URL("shim/node/engine.js", PKG));
const { createContextEngine } = await import(new URL("shim/engine/context-engine.js", PKG));

const KILLS = Number(process.env.LOSSLESS_KILLS ?? 50);
const writer = new URL("../durability-writer.mjs", import.meta.url).pathname;
const killedAcks = async (dbPath, storage, durability, run, delayMs) =>
  (await runUntilKilled(writer, [dbPath, storage, run, ...(durability ? [durability] : [])], delayMs)).acks;
/** Each driver with its default config; node:sqlite also with the opt-in durability. */
const VARIANTS = STORAGES.flatMap((storage) => storage === "node:sqlite" ? [{ storage }, { storage, durability: "full" }] : [{ storage }]);
/** PRAGMA synchronous each variant's connection must report (node:sqlite only). */
const SYNCHRONOUS = { normal: 1, full: 2 };


/** The stored state as the engine sees it (a sql.js file with its journal replayed). */
function inspect(dbPath) {
  return withStored(dbPath, (db) => ({
    integrity: db.all("PRAGMA integrity_check")[0].integrity_check,
    keys: new Set(db.all("SELECT advancement_key AS k FROM turn_advancements").map((r) => r.k)),
    messages: db.all("SELECT COUNT(*) AS n FROM messages")[0].n,
  }), { readOnly: false });
}

for (const { storage, durability } of VARIANTS) {
  describe(`storage ${storage}, durability ${durability ?? "default"}`, () => {
    test(`SIGKILL at ${KILLS} random points loses no acknowledged turn`, { timeout: 600_000 }, async (t) => {
      if (!process.getBuiltinModule?.("node:sqlite")) throw new Error("this test reads the database with node:sqlite; run it with Node >= 22.5");
      const dbPath = join(tempDir(`durability-${storage.replace(":", "")}-${durability ?? "default"}`), "db.sqlite");
      const acked = [];
      for (let run = 0; run < KILLS; run++) {
        // Early kills land during start-up and migration, later ones during commits.
        const delay = Math.floor(Math.random() * (run < 5 ? 20 : 250));
        acked.push(...(await killedAcks(dbPath, storage, durability, `r${run}`, delay)));
        const state = inspect(dbPath);
        assert.equal(state.integrity, "ok", `integrity after kill ${run}`);
        const lost = acked.filter((k) => !state.keys.has(k));
        assert.deepEqual(lost, [], `acknowledged turns missing after kill ${run}`);
        assert.equal(state.messages, state.keys.size * 2, `every stored turn has both messages after kill ${run}`);
      }
      assert.ok(acked.length > KILLS, `the writer got turns acknowledged (${acked.length})`);
      // sql.js: the kills fell among many checkpoints (each one starts a journal generation).
      const checkpoints = storage === "sql.js" ? readJournal(journalPath(dbPath)).generation : undefined;
      if (storage === "sql.js") assert.ok(checkpoints >= 3, `checkpoints happened between the kills (${checkpoints})`);
      // Reopen after the last kill through the driver itself, and write on.
      const config = durability ? { storage, durability } : { storage };
      if (storage === "node:sqlite") {
        const handle = await openNodeEngine(dbPath, config);
        assert.equal(handle.synchronous(), SYNCHRONOUS[durability ?? "normal"], "this config opens node:sqlite with its PRAGMA synchronous");
      }
      const engine = createContextEngine(() => openNodeEngine(dbPath, config));
      const ts = Date.now() * 1000;
      await engine.commitTurn({ sessionId: "s", sessionKey: "durable", advancementKey: "after", messages: [
        { role: "user", content: "after the last kill", timestamp: ts },
        { role: "assistant", content: [{ type: "text", text: "still here" }], timestamp: ts + 1 },
      ] });
      const after = inspect(dbPath);
      assert.deepEqual(acked.filter((k) => !after.keys.has(k)), [], "every acknowledged turn after reopening");
      assert.ok(after.keys.has("after"), "the reopened database takes new turns");
      t.diagnostic(`${acked.length} turns acknowledged across ${KILLS} kills, all present${checkpoints ? `; ${checkpoints} journal generations` : ""}`);
    });
  });
}
