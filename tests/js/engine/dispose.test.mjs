// dispose within the host's cleanup bound, holding no work across calls (issue 42 item 4;
// lossless-claw #1194, openclaw#151558: a reload's drain wedged the gateway on a context engine's
// background work). OpenClaw counts a plugin's LLM call as work of the engine instance whose call
// made it and waits for it before that instance's dispose and a reload settle; so when the host
// disposes an instance, its summary still in flight is aborted, and dispose itself never waits
// longer than DISPOSE_BOUND_MS. Checked in a child process (dispose-child.mjs) with a summarizer
// that never answers and a commit the host did not await: dispose resolves well before the
// host's 5 s bound, the request is released, the process then ends by itself (no timer, worker
// or lease keeps it alive), and a new engine on the same database finds every committed message.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { createFakeHost } from "../fake-host.mjs";
import { heldLlm } from "../slow-llm.mjs";
import { assistant, loadPlugin, query, STORAGES, tempDir, user } from "../support.mjs";

const plugin = await loadPlugin();
const CHILD = fileURLToPath(new URL("../dispose-child.mjs", import.meta.url));
/** OpenClaw's cleanup bound for a plugin's hooks (5 s); ours is 4 s. */
const HOST_BOUND_MS = 5_000;

/** The recall tools of a fresh plugin registration on `config`'s database. */
function freshTools(config, dir, sessionKey) {
  const h = createFakeHost({ pluginConfig: config, stateDir: dir });
  const factories = [];
  h.api.registerTool = (tool) => factories.push(tool);
  h.load(plugin);
  return Object.fromEntries(factories.flatMap((f) => f({ sessionId: "s", sessionKey }) ?? []).map((t) => [t.name, t]));
}

for (const storage of STORAGES) describe(`storage ${storage}`, () => {
  test("with a hung summarizer in flight and a commit pending, dispose settles within the bound, releases the request, the process ends by itself, and every committed message is stored", { timeout: 120_000 }, async () => {
    const dir = tempDir("dispose");
    const dbPath = join(dir, "db.sqlite");
    const run = spawnSync(process.execPath, [CHILD, dbPath, storage], { encoding: "utf8", timeout: 60_000 });
    assert.equal(run.error, undefined, `the child did not end by itself within 60 s (something kept it alive): ${run.error?.message}\n${run.stderr}`);
    assert.equal(run.signal, null, `the child was killed: ${run.stderr}`);
    assert.equal(run.status, 0, run.stderr);
    const out = JSON.parse(run.stdout.trim().split("\n").at(-1));

    assert.ok(out.requestsBefore >= 1, `a summary request was in flight when the host disposed (${out.maintainedReason})`);
    assert.ok(out.aborted.every(Boolean), `every request of the disposed instance was released: ${JSON.stringify(out.aborted)}`);
    assert.ok(out.disposeMs < HOST_BOUND_MS, `dispose took ${Math.round(out.disposeMs)} ms, past the host's ${HOST_BOUND_MS} ms`);
    assert.equal(out.committed, "committed", "the commit sent before dispose was stored");
    assert.deepEqual(out.warnings.filter((w) => /dispose/.test(w)), [], "dispose settled without a warning");

    // A new engine on the same database: every committed turn is there, once.
    const config = { dbPath, storage };
    const tools = freshTools(config, dir, "agent:main:dispose");
    for (const marker of out.markers) {
      const grep = await tools.lcm_grep.execute("g", { pattern: marker, kind: "messages" });
      assert.equal(grep.details.hits.filter((h) => h.role === "user").length, 1, `${marker}: ${grep.content[0].text}`);
    }
    const [[messages]] = await query(dbPath, "SELECT COUNT(*) FROM messages");
    assert.equal(messages, out.markers.length * 2, "each turn's two messages, nothing lost, nothing twice");
  });

  test("a later turn's engine asks for the summary again after an instance was disposed with one in flight", { timeout: 120_000 }, async () => {
    const dir = tempDir("dispose-again");
    const llm = heldLlm();
    const config = { dbPath: join(dir, "db.sqlite"), storage, summarizer: "host", freshTailCount: 2, leafChunkTokens: 1000, summaryTurnWaitMs: 20, leafBudgetHeadroomFactor: 0, leafSkipReductionThreshold: 0 };
    const h = createFakeHost({ pluginConfig: config, stateDir: dir, llm });
    h.load(plugin);
    const key = "agent:main:again";
    const history = [];
    for (let i = 0; i < 6; i++) {
      const turn = [user(`again note ${i}: ${"tide table entry. ".repeat(60)}`), assistant(`ok ${i}`)];
      await h.runTurn("lossless-wasm", { sessionId: "s", sessionKey: key, history: [...history], turn, tokenBudget: 100_000 });
      history.push(...turn);
    }
    // One turn: its maintenance before the turn asks for a summary and stops waiting; the host
    // gives up on the turn (no deferred maintenance) and disposes.
    const first = await h.resolveEngine("lossless-wasm");
    await first.assemble({ sessionId: "s", sessionKey: key, messages: [...history], tokenBudget: 1_200 });
    await first.maintain({ sessionId: "s", sessionKey: key, sessionFile: "f", runtimeContext: { llm } });
    assert.equal(llm.waiting().length, 1, "a summary request is in flight");
    const asked = llm.requests.length;
    await first.dispose();
    assert.equal(llm.waiting().length, 0, "dispose released it");
    assert.equal(llm.requests.at(-1).aborted, true);
    // The next turn's instance asks again (its deferred maintenance waits for the answer), and
    // the answer is applied.
    llm.answerAtOnce();
    const next = await h.resolveEngine("lossless-wasm");
    const report = await next.maintain({ sessionId: "s", sessionKey: key, sessionFile: "f", runtimeContext: { llm, allowDeferredCompactionExecution: true } });
    await next.dispose();
    assert.ok(llm.requests.length > asked, "the summary was asked again");
    assert.ok(report.changed, JSON.stringify(report));
    const [[summaries]] = await query(config.dbPath, "SELECT COUNT(*) FROM summaries");
    assert.ok(summaries >= 1, "the summary asked again was stored");
  });
});
