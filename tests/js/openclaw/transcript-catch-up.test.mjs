// Catching up from the host's transcript (js-shim/openclaw/transcript-catch-up.js, issue 42 item 1): the
// real engine and store behind the shim's context engine, and a host transcript read through a
// cursor the way OpenClaw 2026.9's `readSessionTranscriptVisibleMessageDelta` pages it (opaque
// cursor, pages, `reset` for a cursor it no longer knows). The shapes are the ones a real gateway
// produced after a SIGKILL mid-turn (tests/e2e/crash.e2e.test.mjs): the user's message stays in
// the transcript, the re-run turn's commit carries only "[System] Your previous turn was
// interrupted…" and its reply.
import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, test } from "node:test";
import { assistant, PKG, query, STORAGES, tempDir, user } from "../support.mjs";

const { createContextEngine } = await import(new URL("shim/engine/context-engine.js", PKG));
const { createTranscriptCatchUp, ingestFromTranscript, isInternalSessionKey, loadHostTranscriptReader, MAX_PAGES_PER_CATCH_UP } = await import(new URL("shim/openclaw/transcript-catch-up.js", PKG));
const { openNodeEngine } = await import(new URL("shim/node/engine.js", PKG));

/** A host transcript with a cursor API: `entries` grow as turns run; pages of `pageSize`. */
function hostTranscript({ pageSize = 3 } = {}) {
  const entries = [];
  let generation = 1;
  const reads = [];
  return {
    entries,
    reads,
    append: (...messages) => entries.push(...messages.map((message) => ({ entryId: `e${entries.length}`, message }))),
    /** A reset the host made (a replaced transcript): old cursors are no longer known. */
    replace(messages) {
      entries.length = 0;
      generation += 1;
      this.append(...messages);
    },
    async read({ sessionId, cursor }) {
      reads.push(cursor ?? null);
      let start = 0;
      if (cursor !== undefined) {
        const [gen, pos] = String(cursor).split(":").map(Number);
        if (gen !== generation) return { kind: "reset", cursor: `${generation}:0`, reason: "generation_mismatch" };
        start = pos;
      }
      if (sessionId === "gone") return { kind: "missing" };
      const page = entries.slice(start, start + pageSize);
      return { kind: "page", cursor: `${generation}:${start + page.length}`, hasMore: start + page.length < entries.length, entries: page };
    },
  };
}

