// A gateway client process for the e2e tests, standing in for a user's channel: it loads the
// host's own gateway client (`openclaw/plugin-sdk/gateway-runtime`'s `callGatewayFromCli`, the
// call `openclaw agent` makes without `--local`) once, then sends each request it reads on stdin
// to the running gateway and writes the answer on stdout. One JSON object per line:
//   in:  {"id": 1, "method": "agent", "params": {...}, "opts": {"url": "...", "token": "..."}}
//   out: {"id": 1, "ok": true, "result": {...}, "ms": 2100} or {"id": 1, "ok": false, "error": "..."}
// It runs with the sandbox's environment (gateway.mjs starts it), so the host's client finds the
// sandbox's config and device identity. Booting `openclaw agent` per turn costs 2-3 s on 2026.9.6
// and ~10-20 s on 2026.7.1; through this process a turn costs what the gateway spends on it.
//
// Usage: node gateway-client.mjs <openclaw package dir>

import readline from "node:readline";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [packageDir] = process.argv.slice(2);
if (!packageDir) {
  process.stderr.write("usage: node gateway-client.mjs <openclaw package dir>\n");
  process.exit(2);
}
const sdk = await import(pathToFileURL(path.join(packageDir, "dist", "plugin-sdk", "gateway-runtime.js")).href);
if (typeof sdk.callGatewayFromCli !== "function") {
  process.stderr.write(`${packageDir}: plugin-sdk/gateway-runtime has no callGatewayFromCli\n`);
  process.exit(2);
}
const write = (obj) => process.stdout.write(JSON.stringify(obj) + "\n");
write({ ready: true });

const lines = readline.createInterface({ input: process.stdin });
lines.on("line", async (line) => {
  let request;
  try {
    request = JSON.parse(line);
  } catch {
    write({ id: null, ok: false, error: `not JSON: ${line.slice(0, 200)}` });
    return;
  }
  const started = Date.now();
  try {
    const result = await sdk.callGatewayFromCli(request.method, { ...request.opts, expectFinal: true, json: true }, request.params, { expectFinal: true, progress: false });
    write({ id: request.id, ok: true, result, ms: Date.now() - started });
  } catch (err) {
    write({ id: request.id, ok: false, error: String(err?.stack ?? err), ms: Date.now() - started });
  }
});
lines.on("close", () => process.exit(0));
