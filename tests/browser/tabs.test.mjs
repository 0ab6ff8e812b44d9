// Several tabs of one origin on one stored key (openBrowserEngine): one writer at a time through
// the store's write lock (Web Locks, or the IndexedDB lease where Web Locks are missing), a
// read-only engine beside the writer, close(), and writers that die mid-write — a page closed,
// a renderer crashed through CDP `Page.crash`, a page frozen past its lease — after which the
// next writer opens with every acknowledged turn, none lost and none twice.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { startServerAndBrowser, stopServerAndBrowser, UNTHROTTLED_FLAGS } from "./chromium.mjs";

let server;
let browser;

// Background tabs' timers at full rate: the lease tests use leases of well under a second.
before(async () => ({ server, browser } = await startServerAndBrowser(UNTHROTTLED_FLAGS)));
after(() => stopServerAndBrowser({ server, browser }));

/** A tab with the library loaded: `window.openStore(opts)` opens key "chat" of `idbName`,
 *  `window.turn(engine, i, tag)` commits turn i (a question and its answer). */
async function openTab(context, idbName) {
  const page = await context.newPage();
  await page.goto(`${server.url}/tests/browser/blank.html`);
  await page.addScriptTag({ url: "/node_modules/sql.js/dist/sql-wasm.js" });
  await page.evaluate(async (idbName) => {
    const lib = await import("/dist/pkg/shim/library.js");
    const SQL = await globalThis.initSqlJs({ locateFile: (f) => `/node_modules/sql.js/dist/${f}` });
    window.openStore = (opts = {}) => lib.openBrowserEngine({ SQL, idbName, key: "chat", checkpointBytes: 20_000, ...opts });
    window.turn = (engine, i, tag = "t") =>
      engine.commitTurn({ sessionId: "s", sessionKey: "chat", advancementKey: `${tag}-${i}`, messages: [
        { role: "user", content: `${tag} turn ${i} question ${"q".repeat(150)}`, timestamp: 10 * i },
        { role: "assistant", content: [{ type: "text", text: `${tag} turn ${i} answer` }], timestamp: 10 * i + 1 },
      ] });
    window.messageCount = async (engine) => (await engine.describe({ sessionId: "s", sessionKey: "chat" })).messageCount ?? 0;
  }, idbName);
  return page;
}

/** The stored messages' texts, oldest first, read as a reader does (snapshot + journal, one
 *  IndexedDB transaction), plus what `PRAGMA integrity_check` says. */
const stored = (page, idbName) =>
  page.evaluate(async (idbName) => {
    const { openIndexedDbStore } = await import("/dist/pkg/shim/browser/indexeddb-store.js");
    const { replay } = await import("/dist/pkg/shim/engine/journal.js");
    const SQL = await globalThis.initSqlJs({ locateFile: (f) => `/node_modules/sql.js/dist/${f}` });
    const store = await openIndexedDbStore(idbName);
    const { snapshot, entries } = await store.loadJournaled("chat");
    store.close();
    const db = new SQL.Database(snapshot);
    replay(db, entries);
    const integrity = db.exec("PRAGMA integrity_check")[0].values[0][0];
    const texts = db.exec("SELECT content FROM messages_text t JOIN messages m ON m.id = t.rowid ORDER BY m.seq")[0]?.values.map(([c]) => c) ?? [];
    db.close();
    return { integrity, texts };
  }, idbName);

/** Asserts the stored texts are turns 0..n-1 of `tag`, each once, question before answer. */
function assertTurns(texts, tag, atLeast, label) {
  assert.equal(texts.length % 2, 0, `${label}: no half-stored turn`);
  const n = texts.length / 2;
  assert.ok(n >= atLeast, `${label}: ${n} turns stored, ${atLeast} acknowledged`);
  for (let i = 0; i < n; i++) {
    assert.ok(texts[2 * i].startsWith(`${tag} turn ${i} question`), `${label}: turn ${i} question in place (got ${texts[2 * i].slice(0, 30)})`);
    assert.equal(texts[2 * i + 1], `${tag} turn ${i} answer`, `${label}: turn ${i} answer in place`);
  }
  return n;
}

const errorOf = (page, source) => page.evaluate(`(async () => { try { ${source}; return "no error"; } catch (e) { return e.message; } })()`);

