// The gateway's resident memory over a long run, with the plugin and with the host alone as the
// control (issue 42 item 4): a real `openclaw gateway run` (tests/e2e/gateway.mjs) in a sandbox,
// the scripted mock LLM, N turns of ~2,000-character notes in one session through the gateway's
// own client (as a channel sends them), and the resident set of the gateway's whole process group
// (the gateway, the plugin's worker thread inside it, anything it spawned) read from /proc after
// chosen turns. With the plugin: the built tarball installed and selected, default config apart
// from `dbPath`. Control: the same sandbox and turns with the host's own engine. Prints one JSON
// object per configuration and a summary; asserts nothing.
//
//   bash scripts/build.sh
//   source scripts/env.sh
//   "$NODE26_BIN/node" bench/gateway-memory.mjs [--turns 1000] [--window 8192] [--host 2026.9.6]
//        [--only plugin|control] [--samples 1,10,100,1000]
//
// A turn takes ~1-5 s through the gateway on a 2-core machine, so 1,000 turns are ~30-80 min
// per configuration.

import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";

import { findPluginTarball, PLUGIN_ID } from "../tests/e2e/e2e-support.mjs";
import { startGateway } from "../tests/e2e/gateway.mjs";
import { startMockLlm } from "../tests/e2e/mock-llm.mjs";
import { createHostSandbox, locateHost, OPENCLAW_VERSION } from "../tests/e2e/openclaw-host.mjs";

const { values: args } = parseArgs({
  options: {
    turns: { type: "string", default: "1000" },
    window: { type: "string", default: "8192" },
    host: { type: "string", default: OPENCLAW_VERSION },
    only: { type: "string" },
    samples: { type: "string" },
    keep: { type: "boolean", default: false },
  },
});
const turns = Number(args.turns);
const contextWindow = Number(args.window);
if (!Number.isInteger(turns) || turns < 1) throw new Error(`--turns must be a whole number >= 1, got ${args.turns}`);
if (!Number.isInteger(contextWindow) || contextWindow < 1024) {
  throw new Error(`--window must be a whole number of tokens >= 1024, got ${args.window}`);
}
if (args.only && args.only !== "plugin" && args.only !== "control") {
  throw new Error(`--only must be "plugin" or "control", got ${args.only}`);
}
const samples = new Set(
  (args.samples ?? [1, 10, 100, 250, 500, 750, 1000].join(","))
    .split(",")
    .map(Number)
    .filter((n) => n >= 1 && n <= turns),
);
samples.add(turns);

/** Resident set (KiB) of every process in `pgid`'s group, summed, from /proc. */
function groupRssKiB(pgid) {
  let total = 0;
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat;
    let status;
    try {
      stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
      status = fs.readFileSync(`/proc/${entry}/status`, "utf8");
    } catch {
      continue; // exited meanwhile
    }
    // Fields after the command name (which may hold spaces): state ppid pgrp …
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(fields[2]) !== pgid) continue;
    const rss = /^VmRSS:\s+(\d+) kB/m.exec(status);
    if (rss) total += Number(rss[1]);
  }
  return total;
}

/** A ~2,000-character note, different every turn. */
function note(i) {
  const words = ["river", "ledger", "copper", "orchard", "signal", "harbor", "meadow", "lantern", "quarry", "thicket"];
  let text = `Note ${i}: `;
  for (let w = 0; text.length < 2000; w++) text += `${words[(i * 7 + w * 3) % words.length]}-${(i * 31 + w) % 997} `;
  return text.trim();
}

async function measure(withPlugin) {
  const host = await locateHost({ version: args.host });
  const llm = await startMockLlm({ contextWindow });
  // An 8K model leaves no room for the host's default prompt (~10K tokens: bootstrap files, 12
  // tool schemas); its users trim the host as the e2e tests do (default-config.e2e.test.mjs):
  // no bootstrap files, the minimal tool profile. The same for both configurations.
  const small = contextWindow < 16_384;
  const sandbox = await createHostSandbox({
    host,
    mockUrl: llm.url,
    contextWindow,
    agentDefaults: {
      ...(small ? { skipBootstrap: true } : {}),
      // The host's own compaction (the control's) runs the mock as its summarizer; its quality
      // guard wants sections a scripted summary lacks and would cancel every compaction (then
      // every turn fails preflight and the control measures a host that does no work).
      ...(withPlugin ? {} : { compaction: { qualityGuard: { enabled: false } } }),
    },
    extraConfig: small ? { tools: { profile: "minimal" } } : {},
  });
  const label = withPlugin ? "plugin" : "control";
  if (withPlugin) {
    const dbPath = path.join(sandbox.root, "lossless-wasm.sqlite");
    await sandbox.installPlugin(findPluginTarball());
    await sandbox.setPluginConfig(PLUGIN_ID, { dbPath });
    if (!host.traits.installSelectsEngine) await sandbox.selectContextEngine(PLUGIN_ID);
  }
  const gateway = await startGateway(sandbox, {});
  const rows = [];
  const failed = [];
  const started = Date.now();
  try {
    const atStart = groupRssKiB(gateway.pid);
    rows.push({ turn: 0, rssMiB: +(atStart / 1024).toFixed(1) });
    for (let i = 1; i <= turns; i++) {
      const r = await gateway.turn({ sessionKey: "agent:main:memory-bench", message: note(i) });
      if (r.code !== 0 || r.metaError) failed.push({ turn: i, error: r.metaError ?? r.stderr?.slice(0, 200) });
      if (samples.has(i)) {
        const rss = groupRssKiB(gateway.pid);
        rows.push({ turn: i, rssMiB: +(rss / 1024).toFixed(1), elapsedS: Math.round((Date.now() - started) / 1000) });
        process.stderr.write(`${label}: turn ${i}, RSS ${(rss / 1024).toFixed(1)} MiB\n`);
      }
    }
  } finally {
    await gateway.closeClient();
    await gateway.stop({ graceMs: 5000 });
    await llm.close();
    if (!args.keep) fs.rmSync(sandbox.root, { recursive: true, force: true });
  }
  const result = {
    configuration: label,
    host: host.version,
    contextWindow,
    turns,
    failedTurns: failed.length,
    firstFailures: failed.slice(0, 3),
    rss: rows,
  };
  console.log(JSON.stringify(result));
  return result;
}

const runs = [];
if (args.only !== "control") runs.push(await measure(true));
if (args.only !== "plugin") runs.push(await measure(false));
if (runs.length === 2) {
  const [plugin, control] = runs;
  const at = (run, turn) => run.rss.find((r) => r.turn === turn)?.rssMiB;
  const summary = [...samples]
    .sort((a, b) => a - b)
    .map((turn) => {
      const p = at(plugin, turn);
      const c = at(control, turn);
      return {
        turn,
        pluginMiB: p,
        controlMiB: c,
        pluginOverControl: p && c ? +((p / c - 1) * 100).toFixed(1) + " %" : null,
      };
    });
  console.log(JSON.stringify({ summary }));
}
