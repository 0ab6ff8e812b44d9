// An unusable `dbPath` (its folder cannot be created: here a path under a regular file) inside
// the plugin: the engine is refused, so the host answers with its legacy engine; the host's log
// gets one line naming `dbPath`, the path and the OS's reason (not one per turn), every refused
// factory call names them too, and `/lcm status` says the same. Once the path is usable the next
// turn opens it.
import assert from "node:assert/strict";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { createFakeHost } from "../fake-host.mjs";
import { loadPlugin, tempDir, user } from "../support.mjs";

const plugin = await loadPlugin();

test("an unusable dbPath is refused with one log line naming the key, the path and the reason", async () => {
  const dir = tempDir("dbpath");
  const blocker = join(dir, "state");
  writeFileSync(blocker, "a file where a folder should be");
  const dbPath = join(blocker, "lossless-wasm", "lossless.sqlite");
  const h = createFakeHost({ pluginConfig: { dbPath }, stateDir: dir });
  const commands = new Map();
  h.api.registerCommand = (def) => commands.set(def.name, def);
  h.load(plugin);
  for (let turn = 0; turn < 3; turn++) {
    await assert.rejects(h.resolveEngine("lossless-wasm"), (err) => {
      assert.ok(err.message.includes(`config \`dbPath\` is ${dbPath}: ENOTDIR`), err.message);
      return true;
    });
  }
  const lines = h.logs.filter(([, m]) => m.includes("dbPath"));
  assert.equal(lines.length, 1, JSON.stringify(h.logs));
  const [level, line] = lines[0];
  assert.equal(level, "error");
  assert.ok(line.includes(dbPath) && line.includes("ENOTDIR"), line);
  assert.match(line, /refusing: OpenClaw answers with its legacy context engine/);
  const { text } = await commands.get("lcm").handler({ args: "status", sessionKey: "agent:main:a", sessionId: "s" });
  assert.ok(text.includes(`config \`dbPath\` is ${dbPath}: ENOTDIR`), text);
  assert.match(text, /legacy context engine/);
  // The folder made usable: the next turn opens the store, without a restart.
  rmSync(blocker);
  const { commit } = await h.runTurn("lossless-wasm", { sessionId: "s", sessionKey: "agent:main:a", history: [], turn: [user("hello")] });
  assert.equal(commit.status, "committed");
});