test("a second writer gets a clear error or waits, and opens with everything the first committed", async () => {
  const context = await browser.newContext();
  const [a, b] = [await openTab(context, "tabs-wait"), await openTab(context, "tabs-wait")];
  await a.evaluate(async () => {
    window.engine = await window.openStore();
    for (let i = 0; i < 3; i++) await window.turn(window.engine, i);
  });
  const refused = await errorOf(b, "await window.openStore({ lockTimeoutMs: 0 })");
  assert.match(refused, /IndexedDB "tabs-wait" key "chat" is open for writing in another tab or worker of this origin; close the engine there \(engine\.close\(\)\)/);
  const timedOut = await errorOf(b, "await window.openStore({ lockTimeoutMs: 200 })");
  assert.match(timedOut, /open for writing in another tab .*\(waited 200 ms\)/);
  // Another key of the same database is not blocked.
  assert.equal(await errorOf(b, "const other = await window.openStore({ key: 'other', lockTimeoutMs: 0 }); await other.close()"), "no error");

  // B waits; A writes two more turns and closes; B then opens with all five.
  await b.evaluate(() => {
    window.waiting = window.openStore({ lockTimeoutMs: Infinity }).then((e) => (window.engine = e));
  });
  await a.evaluate(async () => {
    for (let i = 3; i < 5; i++) await window.turn(window.engine, i);
    await window.engine.close();
  });
  const bView = await b.evaluate(async () => {
    await window.waiting;
    const before = await window.messageCount(window.engine);
    const status = (await window.turn(window.engine, 5)).status;
    await window.engine.close();
    return { before, status };
  });
  assert.deepEqual(bView, { before: 10, status: "committed" });
  assertTurns((await stored(b, "tabs-wait")).texts, "t", 6, "after both writers");

  // close() is idempotent; every other call afterwards fails saying so.
  assert.equal(await errorOf(a, "await window.engine.close(); await window.engine.close()"), "no error");
  assert.match(await errorOf(a, "await window.turn(window.engine, 9)"), /^lossless-wasm: commitTurn\(\) called after close\(\); open the engine again/);
  assert.match(await errorOf(a, "await window.engine.search({ sessionId: 's', sessionKey: 'chat', pattern: 'turn' })"), /search\(\) called after close\(\)/);
  await context.close();
});

test("a read-only engine opens beside the writer, sees committed turns only, and refuses writes", async () => {
  const context = await browser.newContext();
  const [writer, reader] = [await openTab(context, "tabs-read"), await openTab(context, "tabs-read")];
  await writer.evaluate(async () => {
    window.engine = await window.openStore();
    for (let i = 0; i < 4; i++) await window.turn(window.engine, i);
    // A turn in flight while the reader opens: the reader sees it whole or not at all.
    window.inFlight = window.turn(window.engine, 4);
  });
  const seen = await reader.evaluate(async () => {
    const engine = await window.openStore({ readOnly: true, lockTimeoutMs: 0 });
    const count = await window.messageCount(engine);
    const hits = await engine.search({ sessionId: "s", sessionKey: "chat", pattern: "turn 2 answer" });
    let refused;
    try {
      await window.turn(engine, 99);
    } catch (e) {
      refused = e.message;
    }
    await engine.close();
    return { count, hits: hits.length, refused };
  });
  assert.ok(seen.count === 8 || seen.count === 10, `the reader saw whole turns (${seen.count} messages)`);
  assert.equal(seen.hits, 1, "the reader searches the stored turns");
  assert.match(seen.refused, /commitTurn\(\) writes, and this engine was opened with readOnly: true/);
  await writer.evaluate(async () => {
    await window.inFlight;
    await window.engine.close();
  });
  assertTurns((await stored(reader, "tabs-read")).texts, "t", 5, "the reader wrote nothing");
  await context.close();
});

test("tabs taking turns on one key through the lock lose and duplicate nothing", async () => {
  const context = await browser.newContext();
  const tabs = [await openTab(context, "tabs-race"), await openTab(context, "tabs-race")];
  // Each tab, 4 times: wait for the key, commit the next 3 turns of the shared count, close.
  await Promise.all(tabs.map((page) =>
    page.evaluate(async () => {
      for (let round = 0; round < 4; round++) {
        const engine = await window.openStore({ lockTimeoutMs: Infinity });
        const next = (await window.messageCount(engine)) / 2;
        for (let i = next; i < next + 3; i++) await window.turn(engine, i);
        await engine.close();
      }
    }),
  ));
  const { integrity, texts } = await stored(tabs[0], "tabs-race");
  assert.equal(integrity, "ok");
  assert.equal(assertTurns(texts, "t", 24, "two tabs x 4 rounds x 3 turns"), 24);
  await context.close();
});

/**
 * Rounds of: a writer tab commits turns as fast as it can, acknowledging each once commitTurn
 * resolved, while the next writer waits for the key; the writer dies at a random moment
 * (`kill(page)`); the waiter opens, must hold every acknowledged turn once, and writes on.
 */
