// The operator command `/lcm` (status, doctor, repair, import) as text, over any engine handle: the
// OpenClaw command registered in index.js uses it, and so can headless callers (library users,
// scripts) with a handle of their own. The checks and the repair live in the wasm engine; this
// file parses arguments, carries repair prompts to the LLM (through the compaction driver, which
// speaks the same request/answer protocol) and formats the reports.
import { runCompaction } from "../engine/compaction-driver.js";

const USAGE = [
  "usage: /lcm <command>",
  "  status              what is stored, the last compactions and failures, backoff and breaker state",
  "  doctor [--dry-run]  integrity checks; fixes what is safe to fix (search indexes, running totals) unless --dry-run",
  "  repair [--dry-run]  re-summarize fallback summaries (and the summaries built on them) with the host's LLM",
  "  import [path]       import a lossless-claw lcm.db (default <state dir>/lcm.db), read-only and idempotent",
].join("\n");

const iso = (ms) => (typeof ms === "number" && ms > 0 ? new Date(ms).toISOString().replace(/\.\d+Z$/, "Z") : "?");
const kib = (bytes) => `${(bytes / 1024).toFixed(1)} KiB`;

function words(args) {
  if (Array.isArray(args)) return args.map(String).filter(Boolean);
  return typeof args === "string" ? args.trim().split(/\s+/).filter(Boolean) : [];
}

function eventLine(e) {
  const tokens = e.tokensBefore != null ? ` ${e.tokensBefore} -> ${e.tokensAfter ?? "?"} tokens` : "";
  return `  ${iso(e.createdAt)} conversation ${e.conversationId} ${e.pass}${e.level ? `/${e.level}` : ""} ${e.outcome}:${tokens} ${e.reason}`;
}

/** Summarizer calls and tokens per pass kind, with what came of the answers. */
function spendLines(title, passes) {
  if (!passes?.length) return [`${title}: no summarizer calls`];
  const one = (p) => {
    const approx = p.estimated ? " (partly estimated)" : "";
    return `${p.calls} call(s), ${p.inputTokens} tokens in, ${p.outputTokens} out${approx}; ${p.stored} stored, ${p.rejected} rejected, ${p.failed} failed`;
  };
  const total = passes.reduce(
    (t, p) => ({
      calls: t.calls + p.calls,
      inputTokens: t.inputTokens + p.inputTokens,
      outputTokens: t.outputTokens + p.outputTokens,
      stored: t.stored + p.stored,
      rejected: t.rejected + p.rejected,
      failed: t.failed + p.failed,
      estimated: t.estimated || p.estimated,
    }),
    { calls: 0, inputTokens: 0, outputTokens: 0, stored: 0, rejected: 0, failed: 0, estimated: false },
  );
  const indent = title.match(/^\s*/)[0];
  return [`${title}: ${one(total)}`, ...passes.map((p) => `${indent}  ${p.pass}: ${one(p)}`)];
}

/** The summary request in flight, lost requests and a hand-over (core/compaction/hold.rs), or "". */
function summaryRunsText(runs, now) {
  if (!runs) return "";
  const parts = [];
  const o = runs.outstanding;
  if (o) {
    const lease = o.leaseUntilMs
      ? o.leaseUntilMs > now
        ? `, leased until ${iso(o.leaseUntilMs)}`
        : ", its lease ran out"
      : ", not leased";
    parts.push(`a request out since ${iso(o.sinceMs)} (process ${String(o.runner).slice(0, 8)}${lease})`);
  }
  if (runs.abandoned) parts.push(`${runs.abandoned} request(s) in a row lost with their process`);
  if (runs.handedOverAtMs) parts.push(`handed to a successor process at ${iso(runs.handedOverAtMs)}`);
  return parts.join("; ");
}

/** A line when the engine's time (a shared store's: the server's) is over a second away from
 *  this machine's clock read at `asked`, when the status was asked for; else null. */
function clockLine(asOfMs, asked) {
  const ahead = (asOfMs ?? asked) - asked;
  if (Math.abs(ahead) < CLOCK_NOTE_MS) return null;
  return `clock: the store keeps its server's time, ${(Math.abs(ahead) / 1000).toFixed(1)} s ${ahead > 0 ? "ahead of" : "behind"} this machine's clock (leases and retry times below are in the server's time)`;
}
/** How far the store's clock may be from this machine's before status says so. */
const CLOCK_NOTE_MS = 1_000;

/** Active conversations, the host's internal runs (memory flush) counted apart. */
function conversationCounts(t) {
  const internal = t.conversationsActiveInternal ?? 0;
  const user = t.conversationsActive - internal;
  return `${user} active${internal ? ` (+${internal} internal)` : ""}, ${t.conversationsArchived} archived`;
}

/** The view the model was last shown, which only the process that assembled it knows. */
function viewText(c) {
  if (typeof c.viewTokens !== "number")
    return "not assembled by this process (the gateway that serves the session knows it)";
  return `${c.viewTokens} tokens last assembled${typeof c.viewBudget === "number" ? `, budget ${c.viewBudget}` : ""}`;
}

