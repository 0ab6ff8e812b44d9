// The incremental view hand-over through the plugin, on both storage drivers: repeated
// assembles return the same message objects (nothing re-parsed), new messages and summaries
// arrive, and a host that changes a message object it was given gets the stored original back
// on the next assemble, never its own edit.
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { createFakeHost } from "../fake-host.mjs";
import { assistant, loadPlugin, STORAGES, tempDir, user } from "../support.mjs";

const session = { sessionId: "s-view", sessionKey: "agent:main:view" };

async function engineFor(storage) {
  const dir = tempDir("view");
  const host = createFakeHost({ pluginConfig: { dbPath: join(dir, "db.sqlite"), storage }, stateDir: dir });
  host.load(await loadPlugin());
  return host.resolveEngine("lossless-wasm");
}

for (const storage of STORAGES) {
  test(`${storage}: a second assemble hands out the same objects and the new messages`, async () => {
    const engine = await engineFor(storage);
    const history = [user("first question"), assistant("first answer")];
    await engine.bootstrap({ ...session, messages: history });
    const a = await engine.assemble({ ...session, messages: history, tokenBudget: 50_000 });
    const b = await engine.assemble({ ...session, messages: history, tokenBudget: 50_000 });
    assert.equal(b.messages.length, 2);
    assert.notEqual(a.messages, b.messages, "each call gets its own array");
    assert.equal(b.messages[0], a.messages[0], "an unchanged message object is reused");
    const turn = [user("second question"), assistant("second answer")];
    await engine.afterTurn({ ...session, messages: [...history, ...turn], prePromptMessageCount: 2 });
    const c = await engine.assemble({ ...session, messages: [...history, ...turn], tokenBudget: 50_000 });
    assert.deepEqual(c.messages.map((m) => m.role), ["user", "assistant", "user", "assistant"]);
    assert.equal(c.messages[2].content, "second question");
    assert.deepEqual(c.messages, [...history, ...turn]);
  });

  test(`${storage}: a host that edits a handed-out message gets the stored original back`, async () => {
    const engine = await engineFor(storage);
    const history = [user("keep this exact text"), assistant("an answer with a long tool output")];
    await engine.bootstrap({ ...session, messages: history });
    const first = await engine.assemble({ ...session, messages: history, tokenBudget: 50_000 });
    // Edits at every depth: a nested string, a top-level field, an added key.
    first.messages[1].content[0].text = "TRIMMED BY THE HOST";
    const second = await engine.assemble({ ...session, messages: history, tokenBudget: 50_000 });
    assert.equal(second.messages[1].content[0].text, "an answer with a long tool output");
    second.messages[0].content = "rewritten";
    const third = await engine.assemble({ ...session, messages: history, tokenBudget: 50_000 });
    assert.equal(third.messages[0].content, "keep this exact text");
    third.messages[0].injected = true;
    third.messages[1].content.push({ type: "text", text: "appended" });
    const fourth = await engine.assemble({ ...session, messages: history, tokenBudget: 50_000 });
    assert.deepEqual(fourth.messages, history);
  });
}
