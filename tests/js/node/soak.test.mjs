// The short summarizer-fault soak (the long one is scripts/reliability.sh): a few hundred turns
// of tool-heavy traffic, 30 % of summaries failing in every way a provider does, and an auth
// outage in the middle. Nothing may be lost, no garbage may be stored, every hung request must
// have been aborted, and backoff and the breaker must show up as documented.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { FAULTS, runSoak } from "../soak-host.mjs";
import { STORAGES } from "../support.mjs";

const TURNS = 240;

for (const storage of STORAGES) describe(`storage ${storage}`, () => {
  test(`${TURNS} turns with a faulty summarizer lose nothing and store no garbage`, { timeout: 600_000 }, async (t) => {
    // Tool-output stubs leave this traffic needing few summaries (~40 calls in 240 turns): 30 %
    // of them fail, so each of the nine fault kinds comes up at least once.
    const r = await runSoak({ turns: TURNS, storage, rate: 0.3, window: 80, authOutageTurns: [120, 150] });
    t.diagnostic(JSON.stringify({ seconds: r.seconds, llm: r.llm, maintain: r.maintainReasons, summaries: r.summaries, windows: r.windows }));
    assert.equal(r.integrity, "ok");
    assert.equal(r.storedMessages, r.sentMessages, "every message stored");
    assert.equal(r.distinctMessages, r.sentMessages, "every message stored once");
    assert.equal(r.reachableMessages, r.sentMessages, "every message reachable from the context through the DAG");
    assert.equal(r.halfApplied, 0, "no summary without its edges, no context item pointing at nothing");
    assert.ok(r.summaries > 0, "compaction happened");
    assert.deepEqual(r.garbageSummaries, [], "no summary holds an error page, refusal, echo, late answer or truncation");
    for (const fault of FAULTS) assert.ok(r.llm.faults[fault] > 0, `fault ${fault} was exercised`);
    assert.equal(r.llm.signalMissing, 0, "every request carried an abort signal");
    assert.equal(r.llm.hungAborted, r.llm.hung, "every request that did not answer in time was aborted");
    const reasons = r.failureReasons.join("\n");
    // An echo is judged as one on a leaf's transcript (which pass the cycle of faults hits
    // depends on how many calls the run made before it).
    const echoes = r.llm.leafEchoes ? [/repeated its input/] : [];
    for (const expected of [/error page, not a summary: "502 Bad Gateway"/, /refused instead of summarizing/, ...echoes, /timed out/, /stopReason "error"/, /authentication failed/]) {
      assert.match(reasons, expected);
    }
    // A failed pass's range gets its extractive fallback at once, so no work waits out the
    // backoff here (the backoff itself: compaction_cases' seed 02 test).
    assert.ok(r.fallbackSummaries > 0, "ranges the summarizer failed on have their fallback summaries");
    assert.ok(r.maintainReasons.breakerOpen > 0, "the auth outage opened the breaker");
    assert.ok(r.maintainReasons.firstCompactedAfterOutage !== undefined, "compaction resumed after the outage");
    assert.ok(r.logs.some(([level, m]) => level === "warn" && /all \d+ original messages preserved/.test(m)), "failures are logged as preserved");
  });
});
