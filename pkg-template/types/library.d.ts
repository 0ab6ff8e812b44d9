// Types of `lossless-wasm/library`: the engine for browser pages and plain Node, on sql.js.
//
// Errors: every method returns a promise that rejects with an `Error` whose message names what
// is wrong, and the engine stays usable afterwards (nothing is stored half-way):
//  - "invalid input at `<field>`: <reason>"   a malformed parameter or message, e.g.
//                                              `messages[0].content[0].type`
//  - "invalid config `<key>`: <reason>"        (from openEngine / openBrowserEngine)
//  - "storage error: <reason>"                 the database refused (e.g. `bytes` that are not a
//                                              SQLite file, or a schema newer than this build)
//  - "stale plan: <reason>"                    only from compaction internals; retried for you
// `openEngine` / `openBrowserEngine` also throw a TypeError when `SQL` is not an initialized
// sql.js module, and openBrowserEngine an Error when IndexedDB is unavailable or the stored
// journal does not apply to its snapshot (the stored data is left unchanged).
// openBrowserEngine rejects with an Error named "StoreBusyError" (`code` "LOSSLESS_STORE_BUSY",
// also from openBrowserEngineInWorker) when another tab or worker of the origin holds the key for
// writing past `lockTimeoutMs` ("… is open for writing in another tab or worker of this origin …"). After `close()`, every call rejects ("<call>() called after
// close(); …"); a read-only engine rejects its writing calls ("<call>() writes, and this engine
// was opened with readOnly: true; …").

import type { EngineConfig } from "./config.js";

export type { EngineConfig, PluginConfig } from "./config.js";

/** The part of an initialized sql.js module (`await initSqlJs()`) the engine uses. */
export interface SqlJsStatic {
  Database: new (data?: ArrayLike<number> | null) => unknown;
}

/** A content block of a host message (OpenClaw / pi-ai shapes). Unknown types are rejected. */
export type ContentBlock =
  | { type: "text"; text: string; [key: string]: unknown }
  | { type: "thinking"; thinking: string; [key: string]: unknown }
  | { type: "toolCall"; id: string; name: string; arguments?: unknown; [key: string]: unknown }
  | { type: "image"; [key: string]: unknown }
  | { type: "file"; [key: string]: unknown };

export type Role = "user" | "assistant" | "toolResult" | "compactionSummary" | "branchSummary" | "bashExecution" | "custom";

/** A message as the host sends it; stored byte for byte and returned the same way. */
export interface AgentMessage {
  role: Role;
  content: string | ContentBlock[];
  /** Milliseconds since the epoch; part of the message's identity (duplicates are skipped). */
  timestamp?: number;
  toolCallId?: string;
  toolName?: string;
  [key: string]: unknown;
}

/** Which conversation a call is about: the session key names it, the id one generation of it. */
export interface SessionRef {
  sessionId: string;
  /** Defaults to `sessionId`. A new `sessionId` under the same key archives the old conversation. */
  sessionKey?: string;
}

/** An LLM for summaries. Without one, the built-in extractive summarizer writes them. */
export interface SummaryLlm {
  complete(request: {
    messages: { role: "user"; content: string }[];
    maxTokens: number;
    purpose: string;
    signal?: AbortSignal;
  }): Promise<{ text?: string; model?: string; stopReason?: string; errorMessage?: string }>;
}

export interface OpenEngineOptions {
  /** The initialized sql.js module (`await initSqlJs()`); required. */
  SQL: SqlJsStatic;
  /** An existing database (SQLite file bytes) to open; a new one when omitted. */
  bytes?: Uint8Array;
  /** Engine options; validated (an invalid value throws naming the key). */
  config?: EngineConfig;
  /**
   * Called with the whole database after every call that committed a write; a returned promise
   * is awaited before that call resolves (so a resolved call is saved). Cost grows with the
   * database: for large histories in a browser prefer `openBrowserEngine`.
   */
  save?: (bytes: Uint8Array) => void | Promise<void>;
  /** Where to load `lossless_wasm_bg.wasm` from; by default fetched from beside the package's JS. */
  wasm?: BufferSource | WebAssembly.Module | URL | string;
  /** An LLM for summaries; the extractive summarizer runs without one. */
  llm?: SummaryLlm;
}

