// Generates demo/transcript.json: a deterministic coding-agent session (user requests, assistant
// replies with tool calls, tool results) used by the demo and benchmarks. Re-run to regenerate:
//   node demo/make-transcript.mjs > demo/transcript.json
const files = ["src/parser.rs", "src/lexer.rs", "src/main.rs", "tests/parse.rs", "README.md", "Cargo.toml"];
const tasks = [
  "Add support for trailing commas in arrays",
  "The lexer panics on an unterminated string; make it return an error",
  "Write a test for nested objects with unicode keys like 静默 and 🎉",
  "Why is parsing a 10 MB file slow? Profile it",
  "Rename Token::Ident to Token::Identifier everywhere",
  "Document the public API in README.md",
  "Fix the clippy warnings",
  "Add a --pretty flag to the CLI",
];
let t = Date.UTC(2026, 10, 1, 9, 0, 0);
const tick = () => (t += 7_000 + ((t / 1000) % 13) * 1_000);
const messages = [];
let call = 0;
for (let round = 0; messages.length < 600; round++) {
  const task = tasks[round % tasks.length];
  messages.push({ role: "user", content: `${task} (request ${round + 1})`, timestamp: tick() });
  const steps = 2 + (round % 3);
  for (let s = 0; s < steps; s++) {
    const file = files[(round + s) % files.length];
    const id = `call_${++call}`;
    const command = s % 2 === 0 ? `cat ${file}` : `cargo test --quiet ${file.split("/").pop().replace(/\..*$/, "")}`;
    messages.push({
      role: "assistant",
      content: [
        { type: "text", text: s === 0 ? `Looking at ${file} first.` : `Checking the result after editing ${file}.` },
        { type: "toolCall", id, name: "bash", arguments: { command } },
      ],
      api: "openai-completions", provider: "demo", model: "demo-model", stopReason: "toolUse",
      usage: { input: 1000 + messages.length * 40, output: 60 }, timestamp: tick(),
    });
    const failed = (round + s) % 5 === 3;
    const output = failed
      ? `error[E0308]: mismatched types\n  --> ${file}:${40 + s}:9\n   |\n   = note: expected \`Result<Token, LexError>\`, found \`Token\``
      : `${command.startsWith("cat") ? `// ${file}\n` + "fn example() { /* ... */ }\n".repeat(8) : "running 12 tests\ntest result: ok. 12 passed; 0 failed"}`;
    messages.push({ role: "toolResult", toolCallId: id, toolName: "bash", content: [{ type: "text", text: output }], isError: failed, timestamp: tick() });
  }
  messages.push({
    role: "assistant",
    content: [{ type: "text", text: `Done: ${task.toLowerCase()}. I changed ${files[round % files.length]} and the tests pass.` }],
    api: "openai-completions", provider: "demo", model: "demo-model", stopReason: "stop",
    usage: { input: 1200 + messages.length * 40, output: 80 }, timestamp: tick(),
  });
}
process.stdout.write(JSON.stringify({ sessionId: "demo-session-1", sessionKey: "agent:main:demo", messages }, null, 1) + "\n");
