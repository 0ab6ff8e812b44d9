// The recall tools the model calls: lcm_grep, lcm_describe, lcm_expand (lcm_ask is in
// ask-tool.js). Schemas (plain JSON
// Schema, no TypeBox runtime), the text the model reads, and the binding to the caller's own
// session. All query logic, scoping and the expand token limit live in the wasm engine: the
// session passed down is the one the host gave this tool's factory, never one the model names.
// Every result fits the host's tool-result limit (result-size.js): a longer answer is paged
// (pages.js), and the result says how to get the rest.

import { ASK_TOOL_NAME, createAskTool } from "./ask-tool.js";
import { ToolInputError } from "../errors.js";
import { answering, boolArg, intArg, stringArg } from "./tool-input.js";
import { describePage, expandPage, grepPage } from "./pages.js";
import { codePointCount, codePoints, cutToFit, fitsLimit, resultLimit } from "./result-size.js";

export const TOOL_NAMES = ["lcm_grep", "lcm_describe", "lcm_expand", ASK_TOOL_NAME];

const ID = {
  anyOf: [
    { type: "integer", minimum: 1 },
    { type: "string", minLength: 1 },
  ],
};
const TIME = {
  anyOf: [{ type: "string", minLength: 1 }, { type: "number" }],
  description: "ISO 8601 time (e.g. 2026-11-23T09:00:00Z) or ms since the epoch",
};

const GREP_SCHEMA = {
  type: "object",
  additionalProperties: false,
  required: ["pattern"],
  properties: {
    pattern: {
      type: "string",
      minLength: 1,
      description:
        'What to find. Plain text by default: matched literally, case-insensitive, from the start of a word ("pars" finds "parser"; "Error" does not find "TypeError"; CJK anywhere); quotes, operators and symbols are just characters.',
    },
    mode: {
      type: "string",
      enum: ["text", "full_text", "ranked"],
      description:
        'text (default), full_text (SQLite FTS4 query syntax: AND, OR, NOT, "phrases", prefix*), or ranked (best matches first, by words and by meaning: finds what is said in other words).',
    },
    kind: {
      type: "string",
      enum: ["both", "messages", "summaries"],
      description:
        "both (default: original messages and summaries; neither crowds the other out), messages or summaries.",
    },
    scope: {
      type: "string",
      enum: ["conversation", "agent"],
      description:
        "conversation (default: this session's history, archived segments included) or agent (every conversation of this agent).",
    },
    since: { ...TIME, description: `Only matches at or after this time; ${TIME.description}.` },
    before: { ...TIME, description: `Only matches before this time; ${TIME.description}.` },
    limit: {
      type: "integer",
      minimum: 1,
      maximum: 200,
      description: "Most hits to return (default 20), newest first.",
    },
    offset: {
      type: "integer",
      minimum: 0,
      description:
        "Skip this many hits of the same search: a result too long for one answer says which offset shows the rest.",
    },
  },
};

const DESCRIBE_SCHEMA = {
  type: "object",
  additionalProperties: false,
  properties: {
    summaryId: { ...ID, description: "A summary id, as shown in a <lossless-summary id=...> block or a grep hit." },
    messageId: { ...ID, description: "A message id from a grep hit." },
    cursor: {
      type: "string",
      description: "With summaryId: nextCursor from the previous answer, where the summary's content goes on.",
    },
  },
};

const EXPAND_SCHEMA = {
  type: "object",
  additionalProperties: false,
  properties: {
    summaryId: {
      ...ID,
      description: "The summary to open: returns its children (deeper summaries, or the original messages).",
    },
    messageId: {
      ...ID,
      description:
        "One original message to read in full, page by page (e.g. the id in a [tool output stored: …] stub).",
    },
    messages: {
      type: "boolean",
      description:
        "With summaryId: list every original message under it, at any depth, instead of its direct children.",
    },
    cursor: { type: "string", description: "nextCursor from the previous page of the same expansion." },
    maxTokens: {
      type: "integer",
      minimum: 200,
      maximum: 16000,
      description:
        "Token limit of this page (default 4000, at most 16000); a page is also never longer than the host takes in one tool result.",
    },
  },
};

