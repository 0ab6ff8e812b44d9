// Mistakes the types must catch (types.test.mjs expects tsc to fail on each marked line).
import { openBrowserEngine, openBrowserEngineInWorker, openEngine } from "lossless-wasm/library";
import type { PluginConfig, SqlJsStatic } from "lossless-wasm/library";

declare const SQL: SqlJsStatic;

export async function misuse(): Promise<void> {
  const engine = await openEngine({ SQL, config: { freshTailCount: "32" } }); // MISUSE: a number as a string
  await engine.commitTurn({ sessionId: "s", messages: [] }); // MISUSE: no advancementKey
  await engine.search({ sessionId: "s", pattern: "x", mode: "regex" }); // MISUSE: unknown mode
  const config: PluginConfig = { storage: "mysql" }; // MISUSE: unknown storage
  void config;
  await openEngine({ config: {} }); // MISUSE: SQL is required
  await openBrowserEngine({ SQL, readOnly: "yes" }); // MISUSE: readOnly is a boolean
  await engine.close(true); // MISUSE: close takes no argument
  await openBrowserEngineInWorker({ SQL, key: "k" }); // MISUSE: the worker loads sql.js from sqlJsUrl
}
