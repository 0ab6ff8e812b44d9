// The demo: replays the bundled transcript (demo/transcript.json) through the wasm engine in
// Node — no network, no API key — and prints what was stored and what `assemble` returns under a
// small budget. Run it with `bash scripts/demo.sh` (which builds first).
import { readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";

const require = createRequire(import.meta.url);
const pkg = new URL("../dist/pkg/", import.meta.url);
const { openEngine } = await import(new URL("shim/library.js", pkg));
const { writeFileAtomic } = await import(new URL("shim/node/file-store.js", pkg));

const transcript = JSON.parse(readFileSync(new URL("./transcript.json", import.meta.url), "utf8"));
const { sessionId, sessionKey, messages } = transcript;
const budget = Number(process.argv[2] ?? 6_000);
const dbPath = join(tmpdir(), `lossless-wasm-demo-${process.pid}.sqlite`);
const SQL = await require("sql.js")();
// Small sizes so a 600-message transcript compacts several times; no LLM is given, so the
// built-in extractive summarizer writes the summaries.
const config = { freshTailCount: 16, leafChunkTokens: 1500 };
const engine = await openEngine({
  SQL,
  config,
  wasm: readFileSync(new URL("wasm/lossless_wasm_bg.wasm", pkg)),
  save: (bytes) => writeFileAtomic(dbPath, bytes),
});

// Group the transcript into turns: each user message starts one.
const turns = [];
for (const m of messages) {
  if (m.role === "user" || turns.length === 0) turns.push([]);
  turns.at(-1).push(m);
}

// Each turn as OpenClaw runs it: assemble under the budget, commit the turn, then maintain
// (which runs any compaction the trigger left pending).
const replay = async () => {
  const counts = { committed: 0, duplicate: 0, compactions: 0 };
  const started = performance.now();
  const history = [];
  for (const [i, turn] of turns.entries()) {
    await engine.assemble({ sessionId, sessionKey, messages: history, tokenBudget: budget });
    const { status } = await engine.commitTurn({ sessionId, sessionKey, advancementKey: `demo-turn-${i}`, messages: turn });
    counts[status]++;
    if ((await engine.maintain({ sessionId, sessionKey })).changed) counts.compactions++;
    history.push(...turn);
  }
  return { ...counts, ms: performance.now() - started };
};

const line = (s = "") => console.log(s);
line("lossless-wasm demo: replaying a bundled coding-agent transcript through the wasm engine");
line(`  transcript: ${messages.length} messages in ${turns.length} turns (${(JSON.stringify(messages).length / 1024).toFixed(0)} KiB of JSON)`);

const first = await replay();
line(`  first replay:  ${first.committed} turns committed, ${first.duplicate} duplicates, ${first.compactions} compactions, ${first.ms.toFixed(0)} ms (each write saved atomically to disk)`);
const second = await replay();
line(`  second replay: ${second.committed} turns committed, ${second.duplicate} duplicates — a replay stores nothing twice`);

const db = new SQL.Database(readFileSync(dbPath));
const rows = db.exec("SELECT role, COUNT(*), SUM(token_count) FROM messages GROUP BY role ORDER BY role")[0].values;
const summaries = db.exec("SELECT depth, COUNT(*), SUM(descendant_message_count), SUM(token_count), SUM(source_token_count) FROM summaries GROUP BY depth ORDER BY depth")[0]?.values ?? [];
const events = db.exec("SELECT outcome, COUNT(*) FROM compaction_events GROUP BY outcome ORDER BY outcome")[0]?.values ?? [];
db.close();
line();
line(`What is stored (${dbPath}, ${(statSync(dbPath).size / 1024).toFixed(0)} KiB):`);
for (const [role, count, tokens] of rows) line(`  ${role.padEnd(11)} ${String(count).padStart(4)} messages, ~${tokens} tokens`);
for (const [depth, count, covered, tokens, source] of summaries) {
  line(`  summaries at depth ${depth}: ${count}, covering ${covered} messages (~${source} tokens) in ~${tokens} tokens`);
}
line(`  compaction events: ${events.map(([outcome, n]) => `${n} ${outcome}`).join(", ")}`);

const view = await engine.assemble({ sessionId, sessionKey, messages: [], tokenBudget: budget });
line();
line(`What assemble returns under a ${budget}-token budget:`);
line(`  ${view.messages.length} of ${messages.length} messages, ~${view.estimatedTokens} tokens; the view starts with a ${view.messages[0]?.role} message`);
line(`  systemPromptAddition: ${view.systemPromptAddition}`);
for (const m of view.messages.slice(0, 6)) {
  const text = typeof m.content === "string" ? m.content : m.content.map((b) => b.text ?? `[${b.type} ${b.name ?? ""}]`).join(" ");
  // A summary is shown with its first lines; messages with their start.
  line(`  - ${m.role.padEnd(10)} ${text.replace(/\s+/g, " ").slice(0, 90)}`);
}
if (view.messages.length > 6) line(`  … ${view.messages.length - 6} more, ending with the newest message`);

const hits = await engine.search({ sessionId, sessionKey, pattern: "mismatched types", limit: 3 });
line();
line(`search("mismatched types"): ${hits.length} newest hits, e.g. ${hits[0]?.role} #${hits[0]?.id}: ${hits[0]?.snippet.slice(0, 70)}`);

const compact = await engine.compact({ sessionId, sessionKey, force: true, tokenBudget: budget });
line(`compact(): ok=${compact.ok} compacted=${compact.compacted} — ${compact.reason}`);