for (const storage of STORAGES) describe(`storage ${storage}`, () => {
  async function setup(options) {
    const dbPath = join(tempDir("catch-up"), "db.sqlite");
    const open = () => openNodeEngine(dbPath, { dbPath, storage });
    const transcript = hostTranscript(options);
    const warnings = [];
    const logger = { info() {}, warn: (m) => warnings.push(m) };
    const catchUp = createTranscriptCatchUp({ readDelta: (t) => transcript.read(t), ingest: ingestFromTranscript(open), logger });
    const engine = createContextEngine(open, { logger, fullHistory: true, transcriptCatchUp: catchUp });
    /** The same store behind a new process (a restarted gateway): no cursor yet. */
    const restarted = () => createContextEngine(open, { logger, fullHistory: true, transcriptCatchUp: createTranscriptCatchUp({ readDelta: (t) => transcript.read(t), ingest: ingestFromTranscript(open), logger }) });
    const session = { sessionId: "s1", sessionKey: "agent:main:main" };
    let turnNo = 0;
    /** A durable turn as OpenClaw 2026.9 runs it: bootstrap, assemble, the transcript written, commitTurn. */
    // `history`: what the host passes to assemble, when not its transcript as it stands (a re-run
    // after a restart leaves the interrupted user message out).
    const turn = async (messages, { commit = true, history } = {}) => {
      await engine.bootstrap(session);
      await engine.assemble({ ...session, messages: history ?? transcript.entries.map((e) => e.message), tokenBudget: 100_000 });
      transcript.append(...messages);
      turnNo += 1;
      return commit ? engine.commitTurn({ ...session, advancementKey: `adv-${turnNo}`, messages }) : undefined;
    };
    const stored = () => query(dbPath, "SELECT m.role, t.content FROM messages m JOIN messages_text t ON t.rowid = m.id ORDER BY m.seq");
    return { engine, session, transcript, turn, stored, warnings, dbPath, catchUp, restarted };
  }
  const text = (m) => (typeof m.content === "string" ? m.content : m.content[0].text);

  test("a turn killed before its commit: the user's message is stored from the transcript, once, before the re-run", async () => {
    const { turn, stored, warnings, transcript, engine, session } = await setup();
    const history = [];
    for (let i = 1; i <= 3; i++) {
      const t = [user(`note ${i}`), assistant(`reply ${i}`)];
      assert.equal((await turn(t)).status, "committed");
      history.push(...t);
    }
    // Turn 4: the gateway is killed while the model answers. The user's note is in the transcript;
    // no reply, no commit.
    const note4 = user("note 4: killed mid-turn");
    await turn([note4], { commit: false });
    // After the restart the host re-runs the turn as a new one; its commit carries only that, and
    // its assemble's history leaves the note out (it goes into the prompt as "[Queued user
    // message … preserved as context only]"), so the history's length matches what is stored.
    const rerun = [user("[System] Your previous turn was interrupted by a gateway restart…"), assistant("reply 4 (re-run)")];
    assert.equal((await turn(rerun, { history })).status, "committed");
    const rows = await stored();
    assert.deepEqual(rows.map(([, c]) => c), [...history, note4, ...rerun].map(text), "every message of the transcript once, the note before the re-run");
    assert.equal(warnings.filter((w) => /caught up 1 message/.test(w)).length, 1, `one catch-up line: ${warnings}`);
    // Nothing stored twice however often the host bootstraps, and the cursor moved on.
    const readsBefore = transcript.reads.length;
    await engine.bootstrap(session);
    await engine.bootstrap(session);
    assert.deepEqual((await stored()).length, rows.length);
    assert.equal(transcript.reads.at(-1), `1:${transcript.entries.length}`, `the last read starts at the transcript's end: ${transcript.reads.slice(readsBefore)}`);
  });

  test("a commit that comes after the catch-up (the host's outbox retry) stores nothing twice", async () => {
    const { turn, stored, engine, session, transcript } = await setup();
    const t1 = [user("first"), assistant("first reply")];
    await turn(t1, { commit: false });
    // The next turn's bootstrap stores turn 1 from the transcript; then the host retries its commit.
    await engine.bootstrap(session);
    assert.equal((await stored()).length, 2, "the catch-up stored the uncommitted turn");
    const retry = await engine.commitTurn({ ...session, advancementKey: "adv-1", messages: t1 });
    assert.equal(retry.status, "committed", "the retried commit is recorded");
    assert.deepEqual((await stored()).map(([, c]) => c), t1.map(text), "and stores nothing a second time");
    assert.equal(transcript.entries.length, 2);
  });

  test("dedupe is by identity, not position or text alone: the same words typed again later are a new message", async () => {
    const { turn, stored, engine, session } = await setup();
    await turn([user("same words"), assistant("ok")]);
    await turn([user("same words"), assistant("ok again")], { commit: false });
    await engine.bootstrap(session);
    const rows = await stored();
    assert.deepEqual(rows.map(([, c]) => c), ["same words", "ok", "same words", "ok again"]);
  });

  test("a cursor the host no longer knows starts over from the host's new cursor; nothing stored twice", async () => {
    const { turn, stored, engine, session, transcript } = await setup();
    const t1 = [user("before"), assistant("before reply")];
    await turn(t1);
    // The host rewrote its transcript (same messages, a new generation) and added one nobody committed.
    const extra = user("added by the host");
    transcript.replace([...t1, extra]);
    await engine.bootstrap(session);
    assert.deepEqual((await stored()).map(([, c]) => c), [...t1, extra].map(text));
  });

  test("a gateway restarted after a /reset does not store the transcript's messages from before the reset again", async () => {
    const { turn, stored, session, transcript, restarted, dbPath } = await setup();
    const before = [user("before the reset"), assistant("before reply"), user("second"), assistant("second reply")];
    await turn(before.slice(0, 2));
    await turn(before.slice(2));
    // OpenClaw 2026.9's /reset: same session id, an empty history for assemble, while the
    // transcript it reads back still holds the messages before the reset.
    const after = [user("after the reset"), assistant("after reply")];
    await turn(after, { history: [] });
    const conversations = await query(dbPath, "SELECT status FROM conversations ORDER BY id");
    assert.deepEqual(conversations.map(([status]) => status), ["archived", "active"], "the reset archived the first conversation");
    // A restart: no cursor, so the whole transcript is read; a note no commit carried is in it too.
    const lost = user("a note no commit carried");
    transcript.append(lost);
    await restarted().bootstrap(session);
    const active = await query(dbPath, "SELECT t.content FROM messages m JOIN messages_text t ON t.rowid = m.id JOIN conversations c ON c.id = m.conversation_id WHERE c.status = 'active' ORDER BY m.seq");
    assert.deepEqual(active.map(([c]) => c), [...after, lost].map(text));
    assert.deepEqual((await stored()).map(([, c]) => c).sort(), [...before, ...after, lost].map(text).sort(), "every message stored exactly once");
  });

  test("pages are read to the end, and a transcript the host cannot read now is no error", async () => {
    const { turn, stored, catchUp, transcript } = await setup({ pageSize: 1 });
    for (let i = 0; i < 4; i++) await turn([user(`u${i}`), assistant(`a${i}`)], { commit: false });
    // Every bootstrap caught up on the turn before it; the last turn is caught up here.
    const result = await catchUp.catchUp({ sessionId: "s1", sessionKey: "agent:main:main" });
    assert.equal(result.stored, 2);
    assert.ok(result.pages >= 2 && result.pages <= MAX_PAGES_PER_CATCH_UP);
    assert.equal((await stored()).length, 8);
    assert.deepEqual(await catchUp.catchUp({ sessionId: "gone" }), { read: 0, stored: 0, pages: 1, reason: "transcript missing" });
    assert.equal(transcript.entries.length, 8);
  });

  test("the host's internal runs (memory flush) are not caught up: their transcript is a copy of the user's", async () => {
    const { turn, stored, catchUp, transcript } = await setup();
    await turn([user("the user's note"), assistant("reply")]);
    const readsBefore = transcript.reads.length;
    const internal = { sessionId: "internal-session-effects-1", sessionKey: "agent:main:internal-session-effects:abc" };
    assert.deepEqual(await catchUp.catchUp(internal), { read: 0, stored: 0, pages: 0, reason: "internal run" });
    assert.equal(transcript.reads.length, readsBefore, "the transcript was not read for it");
    assert.equal((await stored()).length, 2, "nothing stored twice");
  });

  test("a host without the cursor API is detected, not guessed", async () => {
    assert.equal(await loadHostTranscriptReader(async () => ({})), undefined);
    assert.ok(isInternalSessionKey("agent:ops:Internal-Memory:1") && !isInternalSessionKey("agent:main:main") && !isInternalSessionKey(undefined));
    assert.equal(await loadHostTranscriptReader(async () => { throw new Error("Cannot find package 'openclaw'"); }), undefined);
    const read = async () => ({ kind: "missing" });
    assert.equal(await loadHostTranscriptReader(async () => ({ readSessionTranscriptVisibleMessageDelta: read })), read);
  });
});

