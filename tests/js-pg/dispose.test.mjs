// dispose on PostgreSQL storage (tests/js/engine/dispose.test.mjs runs the same child on SQLite):
// with a summarizer that never answers and a commit the host did not await, dispose resolves
// before the host's 5 s cleanup bound and releases the request, and then the process ends by
// itself — the driver's I/O thread and its pooled connection keep nothing alive — and every
// committed message is on the server, once.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { pgConfig, pgQuery, schemaFor } from "./support.mjs";

const CHILD = fileURLToPath(new URL("../js/dispose-child.mjs", import.meta.url));

test("postgres: dispose with a hung summarizer in flight settles within the bound, and the process ends by itself with every commit stored", { timeout: 120_000 }, () => {
  const schema = schemaFor("dispose");
  const { storage, ...extra } = pgConfig(schema);
  const run = spawnSync(process.execPath, [CHILD, "unused", storage, JSON.stringify(extra)], { encoding: "utf8", timeout: 60_000 });
  assert.equal(run.error, undefined, `the child did not end by itself within 60 s: ${run.error?.message}\n${run.stderr}`);
  assert.equal(run.status, 0, run.stderr);
  const out = JSON.parse(run.stdout.trim().split("\n").at(-1));
  assert.ok(out.requestsBefore >= 1, "a summary request was in flight when the host disposed");
  assert.ok(out.aborted.every(Boolean), JSON.stringify(out.aborted));
  assert.ok(out.disposeMs < 5_000, `dispose took ${Math.round(out.disposeMs)} ms`);
  assert.equal(out.committed, "committed");
  return pgQuery(`SELECT COUNT(*) FROM ${schema}.messages`).then(([[n]]) => assert.equal(Number(n), out.markers.length * 2, "every committed message, once"));
});