export interface OpenBrowserEngineOptions extends Omit<OpenEngineOptions, "bytes" | "save"> {
  /** IndexedDB database name. Default "lossless-wasm". */
  idbName?: string;
  /** Entry within it (one engine database per key). Default "default". */
  key?: string;
  /**
   * The journal is checkpointed (a new snapshot written, the journal dropped) once it exceeds
   * both this many bytes and a sixteenth of the database. Default 2 MiB (2097152).
   */
  checkpointBytes?: number;
  /**
   * Open without taking the key's write lock, beside a writer in another tab: the engine holds
   * the store as committed when it opened (whole turns only) and serves `search`, `describe`,
   * `expand`, `compactionEvents`; every writing call rejects. Default false.
   */
  readOnly?: boolean;
  /**
   * One writer per key across the origin's tabs and workers: how long to wait for another
   * writer to close before rejecting with a "StoreBusyError". 0 fails at once; Infinity waits
   * until the other closes (or its tab goes away). Default 5000.
   */
  lockTimeoutMs?: number;
  /**
   * The Web Locks manager that keeps one writer per key. Default `navigator.locks`. Where it is
   * missing (an insecure http: page), or when `null` is passed, a lease record in IndexedDB
   * does the same: renewed while the engine is open, checked by every write, and taken over
   * by another writer once it has not been renewed for `leaseMs`.
   */
  lockManager?: { request: (...args: any[]) => Promise<unknown> } | null;
  /** Lease length without Web Locks (>= 100). Default 10000. */
  leaseMs?: number;
}

export interface CommitTurnParams extends SessionRef {
  /** The host's idempotency key: a retry with the same key stores nothing and says "duplicate". */
  advancementKey: string;
  messages: AgentMessage[];
}

export interface AssembleParams extends SessionRef {
  /** The host's history; only messages not stored yet are used (normally none). */
  messages?: AgentMessage[];
  tokenBudget?: number;
  /** The tools the model can call this turn; the addition names only the recall tools among
   *  them (none: no addition). Absent: all four are named. */
  availableTools?: Set<string> | string[];
}

export interface AssembleResult {
  /** The view, oldest first: summaries (as user messages) and the newest stored messages. */
  messages: AgentMessage[];
  estimatedTokens: number;
  /** A text for the system prompt, the same bytes for the same recall tools (it never breaks a
   *  prompt cache); absent when `availableTools` holds no recall tool. */
  systemPromptAddition?: string;
}

export interface SearchParams extends SessionRef {
  pattern: string;
  /** "text": a literal, case-insensitive string (default); "full_text": FTS4 query syntax. */
  mode?: "text" | "full_text";
  /** The session's active conversation (default) or every conversation, archived ones included. */
  scope?: "conversation" | "all";
  limit?: number;
}

export interface SearchHit {
  kind: "message" | "summary";
  id: number;
  conversationId: number;
  /** The message's role, or "summary". */
  role: string;
  snippet: string;
  createdAt: number;
}

/** One summary of the DAG, without its text. */
export interface SummaryInfo {
  id: number;
  /** "leaf" covers messages; "condensed" covers summaries. */
  kind: "leaf" | "condensed";
  depth: number;
  level: "normal" | "aggressive" | "fallback";
  tokens: number;
  sourceTokens: number;
  summarizer: string;
  createdAt: number;
  /** Direct children: message ids of a leaf, summary ids of a condensed summary. */
  children: number[];
  /** The original messages it covers, by seq (1-based position in the conversation). */
  firstSeq: number | null;
  lastSeq: number | null;
  messageCount: number;
  /** Whether it is in the active context (else a deeper summary covers it). */
  inContext: boolean;
}

export interface MessageInfo {
  id: number;
  seq: number;
  role: string;
  /** Plain-text rendering of the message. */
  content: string;
  tokens: number;
  createdAt: number;
  /** The leaf summary covering it, when it was summarized. */
  summaryId: number | null;
}

export interface ConversationInfo {
  type: "conversation";
  conversationId: number;
  sessionId: string;
  sessionKey: string;
  messageCount: number;
  tokenCount: number;
  contextTokens: number;
  contextSummaryTokens: number;
  contextMessages: number;
  contextSummaries: number;
  summaries: SummaryInfo[];
}

export type Described =
  | { type: "empty" }
  | ConversationInfo
  | { type: "summary"; summary: SummaryInfo; content: string }
  | { type: "message"; message: MessageInfo };

export interface DescribeParams extends SessionRef {
  summaryId?: number;
  messageId?: number;
}

export interface ExpandParams extends SessionRef {
  summaryId: number;
  /** Page size in tokens (1..200000, default 8000); a page always holds at least one item. */
  tokenLimit?: number;
  /** Every original message under the summary instead of its direct children. */
  toMessages?: boolean;
  /** `nextCursor` of the previous page. */
  cursor?: number;
}

export type ExpandItem = { kind: "summary"; summary: SummaryInfo; content: string } | { kind: "message"; message: MessageInfo };

export interface Expansion {
  summary: SummaryInfo;
  items: ExpandItem[];
  tokens: number;
  nextCursor: number | null;
}