// OpenClaw 2026.7: no cursor API; the shim reads the session's JSONL whole through
// `readSessionTranscriptEvents` (eventsDeltaReader). The shapes are the ones a real 2026.7.1
// gateway produced (tests/e2e/crash.e2e.test.mjs, docs/openclaw-host-observed.md §12.3): the
// JSONL's user message a string stamped at admission, afterTurn's the same words as text parts
// stamped 0.2–1.1 s later; after a SIGKILL mid-turn the next turn runs as one merged user message
// while the JSONL keeps the new note apart (and the interrupted one on a side branch).
const { eventsDeltaReader } = await import(new URL("shim/openclaw/transcript-catch-up.js", PKG));

/** A 2026.7 JSONL transcript: session header, then entries; `read` answers every event. */
function hostJsonl() {
  const events = [{ type: "session", version: 3, id: "sess" }];
  const reads = [];
  let n = 0;
  return {
    events,
    reads,
    append(message, parentId = events.at(-1).id) {
      events.push({ type: "message", id: `m${n++}`, parentId, timestamp: new Date(message.timestamp).toISOString(), message });
      return events.at(-1).id;
    },
    custom: () => events.push({ type: "custom", customType: "openclaw:bootstrap-context:full", id: `c${n++}`, parentId: events.at(-1).id, data: {} }),
    read: async (target) => {
      reads.push(target);
      return events.map((e) => structuredClone(e));
    },
  };
}

