// Deterministic agent transcripts for the host-path benchmark. Two shapes:
//  - "mixed": tool-loop turns (prompt, assistant tool call, tool result of 0.2-3 KB, answer)
//    mixed with short chat turns; about 800 bytes of JSON per message on average;
//  - "short": ~170-byte chat messages, so a 128K budget shows about 5,000 of them: the largest
//    view per token and the worst case for per-turn costs that grow with the view.
// Each message carries a timestamp, as the host's do, so message identities are distinct.
import { prng } from "../../tests/js/prng.mjs";

const WORDS = ("the file test module function error build compile cache budget summary index query " +
  "request response token window context message session agent tool result value config path " +
  "line change patch review commit branch merge parse render store search expand describe").split(" ");

function sentence(rand, chars) {
  const out = [];
  let length = 0;
  while (length < chars) {
    const word = WORDS[Math.floor(rand() * WORDS.length)];
    out.push(word);
    length += word.length + 1;
  }
  return `${out.join(" ")}.`;
}

/** An endless generator of host messages in turns; `turn()` returns the next turn's messages. */
export function transcript(shape = "mixed", seed = 7) {
  if (shape !== "mixed" && shape !== "short") throw new Error(`unknown transcript shape ${JSON.stringify(shape)}`);
  const rand = prng(seed);
  let ts = 1_790_000_000_000;
  let n = 0;
  const user = (text) => ({ role: "user", content: text, timestamp: ts++ });
  const assistant = (content) => ({ role: "assistant", content, api: "openai-completions", provider: "mock", model: "mock-1", usage: { input: 1200, output: 80, cacheRead: 0, cacheWrite: 0, totalTokens: 1280 }, stopReason: "stop", timestamp: ts++ });
  const short = () => {
    const i = n++;
    return [
      user(`user message ${i}: please look at file src/module_${i % 97}.rs and fix the failing test`),
      assistant([{ type: "text", text: `Assistant reply ${i}. I read the file, changed two lines and the test passes now.` }]),
    ];
  };
  const mixed = () => {
    const i = n++;
    if (rand() < 0.35) return [user(sentence(rand, 40 + rand() * 200)), assistant([{ type: "text", text: sentence(rand, 100 + rand() * 600) }])];
    const id = `call_${i}`;
    return [
      user(`task ${i}: ${sentence(rand, 60 + rand() * 240)}`),
      assistant([{ type: "text", text: sentence(rand, 30 + rand() * 150) }, { type: "toolCall", id, name: "read", arguments: { path: `src/module_${i % 97}.rs` } }]),
      { role: "toolResult", toolCallId: id, toolName: "read", content: [{ type: "text", text: sentence(rand, 200 + rand() * 2800) }], isError: false, timestamp: ts++ },
      assistant([{ type: "text", text: sentence(rand, 100 + rand() * 700) }]),
    ];
  };
  return { turn: shape === "short" ? short : mixed };
}

/** The bytes the host's own JSONL transcript takes for these messages: one `message` entry per
 *  line, with the entry envelope (type, id, parentId, ISO timestamp) the host writes. */
export function transcriptBytes(list) {
  let bytes = 0;
  let parent = null;
  list.forEach((message, i) => {
    const id = (0x10000000 + i).toString(16);
    const line = JSON.stringify({ type: "message", id, parentId: parent, timestamp: new Date(message.timestamp ?? 0).toISOString(), message });
    bytes += Buffer.byteLength(line) + 1;
    parent = id;
  });
  return bytes;
}