export interface CompactionEvent {
  id: number;
  createdAt: number;
  pass: "leaf" | "condensed" | "sweep" | "trigger";
  level: "normal" | "aggressive" | "fallback" | null;
  outcome: "triggered" | "compacted" | "skipped" | "failed";
  reason: string;
  tokensBefore: number | null;
  tokensAfter: number | null;
  summaryId: number | null;
  /** The decision's inputs, as JSON text (for a run of repeated decisions, the latest's). */
  telemetryJson: string | null;
  /** How many decisions the row stands for: unchanged "skipped" trigger decisions in a row
   *  share one row; 1 for every other event. */
  repeats: number;
  /** When the latest decision of such a run was made; null for a single event. */
  lastAt: number | null;
}

/** An open engine: the OpenClaw ContextEngine contract plus search and inspection. */
export interface LosslessEngine {
  readonly info: { id: "lossless-wasm"; name: string; version: string; ownsCompaction: true; [key: string]: unknown };
  bootstrap(params: SessionRef & { messages?: AgentMessage[] }): Promise<{ bootstrapped: boolean; importedMessages: number; reason: string }>;
  ingest(params: SessionRef & { message: AgentMessage }): Promise<{ ingested: boolean }>;
  ingestBatch(params: SessionRef & { messages: AgentMessage[] }): Promise<{ ingestedCount: number }>;
  afterTurn(params: SessionRef & { messages: AgentMessage[]; prePromptMessageCount: number }): Promise<void>;
  commitTurn(params: CommitTurnParams): Promise<{ status: "committed" | "duplicate" }>;
  assemble(params: AssembleParams): Promise<AssembleResult>;
  /** A full compaction sweep now. */
  compact(params: SessionRef & { force?: boolean; tokenBudget?: number; currentTokenCount?: number }): Promise<{
    ok: boolean;
    compacted: boolean;
    reason: string;
    result: { tokensBefore: number; tokensAfter: number };
  }>;
  /** Runs the compaction the trigger left pending after a turn, then after-turn upkeep: indexes
   *  waiting messages for search once a batch has gathered, checkpoints the node:sqlite WAL. */
  maintain(params: SessionRef): Promise<{ changed: boolean; bytesFreed: number; rewrittenEntries: number; reason: string }>;
  search(params: SearchParams): Promise<SearchHit[]>;
  /** Archives the session key's conversation (kept and searchable) and starts a new one. */
  reset(params: SessionRef & { cause?: string }): Promise<boolean>;
  dispose(): Promise<void>;
  /**
   * Lets the calls already running finish, saves what is unsaved, closes the database and, for
   * a browser engine, releases the key's write lock so another tab can open it. Idempotent
   * (every call returns the same promise); any other call afterwards rejects.
   */
  close(): Promise<void>;
  /** The conversation (totals and the summary DAG), or one summary or message of it. */
  describe(params: DescribeParams): Promise<Described>;
  /** A summary's children, or every original message under it, one page at a time. */
  expand(params: ExpandParams): Promise<Expansion>;
  /** The compaction log, oldest first. */
  compactionEvents(params: SessionRef & { afterId?: number; limit?: number }): Promise<CompactionEvent[]>;
  /**
   * Browser engines only: set once the browser has discarded this IndexedDB database as corrupt
   * and recreated it empty (Chromium does so on open, e.g. after a crash left LevelDB damaged,
   * and reports it only to that open, which the engine records in the store). Everything stored
   * before `at` is gone; `message` is the browser's reason. null while nothing was discarded.
   */
  readonly dataLoss?: { at: number; message: string } | null;
}

/** An engine over an in-memory sql.js database; `save` receives the whole database after each write. */
export function openEngine(options: OpenEngineOptions): Promise<LosslessEngine>;

/**
 * A browser engine persisted in IndexedDB: each write appends its transaction to a journal in
 * one durable IndexedDB transaction before the call resolves; reopening replays the journal on
 * the last snapshot.
 */
export function openBrowserEngine(options: OpenBrowserEngineOptions): Promise<LosslessEngine>;

export interface OpenBrowserEngineInWorkerOptions extends Omit<OpenBrowserEngineOptions, "SQL" | "wasm" | "lockManager"> {
  /** Where the worker loads sql.js's `sql-wasm.js` from (its `.wasm` is looked up beside it). */
  sqlJsUrl: string | URL;
  /** The package's `shim/browser/engine-worker-main.js`; by default the one beside this module. */
  workerUrl?: string | URL;
  /** Where the worker loads `lossless_wasm_bg.wasm` from (a URL: a module cannot cross). */
  wasm?: string | URL;
  /** `null` keeps one writer per key with the IndexedDB lease instead of Web Locks. */
  lockManager?: null;
}

/**
 * `openBrowserEngine` in a dedicated worker: opening, imports, compaction and checkpoints run
 * there, never on the page's main thread. Same calls; params and results must be plain
 * (structured-cloneable) data. Summary requests come back to `llm` on the page (an abort
 * stops waiting for the answer, it cannot abort the page's request).
 */
export function openBrowserEngineInWorker(options: OpenBrowserEngineInWorkerOptions): Promise<LosslessEngine>;
