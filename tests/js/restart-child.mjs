// Child process for the restart test: one host process = one turn, then exit. The host passes
// no history, so the view shows only what earlier processes stored in the database file.
import { createFakeHost } from "./fake-host.mjs";
import { loadPlugin } from "./support.mjs";

const [dbPath, round, storage] = process.argv.slice(2);
const h = createFakeHost({ pluginConfig: { dbPath, storage } });
h.load(await loadPlugin());
const turn = [{ role: "user", content: `round ${round}`, timestamp: Number(round) * 10 }, { role: "assistant", content: [{ type: "text", text: `reply ${round}` }], timestamp: Number(round) * 10 + 1 }];
const { view } = await h.runTurn("lossless-wasm", { sessionId: "s", sessionKey: "k", history: [], turn });
console.log(`round ${round}: view has ${view.messages.length} messages`);