function statusText(s, asked) {
  const t = s.totals;
  const byLevel = t.summaries.length
    ? t.summaries.map(([level, depth, n]) => `${level} d${depth}: ${n}`).join(", ")
    : "none";
  const lines = [
    "lossless-wasm status",
    `conversations: ${conversationCounts(t)}`,
    `messages: ${t.messages} (${t.messageTokens} tokens)`,
    `summaries by level and depth: ${byLevel}`,
    `database: ${kib(t.dbBytes)}, schema version ${t.schemaVersion}`,
  ];
  const clock = clockLine(s.asOfMs, asked);
  if (clock) lines.push(clock);
  if (s.session) {
    const c = s.session;
    const r = c.retry;
    const backoff = !r
      ? "no failures recorded"
      : `${r.consecutiveFailures} consecutive failure(s), breaker ${r.breakerOpen ? "OPEN (summaries paused)" : "closed"}${r.nextRetryAtMs ? `, next retry after ${iso(r.nextRetryAtMs)}` : ""}${r.resendAtMs ? `; a request answered unusably ${r.unusableRepeats} time(s) is not sent again unchanged before ${iso(r.resendAtMs)}` : ""}`;
    lines.push(
      `this session: conversation ${c.conversationId} (${c.sessionKey}), ${c.messages} messages`,
      `  stored context (summaries and the messages they do not cover): ${c.contextTokens} tokens, of which summaries ${c.contextSummaryTokens}`,
      `  view: ${viewText(c)}`,
      `  compaction: ${backoff}${c.compactionPending ? "; work pending" : ""}`,
    );
    // The engine's time (on PostgreSQL the server's, which the stored lease times are in).
    const runs = summaryRunsText(c.summaryRuns, s.asOfMs ?? Date.now());
    if (runs) lines.push(`  summaries across processes: ${runs}`);
  }
  if (s.session) lines.push(...spendLines("  summarizer spend (this session)", s.session.spend));
  lines.push(...spendLines("summarizer spend (all conversations)", s.spend));
  lines.push("last compactions:", ...(s.latest.length ? s.latest.map(eventLine) : ["  none"]));
  lines.push("last failures:", ...(s.failures.length ? s.failures.map(eventLine) : ["  none"]));
  return lines.join("\n");
}

function doctorText(d, dryRun) {
  const lines = [
    `lossless-wasm doctor: ${d.ok ? "all checks pass" : "problems found"}${dryRun ? " (dry run: nothing changed)" : ""}`,
  ];
  for (const c of d.checks)
    lines.push(
      `  ${c.ok ? "ok  " : "FAIL"} ${c.name}: ${c.detail}${!c.ok && c.fixable ? " (fixable: run without --dry-run)" : ""}`,
    );
  if (d.fixed.length) lines.push(`fixed: ${d.fixed.join(", ")}`);
  return lines.join("\n");
}

function repairText(r) {
  if (!Array.isArray(r.planned)) return `lossless-wasm repair did not run: ${r.reason ?? "unknown reason"}`;
  if (!r.planned.length) return "lossless-wasm repair: no fallback summaries; nothing to do";
  const fallbacks = r.planned.filter((p) => p.reason === "fallback").length;
  const head = `${fallbacks} fallback summar${fallbacks === 1 ? "y" : "ies"} and ${r.planned.length - fallbacks} built on them`;
  if (r.dryRun) {
    return [
      `lossless-wasm repair (dry run): would redo ${head}:`,
      ...r.planned.map((p) => `  summary ${p.id} (depth ${p.depth}, ${p.reason})`),
    ].join("\n");
  }
  const redacted = Object.entries(r.redacted ?? {});
  const redactedLine = redacted.length
    ? [`  credentials replaced before summarizing: ${redacted.map(([cls, n]) => `${n} ${cls}`).join(", ")}`]
    : [];
  return [
    `lossless-wasm repair: ${head}; redone ${r.repaired.length}${r.repaired.length ? ` (${r.repaired.join(", ")})` : ""}`,
    ...redactedLine,
    ...r.failures.map((f) => `  ${f}`),
  ].join("\n");
}

function importText(path, r) {
  const lines = [
    `lossless-wasm import from ${path}: ${r.conversations} new conversation(s), ${r.messages} message(s), ${r.summaries} summar${r.summaries === 1 ? "y" : "ies"}` +
      ` (${r.fallbackSummaries} fallback${r.fallbackSummaries === 1 ? "" : "s"}), ${r.views} view(s); the source was not modified`,
    ...r.notes.map((n) => `  note: ${n}`),
  ];
  if (r.fallbackSummaries) lines.push("  run /lcm repair to re-summarize the fallbacks with the host's LLM");
  if (!r.conversations && !r.messages && !r.summaries) lines.push("  nothing new: everything was imported before");
  return lines.join("\n");
}

