// The demo page's controller: opens the engine from the built package (persisting to
// IndexedDB), replays the bundled transcript turn by turn as OpenClaw would (assemble,
// commitTurn, maintain with the built-in extractive summarizer), and after each turn redraws the
// gauge, the summary DAG and the compaction log from the engine's read-only inspect calls.
// The replay position is not stored separately: it is derived from what the engine holds, so a
// reload resumes exactly where the stored conversation ends.
import { openBrowserEngine } from "/dist/pkg/shim/library.js";
import { renderDag } from "./dag.js";
import { renderEvents, renderGauge, showMessage, showSummary, renderResults } from "./panels.js";

const IDB_NAME = "lossless-wasm-demo";
const WIPE_FLAG = "lossless-wasm-demo:wipe";
const BUDGET_KEY = "lossless-wasm-demo:budget";
// Small sizes so the 600-message transcript compacts many times (as the CLI demo does).
const CONFIG = { freshTailCount: 16, leafChunkTokens: 1500 };

const $ = (id) => document.getElementById(id);
const state = { turn: 0, playing: false, selected: undefined, lastEventId: 0, info: undefined };

function setStatus(text) {
  $("status").textContent = text;
}

function fail(err) {
  console.error(err);
  setStatus(`error: ${err?.message ?? err}`);
  state.playing = false;
  $("play").textContent = "Play";
}

function groupTurns(messages) {
  const turns = [];
  for (const m of messages) {
    if (m.role === "user" || turns.length === 0) turns.push([]);
    turns.at(-1).push(m);
  }
  return turns;
}

async function wipeIfAsked() {
  if (localStorage.getItem(WIPE_FLAG) !== "1") return;
  localStorage.removeItem(WIPE_FLAG);
  await new Promise((resolve, reject) => {
    const req = indexedDB.deleteDatabase(IDB_NAME);
    req.onsuccess = () => resolve();
    req.onerror = () => reject(req.error);
  });
}

const transcript = await (await fetch("/demo/transcript.json")).json();
const session = { sessionId: transcript.sessionId, sessionKey: transcript.sessionKey };
const turns = groupTurns(transcript.messages);
// starts[i]: how many transcript messages precede turn i.
const starts = turns.reduce((acc, t) => [...acc, acc.at(-1) + t.length], [0]);
const budget = () => Math.max(500, Number($("budget").value) || 6000);

let engine;

async function open() {
  await wipeIfAsked();
  const SQL = await globalThis.initSqlJs({ locateFile: (file) => `/node_modules/sql.js/dist/${file}` });
  engine = await openBrowserEngine({ SQL, config: CONFIG, idbName: IDB_NAME, key: "demo" });
  const stored = await engine.describe(session);
  const count = stored.type === "conversation" ? stored.messageCount : 0;
  // The stored conversation ends at a turn boundary: every turn is one commitTurn.
  state.turn = Math.max(0, starts.findIndex((n) => n === count));
  if (starts[state.turn] !== count) throw new Error(`the stored conversation (${count} messages) is not a prefix of the transcript; use "Start over"`);
}

/** Replays one turn as OpenClaw runs it; returns false at the end of the transcript. */
async function step() {
  if (state.turn >= turns.length) return false;
  const i = state.turn;
  const history = transcript.messages.slice(0, starts[i]);
  await engine.assemble({ ...session, messages: history, tokenBudget: budget() });
  await engine.commitTurn({ ...session, advancementKey: `demo-turn-${i}`, messages: turns[i] });
  await engine.maintain(session);
  state.turn = i + 1;
  await refresh();
  return true;
}

function select(id) {
  state.selected = id;
  for (const node of document.querySelectorAll("#dag .node")) node.classList.toggle("selected", Number(node.dataset.id) === id);
  showSummary($("detail"), engine, session, id, select).catch(fail);
}

async function refresh() {
  const described = await engine.describe(session);
  const info = described.type === "conversation" ? described : { messageCount: 0, contextTokens: 0, contextSummaryTokens: 0, contextMessages: 0, contextSummaries: 0, summaries: [] };
  state.info = info;
  const view = await engine.assemble({ ...session, messages: [], tokenBudget: budget() });
  $("turn").textContent = `turn ${state.turn} / ${turns.length}`;
  renderGauge($("gauge"), $("gauge-text"), { info, view, budget: budget(), freshTail: CONFIG.freshTailCount });
  renderDag($("dag"), info.summaries, { messageCount: info.messageCount, selected: state.selected, onSelect: select });
  const events = await engine.compactionEvents({ ...session, afterId: state.lastEventId, limit: 1000 });
  if (events.length) state.lastEventId = events.at(-1).id;
  renderEvents($("events").tBodies[0], events, select);
  document.body.dataset.turn = String(state.turn);
  document.body.dataset.summaries = String(info.summaries.length);
}

async function play() {
  state.playing = !state.playing;
  $("play").textContent = state.playing ? "Pause" : "Play";
  while (state.playing) {
    const speed = Number($("speed").value);
    const started = performance.now();
    if (!(await step())) break;
    const wait = speed > 0 ? 1000 / speed - (performance.now() - started) : 0;
    await new Promise((r) => setTimeout(r, Math.max(0, wait)));
  }
  state.playing = false;
  $("play").textContent = "Play";
}

async function search(event) {
  event.preventDefault();
  const pattern = $("search-input").value.trim();
  if (!pattern) return;
  const hits = await engine.search({ ...session, pattern, limit: 30 });
  renderResults($("results"), hits, pattern, {
    message: (id) => showMessage($("detail"), engine, session, id, select).catch(fail),
    summary: select,
  });
}

try {
  $("budget").value = localStorage.getItem(BUDGET_KEY) ?? "6000";
  await open();
  await refresh();
  $("step").addEventListener("click", () => step().catch(fail));
  $("play").addEventListener("click", () => play().catch(fail));
  $("budget").addEventListener("change", () => {
    localStorage.setItem(BUDGET_KEY, String(budget()));
    refresh().catch(fail);
  });
  $("reset").addEventListener("click", () => {
    localStorage.setItem(WIPE_FLAG, "1");
    location.reload();
  });
  $("search-form").addEventListener("submit", (e) => search(e).catch(fail));
  window.addEventListener("resize", () => state.info && renderDag($("dag"), state.info.summaries, { messageCount: state.info.messageCount, selected: state.selected, onSelect: select }));
  setStatus(`ready · ${transcript.messages.length} messages in ${turns.length} turns · stored in this browser (IndexedDB)`);
  document.body.dataset.ready = "1";
  // For tests and the console: the engine and the replay.
  window.lcmDemo = { engine, session, state, step, refresh };
} catch (err) {
  fail(err);
}
