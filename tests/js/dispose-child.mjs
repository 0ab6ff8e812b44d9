// Child process for engine/dispose.test.mjs: a gateway's turn whose host gives up on it. Turns
// are stored; the last turn's maintenance asks a summarizer that never answers (and ignores its
// abort signal), the host stops waiting (summaryTurnWaitMs), one more turn's commit is sent and
// not awaited, and the host disposes the engine instance. Prints one JSON line: how long
// dispose took, the summary requests (aborted or not), and the markers of every committed turn.
// Then it does not exit by itself: the parent checks that nothing keeps this process alive.
//   node dispose-child.mjs <dbPath> <storage> [<extra config JSON>]
import { writeSync } from "node:fs";
import { createFakeHost } from "./fake-host.mjs";
import { assistant, loadPlugin, user } from "./support.mjs";

const [dbPath, storage, extra] = process.argv.slice(2);
/** A summarizer that hangs: it answers nothing, ever, and only notes an abort. */
const requests = [];
const llm = {
  complete: ({ signal }) => {
    const request = { aborted: false };
    requests.push(request);
    signal?.addEventListener("abort", () => (request.aborted = true), { once: true });
    return new Promise(() => {});
  },
};
const config = { dbPath, storage, ...JSON.parse(extra ?? "{}"), summarizer: "host", freshTailCount: 2, leafChunkTokens: 1000, summaryTurnWaitMs: 50, leafBudgetHeadroomFactor: 0, leafSkipReductionThreshold: 0 };
const host = createFakeHost({ pluginConfig: config, stateDir: `${dbPath}.state`, llm });
host.load(await loadPlugin());

const key = "agent:main:dispose";
const history = [];
const markers = [];
const note = (i) => `dispose note ${i}: marker-${i}-${"harbour log line. ".repeat(60)}`;
for (let i = 0; i < 6; i++) {
  markers.push(`marker-${i}-`);
  const turn = [user(note(i)), assistant(`noted ${i}`)];
  // A large budget: nothing to compact yet, so no summary is asked.
  await host.runTurn("lossless-wasm", { sessionId: "s", sessionKey: key, history: [...history], turn, tokenBudget: 100_000 });
  history.push(...turn);
}

// The last turn: its maintenance asks for a summary at a small budget and stops waiting.
const engine = await host.resolveEngine("lossless-wasm");
await engine.bootstrap({ sessionId: "s", sessionKey: key, sessionFile: "f" });
await engine.assemble({ sessionId: "s", sessionKey: key, messages: [...history], tokenBudget: 1_200, prompt: "hi" });
const maintained = await engine.maintain({ sessionId: "s", sessionKey: key, sessionFile: "f", runtimeContext: { llm } });
// A turn's write still pending when the host disposes (sent, not awaited).
markers.push("marker-6-");
const turn = [user(note(6)), assistant("noted 6")];
const commit = engine.commitTurn({
  sessionId: "s", sessionKey: key, advancementKey: "turn-6", messages: turn,
  admission: { entryId: "u6" }, terminal: { entryId: "a6" }, runtimeContext: { provider: "fake", modelId: "fake", tokenBudget: 1_200 },
});
const requestsBefore = requests.length;
const t0 = performance.now();
await engine.dispose();
const disposeMs = performance.now() - t0;
const committed = await commit.then((r) => r?.status ?? "stored", (err) => `failed: ${err.message}`);

writeSync(1, JSON.stringify({
  disposeMs,
  maintainedReason: maintained?.reason ?? null,
  requestsBefore,
  aborted: requests.map((r) => r.aborted),
  committed,
  markers,
  warnings: host.logs.filter(([level]) => level === "warn").map(([, m]) => m),
}) + "\n");
// No process.exit: the process ends when nothing (a timer, the storage worker, a summary
// request's lease) keeps it alive.
