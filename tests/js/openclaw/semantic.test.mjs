// The semantic index through the built package, on real sql.js and node:sqlite: a turn's messages
// get their vectors by the end of the turn's upkeep (the package's own embedder, recorded by name
// and dimension; through the worker thread they are made after `maintain` is answered), the
// index survives a restart, and lcm_grep's ranked mode finds a message from a paraphrase that
// shares none of its words, where the literal mode finds nothing; another agent's identical
// message never shows up. A message the previous turn committed is found by meaning (lcm_grep
// ranked, lcm_ask) whether or not its vector was made yet. A history stored before the index
// existed is embedded by the worker between calls, without waiting for later turns.
import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, test } from "node:test";
import { PKG, STORAGES, assistant, query, tempDir, user } from "../support.mjs";

const { openNodeEngine } = await import(new URL("shim/node/engine.js", PKG));
const { createContextEngine } = await import(new URL("shim/engine/context-engine.js", PKG));
const { createRecallTools } = await import(new URL("shim/openclaw/tools.js", PKG));

const session = { sessionId: "s", sessionKey: "agent:main:semantic" };
const intruder = { sessionId: "x", sessionKey: "agent:intruder:semantic" };
const SOURCE = "We removed the exponential backoff loop from the uploader because it hid the timeouts from the pager.";

function history() {
  const h = [];
  for (let i = 0; i < 12; i++) {
    h.push(user(`Please run the linter on src/module_${i}.rs and fix the warnings.`));
    h.push(assistant(`Done: module ${i} is clean now, two warnings fixed.`));
  }
  h.push(user(SOURCE), assistant("Understood."));
  for (let i = 12; i < 20; i++) {
    h.push(user(`Please run the linter on src/module_${i}.rs and fix the warnings.`));
    h.push(assistant(`Done: module ${i} is clean now, two warnings fixed.`));
  }
  return h;
}

/** Polls `read` until it returns `want` or `ms` pass; returns the last value read. */
async function waitFor(read, want, ms) {
  const until = Date.now() + ms;
  let got = await read();
  while (got !== want && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    got = await read();
  }
  return got;
}

for (const storage of STORAGES) {
  describe(`semantic index [${storage}]`, () => {
    test("a history stored before the index is embedded in the worker's idle time, not 64 messages a turn", async () => {
      const dbPath = join(tempDir(`semantic-backlog-${storage.replace(":", "-")}`), "db.sqlite");
      // 600 messages stored with the index off: none has a vector.
      let handle = await openNodeEngine(dbPath, { storage, semanticRecall: false });
      let engine = createContextEngine(() => handle);
      const messages = [];
      for (let i = 0; i < 300; i++) {
        messages.push(user(`Please check the deployment log of service ${i} for timeouts near the gateway.`));
        messages.push(assistant(`Service ${i}: the log shows two retries and no timeout near the gateway.`));
      }
      await engine.afterTurn({ ...session, messages, prePromptMessageCount: 0 });
      await handle.close?.();
      const [[before]] = await query(dbPath, "SELECT COUNT(*) FROM message_vectors");
      assert.equal(before, 0, "the index was off: no message has a vector yet");

      // With the index on, one turn's upkeep starts the backfill; the worker goes on by itself.
      handle = await openNodeEngine(dbPath, { storage });
      engine = createContextEngine(() => handle);
      await engine.maintain({ ...session });
      const count = async () => {
        await handle.flush();
        return (await query(dbPath, "SELECT COUNT(*) FROM message_vectors"))[0][0];
      };
      const embedded = await waitFor(count, messages.length, 20_000);
      assert.equal(embedded, messages.length, "every stored message got its vector without another turn");
      await handle.close?.();
    });


    test("vectors are written in the turn, survive a restart, and ranked grep finds a paraphrase", async () => {
      const dbPath = join(tempDir(`semantic-${storage.replace(":", "-")}`), "db.sqlite");
      let handle = await openNodeEngine(dbPath, { storage });
      let engine = createContextEngine(() => handle);
      const messages = history();
      await engine.afterTurn({ ...session, messages, prePromptMessageCount: 0 });
      await engine.afterTurn({ ...intruder, messages: [user(SOURCE)], prePromptMessageCount: 0 });
      const [[stored]] = await query(dbPath, "SELECT COUNT(*) FROM messages");
      assert.equal(stored, messages.length + 1, "the turns are stored");
      // The turn's upkeep; a later call runs after the worker embedded the turn's messages.
      await engine.maintain({ ...session });
      await engine.maintain({ ...intruder });
      await handle.flush();
      const [[vectors]] = await query(dbPath, "SELECT COUNT(*) FROM message_vectors");
      assert.equal(vectors, stored, "each message got its vector by the end of the turn's upkeep");
      const [[name, dim]] = await query(dbPath, "SELECT embedder, dim FROM vector_space");
      assert.ok(typeof name === "string" && name.length > 0 && dim > 0, `${name} ${dim}`);
      // Four bits a component (src/core/embed/packing.rs).
      const [[sized]] = await query(dbPath, `SELECT COUNT(*) FROM message_vectors WHERE length(vector) = ${Math.ceil(dim / 2)}`);
      assert.equal(sized, vectors);
      await handle.close?.();

      handle = await openNodeEngine(dbPath, { storage });
      engine = createContextEngine(() => handle);
      const [[again]] = await query(dbPath, "SELECT COUNT(*) FROM message_vectors");
      assert.equal(again, vectors, "the index survives a restart");
      const tools = Object.fromEntries(createRecallTools(async () => handle, session).map((t) => [t.name, t]));
      const [[sourceId]] = await query(dbPath, `SELECT id FROM messages WHERE raw_json LIKE '%backoff loop%' ORDER BY id LIMIT 1`);
      const literal = await tools.lcm_grep.execute("g1", { pattern: "retry wrapper" });
      assert.equal(literal.details.hits?.length ?? 0, 0, "no message says it in these words");
      const ranked = await tools.lcm_grep.execute("g2", { pattern: "why did we drop the retry wrapper", mode: "ranked", limit: 5 });
      const hits = ranked.details.hits ?? [];
      assert.ok(hits.length > 0, JSON.stringify(ranked.details));
      assert.equal(hits[0].id, sourceId, `the paraphrased message ranks first: ${JSON.stringify(hits)}`);
      const [[intruderConversation]] = await query(dbPath, "SELECT id FROM conversations WHERE session_key = 'agent:intruder:semantic'");
      for (const scope of ["conversation", "agent"]) {
        const all = await tools.lcm_grep.execute("g3", { pattern: "why did we drop the retry wrapper", mode: "ranked", scope, limit: 200 });
        assert.ok(all.details.hits.length > 0);
        assert.ok(all.details.hits.every((h) => h.conversationId !== intruderConversation), scope);
      }
      await handle.close?.();
    });
  });
}

