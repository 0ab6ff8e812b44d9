// Child process for the restart test: one host process = one turn, then exit. Like OpenClaw, the
// host passes the session's history so far; the parent checks it was not stored a second time.
import { createFakeHost } from "./fake-host.mjs";
import { loadPlugin } from "./support.mjs";

const [dbPath, round, storage] = process.argv.slice(2);
const h = createFakeHost({ pluginConfig: { dbPath, storage } });
h.load(await loadPlugin());
const message = (r) => [
  { role: "user", content: `round ${r}`, timestamp: r * 10 },
  { role: "assistant", content: [{ type: "text", text: `reply ${r}` }], timestamp: r * 10 + 1 },
];
const history = [];
for (let r = 1; r < Number(round); r++) history.push(...message(r));
const turn = message(Number(round));
const { view } = await h.runTurn("lossless-wasm", { sessionId: "s", sessionKey: "k", history, turn, advancementKey: `round-${round}` });
console.log(`round ${round}: view has ${view.messages.length} messages`);
