// Smoke test of the benchmark harnesses (bench/host-path, bench/event-loop.mjs): a tiny run per
// storage driver (or thread) must complete, store every message it sent, and report every
// figure. It asserts nothing about speed.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { test } from "node:test";
import { join } from "node:path";
import { query, STORAGES, tempDir } from "./support.mjs";

const RUN = new URL("../../bench/host-path/run.mjs", import.meta.url).pathname;
const REOPEN = new URL("../../bench/host-path/reopen.mjs", import.meta.url).pathname;

const json = (script, params) => JSON.parse(execFileSync(process.execPath, ["--expose-gc", script, ...params], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim().split("\n").pop());

// Each driver with OpenClaw 2026.7's afterTurn; node:sqlite also with 2026.9's commitTurn.
const CASES = [...STORAGES.map((storage) => [storage, "afterTurn"]), ...STORAGES.filter((s) => s === "node:sqlite").map((storage) => [storage, "commitTurn"])];

for (const [storage, commit] of CASES) {
  test(`host-path harness runs on ${storage} with ${commit} and stores what it sent`, async () => {
    const dir = tempDir("bench-smoke");
    const r = json(RUN, ["--size", "300", "--grow", "40", "--turns", "4", "--storage", storage, "--commit", commit, "--dir", dir]);
    assert.equal(r.storage, storage);
    assert.equal(r.commit, commit);
    // commitTurn leaves an idempotency key per turn (10 growth turns of 4 messages, 4 measured).
    const [[advancements]] = await query(join(dir, "lossless.sqlite"), "SELECT COUNT(*) FROM turn_advancements");
    assert.equal(advancements, commit === "commitTurn" ? 14 : 0, "turns committed through commitTurn");
    assert.equal(r.storedInDatabase, r.storedMessages, "every message the harness sent is in the database");
    assert.ok(r.storedMessages >= 300 + 40 + 4, `stored ${r.storedMessages}`);
    assert.equal(r.measuredTurns + r.compactingTurns, 4);
    assert.ok(r.viewMessages > 0);
    for (const key of ["bootstrapRate", "hostIngestRate", "dbBytes", "transcriptBytes", "storageRatio", "importRssAddedMiB", "loadMs"]) {
      assert.ok(Number.isFinite(r[key]) && r[key] > 0, `${key} = ${r[key]}`);
    }
    // The journal a live session keeps beside the database (a WAL, or sql.js's journal) is reported.
    assert.ok(Number.isInteger(r.journalBytesOpen) && r.journalBytesOpen >= 0, `journalBytesOpen = ${r.journalBytesOpen}`);
    if (r.measuredTurns > 0) assert.ok(Number.isFinite(r.turnCpuP50) && r.turnCpuP50 >= 0);
    // A fresh process on the same database sees the same history: its first view is not empty.
    const again = json(REOPEN, ["--dir", dir, "--storage", storage, "--commit", commit, "--size", "300", "--used", String(r.used), "--turns", "2"]);
    assert.ok(again.coldStartMs > 0 && again.firstViewMessages > 0, JSON.stringify(again));
  });
}

test("with --fresh (the history rebuilt before every call) the harness stores what it sent, through both host calls", async () => {
  for (const commit of ["afterTurn", "commitTurn"]) {
    const dir = tempDir("bench-smoke");
    const r = json(RUN, ["--size", "300", "--grow", "40", "--turns", "4", "--commit", commit, "--fresh", "--dir", dir]);
    assert.equal(r.fresh, true);
    assert.equal(r.storedInDatabase, r.storedMessages, `${commit}: every message the harness sent is in the database`);
    assert.equal(r.measuredTurns + r.compactingTurns, 4);
    assert.ok(r.viewMessages > 0);
  }
});

test("the harness refuses a host call it does not know", () => {
  assert.throws(() => json(RUN, ["--size", "50", "--grow", "40", "--turns", "1", "--commit", "ingest", "--dir", tempDir("bench-smoke")]), /unknown host call "ingest"/);
});

test("the lcm_ask benchmark runs on a small history and reports its figures for every driver", () => {
  const out = execFileSync(process.execPath, [new URL("../../bench/ask-bench.mjs", import.meta.url).pathname, "2000"], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  const figures = out.match(/lcm_ask excluding the LLM, 2 questions \(second round\): p50 [\d.]+ ms/g) ?? [];
  assert.equal(figures.length, STORAGES.length, out);
  assert.equal((out.match(/answered with a cited id: 2\/2/g) ?? []).length, STORAGES.length, out);
});

const EVENT_LOOP = new URL("../../bench/event-loop.mjs", import.meta.url).pathname;

for (const thread of ["worker", "main"]) {
  test(`event-loop harness measures every moment with storageThread ${thread}`, () => {
    const r = json(EVENT_LOOP, ["--size", "300", "--turns", "2", "--lock-ms", "200", "--thread", thread]);
    assert.equal(r.thread, thread);
    for (const key of ["firstTurn", "lockedTurn", "ordinaryTurns", "grep", "doctor"]) {
      assert.ok(Number.isFinite(r.stall[key]) && r.stall[key] >= 0, `stall.${key} = ${r.stall[key]}`);
    }
    // (That a call really waits out another process's lock is tests/js/node/event-loop.test.mjs's.)
    assert.ok(Number.isFinite(r.wall.lockedTurn) && Number.isFinite(r.wall.firstTurn));
    assert.ok(r.grepAnswered && r.doctorAnswered, "lcm_grep and /lcm doctor answered");
  });
}
