// lcm_ask: delegated recall. The model asks a question about its history; the engine finds the
// evidence under a hard token budget (engine/ask.rs) and builds one request; this file makes
// that one LLM call (the host's LLM, or the one the embedder configured) under `askTimeoutMs`,
// and hands the answer back to the engine, which caps it and keeps only citations of evidence it
// sent. Every outcome — answered, nothing found, the LLM failed, timed out, or no LLM here — is an
// ordinary tool result that lists the evidence ids, never a thrown error.
//
// Named lcm_ask, not the anchor's lcm_expand_query: it does not expand in the caller's context
// or start a sub-agent; it asks one question and gets one short answer.

import { classifyError, completeWithin } from "../engine/compaction-driver.js";
import { answering, defined, intArg, stringArg } from "./tool-input.js";
import { cutToFit } from "./result-size.js";

export const ASK_TOOL_NAME = "lcm_ask";
export const ASK_DEFAULT_TIMEOUT_MS = 10_000;

const TIME = {
  anyOf: [{ type: "string", minLength: 1 }, { type: "number" }],
};

const ASK_SCHEMA = {
  type: "object",
  additionalProperties: false,
  required: ["question"],
  properties: {
    question: {
      type: "string",
      minLength: 1,
      description:
        "The question, with its key words: a name, number, path, identifier or phrase that was in the original messages.",
    },
    pattern: {
      type: "string",
      description: "A literal string to search for besides the question's own words (as lcm_grep's text mode).",
    },
    summaryIds: {
      type: "array",
      items: {
        anyOf: [
          { type: "integer", minimum: 1 },
          { type: "string", minLength: 1 },
        ],
      },
      maxItems: 10,
      description: "Summaries (ids from <lossless-summary id=...> blocks) whose original messages are evidence.",
    },
    scope: {
      type: "string",
      enum: ["conversation", "agent"],
      description: "conversation (default) or agent (every conversation of this agent).",
    },
    since: { ...TIME, description: "Only evidence at or after this time (ISO 8601 or ms since the epoch)." },
    before: { ...TIME, description: "Only evidence before this time (ISO 8601 or ms since the epoch)." },
  },
};

/** The LLM call; returns what the engine's finish step takes. */
// No `agentId`: OpenClaw 2026.9.6 refuses it from a plugin ("Plugin LLM completion cannot override
// the target agent"); the plugin-wide LLM runs as the host's default agent.
async function callLlm(llm, start, timeoutMs, signal) {
  if (typeof llm?.complete !== "function")
    return { outcome: "no_llm", detail: "the host offered no LLM to this plugin" };
  try {
    const request = {
      messages: [{ role: "user", content: start.prompt }],
      maxTokens: start.maxTokens,
      purpose: "lossless-wasm recall (lcm_ask)",
    };
    const result = await completeWithin(llm, request, timeoutMs, signal, "lcm_ask's LLM call");
    if (result?.stopReason === "error" || result?.stopReason === "aborted") {
      return {
        outcome: result.stopReason === "aborted" ? "timed_out" : "llm_failed",
        detail: `stopReason ${result.stopReason}: ${result.errorMessage ?? result.error?.message ?? "no detail given"}`,
      };
    }
    if (typeof result?.text !== "string") return { outcome: "llm_failed", detail: "the LLM's answer had no text" };
    return { outcome: "answered", text: result.text };
  } catch (err) {
    return {
      outcome: classifyError(err) === "timeout" ? "timed_out" : "llm_failed",
      detail: String(err?.message ?? err),
    };
  }
}

// `details`: ids and counts only (a host may show the model both text and details).
const askDetails = (answer, start) => ({
  outcome: answer.outcome,
  citedMessageIds: answer.citedMessageIds,
  citedSummaryIds: answer.citedSummaryIds,
  evidenceMessageIds: answer.evidenceMessageIds,
  evidenceSummaryIds: answer.evidenceSummaryIds,
  evidenceTokens: start.evidenceTokens,
  leftOut: start.leftOut,
  redacted: start.redacted,
  truncated: answer.truncated,
  tokens: answer.tokens,
});

/**
 * The answer as a tool result under the host's tool-result limit: the evidence ids are also in
 * the text ("Evidence sent: …"), so a result too long keeps only their counts in `details`;
 * failing that, the text is cut with a line saying so (an answer is at most ~400 tokens, so only
 * a very long evidence list or a tiny limit gets there).
 */
function askResult(text, details, fits, limit) {
  const full = { content: [{ type: "text", text }], details };
  if (!fits || fits(full)) return full;
  const { evidenceMessageIds = [], evidenceSummaryIds = [], ...rest } = details;
  const counted = {
    content: full.content,
    details: { ...rest, evidenceMessages: evidenceMessageIds.length, evidenceSummaries: evidenceSummaryIds.length },
  };
  return fits(counted) ? counted : cutToFit(ASK_TOOL_NAME, counted, limit());
}

/**
 * The lcm_ask tool bound to one session.
 * @param {(method: string, params: object) => Promise<any>} call the engine, with the session added
 * @param {object} options
 * @param {() => ({complete: Function}|undefined)} [options.llm] the LLM to ask
 * @param {number} [options.timeoutMs] the LLM call's time limit (config askTimeoutMs)
 * @param {(name: string, value: unknown) => number|undefined} options.parseTime
 * @param {(result: object) => boolean} [options.fits] whether a result is under the host's
 *        tool-result limit (result-size.js), which is `options.limit()` characters
 * @param {() => number} [options.limit]
 */
export function createAskTool(call, { llm, timeoutMs = ASK_DEFAULT_TIMEOUT_MS, parseTime: parse, fits, limit }) {
  return {
    name: ASK_TOOL_NAME,
    label: "Ask the stored history",
    description:
      "Ask one question about this conversation's earlier history, including what was summarized out of your view. The plugin searches the stored messages, sends the best evidence to an LLM and returns a short answer (at most ~400 tokens) with the ids of the messages it rests on. Cheaper for your context than grep + expand; use lcm_expand on the ids to check exact text.",
    parameters: ASK_SCHEMA,
    async execute(_toolCallId, params, signal) {
      return answering(ASK_TOOL_NAME, async () => {
        const p = params && typeof params === "object" ? params : {};
        const start = await call(
          "recallAsk",
          defined({
            question: p.question === undefined ? null : p.question,
            pattern: stringArg("pattern", p.pattern),
            summaryIds: p.summaryIds,
            scope: stringArg("scope", p.scope),
            since: parse("since", p.since),
            before: parse("before", p.before),
            maxEvidenceTokens: intArg("maxEvidenceTokens", p.maxEvidenceTokens, 0, 1_000_000),
          }),
        );
        if (!start.prompt) return askResult(start.answer.text, askDetails(start.answer, start), fits, limit);
        const reply = await callLlm(llm?.(), start, timeoutMs, signal);
        const answer = await call("recallAskFinish", {
          ...reply,
          evidence: start.evidence.map(({ kind, id }) => ({ kind, id })),
        });
        return askResult(answer.text, askDetails(answer, start), fits, limit);
      });
    },
  };
}
