// Helpers of the PostgreSQL fault tests (faults.test.mjs): a gateway child process driven over
// stdin (fault-gateway.mjs), taking the test server down and up (scripts/pg-server.sh, which
// sets LCM_PG_TEST_DIR), and the operator's doctor through the CLI.
import { execFile, spawn } from "node:child_process";
import { promisify } from "node:util";
import { PKG, URL_ } from "./support.mjs";

const run = promisify(execFile);
const CHILD = new URL("./fault-gateway.mjs", import.meta.url).pathname;
const SKEW = new URL("./clock-skew.cjs", import.meta.url).pathname;
const SCRIPT = new URL("../../scripts/pg-server.sh", import.meta.url).pathname;
const DIR = process.env.LCM_PG_TEST_DIR;
if (!DIR) throw new Error("LCM_PG_TEST_DIR is not set: the fault tests stop and start the server; run them with bash scripts/pg-server.sh run <node> --test tests/js-pg/faults.test.mjs");

/** Stops the test server (fast shutdown: its sessions are ended); the URL refuses connections. */
export const serverDown = () => run("bash", [SCRIPT, "down", DIR]);
/** Starts it again on the same port. */
export const serverUp = () => run("bash", [SCRIPT, "up", DIR]);

/**
 * A gateway process on `schema`, committing turns of `sessionKey` as `name` (keys `<name>-<n>`),
 * with config `lockTimeoutMs` when given, on a clock `skewMs` ahead (behind, negative) when given.
 * `lines` is everything it printed so far; `until(pred)` resolves with the lines once
 * pred(lines) holds (the test's timeout ends a wait that never does).
 */
export function gateway(schema, name, sessionKey, { openclaw = false, lockTimeoutMs, skewMs } = {}) {
  const env = { ...process.env };
  if (lockTimeoutMs !== undefined) env.LCM_PG_LOCK_TIMEOUT_MS = String(lockTimeoutMs);
  // A machine whose clock is `skewMs` off: Date.now() moved in every thread of the process.
  const skew = skewMs === undefined ? [] : ["--require", SKEW];
  if (skewMs !== undefined) env.LCM_TEST_CLOCK_SKEW_MS = String(skewMs);
  const proc = spawn(process.execPath, [...skew, CHILD, schema, name, sessionKey, ...(openclaw ? ["openclaw"] : [])], { stdio: ["pipe", "pipe", "pipe"], env });
  const g = { proc, lines: [], stderr: "" };
  let waiters = [];
  let buffered = "";
  const check = () => { waiters = waiters.filter((w) => !(w.pred(g.lines) && (w.resolve(g.lines), true))); };
  proc.stdout.on("data", (d) => {
    buffered += d;
    const parts = buffered.split("\n");
    buffered = parts.pop();
    g.lines.push(...parts);
    check();
  });
  proc.stderr.on("data", (d) => (g.stderr += d));
  g.exited = new Promise((resolve) => proc.on("exit", (code, signal) => {
    for (const w of waiters) w.reject(new Error(`gateway ${name} exited (${code ?? signal}) while the test waited; stderr: ${g.stderr}; stdout: ${g.lines.join(" | ")}`));
    waiters = [];
    resolve({ code, signal });
  }));
  g.send = (line) => proc.stdin.write(`${line}\n`);
  g.until = (pred) => new Promise((resolve, reject) => { waiters.push({ pred, resolve, reject }); check(); });
  /** Lines starting with `word `, without it. */
  g.get = (word) => g.lines.filter((l) => l.startsWith(`${word} `)).map((l) => l.slice(word.length + 1));
  /** Ends stdin and waits for the exit. */
  g.end = () => { proc.stdin.end(); return g.exited; };
  return g;
}

/** `lossless-wasm-lcm --storage postgres …` on `schema` with `args` (on a machine whose clock is
 *  `skewMs` off, when given): {code, stdout, stderr}. */
export async function lcm(schema, args, { skewMs } = {}) {
  const cli = new URL("shim/operator/cli.js", PKG).pathname;
  const skew = skewMs === undefined ? [] : ["--require", SKEW];
  const env = skewMs === undefined ? process.env : { ...process.env, LCM_TEST_CLOCK_SKEW_MS: String(skewMs) };
  try {
    const { stdout, stderr } = await run(process.execPath, [...skew, cli, "--storage", "postgres", "--postgres-url", URL_, "--postgres-schema", schema, ...args], { env });
    return { code: 0, stdout, stderr };
  } catch (err) {
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

/** `lossless-wasm-lcm --storage postgres … doctor --dry-run` on `schema`: {code, stdout, stderr}. */
export const doctor = (schema) => lcm(schema, ["doctor", "--dry-run"]);
