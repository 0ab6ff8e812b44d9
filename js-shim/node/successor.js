// The successor: a detached process that writes a session's summaries after the process that
// recorded them exits. `openclaw agent --local` ends its process right after the reply, so a
// summary that takes longer than the turn could never be written there (and OpenClaw 2026.9's
// exit would wait for it): such a process hands the session's summaries over from its first
// request (core/compaction/hold.rs; recognised here: endsWithItsTurn), as any process does once
// its requests were lost, and the plugin starts `openclaw lcm summarize --session <key>`
// detached. That process loads the same plugin config and the host's LLM, runs the pending
// compaction, waits for every answer (renewing the request's lease, so turns meanwhile neither
// ask again nor wait), stands by a while for the next turns' work, and exits. Node only.

import { spawn } from "node:child_process";
import { mkdirSync, openSync, closeSync } from "node:fs";
import { setPriority } from "node:os";
import { basename, dirname, sep } from "node:path";
import { runCompaction } from "../engine/compaction-driver.js";
import { RUNNER_ID } from "../engine/summary-runner.js";

/** How long a successor the plugin starts stays after its last job for more of its session's
 *  work (one-shot turns keep coming: the next one then needs no new process). It reaches the
 *  successor as the environment variable STANDBY_ENV, which a user's environment may set
 *  instead (0: leave at once); `lcm summarize` run by hand, without it, leaves at once. */
export const STANDBY_MS = 45_000;
export const STANDBY_ENV = "LOSSLESS_WASM_SUCCESSOR_STANDBY_MS";
/** How often a standing successor looks for new work. */
const STANDBY_POLL_MS = 1_000;

/** The standby from the environment (STANDBY_ENV, milliseconds), else none. */
export function standbyFor(env = process.env) {
  const ms = Number(env[STANDBY_ENV] || 0);
  return Number.isInteger(ms) && ms >= 0 ? ms : 0;
}

/**
 * Runs the pending compaction of `session` as a successor and waits for all of it; then stands
 * by for `standbyMs`, marked on the conversation (`successorStandby`: one-shot turns meanwhile
 * start no other successor), running whatever compaction becomes pending, until it has been
 * idle that long or a run failed (the next turn hands over anew, after the engine's backoff).
 * With a `logger` (the host's, under `openclaw lcm summarize`), failures and what was written go
 * to the host's log too, as the turns that handed over would have logged them.
 * @returns {Promise<{ok: boolean, text: string, report: object}>}
 */
export async function summarizeAsSuccessor(
  handle,
  session,
  { llm, timeoutMs, choice, logger, standbyMs = standbyFor(), pollMs = STANDBY_POLL_MS } = {},
) {
  const params = { ...session, mode: "pending", runner: RUNNER_ID, runnerTurns: 0, successor: true };
  const key = session.sessionKey ?? session.sessionId;
  const run = async () => {
    // "host": the given LLM or nothing; a successor never stores extractive text in its place.
    const report = await runCompaction(handle, params, {
      choice: choice === "extractive" ? "extractive" : "host",
      llm,
      timeoutMs,
    });
    for (const line of report.failures ?? []) logger?.warn?.(`[lossless-wasm] ${line}`);
    if (report.compacted) logger?.info?.(`[lossless-wasm] successor for ${key}: ${report.reason}`);
    return report;
  };
  const reports = [await run()];
  const failed = () => reports.at(-1).ok === false || reports.at(-1).failures?.length > 0;
  if (standbyMs > 0 && !failed()) {
    let idleSince = Date.now();
    let nextRunAt = 0;
    try {
      while (!failed()) {
        // Right after a run too: the run took the mark down, and a turn must not find it down.
        const pending = await handle.call("successorStandby", { ...session, standing: true });
        if (pending && Date.now() >= nextRunAt) {
          reports.push(await run());
          idleSince = Date.now();
          // A run that found nothing it could do (another process's request out) leaves the
          // work pending: the next run waits a poll.
          nextRunAt = idleSince + pollMs;
          continue;
        }
        if (!pending && Date.now() - idleSince >= standbyMs) break;
        await new Promise((r) => setTimeout(r, pollMs));
      }
    } finally {
      await handle.call("successorStandby", { ...session, standing: false });
    }
  }
  const report = reports.at(-1);
  const written = reports.reduce((n, r) => n + (r.summaryIds?.length ?? 0), 0);
  const reason =
    reports.length === 1
      ? report.reason
      : `${written} summaries written in ${reports.length} runs; the last: ${report.reason}`;
  const failures = report.failures?.length ? `\n${report.failures.join("\n")}` : "";
  return { ok: report.ok !== false, text: `summarize ${key}: ${reason}${failures}`, report };
}

