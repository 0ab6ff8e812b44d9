// The shim's OpenAI-compatible client (js-shim/operator/openai-llm.js) against a local endpoint: what it
// sends, and how it reports the API's finish_reason, so an answer cut off at the output limit
// reaches the engine as stopReason "length" rather than as a finished summary.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { after, before, test } from "node:test";
import { PKG } from "../support.mjs";

const { createOpenAiLlm } = await import(new URL("shim/operator/openai-llm.js", PKG));

let server;
let baseUrl;
const seen = [];
// Each request's `model` picks the answer: "cut" stops at max_tokens, "done" finishes.
before(async () => {
  server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      seen.push({ url: req.url, auth: req.headers.authorization, body });
      const finish = body.model === "cut" ? "length" : "stop";
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ model: `${body.model}-served`, choices: [{ index: 0, message: { role: "assistant", content: `answer of ${body.model}` }, finish_reason: finish }] }));
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${server.address().port}/v1/`;
});
after(() => server.close());

test("an answer cut off at the output limit comes back as stopReason length", async () => {
  const result = await createOpenAiLlm({ baseUrl, model: "cut" }).complete({ messages: [{ role: "user", content: "summarize" }], maxTokens: 64 });
  assert.equal(seen.at(-1).url, "/v1/chat/completions", "the request reached the endpoint");
  assert.deepEqual(result, { text: "answer of cut", model: "cut-served", stopReason: "length" });
});

test("a finished answer comes back as stopReason stop, with max_tokens and the key sent", async () => {
  const result = await createOpenAiLlm({ baseUrl, model: "done", apiKey: "k-123" }).complete({ messages: [{ role: "user", content: "summarize" }], maxTokens: 64 });
  const request = seen.at(-1);
  assert.equal(request.body.max_tokens, 64);
  assert.equal(request.body.stream, false);
  assert.equal(request.auth, "Bearer k-123");
  assert.equal(result.stopReason, "stop");
});
