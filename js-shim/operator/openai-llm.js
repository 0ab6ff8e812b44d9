// A minimal LLM client for an OpenAI-compatible chat-completions endpoint, shaped like the
// host's `llm.complete` ({messages, maxTokens, signal} -> {text, model, stopReason}). Only the
// headless CLI uses it (repair outside OpenClaw); inside the host the host's LLM is used.
import { LlmHttpError } from "../errors.js";

/**
 * @param {object} o
 * @param {string} o.baseUrl e.g. "http://127.0.0.1:8080/v1" (POSTs to `<baseUrl>/chat/completions`)
 * @param {string} o.model model id sent as `model`
 * @param {string} [o.apiKey] sent as `Authorization: Bearer <apiKey>` when given
 * @returns {{complete: (request: object) => Promise<{text: string, model: string, stopReason: string}>}}
 */
export function createOpenAiLlm({ baseUrl, model, apiKey }) {
  const url = `${String(baseUrl).replace(/\/+$/, "")}/chat/completions`;
  return {
    async complete({ messages, maxTokens, signal }) {
      const res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
        body: JSON.stringify({ model, messages, stream: false, ...(maxTokens ? { max_tokens: maxTokens } : {}) }),
        signal,
      });
      const body = await res.text();
      if (!res.ok) {
        // `status` lets the compaction driver tell an auth failure from other errors.
        throw new LlmHttpError(res.status, `${url} answered HTTP ${res.status}: ${body.slice(0, 300)}`);
      }
      let json;
      try {
        json = JSON.parse(body);
      } catch {
        throw new Error(`${url} did not answer JSON: ${body.slice(0, 300)}`);
      }
      const choice = json?.choices?.[0];
      const text = choice?.message?.content;
      if (typeof text !== "string") throw new Error(`${url} answered without choices[0].message.content`);
      // Reasoning a server returns beside the content (`reasoning_content`) is never read.
      const usage = json.usage
        ? { inputTokens: json.usage.prompt_tokens, outputTokens: json.usage.completion_tokens }
        : undefined;
      return {
        text,
        model: typeof json.model === "string" ? json.model : model,
        stopReason: choice.finish_reason === "length" ? "length" : "stop",
        ...(usage ? { usage } : {}),
      };
    },
  };
}
