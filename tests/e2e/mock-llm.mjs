// OpenAI-compatible mock LLM for end-to-end tests of lossless-wasm in the real
// OpenClaw host. Plain Node, no dependencies.
//
//   const llm = await startMockLlm({ contextWindow: 16000 });
//   llm.url        -> "http://127.0.0.1:<port>/v1"
//   llm.requests   -> every request received, in order (see recordRequest below)
//   await llm.close();
//
// Reply text is deterministic: "Mock reply #<n> to: <first 40 chars of the
// current user message>" (n counts answered chat requests from 1), padded with
// filler sentences to `chatReplyChars` when that option is set; for a
// summarization request (see isSummarizationRequest) a short markdown summary
// naming "mock-summary-<n>" (summaryText), or an HTTP error when
// `summaryMode: "fail"`.
//
// Behaviour:
//   GET  /v1/models            -> model list (ids from `models`, default ["mock-model"])
//   POST /v1/chat/completions  -> deterministic reply; SSE when body.stream is true
//   A prompt whose estimated size (chars/4 over every message's text, system
//   included) exceeds `contextWindow` gets HTTP 400 context_length_exceeded,
//   as a real provider would answer.
//   With `summaryDelayMs`, a summarization request is answered only after that
//   delay (a slow local model or a busy provider); its record gets `answeredAt`,
//   or `abandoned` when the client hung up before the answer was ready.

import http from "node:http";

export const SUMMARIZE_MARKER = "[lossless-wasm:summarize]";

/** Plain text of an OpenAI-style message content (string or array of parts). */
export function contentText(content) {
  if (content == null) return "";
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((part) => {
        if (typeof part === "string") return part;
        if (part && typeof part.text === "string") return part.text;
        if (part && typeof part.content === "string") return part.content;
        return "";
      })
      .join("");
  }
  if (typeof content === "object" && typeof content.text === "string") return content.text;
  return "";
}

/** Characters of a message that count against the window: text plus tool-call arguments. */
function messageChars(msg) {
  let n = contentText(msg?.content).length;
  if (Array.isArray(msg?.tool_calls)) {
    for (const call of msg.tool_calls) {
      n += String(call?.function?.name ?? "").length;
      n += String(call?.function?.arguments ?? "").length;
    }
  }
  return n;
}

/** Estimated prompt tokens: total characters of all messages / 4, rounded up. */
export function estimatePromptTokens(body) {
  const messages = Array.isArray(body?.messages) ? body.messages : [];
  let chars = 0;
  for (const m of messages) chars += messageChars(m);
  return Math.ceil(chars / 4);
}

/** System prompt text of a chat request (all system/developer messages joined). */
export function systemPromptOf(body) {
  const messages = Array.isArray(body?.messages) ? body.messages : [];
  return messages
    .filter((m) => m && (m.role === "system" || m.role === "developer"))
    .map((m) => contentText(m.content))
    .join("\n");
}

/** Text of the last user message of a chat request ("" if none). */
export function lastUserText(body) {
  const messages = Array.isArray(body?.messages) ? body.messages : [];
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]?.role === "user") return contentText(messages[i].content);
  }
  return "";
}

const INTERNAL_CONTEXT_OPEN = "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>";

/**
 * A user message's text without what OpenClaw 2026.9.6 wraps around it on the
 * wire: every user message (history included) gets a "[<weekday> <date> <time>
 * UTC] " prefix from its timestamp, and the FIRST user message of the request
 * also gets a "\n\nRuntime: agent=… | session=…" tail (whatever that message is:
 * the current one on turn 1, the oldest history message or a summary later).
 */
export function stripHostEnvelope(text) {
  let t = String(text).replace(/^\[[^\]\n]*\d{1,2}:\d{2}[^\]\n]*\]\s*/, "");
  const runtimeAt = t.search(/\n\nRuntime: /);
  if (runtimeAt >= 0) t = t.slice(0, runtimeAt);
  return t;
}

