//! A deterministic 200-turn tool-heavy coding session, as the host would commit it turn by turn:
//! a user request, then one to five tool rounds (an assistant message with a tool call and the
//! tool's result), then the assistant's answer. Tools: file reads (whole files of a 60-file
//! project, re-read after edits and sometimes unchanged), greps, test runs (the same output
//! again when nothing was edited in between: "the same test output twice in a row"), edits, and
//! twice in the session a huge log dump (~45K tokens). A fixed seed makes every run identical.

use serde_json::{json, Value};

/// xorshift64*: deterministic, no dependency.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next() % (hi - lo + 1) as u64) as usize
    }
    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.range(0, items.len() - 1)]
    }
}

const WORDS: &[&str] = &[
    "parser", "token", "span", "buffer", "index", "cache", "lookup", "offset", "render", "frame",
    "value", "result", "error", "config", "budget", "summary", "message", "context", "engine",
    "store", "query", "commit", "batch", "window", "limit", "state", "event", "reader", "writer",
    "handle", "stream", "chunk", "node", "edge", "graph", "level", "depth", "count",
];

/// `tokens` worth (~4 chars each) of code-like lines, deterministic in `seed`.
fn code(seed: u64, tokens: usize) -> String {
    let mut rng = Rng::new(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x5555);
    let mut out = String::with_capacity(tokens * 4 + 64);
    let mut line = 1;
    while out.len() < tokens * 4 {
        let (a, b, c) = (rng.pick(WORDS), rng.pick(WORDS), rng.pick(WORDS));
        match rng.range(0, 4) {
            0 => out.push_str(&format!(
                "{line:>4}  fn {a}_{b}(&mut self, {c}: usize) -> Result<{}> {{\n",
                rng.range(1, 9)
            )),
            1 => out.push_str(&format!(
                "{line:>4}      let {a} = self.{b}.get({c}).ok_or(Error::Missing)?;\n"
            )),
            2 => out.push_str(&format!(
                "{line:>4}      // {a} keeps the {b} in step with the {c}\n"
            )),
            3 => out.push_str(&format!(
                "{line:>4}      self.{a}.push({b}_{c}({}));\n",
                rng.range(0, 99)
            )),
            _ => out.push_str(&format!("{line:>4}  }}\n")),
        }
        line += 1;
    }
    out
}

fn grep_output(seed: u64, pattern: &str, tokens: usize) -> String {
    let mut rng = Rng::new(seed ^ 0xabcd);
    let mut out = String::new();
    while out.len() < tokens * 4 {
        out.push_str(&format!(
            "src/mod_{}.rs:{}:    let {pattern}_{} = self.{}.{}();\n",
            rng.range(0, 59),
            rng.range(1, 900),
            rng.pick(WORDS),
            rng.pick(WORDS),
            rng.pick(WORDS)
        ));
    }
    out
}

fn test_output(state: u64, tokens: usize, failing: bool) -> String {
    let mut rng = Rng::new(state.wrapping_mul(31) ^ 0x7777);
    let mut out = String::from("   Compiling app v0.1.0 (/work/app)\n    Finished test [unoptimized + debuginfo] target(s) in 4.21s\n     Running unittests src/lib.rs\n\n");
    let mut n = 0;
    while out.len() < tokens * 4 {
        let ok = !failing || rng.range(0, 9) > 0;
        out.push_str(&format!(
            "test {}::{}_{} ... {}\n",
            rng.pick(WORDS),
            rng.pick(WORDS),
            n,
            if ok { "ok" } else { "FAILED" }
        ));
        if !ok {
            out.push_str(&format!("---- {} stdout ----\nthread 'main' panicked at src/mod_{}.rs:{}:9:\nassertion `left == right` failed\n  left: {}\n right: {}\n", rng.pick(WORDS), rng.range(0, 59), rng.range(1, 900), rng.range(0, 99), rng.range(0, 99)));
        }
        n += 1;
    }
    out.push_str(if failing {
        "\ntest result: FAILED. some tests failed\nerror: test failed, to rerun pass `--lib`\n"
    } else {
        "\ntest result: ok.\n"
    });
    out
}

/// One committed turn, and how many model calls it made (one per assistant message).
pub struct Turn {
    pub messages: Vec<Value>,
    pub prompt: String,
}

/// Generates the session turn by turn.
pub struct Session {
    rng: Rng,
    /// Token size and version of each project file; an edit bumps the version (new content).
    files: Vec<(usize, u64)>,
    /// Bumped by every edit: tests give the same output while it stays the same.
    test_state: u64,
    failing: bool,
    /// The last tool of the previous turn was a test run: start this one by running them again.
    rerun_tests: bool,
    next_call: usize,
    clock: i64,
}

