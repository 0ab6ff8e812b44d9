#!/usr/bin/env node
// Serves a real small instruct model (a GGUF file run by llama.cpp through node-llama-cpp's
// prebuilt binaries) behind an OpenAI-compatible chat-completions endpoint on 127.0.0.1, for the
// tests in this folder. Both are installed by scripts/setup.sh (step 6: which registry packages,
// and where outside the clone); nothing here downloads or compiles anything.
//
//   POST /v1/chat/completions  {messages, max_tokens}  non-streaming; greedy decoding (temperature
//                              0, fixed seed), so the same request gets the same answer; one
//                              request at a time, in arrival order
//   GET  /v1/models            the one model served
//   GET  /v1/requests          every request served so far with its answer: what the tests use
//                              to count the summaries asked of the model and to see what it said
//
// Prints one JSON line on stdout once it listens: {"url": "http://127.0.0.1:<port>/v1", "model": …}.
// Usage: node serve-model.mjs [--port N]   (default 0: a free port)
//   LOSSLESS_WASM_MODEL_DIR   where setup.sh installed the model and runtime (default below)
//   LOSSLESS_WASM_MODEL_GGUF  another GGUF file to serve instead of the installed one
//   LOSSLESS_WASM_MODEL_THREADS  CPU threads for llama.cpp (default: the cores left idle, at least 1)
import { existsSync, readdirSync } from "node:fs";
import { createServer } from "node:http";
import { availableParallelism, homedir, loadavg } from "node:os";
import { basename, join } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

export const DEFAULT_MODEL_DIR = join(homedir(), ".cache", "lossless-wasm", "model-smollm2-135m-instruct");
const SEED = 1234;

/**
 * llama.cpp's threads spin while they wait for each other, so one more thread than there are
 * idle cores makes it several times slower (measured here: 40 tokens in 19 s with 2 threads on
 * 2 busy cores, 3.7 s with 1). Use the cores the load average leaves idle, at least one.
 */
function defaultThreads() {
  const cores = availableParallelism();
  return Math.max(1, Math.min(cores, Math.floor(cores - loadavg()[0] + 0.5)));
}

const { values: args } = parseArgs({ options: { port: { type: "string", default: "0" } } });
const modelDir = process.env.LOSSLESS_WASM_MODEL_DIR || DEFAULT_MODEL_DIR;
const ggufPath = process.env.LOSSLESS_WASM_MODEL_GGUF || join(modelDir, readdirSync(modelDir).find((f) => f.endsWith(".gguf")) ?? "missing.gguf");
const runtimeEntry = join(modelDir, "runtime", "node_modules", "node-llama-cpp", "dist", "index.js");
for (const [what, path] of [["model", ggufPath], ["runtime", runtimeEntry]]) {
  if (!existsSync(path)) {
    console.error(`serve-model: the ${what} is not installed at ${path} (run: bash scripts/setup.sh)`);
    process.exit(2);
  }
}

const { getLlama, LlamaChat } = await import(pathToFileURL(runtimeEntry).href);
// build "never": use the prebuilt CPU binary from npm or fail; never download or compile.
const llama = await getLlama({ gpu: false, build: "never", progressLogs: false, logLevel: "error" });
const model = await llama.loadModel({ modelPath: ggufPath });
const contextSize = Math.min(model.trainContextSize ?? 8192, 8192);
const context = await model.createContext({
  contextSize,
  threads: Number(process.env.LOSSLESS_WASM_MODEL_THREADS) || defaultThreads(),
  seed: SEED,
});
const sequence = context.getSequence();
const modelId = basename(ggufPath, ".gguf");

/** OpenAI chat messages -> node-llama-cpp chat history (text parts only). */
function chatHistory(messages) {
  const text = (content) => (typeof content === "string" ? content : Array.isArray(content) ? content.map((p) => p?.text ?? "").join("") : "");
  return messages.map((m) => {
    if (m?.role === "system") return { type: "system", text: text(m.content) };
    if (m?.role === "assistant") return { type: "model", response: [text(m.content)] };
    return { type: "user", text: text(m?.content) };
  });
}

