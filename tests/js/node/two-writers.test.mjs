// Two processes, one database (two gateways of one user). Through node:sqlite both write the
// same file, to different sessions and to the same one: every acknowledged turn is stored once,
// every message stays reachable, and no "database is locked" reaches either process. sql.js
// cannot share a file, so a second process is refused with an error naming the holder, and a
// lock left by a killed process is taken over.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { test } from "node:test";
import { inspectSoak } from "../soak-host.mjs";
import { query, tempDir } from "../support.mjs";

const child = new URL("../two-writers-child.mjs", import.meta.url).pathname;
const TURNS = 60;

function gateway(dbPath, storage, name, sessionKey, turns = TURNS) {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [child, dbPath, storage, name, sessionKey, String(turns)], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    proc.stdout.on("data", (d) => (out += d));
    proc.stderr.on("data", (d) => (err += d));
    proc.on("error", reject);
    proc.on("exit", (code, signal) => resolve({ code, signal, err, acks: out.split("\n").filter((l) => l.startsWith("ack ")).map((l) => l.slice(4)) }));
  });
}

for (const shared of [false, true]) {
  test(`node:sqlite: two processes writing ${shared ? "one session" : "two sessions"} of one database lose nothing`, { timeout: 300_000 }, async () => {
    const dbPath = join(tempDir("two-writers"), "db.sqlite");
    const [a, b] = await Promise.all([
      gateway(dbPath, "node:sqlite", "A", shared ? "agent:main:shared" : "agent:main:a"),
      gateway(dbPath, "node:sqlite", "B", shared ? "agent:main:shared" : "agent:main:b"),
    ]);
    for (const g of [a, b]) {
      assert.equal(g.code, 0, `a gateway failed: ${g.err}`);
      assert.doesNotMatch(g.err, /locked|busy/i);
      assert.equal(g.acks.length, TURNS);
    }
    const keys = new Set((await query(dbPath, "SELECT advancement_key FROM turn_advancements")).map(([k]) => k));
    assert.deepEqual([...a.acks, ...b.acks].filter((k) => !keys.has(k)), [], "every acknowledged turn is stored");
    const state = await inspectSoak(dbPath, { length: 4 * TURNS });
    assert.equal(state.integrity, "ok");
    assert.equal(state.storedMessages, 4 * TURNS);
    assert.equal(state.reachableMessages, 4 * TURNS, "every message reachable from its context");
    assert.equal(state.halfApplied, 0);
  });
}

test("sql.js: a second process is refused with an error naming the holder; a killed holder's lock is taken over", { timeout: 120_000 }, async () => {
  const dbPath = join(tempDir("sqljs-lock"), "db.sqlite");
  const holder = spawn(process.execPath, [child, dbPath, "sql.js", "H", "agent:main:h", "1000000"], { stdio: ["ignore", "pipe", "pipe"] });
  await new Promise((resolve) => holder.stdout.once("data", resolve));
  const second = await gateway(dbPath, "sql.js", "S", "agent:main:s", 3);
  assert.equal(second.code, 1);
  assert.match(second.err, new RegExp(`in use by another process \\(pid ${holder.pid}, lock file .*\\.lock\\).*storage "node:sqlite"`));
  assert.deepEqual(second.acks, []);
  holder.kill("SIGKILL");
  await new Promise((resolve) => holder.once("exit", resolve));
  const after = await gateway(dbPath, "sql.js", "T", "agent:main:t", 3);
  assert.equal(after.code, 0, `the stale lock was not taken over: ${after.err}`);
  assert.equal(after.acks.length, 3);
  const keys = (await query(dbPath, "SELECT advancement_key FROM turn_advancements WHERE advancement_key LIKE 'S-%'"));
  assert.deepEqual(keys, [], "the refused process wrote nothing");
});
