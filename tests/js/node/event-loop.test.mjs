// The host's event loop is never held by storage (issue 24, item 1): with the default config the
// engine and its database run in a worker thread (node/engine-thread.js), so a call that waits
// out another process's write lock, or imports a long history, leaves the host's timers running.
// Asserted is structure, never time: timers fired while the call was still pending (with the
// engine on the host's thread, no timer can fire until the call returns), the call then
// finished, and what it stored is all there. Also: a lock held past `lockTimeoutMs` is one
// error naming the process that holds it; a history handed over in parts arrives whole; the
// worker crashing is an error, and the next call opens the database again.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { describe, test } from "node:test";
import { PKG, STORAGES, assistant, query, tempDir, user } from "../support.mjs";

const { openNodeEngine } = await import(new URL("shim/node/engine.js", PKG));
const { createContextEngine } = await import(new URL("shim/engine/context-engine.js", PKG));
const { MESSAGES_PER_PART } = await import(new URL("shim/node/engine-thread.js", PKG));
const { elide, restore } = await import(new URL("shim/node/host-history.js", PKG));
const { HistoryNeeded } = await import(new URL("shim/errors.js", PKG));

const session = { sessionId: "s", sessionKey: "agent:main:event-loop" };

/** A child process that takes the database's write lock (BEGIN IMMEDIATE on its own
 *  connection), says "locked", and commits when told "release" (or never). */
function lockHolder(dbPath) {
  const code = `
    const { DatabaseSync } = require("node:sqlite");
    const db = new DatabaseSync(process.argv[1]);
    db.exec("PRAGMA busy_timeout = 10000; BEGIN IMMEDIATE; CREATE TABLE IF NOT EXISTS lock_holder_was_here (x)");
    process.stdout.write("locked\\n");
    process.stdin.on("data", () => { db.exec("COMMIT"); db.close(); process.stdout.write("released\\n"); process.exit(0); });
  `;
  const child = spawn(process.execPath, ["-e", code, dbPath], { stdio: ["pipe", "pipe", "inherit"] });
  const said = (word) => new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (c) => { out += c; if (out.includes(word)) resolve(); });
    child.on("exit", (code) => reject(new Error(`lock holder exited (${code}) before saying ${word}`)));
  });
  return { child, locked: said("locked"), release: () => { const done = said("released"); child.stdin.write("release\n"); return done; } };
}

/** Counts timer ticks until stopped. */
function ticker() {
  let ticks = 0;
  const timer = setInterval(() => { ticks++; }, 1);
  return { ticks: () => ticks, stop: () => clearInterval(timer) };
}

