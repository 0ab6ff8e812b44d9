// Child process for storage-switch.test.mjs: opens `<dbPath>` through the real Node driver
// (openNodeEngine) with the given storage, commits turns `from`..`to`-1, prints "ack <i>" after
// each, and exits (or, with `hold`, keeps the database open until it is killed).
import { writeSync } from "node:fs";
import { createContextEngine } from "../../dist/pkg/shim/engine/context-engine.js";
import { openNodeEngine } from "../../dist/pkg/shim/node/engine.js";

const [dbPath, storage, from, to, checkpointBytes, hold] = process.argv.slice(2);
const engine = createContextEngine(() => openNodeEngine(dbPath, { storage }, { checkpointBytes: Number(checkpointBytes) }));
for (let i = Number(from); i < Number(to); i++) {
  await engine.commitTurn({ sessionId: "s", sessionKey: "switch", advancementKey: `t${i}`, messages: [
    { role: "user", content: `switch turn ${i} ${"payload ".repeat(40)}`, timestamp: 10 * i },
    { role: "assistant", content: [{ type: "text", text: `switch answer ${i}` }], timestamp: 10 * i + 1 },
  ] });
  writeSync(1, `ack ${i}\n`);
}
if (hold === "hold") {
  writeSync(1, "holding\n");
  setInterval(() => {}, 1 << 30);
}