/**
 * What the human typed in the current turn, as far as it can be recovered from
 * an OpenClaw request: the last user message that is not the
 * "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>…" block OpenClaw appends after it, with
 * the envelope stripped (stripHostEnvelope); falls back to the raw text.
 */
export function currentUserText(body) {
  const messages = Array.isArray(body?.messages) ? body.messages : [];
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]?.role !== "user") continue;
    const text = contentText(messages[i].content);
    if (text.trimStart().startsWith(INTERNAL_CONTEXT_OPEN)) continue;
    return stripHostEnvelope(text);
  }
  return lastUserText(body);
}

/**
 * True when the request is a summarization request made by our plugin: some
 * system/developer/user message contains SUMMARIZE_MARKER. The host's own
 * "memory flush" turn before compaction mentions compaction but never carries
 * this marker, so it does not count; nor does an ordinary agent turn, whose
 * system prompt carries the engine's "[lossless-wasm]" marker (without
 * ":summarize"). Summaries made by this mock never contain the marker, so a
 * summary that ends up in a later prompt cannot turn that prompt into a
 * "summarization request".
 */
export function isSummarizationRequest(body) {
  const messages = Array.isArray(body?.messages) ? body.messages : [];
  return messages.some(
    (m) =>
      m &&
      (m.role === "system" || m.role === "developer" || m.role === "user") &&
      contentText(m.content).includes(SUMMARIZE_MARKER),
  );
}

/**
 * The mock's answer to summarization request #n: a short markdown summary in the
 * shape the engine asks for. It never contains the marker (a summary that did
 * would make later agent prompts look like summarization requests), and it names
 * "mock-summary-<n>", so tests can find it in the database and in later prompts.
 */
export function summaryText({ n, body }) {
  const source = lastUserText(body).split(SUMMARIZE_MARKER).join("");
  return (
    `## Goal\n- mock-summary-${n}: keep the end-to-end conversation going\n` +
    `## Progress\n- mock-summary-${n} condensed a ${source.length}-char summarization prompt`
  );
}

/** Deterministic filler that pads a reply to exactly `chars` characters (if it is shorter). */
export function padReply(text, chars, n) {
  if (!Number.isFinite(chars) || text.length >= chars) return text;
  let out = text;
  for (let k = 1; out.length < chars; k++) {
    out += ` Filler sentence ${k} of mock reply ${n}, added so that this turn carries enough text.`;
  }
  return out.slice(0, chars);
}

function defaultReply({ n, body, summarization }) {
  if (summarization) return summaryText({ n, body });
  return `Mock reply #${n} to: ${currentUserText(body).slice(0, 40)}`;
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function sendJson(res, status, obj) {
  const data = JSON.stringify(obj);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(data),
  });
  res.end(data);
}

/**
 * Start the mock server.
 * @param {object} opts
 * @param {number} opts.contextWindow  tokens; larger prompts get HTTP 400
 * @param {number} [opts.port=0]       0 = any free port
 * @param {string[]} [opts.models]     ids for GET /v1/models
 * @param {(ctx:{n:number, body:object, summarization:boolean}) => string} [opts.reply]
 *        override the reply text (must be deterministic for tests)
 * @param {"answer"|"fail"} [opts.summaryMode="answer"]
 *        "answer": summarization requests get a normal reply (summaryText);
 *        "fail": every summarization request gets HTTP `summaryFailStatus`
 * @param {number} [opts.summaryFailStatus=500]
 * @param {number} [opts.chatReplyChars]  pad ordinary (non-summarization) replies
 *        to this many characters, so that turns fill the context quickly
 * @param {number} [opts.summaryDelayMs=0]  answer summarization requests only after this
 *        many milliseconds (the client may hang up meanwhile: the record then says `abandoned`)
 * @param {(ctx:{n:number, body:object}) => ({name:string, arguments:object}|null)} [opts.toolCall]
 *        for an agent (non-summarization) request: a tool call to answer with instead
 *        of text (finish_reason "tool_calls"; id "call_mock_<n>"), or null for text.
 *        The host runs the tool and sends its result in the next request.
 * @param {(ctx:{n:number, body:object, summarization:boolean, record:object}) => (Promise|undefined)} [opts.beforeAnswer]
 *        called for every chat request before it is answered; a promise it returns holds the
 *        answer until it settles (a test kills the host meanwhile: the record then says
 *        `abandoned` and nothing is sent). `n` is the number the answer would get.
 *
 * Every request is recorded (`requests`); a chat request's record has
 * `kind` "chat" or "summarization", `status`, `promptTokens`, and `reply`
 * (when answered) or `failed` (when the mock answered with an error on purpose); `time` is
 * when the request arrived, `answeredAt` when its answer was sent, `abandoned` set when the
 * client closed the connection before a delayed answer was ready.
 */