/** A time argument as ms since the epoch: a number, a numeric string, or an ISO 8601 time. */
function parseTime(name, value) {
  if (value === undefined || value === null || value === "") return undefined;
  const numeric =
    typeof value === "number"
      ? value
      : typeof value === "string" && /^\s*-?\d+(\.\d+)?\s*$/.test(value)
        ? Number(value)
        : undefined;
  // JS dates span ±8.64e15 ms; beyond that a time means "no bound on this side".
  if (numeric !== undefined && Number.isFinite(numeric))
    return Math.trunc(Math.max(-8.64e15, Math.min(8.64e15, numeric)));
  const ms = typeof value === "string" ? Date.parse(value) : NaN;
  if (Number.isNaN(ms))
    throw new ToolInputError(
      name,
      `expected an ISO 8601 time such as 2026-11-23T09:00:00Z, got ${JSON.stringify(value)?.slice(0, 80)}`,
    );
  return ms;
}

const iso = (ms) => (typeof ms === "number" && ms > 0 ? new Date(ms).toISOString() : "unknown time");

/** A pattern as the answer repeats it: at most 200 characters (the model has the rest). */
const echo = (pattern) => JSON.stringify(codePointCount(pattern) > 200 ? `${codePoints(pattern, 200)}…` : pattern);

function grepText(pattern, out, mode, page) {
  const order = mode === "ranked" ? "best first" : "newest first";
  const shown =
    page.total > out.hits.length
      ? `${page.total} match(es) for ${echo(pattern)}; this answer shows ${out.hits.length ? `${page.offset + 1}-${page.offset + out.hits.length}` : "none"}`
      : `${out.hits.length} match(es) for ${echo(pattern)}`;
  const lines = [`${shown} in ${out.scope} scope (${out.conversations} conversation(s)), ${order}.`];
  for (const h of out.hits) {
    const where = h.kind === "summary" ? `summary ${h.id}` : `message ${h.id} (${h.role})`;
    let next = "";
    if (h.kind === "message" && !h.inView) {
      next = h.coveredBy
        ? ` — summarized; lcm_expand {"messageId": ${h.id}} reads it, summary ${h.coveredBy} in your view covers it`
        : ` — lcm_expand {"messageId": ${h.id}} reads it`;
    } else if (h.kind === "message" && h.stubbed) {
      next = ` — shown as a stub in your view; lcm_expand {"messageId": ${h.id}} reads it whole`;
    } else if (h.kind === "summary") {
      next = ` — lcm_expand {"summaryId": ${h.id}} opens it`;
    }
    lines.push(`- [${where}, conversation ${h.conversationId}, ${iso(h.createdAt)}] ${h.snippet}${next}`);
  }
  if (!page.total)
    lines.push(out.scope === "conversation" ? 'Nothing found; try scope "agent" or fewer words.' : "Nothing found.");
  if (page.nextOffset !== null)
    lines.push(`More: call lcm_grep again with the same arguments and "offset": ${page.nextOffset}.`);
  return lines.join("\n");
}

/** `page`: the part of a summary's content shown, `{head, from, shown, nextCursor}` (pages.js);
 *  undefined: all of it. A page that is not the head is the content alone. */
function describeText(d, page) {
  const more = page?.nextCursor
    ? [`More: lcm_describe {"summaryId": ${d.id}, "cursor": "${page.nextCursor}"} shows the rest of the content.`]
    : [];
  const range = page ? `, characters ${page.from + 1}-${page.from + page.shown} of ${d.contentChars}` : "";
  if (page && !page.head) return [`summary ${d.id} content${range}:\n${d.content}`, ...more].join("\n");
  if (d.type === "message") {
    const above =
      d.summaries.map((s) => `${s.id} (depth ${s.depth}${s.inView ? ", in view" : ""})`).join(", ") || "none";
    const shown = !d.inView
      ? "no"
      : d.shownAs === "stub"
        ? `yes, as a one-line stub of ${d.viewTokens} tokens (lcm_expand {"messageId": ${d.id}} returns all ${d.tokenCount})`
        : d.shownAs === "excerpt"
          ? `yes, as an excerpt (head and tail) of ${d.viewTokens} tokens (lcm_expand {"messageId": ${d.id}} returns all ${d.tokenCount})`
          : "yes, whole";
    return [
      `message ${d.id}: ${d.role}, #${d.seq} of ${d.of} in conversation ${d.conversationId}, ${d.tokenCount} tokens, ${iso(d.timestamp)}`,
      `in the current view: ${shown}; summaries above it (lowest first): ${above}`,
      ...(d.stubLine ? [`stub: ${d.stubLine}`] : []),
      `preview: ${d.preview}`,
    ].join("\n");
  }
  const children = d.children.map((c) => `${c.id} (depth ${c.depth}, ${c.level}, ${c.tokenCount} tok)`).join(", ");
  return [
    `summary ${d.id}: ${d.kind}, depth ${d.depth}, level ${d.level}, conversation ${d.conversationId}, in the current view: ${d.inView ? "yes" : "no"}`,
    `tokens: ${d.tokenCount} (from ${d.sourceTokenCount} source tokens); summarizer ${d.summarizer}${d.model ? ` (${d.model})` : ""}`,
    `covers messages #${d.firstSeq ?? "?"}..#${d.lastSeq ?? "?"}: ${d.coveredMessages} original messages, ${d.coveredTokens} tokens; span ${iso(d.earliestAt)} .. ${iso(d.latestAt)}`,
    `parents: ${d.parents.join(", ") || "none"}; children: ${children || (d.directMessages ? `${d.directMessages} original messages` : "none")}`,
    // In pages the ledger is left to the content, whose ## Artifacts section it is.
    !d.ledger.length
      ? "artifact ledger: empty"
      : page
        ? `artifact ledger: ${d.ledger.length} line(s), in the content's ## Artifacts section`
        : `artifact ledger:\n${d.ledger.join("\n")}`,
    `content${range}:\n${d.content}`,
    ...more,
  ].join("\n");
}