for (const storage of STORAGES) describe(`storage ${storage}: OpenClaw 2026.7's JSONL`, () => {
  const KEY = "agent:main:main";
  const sessionFile = "/state/agents/main/sessions/s71.jsonl";
  const session = { sessionId: "s71", sessionKey: KEY };
  const hostCopy = (text, at) => ({ role: "user", content: text, timestamp: at, idempotencyKey: `run-${at}` });
  const agentCopy = (text, at) => ({ role: "user", content: [{ type: "text", text }], timestamp: at });
  const reply = (text, at) => ({ ...assistant(text), timestamp: at });

  function setup() {
    const dbPath = join(tempDir("catch-up-71"), "db.sqlite");
    const open = () => openNodeEngine(dbPath, { dbPath, storage });
    const jsonl = hostJsonl();
    const warnings = [];
    const logger = { info() {}, warn: (m) => warnings.push(m) };
    /** A gateway process: its engine and its reader (a restart makes a new one, no cursor). */
    const gateway = () => createContextEngine(open, { logger, fullHistory: true, transcriptCatchUp: createTranscriptCatchUp({ readDelta: eventsDeltaReader(jsonl.read), ingest: ingestFromTranscript(open), logger }) });
    const stored = () => query(dbPath, "SELECT m.role, t.content FROM messages m JOIN messages_text t ON t.rowid = m.id ORDER BY m.seq");
    return { jsonl, warnings, gateway, stored };
  }

  test("a gateway killed mid-turn: the note the merged turn left out is stored from the JSONL; every message once", async () => {
    const { jsonl, warnings, gateway, stored } = setup();
    let engine = gateway();
    let clock = 1_800_000_000_000;
    /** One 2026.7 turn: bootstrap (a catch-up), the tool-loop hook's afterTurn, the reply's. */
    const turn = async (text, { prompt = text, crash = false } = {}) => {
      await engine.bootstrap({ ...session, sessionFile });
      const admitted = (clock += 10_000);
      jsonl.append(hostCopy(text, admitted));
      await engine.afterTurn({ ...session, sessionFile, messages: [agentCopy(prompt, admitted + 700)], prePromptMessageCount: 0 });
      if (crash) return;
      const r = reply(`reply to ${text}`, admitted + 900);
      jsonl.append(r);
      jsonl.custom();
      await engine.afterTurn({ ...session, sessionFile, messages: [agentCopy(prompt, admitted + 700), r], prePromptMessageCount: 0 });
    };
    await turn("note 1");
    await turn("note 2");
    await turn("note 3", { crash: true });
    // The restart: a new process, no cursor. 2026.7 merges the orphaned note 3 into the next
    // prompt (its JSONL branches past it; the reader takes every message entry in file order).
    engine = gateway();
    await turn("note 4", { prompt: "[Queued user message that arrived while the previous turn was still active]\nnote 3\n\nnote 4" });
    await turn("note 5");
    const rows = await stored();
    const host = jsonl.events.filter((e) => e.type === "message").map((e) => [e.message.role, typeof e.message.content === "string" ? e.message.content : e.message.content[0].text]);
    const missing = host.filter(([role, text]) => rows.filter(([r, c]) => r === role && c === text).length !== 1);
    assert.deepEqual(missing, [], `every message of the JSONL stored exactly once:\n${rows.map(([r, c]) => `${r}: ${c.slice(0, 60)}`).join("\n")}`);
    assert.ok(rows.some(([, c]) => c.startsWith("[Queued user message")), "the merged prompt afterTurn handed over is stored too");
    assert.equal(rows.length, host.length + 1, "and nothing else");
    assert.equal(warnings.filter((w) => /caught up 1 message/.test(w)).length, 1, `one catch-up, of note 4: ${warnings}`);
    assert.ok(jsonl.reads.every((t) => t.sessionFile === sessionFile && t.sessionKey === KEY && t.cursor === undefined), "the reader got the host's file and key, never our cursor");
  });

  test("the events reader answers only what came after its cursor, and all of a rewritten transcript", async () => {
    const jsonl = hostJsonl();
    const read = eventsDeltaReader(jsonl.read);
    jsonl.append(hostCopy("a", 1));
    jsonl.custom();
    const first = await read({ sessionId: "s71", sessionKey: KEY });
    assert.equal(first.kind, "page");
    assert.deepEqual(first.entries.map((e) => e.message.content), ["a"], "message entries only");
    jsonl.append(reply("b", 2));
    const next = await read({ sessionId: "s71", sessionKey: KEY, cursor: first.cursor });
    assert.deepEqual(next.entries.map((e) => e.entryId), ["m2"], "what came after the cursor");
    assert.equal((await read({ sessionId: "s71", cursor: next.cursor })).entries.length, 0);
    // Rewritten: the event at the cursor's place is another one.
    jsonl.events.splice(1, jsonl.events.length, { type: "message", id: "x0", parentId: "sess", message: hostCopy("c", 3) });
    assert.deepEqual((await read({ sessionId: "s71", cursor: next.cursor })).entries.map((e) => e.entryId), ["x0"]);
    assert.equal((await eventsDeltaReader(async () => null)({ sessionId: "s71" })).kind, "unreadable");
    assert.throws(() => eventsDeltaReader("nope"), /readEvents must be a function/);
    // 2026.7's SDK has only the whole read: the loader makes a cursor reader of it.
    const loaded = await loadHostTranscriptReader(async () => ({ readSessionTranscriptEvents: jsonl.read }));
    assert.equal(typeof loaded, "function");
    assert.deepEqual((await loaded({ sessionId: "s71" })).entries.map((e) => e.entryId), ["x0"]);
  });
});
