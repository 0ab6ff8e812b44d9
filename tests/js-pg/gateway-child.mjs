// Child process for the PostgreSQL multi-gateway tests: one "gateway" committing turns (with
// assembles and maintain, as a host does) of one session key to a shared PostgreSQL store,
// printing "ack <key>" once each turn is acknowledged, then "done".
// Usage: node gateway-child.mjs <schema> <name> <sessionKey> <turns>   (LCM_PG_TEST_URL set)
import { writeSync } from "node:fs";
import { createContextEngine } from "../../dist/pkg/shim/context-engine.js";
import { openNodeEngine } from "../../dist/pkg/shim/node-engine.js";

const [schema, name, sessionKey, turns] = process.argv.slice(2);
const config = { storage: "postgres", postgresUrl: process.env.LCM_PG_TEST_URL, postgresSchema: schema, freshTailCount: 4, leafChunkTokens: 1000 };
const engine = createContextEngine(() => openNodeEngine("unused", config));
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