/** The linter chatter of a turn that says nothing about the uploader. */
function chatter(from, to) {
  const h = [];
  for (let i = from; i < to; i++) {
    h.push(user(`Please run the linter on src/module_${i}.rs and fix the warnings.`));
    h.push(assistant(`Done: module ${i} is clean now, two warnings fixed.`));
  }
  return h;
}

for (const storage of STORAGES)
  for (const storageThread of ["worker", "main"]) {
    describe(`the previous turn's message, found by meaning [${storage}, ${storageThread}]`, () => {
      test("lcm_grep ranked and lcm_ask find it before and after maintain", async () => {
        const dbPath = join(tempDir(`semantic-next-${storage.replace(":", "-")}-${storageThread}`), "db.sqlite");
        const handle = await openNodeEngine(dbPath, { storage, storageThread });
        assert.equal(handle.thread ?? "main", storageThread);
        const engine = createContextEngine(() => handle);
        const commit = (key, messages) =>
          engine.commitTurn({ ...session, advancementKey: key, messages, admission: { entryId: `a-${key}` }, terminal: { entryId: `t-${key}` } });
        assert.equal((await commit("t1", chatter(0, 12))).status, "committed");
        await engine.maintain({ ...session });
        assert.equal((await commit("t2", [user(SOURCE), assistant("Understood.")])).status, "committed");
        const [[sourceId]] = await query(dbPath, `SELECT id FROM messages WHERE raw_json LIKE '%backoff loop%'`);
        assert.ok(sourceId > 0, "the turn stored the message");
        // Through the worker the turn's vectors are made after its `maintain`: none yet here.
        const [[held]] = await query(dbPath, `SELECT COUNT(*) FROM message_vectors WHERE message_id = ${sourceId}`);
        assert.equal(held, storageThread === "worker" ? 0 : 1, "vectors of the turn's messages, before maintain");

        const requests = [];
        const llm = {
          complete: async (req) => {
            requests.push(req);
            const id = req.messages[0].content.match(/\[m(\d+)\] user[^\n]*\n[^\n]*backoff loop/)?.[1];
            return { text: id ? `The backoff loop hid the timeouts [m${id}].` : "Not in the evidence.", model: "stub", stopReason: "stop" };
          },
        };
        const tools = Object.fromEntries(createRecallTools(async () => handle, session, { llm: () => llm }).map((t) => [t.name, t]));
        const found = async (when) => {
          const ranked = await tools.lcm_grep.execute("g", { pattern: "why did we drop the retry wrapper", mode: "ranked", limit: 5 });
          assert.equal(ranked.details.hits?.[0]?.id, sourceId, `${when}: ranked grep ranks it first: ${JSON.stringify(ranked.details)}`);
          const asked = await tools.lcm_ask.execute("a", { question: "Why did we drop the retry wrapper?" });
          assert.ok(asked.details.evidenceMessageIds?.includes(sourceId), `${when}: lcm_ask's evidence holds it: ${JSON.stringify(asked)}`);
          assert.equal(asked.details.outcome, "answered", asked.content[0].text);
        };
        await found("before maintain");
        await engine.maintain({ ...session });
        await found("after maintain");
        assert.equal(requests.length, 2, "one LLM call per lcm_ask");
        await handle.flush();
        const [[stored]] = await query(dbPath, "SELECT COUNT(*) FROM messages");
        const [[vectors]] = await query(dbPath, "SELECT COUNT(*) FROM message_vectors");
        assert.equal(vectors, stored, "every message has its vector");
        await handle.close?.();
      });
    });
  }
