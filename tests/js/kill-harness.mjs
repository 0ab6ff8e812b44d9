// Crash-test harness shared by the durability, crash and journal tests: runs a writer script
// that prints "ready" and then "ack <id>" after every acknowledged write, SIGKILLs it
// `delayMs` after "ready" (or after the start, when it never says ready), and returns what was
// acknowledged before the kill. Not a test file itself.
import { spawn } from "node:child_process";

/**
 * @param {string} script the writer's path
 * @param {string[]} args its arguments
 * @param {number} delayMs when to kill it
 * @param {{waitReady?: boolean, mustBeKilled?: boolean}} [options] `waitReady: false` starts the
 *        clock at spawn; `mustBeKilled: false` accepts a writer that finished on its own
 * @returns {Promise<{killed: boolean, acks: string[]}>}
 */
export function runUntilKilled(script, args, delayMs, { waitReady = true, mustBeKilled = true } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    let timer = waitReady ? undefined : setTimeout(() => child.kill("SIGKILL"), delayMs);
    child.stdout.on("data", (chunk) => {
      out += chunk;
      if (!timer && out.includes("ready\n")) timer = setTimeout(() => child.kill("SIGKILL"), delayMs);
    });
    child.stderr.on("data", (chunk) => (err += chunk));
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      const killed = signal === "SIGKILL";
      if (!killed && (mustBeKilled || code !== 0)) return reject(new Error(`writer exited by itself (code ${code}): ${err}`));
      resolve({ killed, acks: out.split("\n").filter((l) => l.startsWith("ack ")).map((l) => l.slice(4)) });
    });
  });
}
