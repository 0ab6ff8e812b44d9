// The successor (js-shim/node/successor.js): `lcm summarize` writes the summaries a session has
// pending and waits for them, and `spawnSuccessor` starts it detached through a host CLI entry,
// with the caller's environment, its output in a log file, outliving the process that started it.
// Real node:sqlite databases, a real OpenAI-compatible endpoint on 127.0.0.1, real child processes.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { createDeferredHost } from "../deferred-host.mjs";
import { longNote } from "../slow-llm.mjs";
import { loadPlugin, PKG, query, tempDir } from "../support.mjs";

const CLI = fileURLToPath(new URL("shim/operator/cli.js", PKG));
const SUCCESSOR = new URL("shim/node/successor.js", PKG).href;
const KEY = "agent:main:successor";
const SMALL = { freshTailCount: 4, leafChunkTokens: 1000, leafBudgetHeadroomFactor: 0, leafSkipReductionThreshold: 0 };

/** An OpenAI-compatible endpoint that answers every request with a summary after `delayMs`. */
async function summarizer({ delayMs = 0 } = {}) {
  const requests = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      const record = { at: Date.now(), answeredAt: null };
      requests.push(record);
      setTimeout(() => {
        record.answeredAt = Date.now();
        res.writeHead(200, { "content-type": "application/json" });
        const text = `## Goal\n- keep the harbour notes\n## Progress\n- note batch ${requests.length} read`;
        res.end(JSON.stringify({ model: "succ-1", choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content: text } }] }));
      }, delayMs);
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${server.address().port}/v1`, requests, close: () => new Promise((r) => server.close(r)) };
}

/** A database whose session has compaction pending: turns stored by a host that offered no LLM,
 *  with `summarizer: "host"` (compaction waits for one). */
async function pendingDb() {
  const dir = tempDir("successor");
  const dbPath = join(dir, "db.sqlite");
  const host = createDeferredHost({ plugin: await loadPlugin(), pluginConfig: { dbPath, storage: "node:sqlite", ...SMALL, summarizer: "host" }, stateDir: dir, llm: undefined });
  const history = [];
  for (let i = 1; i <= 8; i++) {
    const out = await host.turn(KEY, history, longNote(i));
    history.push(...out.turn);
    await out.deferred;
  }
  await host.fake.dispose?.();
  const [[pending]] = await query(dbPath, "SELECT COUNT(*) FROM conversations WHERE compaction_pending_json IS NOT NULL");
  assert.equal(pending, 1, "compaction is pending (the case under test)");
  assert.deepEqual(await query(dbPath, "SELECT COUNT(*) FROM summaries"), [[0]]);
  return { dir, dbPath, history };
}

function run(args, env = {}) {
  const clean = { ...process.env };
  for (const k of Object.keys(clean)) if (k.startsWith("LOSSLESS_WASM_") || k.startsWith("OPENCLAW_")) delete clean[k];
  return new Promise((resolve) => {
    execFile(process.execPath, args, { env: { ...clean, ...env }, timeout: 120_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === "number" ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

const until = async (cond, ms = 60_000) => {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
  return true;
};

test("lcm summarize writes a session's pending summaries through the LLM and waits for them; wrong command lines exit 2", { timeout: 180_000 }, async () => {
  const { dbPath, history } = await pendingDb();
  const llm = await summarizer({ delayMs: 300 });
  try {
    const noSession = await run([CLI, "--db", dbPath, "summarize", "--llm-url", llm.url, "--llm-model", "m"]);
    assert.equal(noSession.code, 2, noSession.stderr);
    assert.match(noSession.stderr, /summarize needs --session/);
    const noLlm = await run([CLI, "--db", dbPath, "summarize", "--session", KEY]);
    assert.equal(noLlm.code, 2, noLlm.stderr);
    assert.match(noLlm.stderr, /summarize needs an LLM/);
    assert.equal(llm.requests.length, 0);

    const noStandby = { LOSSLESS_WASM_SUCCESSOR_STANDBY_MS: "0" };
    const out = await run([CLI, "--db", dbPath, "summarize", "--session", KEY, "--llm-url", llm.url, "--llm-model", "m"], noStandby);
    assert.equal(out.code, 0, `${out.stdout}\n${out.stderr}`);
    assert.ok(llm.requests.length >= 1, "summaries were asked for");
    assert.ok(llm.requests.every((r) => r.answeredAt), "and every answer was awaited");
    assert.match(out.stdout, new RegExp(`summarize ${KEY}: .*summaries written`));
    const [[stored]] = await query(dbPath, "SELECT COUNT(*) FROM summaries WHERE content LIKE '%harbour notes%'");
    assert.ok(stored >= 1, `the answers are stored as summaries (${stored})`);
    assert.deepEqual(await query(dbPath, "SELECT COUNT(*) FROM conversations WHERE compaction_pending_json IS NOT NULL"), [[0]], "nothing is left pending");
    assert.deepEqual(await query(dbPath, "SELECT COUNT(*) FROM messages"), [[history.length]], "every message is kept");
    // Nothing pending: a second run asks for nothing and says so.
    const before = llm.requests.length;
    const again = await run([CLI, "--db", dbPath, "summarize", "--session", KEY, "--llm-url", llm.url, "--llm-model", "m"], noStandby);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /no compaction is pending/);
    assert.equal(llm.requests.length, before);
  } finally {
    await llm.close();
  }
});

test("spawnSuccessor starts `<entry> lcm summarize` detached with this environment; it writes the summaries after its starter exited", { timeout: 180_000 }, async () => {
  const { dir, dbPath } = await pendingDb();
  const llm = await summarizer({ delayMs: 4_000 });
  // A host CLI entry like OpenClaw's: `openclaw lcm …` runs the plugin's CLI on its database.
  const entry = join(dir, "openclaw.mjs");
  writeFileSync(entry, `import { main } from ${JSON.stringify(new URL("shim/operator/cli.js", PKG).href)};
