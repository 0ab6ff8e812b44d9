// Child process for the journal-file crash test: opens `<dbPath>` through openJournaledFile
// (small checkpoints, so kills land in checkpoints too), commits turns in a loop and prints
// "ack <i>" (synchronously) after each commit resolves, until it is killed.
import { readFileSync, writeSync } from "node:fs";
import { createRequire } from "node:module";

const pkg = new URL("../../dist/pkg/", import.meta.url);
const { initSync } = await import(new URL("wasm/lossless_wasm.js", pkg));
const { createHandle } = await import(new URL("shim/engine/handle.js", pkg));
const { createContextEngine } = await import(new URL("shim/engine/context-engine.js", pkg));
const { openJournaledFile } = await import(new URL("shim/node/journal-file.js", pkg));
initSync({ module: readFileSync(new URL("wasm/lossless_wasm_bg.wasm", pkg)) });
const SQL = await createRequire(import.meta.url)("sql.js")();

const [dbPath, start] = process.argv.slice(2);
const { db, persist } = openJournaledFile(SQL, dbPath, { checkpointBytes: 30_000 });
const engine = createContextEngine(async () => handle);
const handle = createHandle({ db, persist });
writeSync(1, "ready\n");
for (let i = Number(start); ; i++) {
  await engine.commitTurn({ sessionId: "s", sessionKey: "k", advancementKey: `t${i}`, messages: [
    { role: "user", content: `journal turn ${i} ${"payload ".repeat(30)}`, timestamp: 10 * i },
    { role: "assistant", content: [{ type: "text", text: `journal answer ${i}` }], timestamp: 10 * i + 1 },
  ] });
  writeSync(1, `ack ${i}\n`);
}
