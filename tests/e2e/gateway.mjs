// A long-lived OpenClaw gateway for end-to-end tests, driven as users' channels and the CLI drive
// it: `openclaw gateway run` on loopback with token auth, started once per test file in a
// sandbox (openclaw-host.mjs), its address and token in the sandbox's config. Turns go to the
// running gateway, which runs them in its own process with the plugin loaded once: by default
// through one long-lived client process holding the host's own gateway client
// (gateway-client.mjs: `callGatewayFromCli("agent", …)`, the call `openclaw agent` makes without
// `--local`), or with `via: "cli"` through an `openclaw agent` process per turn. The test can
// SIGKILL the gateway (a crash), start it again on the same port and state, and read its output.
//
//   const gw = await startGateway(sandbox, { t });    // resolves once /healthz answers
//   const r = await gw.turn({ sessionKey, message }); // {result, reply, metaError, code, ms, …}
//   await gw.kill();                                  // SIGKILL, like a crash or the OOM killer
//   await gw.start();                                 // the same gateway again (port, token, state)
//   gw.output()                                       // everything it printed, across runs
//
// Per turn after the first (2 shared cores at load 10-14, docs/openclaw-host-observed.md §12.1):
// through the client 0.9-5.5 s on either host (the gateway's own time); through `openclaw agent`
// 2-3.6 s more on 2026.9.6 and 13-25 s more on 2026.7.1 (its CLI's boot); `agent --local` 7-20 s. The first turn after a start takes 14-25 s (the gateway loads
// the plugin runtime). While a gateway runs, 2026.9.6 refuses `agent --local` for the same state
// directory: a file that needs a one-shot process stops the gateway first (`stop()`).

import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import readline from "node:readline";
import { fileURLToPath } from "node:url";

import { metaErrorOf, parseAgentJson, replyTextOf } from "./openclaw-host.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const safeLog = (sandbox) => {
  try {
    return sandbox.readLog();
  } catch {
    return "";
  }
};

/** A free TCP port on loopback. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.on("error", reject);
  });
}

/**
 * Starts `openclaw gateway run` in `sandbox` and writes its address and token into the sandbox's
 * config (`gateway.port`, `gateway.auth`), where `openclaw agent` finds them, as after
 * `openclaw onboard`. `t` (a node:test context, optional) stops it after the test.
 * @param {object} sandbox from createHostSandbox()
 * @param {object} [o]
 * @param {number} [o.port] default: a free port
 * @param {string} [o.token] default: a random one
 * @param {number} [o.readyTimeoutMs=180000]
 */