/**
 * The host's CLI entry script when this process runs OpenClaw's CLI (`openclaw.mjs`, its bin, or
 * a script of the installed `openclaw` package), else undefined: a successor is started only
 * through it (under a test runner or another host, argv[1] is something else entirely).
 */
export function openclawCliEntry(argv1 = process.argv[1]) {
  if (typeof argv1 !== "string" || !argv1) return undefined;
  const name = basename(argv1);
  const installed = argv1.includes(`${sep}node_modules${sep}openclaw${sep}`);
  return name === "openclaw.mjs" || name === "openclaw" || installed ? argv1 : undefined;
}

/** OpenClaw's root options that take a value as the next argument (`--profile work agent …`;
 *  the same on 2026.7 and 2026.9): that value is not the command. */
const ROOT_VALUE_OPTIONS = new Set(["--profile", "--log-level", "--container"]);

/**
 * The host CLI command this process runs (`agent`, `gateway`, `lcm`…): the first argument after
 * the entry script that is neither an option nor a root option's value; undefined when there is
 * none.
 */
export function hostCommand(argv = process.argv) {
  const args = argv.slice(2);
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (typeof arg !== "string" || !arg) continue;
    if (ROOT_VALUE_OPTIONS.has(arg)) {
      // The host takes the next argument as the value unless it is an option itself.
      if (typeof args[i + 1] === "string" && args[i + 1] && !args[i + 1].startsWith("-")) i++;
      continue;
    }
    if (!arg.startsWith("-")) return arg;
  }
  return undefined;
}

/**
 * Whether this process ends with the turn it runs: it is the host's one-shot `openclaw agent`
 * command (the turn runs in it with `--local`; see openclawCliEntry) and has stored at most one
 * turn. Anything else (a gateway, an unrecognised command line) is taken to live on, and asks
 * for its summaries itself.
 * @param {number} turnsStored turns this process stored (engine/summary-runner.js storedTurns)
 */
export function endsWithItsTurn(turnsStored, argv = process.argv) {
  return Boolean(openclawCliEntry(argv[1])) && turnsStored <= 1 && hostCommand(argv) === "agent";
}

/**
 * Whether one-shot turns of this host version hand their summaries over from the first request.
 * OpenClaw 2026.9 ends `agent --local` right after the turn, waiting up to 5 s for a plugin's
 * LLM call on the way out; 2026.7 keeps the process alive until the turn's maintenance (and so
 * its summary) is done, and asks in-process as before. Unknown versions: in-process.
 */
export function oneShotHandOver(hostVersion) {
  const m = /^(\d+)\.(\d+)\./.exec(hostVersion ?? "");
  return Boolean(m) && (Number(m[1]) > 2026 || (Number(m[1]) === 2026 && Number(m[2]) >= 9));
}

/**
 * Starts `<node> <host entry> lcm summarize --session <key> --session-id <id>` detached from
 * this process (its own process group, not waited for, outliving this one), with this
 * process's environment, so it finds the same config and state directory (plus its standby,
 * STANDBY_ENV, when the environment sets none), at a lower CPU
 * priority (nice 10: booting the host's CLI must not slow the turns it runs beside). Its output
 * is appended to `logPath`.
 * @param {{sessionId?: string, sessionKey?: string}} session
 * @param {object} options
 * @param {string} options.entry the host's CLI entry script (OpenClaw: process.argv[1])
 * @param {string} options.logPath where the successor's output goes
 * @param {string} [options.node] the Node binary (this one by default)
 */
export function spawnSuccessor(session, { entry, logPath, node = process.execPath }) {
  const key = session.sessionKey ?? session.sessionId;
  if (!key) throw new Error("a successor needs the session's key");
  if (!entry) throw new Error("the host's CLI entry is unknown (process.argv[1] is empty)");
  mkdirSync(dirname(logPath), { recursive: true });
  const log = openSync(logPath, "a");
  try {
    const args = [
      entry,
      "lcm",
      "summarize",
      "--session",
      key,
      ...(session.sessionId && session.sessionId !== key ? ["--session-id", session.sessionId] : []),
    ];
    const env = { ...process.env, [STANDBY_ENV]: process.env[STANDBY_ENV] || String(STANDBY_MS) };
    const child = spawn(node, args, { detached: true, stdio: ["ignore", log, log], env, cwd: process.cwd() });
    child.on("error", () => {}); // a failed start leaves the hand-over pending until its grace ends
    try {
      if (child.pid) setPriority(child.pid, 10);
    } catch {
      // Not permitted here: it runs at this process's priority.
    }
    child.unref();
    return child.pid;
  } finally {
    closeSync(log);
  }
}
