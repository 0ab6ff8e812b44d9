// Smoke test of the benchmark harness (bench/host-path): a tiny run per storage driver must
// complete, store every message it sent, and report every figure. It asserts nothing about speed.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { test } from "node:test";
import { STORAGES } from "./support.mjs";

const RUN = new URL("../../bench/host-path/run.mjs", import.meta.url).pathname;

for (const storage of STORAGES) {
  test(`host-path harness runs on ${storage} and stores what it sent`, () => {
    const out = execFileSync(process.execPath, ["--expose-gc", RUN, "--size", "300", "--grow", "40", "--turns", "4", "--storage", storage], { encoding: "utf8" });
    const r = JSON.parse(out.trim().split("\n").pop());
    assert.equal(r.storage, storage);
    assert.equal(r.storedInDatabase, r.storedMessages, "every message the harness sent is in the database");
    assert.ok(r.storedMessages >= 300 + 40 + 4, `stored ${r.storedMessages}`);
    assert.equal(r.measuredTurns + r.compactingTurns, 4);
    assert.ok(r.viewMessages > 0);
    for (const key of ["bootstrapRate", "hostIngestRate", "dbBytes", "transcriptBytes", "storageRatio", "rssAddedMiB", "loadMs"]) {
      assert.ok(Number.isFinite(r[key]) && r[key] > 0, `${key} = ${r[key]}`);
    }
    if (r.measuredTurns > 0) assert.ok(Number.isFinite(r.turnCpuP50) && r.turnCpuP50 >= 0);
  });
}