impl Session {
    pub fn new(seed: u64) -> Session {
        let mut rng = Rng::new(seed);
        let files = (0..60).map(|_| (rng.range(1_500, 10_000), 0)).collect();
        Session {
            rng,
            files,
            test_state: 1,
            failing: true,
            rerun_tests: false,
            next_call: 0,
            clock: 1_750_000_000_000,
        }
    }

    fn tick(&mut self) -> i64 {
        self.clock += self.rng.range(2_000, 40_000) as i64;
        self.clock
    }

    fn prose(&mut self, tokens: usize) -> String {
        let mut out = String::new();
        while out.len() < tokens * 4 {
            out.push_str(self.rng.pick(WORDS));
            out.push(' ');
        }
        out
    }

    /// A tool call and its output: (name, arguments, output, isError).
    fn tool(&mut self, turn: usize, round: usize) -> (String, Value, String, bool) {
        if (turn == 70 || turn == 140) && round == 0 {
            let tokens = 45_000;
            return (
                "bash".into(),
                json!({"command": "cat logs/server.log"}),
                code(turn as u64 * 7919, tokens),
                false,
            );
        }
        if round == 0 && self.rerun_tests {
            self.rerun_tests = false;
            return self.run_tests(6_000);
        }
        match self.rng.range(0, 9) {
            0..=3 => {
                let f = self.rng.range(0, self.files.len() - 1);
                let (tokens, version) = self.files[f];
                (
                    "read".into(),
                    json!({"path": format!("src/mod_{f}.rs")}),
                    code((f as u64) << 20 | version, tokens),
                    false,
                )
            }
            4 | 5 => {
                let pattern = self.rng.pick(WORDS).to_owned();
                let tokens = self.rng.range(300, 3_000);
                let seed = self.rng.next();
                (
                    "grep".into(),
                    json!({"pattern": pattern, "path": "src"}),
                    grep_output(seed, &pattern, tokens),
                    false,
                )
            }
            6 | 7 => {
                let size = self.rng.range(2_000, 7_000);
                let out = self.run_tests(size);
                // Often the agent runs the tests again next turn before changing anything.
                self.rerun_tests = self.rng.range(0, 2) == 0;
                out
            }
            _ => {
                let f = self.rng.range(0, self.files.len() - 1);
                self.files[f].1 += 1;
                self.test_state += 1;
                self.failing = self.rng.range(0, 2) > 0;
                let old = self.prose(12);
                let new = self.prose(14);
                (
                    "edit".into(),
                    json!({"path": format!("src/mod_{f}.rs"), "old": old, "new": new}),
                    format!("Edited src/mod_{f}.rs: 1 hunk, 3 lines changed."),
                    false,
                )
            }
        }
    }

    fn run_tests(&mut self, tokens: usize) -> (String, Value, String, bool) {
        // The output depends only on the project's state: a rerun without edits is identical.
        let size = 2_000 + (self.test_state as usize * 977) % tokens.max(2_001);
        (
            "bash".into(),
            json!({"command": "cargo test"}),
            test_output(self.test_state, size, self.failing),
            self.failing,
        )
    }

    /// The next turn's messages, as the host commits them.
    pub fn turn(&mut self, t: usize) -> Turn {
        let request = format!("Turn {t}: {}", {
            let n = self.rng.range(30, 250);
            self.prose(n)
        });
        let mut messages =
            vec![json!({"role": "user", "content": request.clone(), "timestamp": self.tick()})];
        let rounds = self.rng.range(1, 5);
        for round in 0..rounds {
            let (name, args, output, is_error) = self.tool(t, round);
            let id = format!("call_{}", self.next_call);
            self.next_call += 1;
            let n = self.rng.range(10, 60);
            let say = self.prose(n);
            messages.push(json!({"role": "assistant", "content": [{"type": "text", "text": say}, {"type": "toolCall", "id": id, "name": name, "arguments": args}], "timestamp": self.tick()}));
            messages.push(json!({"role": "toolResult", "toolCallId": id, "toolName": name, "content": [{"type": "text", "text": output}], "isError": is_error, "timestamp": self.tick()}));
        }
        let n = self.rng.range(80, 500);
        let answer = self.prose(n);
        messages.push(json!({"role": "assistant", "content": [{"type": "text", "text": answer}], "timestamp": self.tick()}));
        Turn {
            messages,
            prompt: request,
        }
    }
}