/** Resolves once `n` more ticks have run, or `settled()` turned true first (then resolves false). */
async function ticksWhilePending(tick, n, settled) {
  const start = tick.ticks();
  while (tick.ticks() - start < n) {
    if (settled()) return false;
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  return !settled();
}

function history(n, word = "harbor") {
  const out = [];
  for (let i = 0; i < n; i++) out.push(i % 2 ? assistant(`reply ${i} about the ${word} plan`) : user(`question ${i} on the ${word} plan`));
  return out;
}

describe("storage off the host's event loop (storageThread: worker, the default)", () => {
  test("a turn that waits for another process's write lock leaves the host's timers running, then stores its messages", async () => {
    const dbPath = join(tempDir("event-loop-lock"), "db.sqlite");
    const engine = createContextEngine(() => openNodeEngine(dbPath, { storage: "node:sqlite" }));
    const messages = history(6);
    await engine.bootstrap({ ...session, messages });
    const handle = await openNodeEngine(dbPath, {});
    assert.equal(handle.thread, "worker", "the default runs the engine in a worker");

    const holder = lockHolder(dbPath);
    await holder.locked;
    messages.push(user("a question asked while another process holds the lock"), assistant("the answer to it"));
    let settled = false;
    const turn = engine.afterTurn({ ...session, messages, prePromptMessageCount: 6 }).finally(() => { settled = true; });
    const tick = ticker();
    try {
      assert.ok(await ticksWhilePending(tick, 25, () => settled), "the host's timers ran while the turn waited for the lock");
      assert.equal(settled, false, "the turn was still waiting when the lock was released");
      await holder.release();
      await turn;
    } finally {
      tick.stop();
      holder.child.kill();
    }
    const [[stored]] = await query(dbPath, "SELECT COUNT(*) FROM messages");
    assert.equal(stored, 8, "the turn's messages were stored after the lock was released");
    const [[marker]] = await query(dbPath, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'lock_holder_was_here'");
    assert.equal(marker, 1, "the other process really held the write lock (its table committed)");
  });

  test("a lock held past lockTimeoutMs fails the call with one sentence naming the holder, and loses nothing", async () => {
    const dbPath = join(tempDir("event-loop-timeout"), "db.sqlite");
    const config = { storage: "node:sqlite", lockTimeoutMs: 1500 };
    const engine = createContextEngine(() => openNodeEngine(dbPath, config));
    const messages = history(4);
    await engine.bootstrap({ ...session, messages });
    const holder = lockHolder(dbPath);
    await holder.locked;
    messages.push(user("this turn cannot be stored yet"), assistant("its reply"));
    try {
      await assert.rejects(engine.afterTurn({ ...session, messages, prePromptMessageCount: 4 }), (err) => {
        assert.match(err.message, new RegExp(`stayed locked by pid ${holder.child.pid} \\(`), "names the holding process");
        assert.match(err.message, /nothing of this call was written/);
        assert.doesNotMatch(err.message, /\n/, "one line");
        return true;
      });
      await holder.release();
    } finally {
      holder.child.kill();
    }
    // The host re-sends the whole history next turn: everything is stored then.
    await engine.afterTurn({ ...session, messages, prePromptMessageCount: 4 });
    const [[stored]] = await query(dbPath, "SELECT COUNT(*) FROM messages");
    assert.equal(stored, 6);
  });

  for (const storage of STORAGES) {
    test(`a history longer than one part arrives whole and in order, with timers running between parts [${storage}]`, async () => {
      const dbPath = join(tempDir(`event-loop-parts-${storage.replace(":", "-")}`), "db.sqlite");
      const engine = createContextEngine(() => openNodeEngine(dbPath, { storage }));
      const n = MESSAGES_PER_PART * 3 + 17;
      const messages = history(n, "lighthouse");
      let settled = false;
      const tick = ticker();
      const before = tick.ticks();
      const boot = engine.bootstrap({ ...session, messages }).finally(() => { settled = true; });
      let ticksWhileImporting = 0;
      while (!settled) {
        await new Promise((resolve) => setTimeout(resolve, 1));
        if (!settled) ticksWhileImporting = tick.ticks() - before;
      }
      await boot;
      tick.stop();
      assert.ok(ticksWhileImporting > 0, "timers ran while the import was pending");
      const rows = await query(dbPath, "SELECT seq FROM messages ORDER BY seq");
      assert.equal(rows.length, n, "every message of every part was stored");
      const view = await engine.assemble({ ...session, messages, tokenBudget: 1_000_000 });
      assert.equal(view.messages.length, n, "the view holds the whole history");
      assert.deepEqual(view.messages.map((m) => JSON.stringify(m.content)), messages.map((m) => JSON.stringify(m.content)), "in the host's order");
    });
  }

  test("host-history: afterTurn sends the tail behind holes, assemble only the length until an element is read", () => {
    const messages = history(10);
    const tail = elide("afterTurn", { messages, prePromptMessageCount: 8 });
    assert.deepEqual(tail, { messages: messages.slice(8), elided: 8 });
    const rebuilt = restore("afterTurn", tail.messages, tail.elided);
    assert.equal(rebuilt.length, 10);
    assert.deepEqual(rebuilt.slice(8), messages.slice(8));
    assert.equal(rebuilt[7], undefined, "the elided prefix is holes");
    assert.equal(restore("afterTurn", [], 10).length, 10, "an empty tail keeps the history's length");
    assert.equal(elide("afterTurn", { messages, prePromptMessageCount: 11 }), undefined, "a count the engine refuses goes whole");
    assert.equal(elide("commitTurn", { messages }), undefined, "a turn's messages go whole");
    const lengthOnly = elide("assembleView", { messages });
    assert.deepEqual(lengthOnly, { messages: [], elided: 10 });
    let reads = 0;
    const lazy = restore("assembleView", lengthOnly.messages, lengthOnly.elided, () => reads++);
    assert.equal(lazy.length, 10);
    assert.ok(Array.isArray(lazy));
    assert.equal(reads, 0);
    assert.throws(() => JSON.stringify(lazy), HistoryNeeded);
    assert.equal(reads, 1, "reading an element is noticed");
  });

  test("only what the engine reads of the host's history crosses, and a history it never stored is fetched whole", async () => {
    const dbPath = join(tempDir("event-loop-elide"), "db.sqlite");
    const engine = createContextEngine(() => openNodeEngine(dbPath, {}), { fullHistory: true });
    // Installed mid-session: the host knows 40 messages the engine never stored.
    const messages = history(40, "orchard");
    const view = await engine.assemble({ ...session, messages, tokenBudget: 1_000_000 });
    assert.equal(view.messages.length, 40, "the catch-up fetched the whole history and stored it");
    let [[stored]] = await query(dbPath, "SELECT COUNT(*) FROM messages");
    assert.equal(stored, 40);
    // afterTurn sends the tail only: a message before prePromptMessageCount that changed in the
    // host's copy is not read (as on the host's thread, where the engine reads the tail only).
    messages[3] = user("rewritten by the host after it was stored");
    messages.push(user("the new question"), assistant("the new answer"));
    await engine.afterTurn({ ...session, messages, prePromptMessageCount: 40 });
    [[stored]] = await query(dbPath, "SELECT COUNT(*) FROM messages");
    assert.equal(stored, 42);
    // A rollover (new session id under the key): the old conversation is archived and the
    // host's whole history is fetched for the new one.
    const rolled = await engine.assemble({ ...session, sessionId: "s2", messages: messages.slice(0, 10), tokenBudget: 1_000_000 });
    assert.equal(rolled.messages.length, 10);
    const [[active, archived]] = await query(dbPath, "SELECT SUM(status = 'active'), SUM(status = 'archived') FROM conversations");
    assert.deepEqual([active, archived], [1, 1]);
  });

  test("storageThread: main runs on the host's thread; an invalid value names the key", async () => {
    const dir = tempDir("event-loop-main");
    const handle = await openNodeEngine(join(dir, "main.sqlite"), { storageThread: "main" });
    assert.equal(handle.thread, "main");
    await assert.rejects(openNodeEngine(join(dir, "bad.sqlite"), { storageThread: "background" }), /`storageThread`: must be one of "worker", "main"/);
    await assert.rejects(openNodeEngine(join(dir, "bad2.sqlite"), { lockTimeoutMs: -5 }), /`lockTimeoutMs`/);
  });

  test("a worker that stops fails the calls waiting on it, and the next call opens the database again", async () => {
    const dbPath = join(tempDir("event-loop-crash"), "db.sqlite");
    const engine = createContextEngine(() => openNodeEngine(dbPath, {}));
    const messages = history(4);
    await engine.bootstrap({ ...session, messages });
    const first = await openNodeEngine(dbPath, {});
    await first.close();
    await assert.rejects(first.call("status", {}), /engine was closed/);
    const second = await openNodeEngine(dbPath, {});
    assert.notEqual(second, first, "a new worker");
    messages.push(user("after the restart"), assistant("still here"));
    await engine.afterTurn({ ...session, messages, prePromptMessageCount: 4 });
    const [[stored]] = await query(dbPath, "SELECT COUNT(*) FROM messages");
    assert.equal(stored, 6);
    await second.close();
  });
});