const [group, ...args] = process.argv.slice(2);
if (group !== "lcm") process.exit(64);
process.exit(await main(["--db", process.env.LOSSLESS_WASM_DB, ...args]));
`);
  const logPath = join(dir, "state", "successor.log");
  // The starter: a process that starts the successor and exits at once, as a one-shot command does.
  const starter = `const { spawnSuccessor, openclawCliEntry } = await import(${JSON.stringify(SUCCESSOR)});
if (openclawCliEntry(${JSON.stringify(entry)}) !== ${JSON.stringify(entry)}) process.exit(3);
console.log(spawnSuccessor({ sessionId: "sess", sessionKey: ${JSON.stringify(KEY)} }, { entry: ${JSON.stringify(entry)}, logPath: ${JSON.stringify(logPath)} }));
process.exit(0);`;
  try {
    const started = await run(["--input-type=module", "-e", starter], { LOSSLESS_WASM_DB: dbPath, LOSSLESS_WASM_LLM_URL: llm.url, LOSSLESS_WASM_LLM_MODEL: "m", LOSSLESS_WASM_SUCCESSOR_STANDBY_MS: "4000" });
    assert.equal(started.code, 0, started.stderr);
    const pid = Number(started.stdout.trim());
    assert.ok(pid > 0, `the successor's pid: ${started.stdout}`);
    // The starter is gone; the successor asks, waits out the slow answers, and stores them.
    assert.ok(await until(() => llm.requests.length >= 1), "the successor asked for a summary");
    // While it waits, status shows its request, leased (the successor renews it).
    const status = await run([CLI, "--db", dbPath, "status", "--session", KEY]);
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /summaries across processes: a request out since \S+ \(process \S+, leased until /);
    assert.ok(await until(async () => (await query(dbPath, "SELECT COUNT(*) FROM conversations WHERE compaction_pending_json IS NOT NULL"))[0][0] === 0, 90_000), "the successor finished the pending work");
    // It stands by for more work (4 s here), marked on the conversation so that one-shot turns
    // meanwhile start no other successor; then it leaves and clears the mark.
    const mark = async () => JSON.parse((await query(dbPath, "SELECT summary_runs_json FROM conversations"))[0][0] ?? "{}").handedOverAtMs ?? null;
    assert.ok(await until(async () => (await mark()) !== null, 10_000), "the successor stood by, marked on the conversation");
    assert.ok(await until(() => { try { process.kill(pid, 0); return false; } catch { return true; } }, 30_000), "the successor exited");
    assert.equal(await mark(), null, "and cleared its mark");
    const [[stored]] = await query(dbPath, "SELECT COUNT(*) FROM summaries WHERE content LIKE '%harbour notes%'");
    assert.ok(stored >= 1, `summaries stored by the successor (${stored})`);
    assert.ok(existsSync(logPath), "the successor's output went to the log");
    assert.match(readFileSync(logPath, "utf8"), new RegExp(`summarize ${KEY}: .*summaries written`));
  } finally {
    await llm.close();
  }
});

