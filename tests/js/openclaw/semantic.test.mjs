// The semantic index through the built package, on real sql.js and node:sqlite: a turn's messages
// get their vectors in the turn (the package's own embedder, recorded by name and dimension), the
// index survives a restart, and lcm_grep's ranked mode finds a message from a paraphrase that
// shares none of its words, where the literal mode finds nothing; another agent's identical
// message never shows up.
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

for (const storage of STORAGES) {
  describe(`semantic index [${storage}]`, () => {
    test("vectors are written in the turn, survive a restart, and ranked grep finds a paraphrase", async () => {
      const dbPath = join(tempDir(`semantic-${storage.replace(":", "-")}`), "db.sqlite");
      let handle = await openNodeEngine(dbPath, { storage });
      let engine = createContextEngine(() => handle);
      const messages = history();
      await engine.afterTurn({ ...session, messages, prePromptMessageCount: 0 });
      await engine.afterTurn({ ...intruder, messages: [user(SOURCE)], prePromptMessageCount: 0 });
      const [[stored]] = await query(dbPath, "SELECT COUNT(*) FROM messages");
      assert.equal(stored, messages.length + 1, "the turns are stored");
      const [[vectors]] = await query(dbPath, "SELECT COUNT(*) FROM message_vectors");
      assert.equal(vectors, stored, "each message got its vector in the turn");
      const [[name, dim]] = await query(dbPath, "SELECT embedder, dim FROM vector_space");
      assert.ok(typeof name === "string" && name.length > 0 && dim > 0, `${name} ${dim}`);
      const [[sized]] = await query(dbPath, `SELECT COUNT(*) FROM message_vectors WHERE length(vector) = ${dim}`);
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