function expandText(x) {
  const head = `${x.target} ${x.id} (${x.listing}): ${x.items.length} item(s) of ${x.total}${x.target === "message" ? " characters" : ""}, ~${x.tokens} of ${x.maxTokens} tokens.`;
  const blocks = x.items.map((i) => {
    const label =
      i.kind === "summary"
        ? `summary ${i.id} (depth ${i.depth}, ${i.level})`
        : `message ${i.id} (${i.role}${i.seq ? `, #${i.seq}` : ""})`;
    const cut = !i.truncated
      ? ""
      : i.kind === "summary"
        ? `\n[cut to fit this page; lcm_describe {"summaryId": ${i.id}, "cursor": "${i.continueAt}"} continues it]`
        : `\n[cut to fit this page; lcm_expand {"messageId": ${i.id}, "cursor": "${i.continueAt}"} continues it]`;
    return `--- ${label} ---\n${i.content}${cut}`;
  });
  const next = x.nextCursor
    ? `More: lcm_expand {"${x.target === "message" ? "messageId" : "summaryId"}": ${x.id}, "cursor": "${x.nextCursor}"${x.listing === "messages" ? ', "messages": true' : ""}}`
    : "End of this expansion.";
  return [head, ...blocks, next].join("\n");
}

const result = (text, details) => ({ content: [{ type: "text", text }], details });

// `details` carries ids and counts only, never text: the host may serialize the whole result
// for the model (Tool Search's tool_call does), and text there would be paid twice and break
// expand's page limit.
const grepDetails = (out, page) => ({
  scope: out.scope,
  conversations: out.conversations,
  total: page.total,
  offset: page.offset,
  nextOffset: page.nextOffset,
  hits: out.hits.map(({ kind, id, conversationId, role, createdAt, inView, stubbed, coveredBy }) => ({
    kind,
    id,
    conversationId,
    role,
    createdAt,
    inView,
    stubbed,
    coveredBy,
  })),
});
// A paged summary leaves its children to the text (their ids are there) and a content page to
// the content's place.
const describeDetails = (
  { content: _content, preview: _preview, ledger: _ledger, stubLine: _stubLine, children, ...rest },
  page,
) => {
  if (!page) return children === undefined ? rest : { ...rest, children };
  const at = {
    contentChars: rest.contentChars,
    contentFrom: page.from,
    contentShown: page.shown,
    nextCursor: page.nextCursor,
  };
  if (!page.head) return { type: rest.type, id: rest.id, conversationId: rest.conversationId, ...at };
  return { ...rest, childCount: children?.length ?? 0, ...at };
};
const expandDetails = ({ items, ...rest }) => ({
  ...rest,
  items: items.map(({ kind, id, seq, depth, tokens, truncated, continueAt }) => ({
    kind,
    id,
    seq,
    depth,
    tokens,
    truncated,
    continueAt,
  })),
});

/**
 * The four recall tools bound to one session.
 * @param {() => Promise<{call: Function}>} openHandle the shared engine
 * @param {{sessionId?: string, sessionKey?: string}} ctx the host's tool-factory context
 * @param {object} [options]
 * @param {() => ({complete: Function}|undefined)} [options.llm] the LLM lcm_ask asks
 * @param {number} [options.askTimeoutMs] lcm_ask's LLM time limit (config askTimeoutMs)
 * @param {number} [options.toolResultMaxChars] the host's tool-result limit (config
 *        toolResultMaxChars; result-size.js)
 * @param {(session: string) => number|undefined} [options.modelWindow] the model window the host
 *        last reported for a session (by its key), which lowers the default limit below 8K
 * @returns {object[]|null} the tools, or null outside a session (nothing to scope them to)
 */
