// A small consumer of the package's types, checked with `tsc --noEmit` by types.test.mjs: it
// uses the library the way README.md and the demo page do, and the plugin config.
import { openBrowserEngine, openBrowserEngineInWorker, openEngine } from "lossless-wasm/library";
import type { AgentMessage, Described, EngineConfig, LosslessEngine, PluginConfig, SqlJsStatic } from "lossless-wasm/library";
import plugin, { resolveDbPath } from "lossless-wasm";

declare const SQL: SqlJsStatic;

const config: EngineConfig = { freshTailCount: 16, leafChunkTokens: 1500, summarizer: "extractive" };
const pluginConfig: PluginConfig = { ...config, dbPath: "/tmp/lossless.sqlite", storage: "node:sqlite" };

export async function run(): Promise<number> {
  const engine: LosslessEngine = await openEngine({ SQL, config, save: async (bytes: Uint8Array) => void bytes.length });
  const browser = await openBrowserEngine({ SQL, idbName: "app", key: "chat-1", checkpointBytes: 1 << 20, lockTimeoutMs: Infinity });
  const reader = await openBrowserEngine({ SQL, idbName: "app", key: "chat-1", readOnly: true, lockManager: null, leaseMs: 5000 });
  const messages: AgentMessage[] = [
    { role: "user", content: "hello", timestamp: 1 },
    { role: "assistant", content: [{ type: "text", text: "hi" }, { type: "toolCall", id: "c1", name: "bash", arguments: { command: "ls" } }], timestamp: 2 },
  ];
  const { status } = await engine.commitTurn({ sessionId: "s", sessionKey: "chat-1", advancementKey: "turn-1", messages });
  const view = await engine.assemble({ sessionId: "s", sessionKey: "chat-1", tokenBudget: 8000 });
  const hits = await browser.search({ sessionId: "s", pattern: "hello", mode: "text", limit: 5 });
  const described: Described = await engine.describe({ sessionId: "s", sessionKey: "chat-1" });
  let summaries = 0;
  if (described.type === "conversation") {
    summaries = described.summaries.filter((s) => s.level !== "fallback" && s.inContext).length;
    const first = described.summaries[0];
    if (first) {
      const page = await engine.expand({ sessionId: "s", summaryId: first.id, toMessages: true, tokenLimit: 2000 });
      for (const item of page.items) if (item.kind === "message") summaries += item.message.seq;
      if (page.nextCursor !== null) await engine.expand({ sessionId: "s", summaryId: first.id, cursor: page.nextCursor });
    }
  }
  const events = await engine.compactionEvents({ sessionId: "s", afterId: 0 });
  const compacted = await engine.compact({ sessionId: "s", force: true });
  const inWorker = await openBrowserEngineInWorker({ sqlJsUrl: "/sql-wasm.js", key: "chat-2", llm: { complete: async () => ({ text: "s" }) } });
  await Promise.all([reader.close(), browser.close(), engine.close(), inWorker.close()]);
  void plugin.id;
  void resolveDbPath({ pluginConfig, registerContextEngine: () => undefined });
  return (status === "committed" ? 1 : 0) + view.estimatedTokens + hits.length + summaries + events.length + (compacted.ok ? 1 : 0);
}
