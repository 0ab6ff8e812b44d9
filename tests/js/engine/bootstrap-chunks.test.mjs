// A long bootstrap crosses the wasm layer a chunk at a time (~64 KiB of JSON) but stays one
// transaction: everything is stored in order, or — one bad message anywhere — nothing, with the
// error naming the message's position in the whole history. Both storage drivers.
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { createFakeHost } from "../fake-host.mjs";
import { loadPlugin, query, STORAGES, tempDir, user } from "../support.mjs";

async function engineAt(storage, dbPath = join(tempDir("chunks"), "db.sqlite")) {
  const dir = dirname(dbPath);
  const host = createFakeHost({ pluginConfig: { dbPath, storage }, stateDir: dir });
  host.load(await loadPlugin());
  return { engine: await host.resolveEngine("lossless-wasm"), dbPath };
}

/** The first position where two lists of strings differ (-1 if none): long strings make
 *  unreadable assertion diffs. */
function firstDifference(actual, expected) {
  const length = Math.max(actual.length, expected.length);
  for (let i = 0; i < length; i++) if (actual[i] !== expected[i]) return i;
  return -1;
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

  test(`${storage}: long non-ASCII text crosses into wasm and back byte for byte`, async () => {
    // Strings of 1,024 UTF-16 units or more cross through TextEncoder.encodeInto (src/wasm/
    // js_text.rs), both ways the engine reads them: the host's JSON in, stored rows out. 1e21
    // tells the two ways in apart: JSON.stringify writes it 1e+21, serde_json (the value-by-value
    // fallback taken when the JSON text does not parse) 1e21.
    const { engine, dbPath } = await engineAt(storage);
    const mixed = (i) => `${i} naïve café 中文字符 😀🎉 ${"ü€".repeat(600 + i)} ascii tail`;
    const history = Array.from({ length: 40 }, (_, i) => ({ ...user(mixed(i)), n: 1e21 }));
    history.push(user("short é 😀"));
    const result = await engine.bootstrap({ sessionId: "s", sessionKey: "agent:main:chunks", messages: history });
    assert.equal(result.importedMessages, history.length);
    const stored = await query(dbPath, "SELECT raw_json FROM messages ORDER BY seq");
    assert.equal(firstDifference(stored.map(([raw]) => raw), history.map((m) => JSON.stringify(m))), -1, "stored raw_json");
    // A new engine has handed nothing out, so its view is read back from the stored rows.
    const { engine: reader } = await engineAt(storage, dbPath);
    const view = await reader.assemble({ sessionId: "s", sessionKey: "agent:main:chunks", messages: history, tokenBudget: 1_000_000 });
    assert.equal(view.messages.length, history.length);
    assert.equal(firstDifference(view.messages.map((m) => m.content), history.map((m) => m.content)), -1, "view content");
  });

  test(`${storage}: a bad message in the fifth chunk stores nothing and is named by its position`, async () => {
    const { engine, dbPath } = await engineAt(storage);
    const history = Array.from({ length: 4_500 }, (_, i) => user(`message ${i}`));
    history[4_321] = { role: "user", content: 42 };
    await assert.rejects(engine.bootstrap({ sessionId: "s", sessionKey: "agent:main:chunks", messages: history }), /messages\[4321\]/);
    assert.deepEqual(await query(dbPath, "SELECT COUNT(*) FROM messages"), [[0]]);
  });
}