async function writerDiesMidWrite({ idbName, rounds, kill, openOptions = {}, waitMs }) {
  const context = await browser.newContext();
  let acked = -1;
  let writer = await openTab(context, idbName);
  for (let round = 0; round < rounds; round++) {
    const waiter = await openTab(context, idbName);
    await writer.exposeFunction("ack", (i) => {
      acked = Math.max(acked, i);
    });
    writer
      .evaluate(async (options) => {
        const engine = await window.openStore({ lockTimeoutMs: 0, ...options });
        for (let i = (await window.messageCount(engine)) / 2; ; i++) {
          await window.turn(engine, i);
          await window.ack(i);
        }
      }, openOptions)
      .catch(() => {});
    const target = acked + 5 + Math.floor(Math.random() * 10);
    while (acked < target) await new Promise((r) => setTimeout(r, 5));
    const waiting = waiter.evaluate(async ({ options, waitMs }) => {
      window.engine = await window.openStore({ ...options, lockTimeoutMs: waitMs });
      return window.messageCount(window.engine);
    }, { options: openOptions, waitMs });
    await new Promise((r) => setTimeout(r, Math.random() * 30));
    const ackedBeforeKill = acked;
    await kill(writer, context);
    const count = await waiting;
    const { integrity, texts } = await stored(waiter, idbName);
    assert.equal(integrity, "ok", `round ${round}: integrity`);
    const n = assertTurns(texts, "t", ackedBeforeKill + 1, `round ${round}`);
    assert.equal(count, texts.length, `round ${round}: the next writer opened on the stored turns`);
    // The new writer writes on from there; it then becomes the writer that dies next round.
    await waiter.evaluate(async (n) => {
      await window.turn(window.engine, n);
      await window.engine.close();
    }, n);
    acked = n;
    writer = waiter;
  }
  const { texts } = await stored(writer, idbName);
  assertTurns(texts, "t", acked + 1, "at the end");
  await context.close();
}

test("a writer tab closed mid-write leaves every acknowledged turn to the next writer", async () => {
  await writerDiesMidWrite({ idbName: "tabs-close", rounds: 4, waitMs: 10_000, kill: (page) => page.close({ runBeforeUnload: false }) });
});

test("a writer whose renderer crashes mid-write leaves every acknowledged turn to the next writer", async () => {
  await writerDiesMidWrite({
    idbName: "tabs-crash",
    rounds: 4,
    waitMs: 10_000,
    kill: async (page, context) => {
      const crashed = new Promise((r) => page.once("crash", r));
      const cdp = await context.newCDPSession(page);
      cdp.send("Page.crash").catch(() => {});
      await crashed;
    },
  });
});

test("without Web Locks the IndexedDB lease keeps one writer, and a crashed holder's lease expires", async () => {
  await writerDiesMidWrite({
    idbName: "tabs-lease",
    rounds: 2,
    openOptions: { lockManager: null, leaseMs: 600 },
    waitMs: 10_000,
    kill: async (page, context) => {
      const crashed = new Promise((r) => page.once("crash", r));
      const cdp = await context.newCDPSession(page);
      cdp.send("Page.crash").catch(() => {});
      await crashed;
    },
  });
  const context = await browser.newContext();
  const [a, b] = [await openTab(context, "tabs-lease-busy"), await openTab(context, "tabs-lease-busy")];
  await a.evaluate(async () => {
    window.engine = await window.openStore({ lockManager: null, leaseMs: 600 });
  });
  // The holder renews its lease, so a second writer is still refused well past one lease.
  await new Promise((r) => setTimeout(r, 1_500));
  const refused = await errorOf(b, "await window.openStore({ lockManager: null, leaseMs: 600, lockTimeoutMs: 300 })");
  assert.match(refused, /is open for writing in another tab or worker of this origin \(lease holder [0-9a-z-]+\) \(waited \d+ ms\)/);
  await a.evaluate(() => window.engine.close());
  assert.equal(await errorOf(b, "await (await window.openStore({ lockManager: null, leaseMs: 600, lockTimeoutMs: 0 })).close()"), "no error");
  await context.close();
});

test("a lease writer frozen past its lease cannot write after another tab took over", async () => {
  const context = await browser.newContext();
  const [a, b] = [await openTab(context, "tabs-fence"), await openTab(context, "tabs-fence")];
  await a.evaluate(async () => {
    window.engine = await window.openStore({ lockManager: null, leaseMs: 400 });
    await window.turn(window.engine, 0, "a");
  });
  // Freeze A's JavaScript (its lease renewals stop) until B has taken the key and written.
  const cdp = await context.newCDPSession(a);
  await cdp.send("Debugger.enable");
  const paused = new Promise((r) => cdp.once("Debugger.paused", r));
  await cdp.send("Debugger.pause");
  // Run something in A so it pauses now, not at its next timer.
  cdp.send("Runtime.evaluate", { expression: "0" }).catch(() => {});
  await paused;
  await b.evaluate(async () => {
    const engine = await window.openStore({ lockManager: null, leaseMs: 400, lockTimeoutMs: 10_000 });
    await window.turn(engine, 1, "a");
    window.engine = engine;
  });
  await cdp.send("Debugger.resume");
  const late = await errorOf(a, "await window.turn(window.engine, 1, 'late')");
  assert.match(late, /lost its write lease on key "chat"/);
  assert.match(await errorOf(a, "await window.engine.search({ sessionId: 's', sessionKey: 'chat', pattern: 'x' })"), /lost its write lease/);
  await b.evaluate(() => window.engine.close());
  const { texts } = await stored(b, "tabs-fence");
  assert.deepEqual(texts.map((t) => t.slice(0, 16)), ["a turn 0 questio", "a turn 0 answer", "a turn 1 questio", "a turn 1 answer"]);
  await context.close();
});