export async function startGateway(sandbox, { t, port, token, readyTimeoutMs = 180_000 } = {}) {
  port = port ?? (await freePort());
  token = token ?? `e2e-${Math.random().toString(36).slice(2)}`;
  sandbox.editConfig((config) => {
    config.gateway = { ...config.gateway, mode: "local", port, bind: "loopback", auth: { mode: "token", token } };
  });

  let child = null;
  let exited = null;
  let output = "";
  const runs = [];
  const { host, env } = sandbox;

  const gateway = {
    port,
    token,
    url: `http://127.0.0.1:${port}`,
    /** Pid of the running gateway process (null when it is not running). */
    get pid() {
      return child && !exited ? child.pid : null;
    },
    /** What the gateway printed, every run, in order (each run headed by a "=== gateway run N" line). */
    output: () => output,
    /** How long the last start took until /healthz answered (ms). */
    get readyMs() {
      return runs.at(-1)?.readyMs;
    },
    /** How many times the gateway was started. */
    get starts() {
      return runs.length;
    },

    /** Starts the gateway (again); resolves once its health endpoint answers. */
    async start() {
      if (child && !exited) throw new Error(`the gateway is already running (pid ${child.pid})`);
      exited = null;
      output += `\n=== gateway run ${runs.length + 1} (${new Date().toISOString()})\n`;
      const started = Date.now();
      child = spawn(
        host.nodeBin,
        [host.openclawEntry, "gateway", "run", "--port", String(port), "--bind", "loopback", "--auth", "token", "--token", token, "--allow-unconfigured"],
        { env, cwd: sandbox.workspace, stdio: ["ignore", "pipe", "pipe"], detached: true },
      );
      const mine = child;
      child.stdout.on("data", (c) => (output += c));
      child.stderr.on("data", (c) => (output += c));
      child.on("exit", (code, signal) => {
        if (child === mine) exited = { code, signal };
      });
      const deadline = Date.now() + readyTimeoutMs;
      for (;;) {
        if (exited) throw new Error(`the gateway exited while starting (${JSON.stringify(exited)}):\n${output.slice(-4000)}`);
        try {
          const res = await fetch(`${gateway.url}/healthz`);
          if (res.status === 200) break;
        } catch {
          /* not listening yet */
        }
        if (Date.now() > deadline) throw new Error(`the gateway did not answer /healthz within ${readyTimeoutMs} ms:\n${output.slice(-4000)}`);
        await sleep(250);
      }
      runs.push({ pid: child.pid, readyMs: Date.now() - started });
      return runs.at(-1);
    },

    /** SIGKILLs the gateway's process group (no cleanup runs: a crash) and waits for its exit. */
    async kill() {
      if (!child || exited) return exited;
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        /* gone */
      }
      while (!exited) await sleep(50);
      output += `\n=== gateway killed (SIGKILL) ${new Date().toISOString()}\n`;
      return exited;
    },

    /** Stops the gateway as a user does (SIGTERM; SIGKILL after `graceMs`). */
    async stop({ graceMs = 10_000 } = {}) {
      if (!child || exited) return exited;
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch {
        /* gone */
      }
      const end = Date.now() + graceMs;
      while (!exited && Date.now() < end) await sleep(100);
      if (!exited) return gateway.kill();
      return exited;
    },

    /**
     * One turn through the running gateway: `openclaw agent --session-key <key> --message <text>
     * --json` (no `--local`). Resolves {result, reply, metaError, embeddedFallback, stdout,
     * stderr, code, ms}; never throws on a failed turn (check `code` and `metaError`).
     * `embeddedFallback`: the CLI lost the gateway and ran the turn in its own process
     * (OpenClaw 2026.7 does so: "EMBEDDED FALLBACK: Gateway agent failed; running embedded
     * agent"; 2026.9 exits 1 instead, "so the turn does not execute twice").
     * `sessionId`: the host session to continue (the `agent` method's `sessionId`, the CLI's
     * `--session-id`).
     */
    async turn({ sessionKey, sessionId, message, timeoutMs = 300_000, extraArgs = [], via = "client" }) {
      if (sessionKey !== sessionKey.toLowerCase()) throw new Error(`use lower-case session keys (got ${sessionKey})`);
      if (!child || exited) throw new Error("the gateway is not running: start() it first");
      if (via === "client" && !extraArgs.length) return clientTurn({ sessionKey, sessionId, message, timeoutMs });
      if (sessionId) extraArgs = [...extraArgs, "--session-id", sessionId];
      const logBefore = safeLog(sandbox).length;
      const r = await sandbox.openclaw(["agent", "--session-key", sessionKey, "--message", message, "--json", ...extraArgs], { timeoutMs, allowFail: true });
      const result = parseAgentJson(r.stdout);
      const embeddedFallback = /EMBEDDED FALLBACK/.test(r.stdout + r.stderr + safeLog(sandbox).slice(logBefore));
      return { ...r, result, reply: replyTextOf(result), metaError: metaErrorOf(result), embeddedFallback, parseError: result == null ? "stdout is not JSON" : undefined };
    },
  };
  // The channel: one client process for every turn (gateway-client.mjs), started on first use.
  let client = null;
  const liveClient = async () => {
    client ??= startClient(sandbox);
    let c = await client;
    if (!c.alive()) {
      client = startClient(sandbox);
      c = await client;
    }
    return c;
  };
  const clientTurn = async ({ sessionKey, sessionId, message, timeoutMs }) => {
    const c = await liveClient();
    const started = Date.now();
    const params = { message, sessionKey, ...(sessionId ? { sessionId } : {}), idempotencyKey: `e2e-${Date.now()}-${Math.random().toString(36).slice(2)}`, timeout: Math.ceil(timeoutMs / 1000) };
    const answer = await c.request("agent", params, { url: `ws://127.0.0.1:${port}`, token, timeout: String(timeoutMs) });
    const result = answer.ok ? answer.result : null;
    const entry = { args: ["(gateway client) agent", "--session-key", sessionKey, "--message", message], code: answer.ok ? 0 : 1, signal: null, stdout: answer.ok ? JSON.stringify(result) : "", stderr: answer.ok ? "" : answer.error, ms: Date.now() - started };
    sandbox.transcript.push(entry);
    return { ...entry, result, reply: replyTextOf(result), metaError: metaErrorOf(result), embeddedFallback: false, parseError: result == null ? "no result" : undefined };
  };
  /** Resets a session as the Control UI's session reset does (the gateway's `sessions.reset`);
   *  resolves {ok, result, error, ms}. */
  gateway.resetSession = async (sessionKey, { timeoutMs = 120_000 } = {}) => {
    const c = await liveClient();
    const started = Date.now();
    const answer = await c.request("sessions.reset", { key: sessionKey, reason: "reset" }, { url: `ws://127.0.0.1:${port}`, token, timeout: String(timeoutMs) });
    sandbox.transcript.push({ args: ["(gateway client) sessions.reset", sessionKey], code: answer.ok ? 0 : 1, stdout: JSON.stringify(answer.result ?? null), stderr: answer.error ?? "", ms: Date.now() - started });
    return { ...answer, ms: Date.now() - started };
  };
  gateway.closeClient = async () => {
    if (client) (await client.catch(() => null))?.close();
    client = null;
  };
  t?.after(async () => {
    await gateway.closeClient();
    await gateway.stop({ graceMs: 5000 });
  });
  await gateway.start();
  return gateway;
}

