// Starts serve-model.mjs as a child process for a test and hands back its URL, its request log
// and a way to stop it. Not a test file itself.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

const SERVER = new URL("./serve-model.mjs", import.meta.url);

/**
 * @param {object} [o]
 * @param {number} [o.startMs] how long loading the model may take
 * @returns {Promise<{url: string, model: string, threads: number, requests: () => Promise<object[]>, stop: () => Promise<void>}>}
 */
export async function startModelServer({ startMs = 120_000 } = {}) {
  const child = spawn(process.execPath, [SERVER.pathname], { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (chunk) => { stderr = (stderr + chunk).slice(-4000); });
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  const first = new Promise((resolve) => createInterface({ input: child.stdout }).once("line", resolve));
  let timer;
  const outcome = await Promise.race([
    first.then((line) => ({ line })),
    exited.then((e) => ({ exited: e })),
    new Promise((resolve) => { timer = setTimeout(() => resolve({ timeout: true }), startMs); }),
  ]);
  clearTimeout(timer);
  if (!outcome.line) {
    child.kill("SIGKILL");
    const why = outcome.timeout ? `did not listen within ${startMs} ms` : `exited (${JSON.stringify(outcome.exited)})`;
    throw new Error(`the model server ${why}: ${stderr.trim() || "no output"}`);
  }
  const info = JSON.parse(outcome.line);
  return {
    ...info,
    async requests() {
      const res = await fetch(`${info.url}/requests`);
      return (await res.json()).requests;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}