const served = [];
let queue = Promise.resolve();

/** One completion, alone on the sequence: its history is cleared first, so answers never depend on earlier requests. */
async function complete(body, signal) {
  if (!Array.isArray(body?.messages) || body.messages.length === 0) throw Object.assign(new Error("messages must be a non-empty array"), { status: 400 });
  const history = chatHistory(body.messages);
  const promptText = history.map((h) => h.text ?? h.response?.join("") ?? "").join("\n");
  const promptTokens = model.tokenize(promptText).length;
  const room = contextSize - promptTokens - 64;
  if (room <= 0) {
    throw Object.assign(new Error(`the prompt (${promptTokens} tokens) does not fit the context window (${contextSize})`), { status: 400, code: "context_length_exceeded" });
  }
  const asked = Number.isInteger(body.max_tokens) && body.max_tokens > 0 ? body.max_tokens : room;
  const maxTokens = Math.min(asked, room);
  await sequence.clearHistory();
  const meterBefore = sequence.tokenMeter.getState();
  const chat = new LlamaChat({ contextSequence: sequence, autoDisposeSequence: false });
  const started = Date.now();
  try {
    const { response, metadata } = await chat.generateResponse(history.concat([{ type: "model", response: [] }]), {
      maxTokens, temperature: 0, seed: SEED, signal, stopOnAbortSignal: true,
    });
    const meter = sequence.tokenMeter.diff(meterBefore);
    const finishReason = metadata.stopReason === "maxTokens" ? "length" : "stop";
    const usage = { prompt_tokens: meter.usedInputTokens, completion_tokens: meter.usedOutputTokens, total_tokens: meter.usedInputTokens + meter.usedOutputTokens };
    return { content: response, finishReason, usage, maxTokens, ms: Date.now() - started };
  } finally {
    chat.dispose({ disposeSequence: false });
  }
}

function reply(res, status, json) {
  if (res.destroyed) return; // the client gave up (a summary timeout): nobody to answer
  const body = JSON.stringify(json);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  res.end(body);
}

const server = createServer((req, res) => {
  if (req.method === "GET" && req.url === "/v1/models") return reply(res, 200, { object: "list", data: [{ id: modelId, object: "model", owned_by: "local" }] });
  if (req.method === "GET" && req.url === "/v1/requests") return reply(res, 200, { requests: served });
  if (req.method !== "POST" || req.url !== "/v1/chat/completions") return reply(res, 404, { error: { message: `no route ${req.method} ${req.url}` } });
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const abort = new AbortController();
    res.on("close", () => { if (!res.writableFinished) abort.abort(); });
    queue = queue.then(async () => {
      let body;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        return reply(res, 400, { error: { message: "the body is not JSON", type: "invalid_request_error" } });
      }
      try {
        if (abort.signal.aborted) return;
        const startedAt = Date.now();
        const out = await complete(body, abort.signal);
        const prompt = body.messages.map((m) => (typeof m?.content === "string" ? m.content : "")).join("\n");
        served.push({ index: served.length, prompt, maxTokens: out.maxTokens, content: out.content, finishReason: out.finishReason, usage: out.usage, ms: out.ms, startedAt, aborted: abort.signal.aborted });
        reply(res, 200, {
          id: `chatcmpl-${served.length}`, object: "chat.completion", created: Math.floor(Date.now() / 1000), model: modelId,
          choices: [{ index: 0, message: { role: "assistant", content: out.content }, finish_reason: out.finishReason }],
          usage: out.usage,
        });
      } catch (err) {
        reply(res, err.status ?? 500, { error: { message: String(err?.message ?? err), type: err.status === 400 ? "invalid_request_error" : "server_error", code: err.code } });
      }
    });
  });
});

server.listen(Number(args.port), "127.0.0.1", () => {
  const { port } = server.address();
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}/v1`, model: modelId, contextSize, threads: context.currentThreads })}\n`);
});
for (const signal of ["SIGTERM", "SIGINT"]) process.on(signal, () => { server.close(); process.exit(0); });