/**
 * Runs one `/lcm` command line and returns its text.
 * @param {{call: Function}} handle an engine handle (engine/handle.js)
 * @param {string|string[]} args e.g. "status", "doctor --dry-run", "repair --dry-run"
 * @param {object} [options]
 * @param {string} [options.sessionId] the session to detail in status (optional)
 * @param {string} [options.sessionKey]
 * @param {{complete: Function}} [options.llm] the LLM repair uses (else the extractive summarizer)
 * @param {"auto"|"host"|"extractive"} [options.summarizer] config `summarizer`
 * @param {number} [options.timeoutMs] per repair summary
 * @param {string} [options.defaultImportPath] lcm.db to import when `import` names none
 */
export async function runLcm(handle, args, options = {}) {
  return (await runLcmCommand(handle, args, options)).text;
}

/**
 * Same as runLcm, with the outcome for callers that need more than text (the headless CLI's exit
 * code): `ok` is false when doctor left a check failing or repair left a summary unrepaired or
 * did not run; `usage` is true when the command line itself was wrong.
 * @returns {Promise<{text: string, ok: boolean, usage: boolean}>}
 */
export async function runLcmCommand(
  handle,
  args,
  { sessionId, sessionKey, llm, summarizer = "auto", timeoutMs, defaultImportPath } = {},
) {
  const done = (text, ok = true) => ({ text, ok, usage: false });
  const usage = (text) => ({ text, ok: false, usage: true });
  const [command = "status", ...flags] = words(args);
  if (command === "import") {
    const path = flags.join(" ") || defaultImportPath;
    if (!path) return usage(`import needs the path of lcm.db\n${USAGE}`);
    // Node-only (file access): a Node handle imports on the engine's own thread (the source
    // database is opened there); loaded on use so this module stays host-independent.
    if (handle.importLosslessClaw) return done(importText(path, await handle.importLosslessClaw(path)));
    const { importLosslessClaw } = await import("../node/import-lossless-claw.js");
    return done(importText(path, await importLosslessClaw(handle, path)));
  }
  const unknown = flags.filter((f) => f !== "--dry-run");
  if (unknown.length) return usage(`unknown option ${unknown.join(" ")}\n${USAGE}`);
  const dryRun = flags.includes("--dry-run");
  switch (command) {
    case "status": {
      // Absent, not undefined: the engine reads an undefined sessionId as a missing required one.
      const asked = Date.now();
      return done(
        statusText(
          await handle.call("status", { ...(sessionId ? { sessionId } : {}), ...(sessionKey ? { sessionKey } : {}) }),
          asked,
        ),
      );
    }
    case "doctor": {
      const report = await handle.call("doctor", { fix: !dryRun });
      return done(doctorText(report, dryRun), report.ok);
    }
    case "repair": {
      if (dryRun) {
        const plan = await handle.call("repairStart", { dryRun: true });
        return done(repairText(plan), Array.isArray(plan.planned));
      }
      // Same protocol as compaction: the driver carries each request to the LLM and back.
      const repairHandle = {
        call: (method, params) => handle.call(method === "compactionStart" ? "repairStart" : "repairContinue", params),
      };
      const report = await runCompaction(repairHandle, {}, { choice: summarizer, llm, timeoutMs });
      return done(repairText(report), Array.isArray(report.planned) && !(report.failures ?? []).length);
    }
    case "help":
      return done(USAGE);
    default:
      return usage(`unknown command ${JSON.stringify(command)}\n${USAGE}`);
  }
}

/**
 * The OpenClaw command definition for `api.registerCommand`.
 * @param {() => Promise<{call: Function}>} openHandle the shared engine
 * @param {object} options
 * @param {object} [options.config] plugin config (`summarizer`, `summaryTimeoutMs`)
 * @param {() => ({complete: Function}|undefined)} [options.hostLlm] the plugin-wide LLM
 * @param {string|(() => string)} [options.defaultImportPath] lcm.db for a bare `/lcm import`
 */
export function createLcmCommand(openHandle, { config = {}, hostLlm, defaultImportPath } = {}) {
  return {
    name: "lcm",
    description: "Lossless context: status, doctor [--dry-run], repair [--dry-run], import [path]",
    acceptsArgs: true,
    requireAuth: true,
    async handler(ctx) {
      let handle;
      try {
        handle = await openHandle();
      } catch (err) {
        // An unusable `dbPath` (or config): the one line naming it, and what the host does meanwhile.
        return {
          text: `lossless-wasm: storage unavailable: ${String(err?.message ?? err).replace(/^lossless-wasm: /, "")}\nrefusing: the host answers turns with its legacy context engine, and nothing is stored here, until it opens`,
        };
      }
      try {
        const text = await runLcm(handle, ctx?.args ?? ctx?.commandBody?.replace(/^\/lcm\b/, ""), {
          sessionId: ctx?.sessionId ?? ctx?.sessionKey,
          sessionKey: ctx?.sessionKey,
          llm: ctx?.runtimeContext?.llm ?? hostLlm?.(),
          summarizer: config.summarizer ?? "auto",
          timeoutMs: config.summaryTimeoutMs,
          defaultImportPath: typeof defaultImportPath === "function" ? defaultImportPath() : defaultImportPath,
        });
        return { text };
      } catch (err) {
        return { text: `lossless-wasm: /lcm failed: ${err?.message ?? err}` };
      }
    },
  };
}
