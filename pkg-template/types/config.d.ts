// Engine and plugin configuration. Every key is optional; the engine validates the object again
// (an invalid value is an Error naming the key, e.g. "invalid config `freshTailCount`: ...") and
// clamps out-of-range numbers (reported once as a warning). The plugin manifest's configSchema
// lists the same keys (a test keeps the two in step).

/** Options of the compaction and assembly engine, shared by the plugin and the library. */
export interface EngineConfig {
  /** Budget for the assembled view when the host passes none. Default 128000. */
  defaultTokenBudget?: number;
  /** Who writes summaries: the host's LLM, the built-in extractive summarizer, or the host's LLM when offered. Default "auto". */
  summarizer?: "auto" | "host" | "extractive";
  /** One summary request's time limit, in ms (1000..3600000). Default 120000. */
  summaryTimeoutMs?: number;
  /** How long a call the host's turn waits on (maintenance before a turn, the preflight compact()) waits for a summary before it goes on in the background and the view shrinks instead, in ms (0..3600000; 0: never wait). Default 1000. */
  summaryTurnWaitMs?: number;
  /** When summary requests end unanswered because their process exited first, one turn waits for a summary after this many turns without one (0..1000; 0: never). Default 4. */
  summaryCatchUpTurns?: number;
  /** In OpenClaw: when summary requests end unanswered because their process exited first, start a detached `openclaw lcm summarize` process that writes them, so no turn waits (false: catch-up turns instead). Default true. */
  summarySuccessor?: boolean;
  /** lcm_ask's one LLM call's time limit, in ms (1000..600000). Default 10000. */
  askTimeoutMs?: number;
  /** The most characters one recall tool answer may take as the host counts them (1500..200000): longer answers come in pages. OpenClaw cuts a tool result past about half the model's window in tokens. Default 3500 (an 8K window). */
  toolResultMaxChars?: number;
  /** Embed every message and summary with the built-in static embedder and rank recall by meaning as well as by words (false: lexical only, no vectors written). Default true. */
  semanticRecall?: boolean;
  /** Newest raw messages never summarized. Default 32. */
  freshTailCount?: number;
  /** Raw tokens outside the fresh tail that one leaf pass summarizes (and the leaf trigger's size). Default 20000. */
  leafChunkTokens?: number;
  /** Fraction of the prompt budget above which a full sweep runs. Default 0.75. */
  contextThreshold?: number;
  /** Skip leaf passes while the context is below factor × threshold × budget; 0 disables. Default 0.8. */
  leafBudgetHeadroomFactor?: number;
  /** Skip a pass that would shrink the context by less than this fraction (never under budget pressure); 0 disables. Default 0.05. */
  leafSkipReductionThreshold?: number;
  /** Same-depth summaries merged into one deeper summary. Default 4. */
  condensedFanout?: number;
  /** Target size of a leaf summary, in tokens. Default 1200. */
  leafTargetTokens?: number;
  /** Target size of a condensed summary, in tokens. Default 2000. */
  condensedTargetTokens?: number;
  /** Consecutive authentication failures that pause summarization. Default 3. */
  maxFailuresBeforeBreaker?: number;
  /** Retry backoff after a failed summary, doubling from base to max, in ms. Defaults 30000 / 3600000. */
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  /** Credential patterns added to the built-in ones (which are always on): text matching one is replaced by `[credential: <name>]` before it is sent to a summarizer. A regex string (name "custom") or `{name, pattern, keywords?}`; a capture group named `secret` limits the replacement to that group; `keywords` (3+ characters) make the pattern run only around them. Default []. */
  redactPatterns?: Array<string | { name?: string; pattern: string; keywords?: string[] }>;
  /** Before any summary: tool outputs older than the previous turn are shown as one-line stubs that `lcm_expand` brings back, identical outputs once, and a message larger than the fresh tail's share of the budget as a head-and-tail excerpt. Stored messages never change. Default true. */
  toolOutputStubs?: boolean;
  /** Tool outputs smaller than this many tokens stay whole. Default 200. */
  stubMinTokens?: number;
  /** Stubs are applied in batches that save at least this many tokens per token of cached prompt they make the provider re-write; budget pressure always applies them; 0 applies them every turn. Default 1. */
  stubBatchRatio?: number;
  /** The working set: an old read of a file read, edited or written in this many newest turns stays whole while there is room. Default 0 (off). */
  workingSetTurns?: number;
  /** The working set stays whole while the context is at most this share of the view budget (0-1). Default 0.6. */
  workingSetShare?: number;
  /** Reads larger than this many tokens are not kept in the working set. Default 2048. */
  workingSetMaxTokens?: number;
}

/** `plugins.entries.lossless-wasm.config` in OpenClaw: the engine's options plus storage. */
export interface PluginConfig extends EngineConfig {
  /** The SQLite file that holds every message. Default `<state dir>/lossless-wasm/lossless.sqlite`. */
  dbPath?: string;
  /** `node:sqlite` (file, WAL) when the host's Node has it, else `sql.js` (each write appended to `<dbPath>.lwjournal`, the whole file rewritten at checkpoints); or force either; or "postgres", a PostgreSQL server several gateways share (`postgresUrl`, `postgresSchema`; needs the npm package `pg`). Default "auto". */
  storage?: "auto" | "sql.js" | "node:sqlite" | "postgres";
  /** storage "postgres": the server, `postgres://user:password@host:port/db`. Default: the environment variable `LOSSLESS_WASM_POSTGRES_URL`. Never shown with its password. */
  postgresUrl?: string;
  /** storage "postgres": the schema the store lives in, created when missing (lower-case letters, digits and _). Default "lossless_wasm". */
  postgresSchema?: string;
  /** node:sqlite only: "normal" (`PRAGMA synchronous = NORMAL`) keeps every committed turn through a crash of the process, while an OS crash or power loss may roll back the turns since the last WAL checkpoint (the database stays consistent; the host's history re-imports them next turn); "full" fsyncs every commit. Default "normal". */
  durability?: "normal" | "full";
  /** Where the engine and its database run in Node: "worker" (default), a worker thread, so an import, another process's write lock or a checkpoint never holds the host's event loop; "main", the host's own thread. */
  storageThread?: "worker" | "main";
  /** node:sqlite: how long a call waits for another process's write lock before it fails with an error naming that process; postgres: the connection's `lock_timeout` (a row lock another gateway holds). Default 30000. */
  lockTimeoutMs?: number;
}