export async function startMockLlm({
  contextWindow,
  port = 0,
  models = ["mock-model"],
  reply,
  summaryMode = "answer",
  summaryFailStatus = 500,
  chatReplyChars,
  toolCall,
  summaryDelayMs = 0,
  beforeAnswer,
} = {}) {
  if (!Number.isFinite(contextWindow) || contextWindow <= 0) {
    throw new Error(`startMockLlm: contextWindow must be a positive number, got ${contextWindow}`);
  }
  if (!Number.isFinite(summaryDelayMs) || summaryDelayMs < 0) {
    throw new Error(`startMockLlm: summaryDelayMs must be a number >= 0, got ${summaryDelayMs}`);
  }
  if (summaryMode !== "answer" && summaryMode !== "fail") {
    throw new Error(`startMockLlm: summaryMode must be "answer" or "fail", got ${summaryMode}`);
  }
  const requests = [];
  let chatCount = 0;
  const makeReply = (ctx) => {
    const text = String((reply ?? defaultReply)(ctx));
    return ctx.summarization ? text : padReply(text, chatReplyChars, ctx.n);
  };

  const server = http.createServer(async (req, res) => {
    let raw = "";
    try {
      raw = await readBody(req);
    } catch {
      res.destroy();
      return;
    }
    const path = (req.url ?? "").split("?")[0].replace(/\/+$/, "");
    let body = null;
    if (raw) {
      try {
        body = JSON.parse(raw);
      } catch {
        body = null;
      }
    }
    const record = {
      index: requests.length,
      time: Date.now(),
      method: req.method,
      path,
      body,
      raw: body == null ? raw : undefined,
      status: 0,
      kind: "other",
    };
    requests.push(record);

    if (req.method === "GET" && path.endsWith("/models")) {
      record.kind = "models";
      record.status = 200;
      sendJson(res, 200, {
        object: "list",
        data: models.map((id) => ({ id, object: "model", created: 0, owned_by: "mock" })),
      });
      return;
    }

    if (req.method !== "POST" || !path.endsWith("/chat/completions")) {
      record.status = 404;
      sendJson(res, 404, { error: { message: `mock: no route ${req.method} ${path}`, type: "not_found" } });
      return;
    }

    if (!body || !Array.isArray(body.messages)) {
      record.kind = "chat";
      record.status = 400;
      sendJson(res, 400, {
        error: { message: "mock: body must be JSON with a messages array", type: "invalid_request_error" },
      });
      return;
    }

    const summarization = isSummarizationRequest(body);
    record.kind = summarization ? "summarization" : "chat";
    record.summarization = summarization;
    const promptTokens = estimatePromptTokens(body);
    record.promptTokens = promptTokens;

    if (promptTokens > contextWindow) {
      record.status = 400;
      record.rejected = "context_length_exceeded";
      sendJson(res, 400, {
        error: {
          code: "context_length_exceeded",
          type: "invalid_request_error",
          param: "messages",
          message:
            `This model's maximum context length is ${contextWindow} tokens. ` +
            `However, your messages resulted in ${promptTokens} tokens. ` +
            `Please reduce the length of the messages.`,
        },
      });
      return;
    }

    if (summarization && summaryDelayMs > 0) {
      // A slow summarizer: the answer is ready only after the delay. A client that gave up
      // (timeout, abort, its process exited) closes the connection; nothing is sent then.
      const hungUp = new Promise((resolve) => res.once("close", resolve));
      const ready = new Promise((resolve) => setTimeout(resolve, summaryDelayMs).unref?.());
      const first = await Promise.race([ready.then(() => "ready"), hungUp.then(() => "closed")]);
      if (first === "closed" || res.destroyed || res.writableEnded) {
        record.abandoned = Date.now();
        record.status = 0;
        return;
      }
    }

    if (beforeAnswer) {
      const hungUp = new Promise((resolve) => res.once("close", resolve));
      const held = beforeAnswer({ n: chatCount + 1, body, summarization, record });
      if (held && typeof held.then === "function") {
        const first = await Promise.race([Promise.resolve(held).then(() => "ready"), hungUp.then(() => "closed")]);
        if (first === "closed" || res.destroyed || res.writableEnded) {
          record.abandoned = Date.now();
          record.status = 0;
          return;
        }
      }
    }

    if (summarization && summaryMode === "fail") {
      record.status = summaryFailStatus;
      record.failed = `HTTP ${summaryFailStatus}`;
      sendJson(res, summaryFailStatus, {
        error: {
          message: `mock: the summarizer is unavailable (HTTP ${summaryFailStatus}, summaryMode "fail")`,
          type: "server_error",
          code: null,
          param: null,
        },
      });
      return;
    }

    chatCount += 1;
    const n = chatCount;
    const call = !summarization && toolCall ? toolCall({ n, body }) : null;
    const text = call ? "" : makeReply({ n, body, summarization });
    const toolCalls = call
      ? [{ id: `call_mock_${n}`, type: "function", function: { name: call.name, arguments: JSON.stringify(call.arguments ?? {}) } }]
      : undefined;
    record.toolCall = call ?? undefined;
    record.n = n;
    record.reply = text;
    record.status = 200;
    record.answeredAt = Date.now();
    const model = typeof body.model === "string" ? body.model : models[0];
    const id = `chatcmpl-mock-${n}`;
    const created = Math.floor(Date.now() / 1000);
    const completionTokens = Math.ceil(text.length / 4);
    const usage = {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
    };

    if (body.stream === true) {
      res.writeHead(200, {
        "content-type": "text/event-stream",
        "cache-control": "no-cache",
        connection: "keep-alive",
      });
      const chunk = (delta, finish_reason = null, extra = {}) =>
        `data: ${JSON.stringify({
          id,
          object: "chat.completion.chunk",
          created,
          model,
          choices: [{ index: 0, delta, finish_reason }],
          ...extra,
        })}\n\n`;
      res.write(chunk({ role: "assistant", content: "" }));
      if (toolCalls) {
        res.write(chunk({ tool_calls: toolCalls.map((c, index) => ({ index, ...c })) }));
        res.write(chunk({}, "tool_calls"));
      } else {
        // A few content pieces, so the client really has to join deltas.
        const pieces = text.match(/.{1,16}/gs) ?? [""];
        for (const p of pieces) res.write(chunk({ content: p }));
        res.write(chunk({}, "stop"));
      }
      if (body.stream_options?.include_usage) {
        res.write(
          `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [], usage })}\n\n`,
        );
      }
      res.write("data: [DONE]\n\n");
      res.end();
      return;
    }

    sendJson(res, 200, {
      id,
      object: "chat.completion",
      created,
      model,
      choices: [
        toolCalls
          ? { index: 0, message: { role: "assistant", content: null, tool_calls: toolCalls }, finish_reason: "tool_calls" }
          : { index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" },
      ],
      usage,
    });
  });

  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const actualPort = server.address().port;

  return {
    url: `http://127.0.0.1:${actualPort}/v1`,
    port: actualPort,
    requests,
    /** Chat requests that are ordinary agent turns (not /models, not summarization). */
    agentTurnRequests() {
      return requests.filter((r) => r.kind === "chat");
    },
    /** Chat requests that carried SUMMARIZE_MARKER (answered or failed). */
    summarizationRequests() {
      return requests.filter((r) => r.kind === "summarization");
    },
    close() {
      return new Promise((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      });
    },
  };
}
