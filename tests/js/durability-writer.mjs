// Child process for the durability test: commits turns in a loop through the real shim and
// prints "ack <key>" (synchronously) after each commit resolves, until it is killed.
// Arguments: dbPath, storage, run id, and optionally config `durability` (default: not set).
import { writeSync } from "node:fs";
import { createContextEngine } from "../../dist/pkg/shim/engine/context-engine.js";
import { openNodeEngine } from "../../dist/pkg/shim/node/engine.js";

const [dbPath, storage, run, durability] = process.argv.slice(2);
// The default config unless a durability is named: what users run.
const config = durability ? { storage, durability } : { storage };
// Small sql.js checkpoints, so kills also land inside checkpoints (a whole-file rewrite).
const engine = createContextEngine(() => openNodeEngine(dbPath, config, { checkpointBytes: 30_000 }));
await engine.assemble({ sessionId: "s", sessionKey: "durable", messages: [] });
writeSync(1, "ready\n");
for (let i = 0; ; i++) {
  const key = `${run}-${i}`;
  const ts = Date.now() * 1000 + i;
  await engine.commitTurn({
    sessionId: "s", sessionKey: "durable", advancementKey: key,
    messages: [
      { role: "user", content: `turn ${key}: ${"payload ".repeat(20)}`, timestamp: ts },
      { role: "assistant", content: [{ type: "text", text: `ack ${key}` }], timestamp: ts + 1 },
    ],
  });
  writeSync(1, `ack ${key}\n`);
}