export function createRecallTools(openHandle, ctx, { llm, askTimeoutMs, toolResultMaxChars, modelWindow } = {}) {
  const sessionKey = typeof ctx?.sessionKey === "string" && ctx.sessionKey ? ctx.sessionKey : undefined;
  const sessionId = typeof ctx?.sessionId === "string" && ctx.sessionId ? ctx.sessionId : sessionKey;
  if (!sessionId) return null;
  const session = { sessionId, sessionKey };
  const call = async (method, params) => (await openHandle()).call(method, { ...params, ...session });
  const args = (p) => (p && typeof p === "object" ? p : {});
  // Read at each call: the host reports the window at the turn's commit, after the factory ran.
  const limit = () => resultLimit(toolResultMaxChars, modelWindow?.(sessionKey ?? sessionId));
  const fits = (name) => (r) => fitsLimit(name, r, limit());
  /** A tool body whose answer, whatever happens, fits the limit as whole JSON. */
  const bounded = (name, body) => answering(name, body).then((r) => cutToFit(name, r, limit()));
  return [
    {
      name: "lcm_grep",
      label: "Search stored history",
      description:
        "Search every stored message and summary of this conversation (or all of this agent's) — including what was summarized out of your view. Returns snippets with message/summary ids, newest first (mode ranked: best first, by words and by meaning); open them with lcm_expand.",
      parameters: GREP_SCHEMA,
      execute: (_toolCallId, params) =>
        bounded("lcm_grep", async () => {
          const p = args(params);
          const pattern = stringArg("pattern", p.pattern);
          const out = await call("recallGrep", {
            pattern: pattern ?? null,
            mode: stringArg("mode", p.mode),
            kind: stringArg("kind", p.kind),
            scope: stringArg("scope", p.scope),
            since: parseTime("since", p.since),
            before: parseTime("before", p.before),
            limit: intArg("limit", p.limit, 1, 1_000),
          });
          return grepPage(
            out,
            intArg("offset", p.offset, 0, Number.MAX_SAFE_INTEGER),
            (o, page) => result(grepText(pattern, o, p.mode, page), grepDetails(o, page)),
            fits("lcm_grep"),
          );
        }),
    },
    {
      name: "lcm_describe",
      label: "Describe a summary or message",
      description:
        "For a summary id: its level (normal/aggressive/fallback), depth, parents and children, the range of original messages it covers, token counts and artifact ledger. For a message id (e.g. from a [tool output stored: …] stub): its place in the conversation, its size, whether your view shows it whole or as a stub, and the summaries covering it.",
      parameters: DESCRIBE_SCHEMA,
      execute: (_toolCallId, params) =>
        bounded("lcm_describe", async () => {
          const p = args(params);
          const from = intArg("cursor", p.cursor, 0, Number.MAX_SAFE_INTEGER);
          const out = await call("recallDescribe", { summaryId: p.summaryId, messageId: p.messageId });
          if (out.type === "summary") out.contentChars = codePointCount(out.content);
          return describePage(
            out,
            from,
            (d, page) => result(describeText(d, page), describeDetails(d, page)),
            fits("lcm_describe"),
          );
        }),
    },
    {
      name: "lcm_expand",
      label: "Expand a summary or message",
      description:
        "Recover what a summary replaced: its children down to the original messages, or one message's full text, one page at a time (under a token limit, default 4000, and what the host takes in one tool result). Follow nextCursor for more.",
      parameters: EXPAND_SCHEMA,
      execute: (_toolCallId, params) =>
        bounded("lcm_expand", async () => {
          const p = args(params);
          // `allMessages`: the engine reserves `messages` for arrays of host messages.
          const out = await call("recallExpand", {
            summaryId: p.summaryId,
            messageId: p.messageId,
            allMessages: boolArg("messages", p.messages),
            cursor: stringArg("cursor", p.cursor),
            maxTokens: intArg("maxTokens", p.maxTokens, 0, 1_000_000),
          });
          return expandPage(out, (x) => result(expandText(x), expandDetails(x)), fits("lcm_expand"));
        }),
    },
    createAskTool(call, { llm, timeoutMs: askTimeoutMs, parseTime, fits: fits(ASK_TOOL_NAME), limit }),
  ];
}