/** Starts gateway-client.mjs with the sandbox's environment; resolves {request, close} once it
 *  has loaded the host's client. */
function startClient(sandbox) {
  const script = path.join(path.dirname(fileURLToPath(import.meta.url)), "gateway-client.mjs");
  const packageDir = path.dirname(sandbox.host.openclawEntry);
  const proc = spawn(sandbox.host.nodeBin, [script, packageDir], { env: sandbox.env, cwd: sandbox.workspace, stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  proc.stderr.on("data", (c) => (stderr = (stderr + c).slice(-8000)));
  const waiting = new Map();
  let nextId = 1;
  let exited = null;
  return new Promise((resolve, reject) => {
    proc.on("exit", (code, signal) => {
      exited = { code, signal };
      for (const [, done] of waiting) done({ ok: false, error: `the gateway client exited (${code ?? signal}): ${stderr.slice(-2000)}` });
      waiting.clear();
      reject(new Error(`the gateway client exited before it was ready (${code ?? signal}): ${stderr.slice(-2000)}`));
    });
    readline.createInterface({ input: proc.stdout }).on("line", (line) => {
      let msg;
      try {
        msg = JSON.parse(line);
      } catch {
        return; // the host's own output
      }
      if (msg.ready) {
        resolve({
          request(method, params, opts) {
            if (exited) return Promise.resolve({ ok: false, error: `the gateway client exited (${JSON.stringify(exited)})` });
            const id = nextId++;
            return new Promise((done) => {
              waiting.set(id, done);
              proc.stdin.write(JSON.stringify({ id, method, params, opts }) + "\n");
            });
          },
          alive: () => !exited,
          close() {
            proc.stdin.end();
            setTimeout(() => proc.kill("SIGKILL"), 5000).unref();
          },
        });
        return;
      }
      const done = waiting.get(msg.id);
      if (done) {
        waiting.delete(msg.id);
        done(msg);
      }
    });
  });
}
