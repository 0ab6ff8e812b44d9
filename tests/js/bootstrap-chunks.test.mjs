// A long bootstrap crosses the wasm layer a chunk at a time (~64 KiB of JSON) but stays one
// transaction: everything is stored in order, or — one bad message anywhere — nothing, with the
// error naming the message's position in the whole history. Both storage drivers.
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { createFakeHost } from "./fake-host.mjs";
import { loadPlugin, query, STORAGES, tempDir, user } from "./support.mjs";

async function engineAt(storage) {
  const dir = tempDir("chunks");
  const dbPath = join(dir, "db.sqlite");
  const host = createFakeHost({ pluginConfig: { dbPath, storage }, stateDir: dir });
  host.load(await loadPlugin());
  return { engine: await host.resolveEngine("lossless-wasm"), dbPath };
}

for (const storage of STORAGES) {
  test(`${storage}: a 4,500-message bootstrap is stored whole and in order`, async () => {
    const { engine, dbPath } = await engineAt(storage);
    const history = Array.from({ length: 4_500 }, (_, i) => user(`message ${i}`));
    const result = await engine.bootstrap({ sessionId: "s", sessionKey: "agent:main:chunks", messages: history });
    assert.equal(result.importedMessages, 4_500);
    assert.deepEqual(await query(dbPath, "SELECT COUNT(*), MIN(seq), MAX(seq) FROM messages"), [[4_500, 1, 4_500]]);
    assert.deepEqual(await query(dbPath, "SELECT raw_json FROM messages WHERE seq = 2001"), [[JSON.stringify(history[2_000])]]);
  });

  test(`${storage}: a bootstrap stores each message's JSON as the host's JSON.stringify writes it, lone surrogates as U+FFFD`, async () => {
    const { engine, dbPath } = await engineAt(storage);
    // 1e21 and 1e-7 are written differently by serde_json; a lone surrogate is refused by it.
    const odd = { role: "user", content: "numbers", timestamp: 2, n: [1e21, 1e-7, 0.1, -0, 2 ** 60] };
    // The lone surrogate sits in a later chunk than `odd` (the first chunk is 64 messages): its
    // chunk crosses value by value instead, and its JSON is written by serde_json.
    const history = Array.from({ length: 100 }, (_, i) => user(`message ${i}`));
    history[1] = odd;
    history[80] = user("lone \uD800 here");
    const result = await engine.bootstrap({ sessionId: "s", sessionKey: "agent:main:chunks", messages: history });
    assert.equal(result.importedMessages, 100);
    assert.deepEqual(await query(dbPath, "SELECT raw_json FROM messages WHERE seq = 2"), [[JSON.stringify(odd)]]);
    const [[lone]] = await query(dbPath, "SELECT raw_json FROM messages WHERE seq = 81");
    assert.equal(JSON.parse(lone).content, "lone \uFFFD here");
    const again = await engine.bootstrap({ sessionId: "s", sessionKey: "agent:main:chunks", messages: history });
    assert.equal(again.importedMessages, 0, "identities are the same on a second run");
  });

  test(`${storage}: a bad message in the fifth chunk stores nothing and is named by its position`, async () => {
    const { engine, dbPath } = await engineAt(storage);
    const history = Array.from({ length: 4_500 }, (_, i) => user(`message ${i}`));
    history[4_321] = { role: "user", content: 42 };
    await assert.rejects(engine.bootstrap({ sessionId: "s", sessionKey: "agent:main:chunks", messages: history }), /messages\[4321\]/);
    assert.deepEqual(await query(dbPath, "SELECT COUNT(*) FROM messages"), [[0]]);
  });
}
