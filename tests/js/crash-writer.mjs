// Child process for the crash tests: performs one kind of write over and over through the real
// shim and prints "ack <id>" (synchronously) once each write has resolved, until it is killed.
// Modes: "compaction" (turns plus maintain with an instant LLM: summaries applied all the time),
// "bootstrap" (imports of whole histories), "migration" (opens an old-schema database once).
import { writeSync } from "node:fs";
import { createContextEngine } from "../../dist/pkg/shim/engine/context-engine.js";
import { openNodeEngine } from "../../dist/pkg/shim/node/engine.js";

const [dbPath, storage, mode, run] = process.argv.slice(2);
const CONFIG = { freshTailCount: 4, leafChunkTokens: 1000, leafBudgetHeadroomFactor: 0, leafSkipReductionThreshold: 0, summarizer: "host" };
const IMPORT_SIZE = 150;
const llm = { complete: async () => ({ text: "## Goal\n- keep the service up\n## Progress\n- many steps were taken", stopReason: "stop", model: "crash" }) };
// Small sql.js checkpoints, so kills also land inside checkpoints (a whole-file rewrite).
const engine = createContextEngine(() => openNodeEngine(dbPath, { storage, ...CONFIG }, { checkpointBytes: 50_000 }), { config: CONFIG, hostLlm: () => llm });
const ack = (id) => writeSync(1, `ack ${id}\n`);
const ts = () => Date.now() * 1000;

if (mode === "migration") {
  await engine.assemble({ sessionId: "m", sessionKey: "m", messages: [] });
  ack("migrated");
  process.exit(0);
}
await engine.assemble({ sessionId: "s", sessionKey: "crash", messages: [] });
writeSync(1, "ready\n");
for (let i = 0; ; i++) {
  const key = `${run}-${i}`;
  const t = ts() + i * 10;
  if (mode === "compaction") {
    await engine.commitTurn({
      sessionId: "s", sessionKey: "crash", advancementKey: key,
      messages: [
        { role: "user", content: `turn ${key}: ${"tell me about the deployment ".repeat(12)}`, timestamp: t },
        { role: "assistant", content: [{ type: "text", text: `answer ${key}: ${"the deployment went fine ".repeat(12)}` }], timestamp: t + 1 },
      ],
    });
    ack(key);
    await engine.maintain({ sessionId: "s", sessionKey: "crash" });
  } else if (mode === "bootstrap") {
    const history = Array.from({ length: IMPORT_SIZE }, (_, n) => ({ role: n % 2 ? "assistant" : "user", content: n % 2 ? [{ type: "text", text: `reply ${key}/${n}` }] : `message ${key}/${n} ${"x".repeat(200)}`, timestamp: t + n }));
    await engine.bootstrap({ sessionId: `import-${key}`, sessionKey: `import-${key}`, messages: history });
    ack(`import-${key}`);
  } else {
    throw new Error(`unknown mode ${mode}`);
  }
}
