// Types of the package's main entry: the OpenClaw plugin. OpenClaw loads it itself; embedders
// normally want `lossless-wasm/library` instead. The config type is what goes under
// `plugins.entries.lossless-wasm.config`.

import type { PluginConfig } from "./config.js";

export type { EngineConfig, PluginConfig } from "./config.js";

/** The part of OpenClaw's plugin API the plugin uses. */
export interface PluginApi {
  registrationMode?: string;
  pluginConfig?: PluginConfig;
  logger?: { info?(message: string): void; warn?(message: string): void };
  on?(event: string, handler: (event: unknown, ctx: unknown) => unknown): void;
  registerContextEngine(id: string, factory: () => Promise<unknown>): void;
  [key: string]: unknown;
}

declare const plugin: {
  id: "lossless-wasm";
  name: string;
  description: string;
  register(api: PluginApi): void;
};

export default plugin;

/** Where the database lives for this plugin API: `dbPath`, else under the host's state dir. */
export function resolveDbPath(api: PluginApi): string;
