// The loop a test "gateway" child process runs (two-writers-child.mjs on one SQLite file,
// tests/js-pg/gateway-child.mjs on one PostgreSQL store): `turns` turns of one session key,
// each an assemble, a commitTurn of two messages and a maintain, as a host makes them; prints
// "ack <key>" once each turn is acknowledged, then "done" (or "error: …" and exit code 1).
import { writeSync } from "node:fs";
import { createContextEngine } from "../../dist/pkg/shim/engine/context-engine.js";
import { openNodeEngine } from "../../dist/pkg/shim/node/engine.js";

export async function writeTurns({ dbPath, config, name, sessionKey, turns }) {
  const engine = createContextEngine(() => openNodeEngine(dbPath, config));
  try {
    for (let i = 0; i < Number(turns); i++) {
      const key = `${name}-${i}`;
      const ts = Date.now() * 1000 + i;
      await engine.assemble({ sessionId: sessionKey, sessionKey, messages: [], tokenBudget: 4000 });
      await engine.commitTurn({
        sessionId: sessionKey, sessionKey, advancementKey: key,
        messages: [
          { role: "user", content: `${key}: ${"question text ".repeat(30)}`, timestamp: ts },
          { role: "assistant", content: [{ type: "text", text: `${key} answered ${"answer text ".repeat(30)}` }], timestamp: ts + 1 },
        ],
      });
      writeSync(1, `ack ${key}\n`);
      await engine.maintain({ sessionId: sessionKey, sessionKey });
    }
    writeSync(1, "done\n");
  } catch (err) {
    writeSync(2, `error: ${err.message}\n`);
    process.exitCode = 1;
  }
}