test("openclawCliEntry accepts OpenClaw's CLI scripts only", async () => {
  const { openclawCliEntry } = await import(SUCCESSOR);
  assert.equal(openclawCliEntry("/usr/lib/node_modules/openclaw/openclaw.mjs"), "/usr/lib/node_modules/openclaw/openclaw.mjs");
  assert.equal(openclawCliEntry("/opt/app/node_modules/openclaw/dist/entry.js"), "/opt/app/node_modules/openclaw/dist/entry.js");
  assert.equal(openclawCliEntry("/work/repo/tests/js/openclaw/plugin.test.mjs"), undefined);
  assert.equal(openclawCliEntry("/work/repo/tests/e2e/openclaw.e2e.test.mjs"), undefined);
  assert.equal(openclawCliEntry(undefined), undefined);
});

test("only OpenClaw's one-shot `agent` command, at its first turn, on 2026.9 and later, ends with its turn", async () => {
  const { endsWithItsTurn, hostCommand, oneShotHandOver } = await import(SUCCESSOR);
  const entry = "/usr/lib/node_modules/openclaw/openclaw.mjs";
  const argv = (...rest) => ["/usr/bin/node", entry, ...rest];
  assert.equal(hostCommand(argv("agent", "--local", "--message", "hi")), "agent");
  assert.equal(hostCommand(argv("--no-color", "gateway", "run")), "gateway");
  assert.equal(hostCommand(argv("--json")), undefined);
  // A root option's value is not the command (OpenClaw reads `--profile work` as one option).
  assert.equal(hostCommand(argv("--profile", "work", "agent", "--local")), "agent");
  assert.equal(hostCommand(argv("--log-level", "debug", "--container", "c1", "gateway", "run")), "gateway");
  assert.equal(hostCommand(argv("--profile=work", "agent")), "agent");
  assert.equal(hostCommand(argv("--profile", "--dev", "agent")), "agent", "a root option without its value");
  assert.equal(endsWithItsTurn(1, argv("--profile", "work", "agent", "--local", "--message", "hi")), true);
  assert.equal(endsWithItsTurn(1, argv("agent", "--local", "--session-key", "k", "--message", "hi")), true);
  assert.equal(endsWithItsTurn(0, argv("agent", "--local")), true, "before its turn was stored");
  assert.equal(endsWithItsTurn(2, argv("agent", "--local")), false, "a process that stored two turns lives on");
  assert.equal(endsWithItsTurn(1, argv("gateway", "run")), false, "a gateway serves turn after turn");
  assert.equal(endsWithItsTurn(1, argv("lcm", "summarize", "--session", "k")), false, "a successor asks itself");
  assert.equal(endsWithItsTurn(1, ["/usr/bin/node", "/work/repo/tests/js/openclaw/plugin.test.mjs", "agent"]), false, "not OpenClaw's CLI");
  assert.equal(oneShotHandOver("2026.9.6"), true);
  assert.equal(oneShotHandOver("2026.10.1"), true);
  assert.equal(oneShotHandOver("2027.1.0"), true);
  assert.equal(oneShotHandOver("2026.7.1"), false, "2026.7 waits for the turn's summary before it exits");
  assert.equal(oneShotHandOver(undefined), false);
  assert.equal(oneShotHandOver("dev"), false);
});

test("a successor reports its failures and what it wrote in the host's log, as the turns that handed over would have", async () => {
  const { summarizeAsSuccessor } = await import(SUCCESSOR);
  const lines = [];
  const logger = { info: (l) => lines.push(["info", l]), warn: (l) => lines.push(["warn", l]) };
  const script = (report) => ({
    starts: [],
    call(method, params) {
      if (method !== "compactionStart") throw new Error(`unexpected ${method}`);
      this.starts.push(params);
      return { type: "done", ...report };
    },
  });
  const failing = script({ ok: false, compacted: false, reason: "nothing compacted", summaryIds: [], failures: ["compaction failed (summarizer error: HTTP 500); all 3 original messages preserved"] });
  const failed = await summarizeAsSuccessor(failing, { sessionId: "s", sessionKey: KEY }, { llm: { complete: async () => ({ text: "x" }) }, logger, standbyMs: 0 });
  assert.equal(failing.starts[0].successor, true, "it runs as a successor");
  assert.equal(failed.ok, false);
  assert.deepEqual(lines, [["warn", "[lossless-wasm] compaction failed (summarizer error: HTTP 500); all 3 original messages preserved"]]);
  lines.length = 0;
  const writing = script({ ok: true, compacted: true, reason: "1 summaries written (2600 -> 1900 tokens)", summaryIds: [7], failures: [] });
  await summarizeAsSuccessor(writing, { sessionId: "s", sessionKey: KEY }, { llm: { complete: async () => ({ text: "x" }) }, logger, standbyMs: 0 });
  assert.deepEqual(lines, [["info", `[lossless-wasm] successor for ${KEY}: 1 summaries written (2600 -> 1900 tokens)`]]);
});

test("a standing successor runs the work that becomes pending while it waits, and leaves after a failed run", async () => {
  const { summarizeAsSuccessor, standbyFor, STANDBY_MS } = await import(SUCCESSOR);
  assert.equal(standbyFor({}), 0, "run by hand, it leaves at once");
  assert.equal(standbyFor({ LOSSLESS_WASM_SUCCESSOR_STANDBY_MS: String(STANDBY_MS) }), 45_000, "as the plugin starts it");
  assert.equal(standbyFor({ LOSSLESS_WASM_SUCCESSOR_STANDBY_MS: "soon" }), 0, "an unreadable value: none");
  // The engine, scripted: work becomes pending at the second and the fourth look and stays
  // pending until a run takes it (as the engine's does: a look that comes too soon after a run
  // must find it still there); the third run fails.
  const calls = [];
  let looks = 0;
  let runs = 0;
  let pending = false;
  const handle = {
    call(method, params) {
      calls.push([method, params.standing]);
      if (method === "successorStandby") {
        if (!params.standing) return false;
        looks += 1;
        if (looks === 2 || looks === 4) pending = true;
        return pending;
      }
      if (method !== "compactionStart") throw new Error(`unexpected ${method}`);
      pending = false;
      runs += 1;
      return runs < 3
        ? { type: "done", ok: true, compacted: true, reason: `run ${runs}: 1 summaries written`, summaryIds: [runs], failures: [] }
        : { type: "done", ok: false, compacted: false, reason: "run 3 failed", summaryIds: [], failures: ["compaction failed (summarizer error: HTTP 500); all 2 original messages preserved"] };
    },
  };
  const out = await summarizeAsSuccessor(handle, { sessionId: "s", sessionKey: KEY }, { llm: { complete: async () => ({ text: "x" }) }, standbyMs: 60_000, pollMs: 5 });
  assert.equal(runs, 3, "the first run, and one per pending look");
  assert.deepEqual(calls.at(-1), ["successorStandby", false], "it left, clearing its mark");
  assert.equal(out.ok, false);
  assert.match(out.text, new RegExp(`^summarize ${KEY}: 2 summaries written in 3 runs; the last: run 3 failed\ncompaction failed`));
});
