//! What a stubbed message looks like in the view, byte for byte (same inputs, same bytes, so the
//! provider's prompt-cache prefix stays stable), and what the summarizer is shown of it.
//!
//! A **line stub** replaces an old tool output (a `toolResult`, or a `bashExecution`'s output)
//! by one line, keeping the message's role, `toolCallId`, `toolName`, `isError` and timestamp so
//! the call/result pairing the providers require is untouched:
//!
//! `[tool output stored: bash {"command":"cargo test"} → 4,812 tokens, 210 lines, error; lcm_expand {"messageId": 123}]`
//!
//! An older copy of an output that a newer one repeats exactly (same tool, arguments and
//! content) says so: `…, error; identical to the newer output in message 130; lcm_expand …`.
//!
//! An **excerpt** replaces a huge message of any role by its head and its tail, a line saying
//! how much was left out, and its stub line (`…; head and tail shown above; lcm_expand …`). An
//! assistant message keeps its tool-call blocks, so its results stay paired.
//!
//! The host's `details` of a tool result (UI data, often a second copy of the output) are left
//! out of a stub. Nothing here reads a store: the engine passes the stored message in.

use serde_json::{json, Map, Value};

use crate::core::compaction::ledger::one_line;
use crate::core::message::{parse_message, text_of_raw_json, text_of_value, Role};
use crate::core::tokens::char_quarters;
use crate::error::{Error, Result, StorageErrorKind};

/// The handover variant of a line stub (see [`excerpt_variant`] for excerpts).
pub const STUB_LINE_VARIANT: i64 = 1;
/// Longest rendering of a tool call's arguments in a stub line, in characters.
pub const ARGS_MAX_CHARS: usize = 80;
/// What the summarizer sees of a stubbed output besides its stub line: this many characters of
/// its head (and [`SUMMARY_TAIL_CHARS`] of its tail).
pub const SUMMARY_HEAD_CHARS: usize = 160;
/// Characters of a stubbed output's tail the summarizer sees (see [`SUMMARY_HEAD_CHARS`]).
pub const SUMMARY_TAIL_CHARS: usize = 80;
/// The smallest excerpt, in tokens (head and tail together).
pub const MIN_EXCERPT_TOKENS: u32 = 256;
/// The largest excerpt, in tokens (head and tail together).
pub const MAX_EXCERPT_TOKENS: u32 = 16_384;

/// The call a tool result answers: its tool's name and its arguments as compact JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolCall<'a> {
    /// The tool's name.
    pub name: &'a str,
    /// The call's arguments as compact JSON.
    pub arguments: &'a str,
}

/// A stored message, as stubbing needs it.
#[derive(Debug, Clone, Copy)]
pub struct Original<'a> {
    /// Row id in `messages`.
    pub message_id: i64,
    /// The message's role.
    pub role: Role,
    /// The message as stored, parsed.
    pub value: &'a Value,
    /// Its stored token count.
    pub tokens: u32,
    /// For a tool result: the call it answers, when known.
    pub call: Option<ToolCall<'a>>,
}

/// A message as the view shows it instead of the stored one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    /// The message's JSON as the view shows it.
    pub json: String,
    /// Its tokens, counted as ingestion counts a message.
    pub tokens: u32,
    /// [`STUB_LINE_VARIANT`] or an [`excerpt_variant`]: with the message id, it names these
    /// exact bytes (the view's handover key).
    pub variant: i64,
    /// The stub line it carries.
    pub line: String,
}

fn object<'a>(original: &Original<'a>) -> Result<&'a Map<String, Value>> {
    original
        .value
        .as_object()
        .ok_or_else(|| Error::unexpected_data("a stored message is not a JSON object"))
}

/// `4812` → `4,812`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn is_tool_output(role: Role) -> bool {
    matches!(role, Role::ToolResult | Role::BashExecution)
}

/// The tool's name, its clipped arguments, and whether it failed.
fn tool_facts(original: &Original<'_>, obj: &Map<String, Value>) -> (String, String, bool) {
    match original.role {
        Role::BashExecution => {
            let command = obj
                .get("command")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let failed = obj
                .get("exitCode")
                .and_then(Value::as_i64)
                .is_some_and(|c| c != 0)
                || obj.get("cancelled").and_then(Value::as_bool) == Some(true);
            ("bash".to_owned(), one_line(command, ARGS_MAX_CHARS), failed)
        }
        _ => {
            let stored_name = obj.get("toolName").and_then(Value::as_str);
            let name = original
                .call
                .map(|c| c.name)
                .or(stored_name)
                .filter(|n| !n.is_empty())
                .unwrap_or("tool");
            let args = original
                .call
                .map_or_else(String::new, |c| one_line(c.arguments, ARGS_MAX_CHARS));
            (
                one_line(name, ARGS_MAX_CHARS),
                args,
                obj.get("isError").and_then(Value::as_bool) == Some(true),
            )
        }
    }
}

/// The stub line of `original`. `text` is what the model read of it (for the line count).
fn stub_line(
    original: &Original<'_>,
    obj: &Map<String, Value>,
    text: &str,
    same_as: Option<i64>,
    excerpt: bool,
) -> String {
    let size = format!(
        "{} tokens, {} lines",
        thousands(u64::from(original.tokens)),
        thousands(text.lines().count() as u64)
    );
    let shown = if excerpt {
        "; head and tail shown above"
    } else {
        ""
    };
    let expand = format!("lcm_expand {{\"messageId\": {}}}", original.message_id);
    if !is_tool_output(original.role) {
        return format!(
            "[message stored: {} → {size}{shown}; {expand}]",
            original.role.as_str()
        );
    }
    let (name, args, failed) = tool_facts(original, obj);
    let call = if args.is_empty() {
        name
    } else {
        format!("{name} {args}")
    };
    let status = if failed { "error" } else { "ok" };
    let same = same_as.map_or_else(String::new, |id| {
        format!("; identical to the newer output in message {id}")
    });
    format!("[tool output stored: {call} → {size}, {status}{same}{shown}; {expand}]")
}

fn finish(obj: Map<String, Value>, variant: i64, line: String) -> Result<Rendered> {
    let value = Value::Object(obj);
    let tokens = parse_message(&value, "stub")?.tokens;
    Ok(Rendered {
        json: value.to_string(),
        tokens,
        variant,
        line,
    })
}

/// A tool output's line stub (`same_as`: the newer message that repeats it exactly). Only tool
/// outputs have line stubs.
pub fn render_line(original: &Original<'_>, same_as: Option<i64>) -> Result<Rendered> {
    if !is_tool_output(original.role) {
        return Err(Error::storage(
            StorageErrorKind::Other,
            format!(
                "only tool outputs get a line stub, not a {} message",
                original.role.as_str()
            ),
        ));
    }
    let stored = object(original)?;
    let text = excerpt_source(original.role, original.value)?;
    let line = stub_line(original, stored, &text, same_as, false);
    // Every field but the output, in order (the output itself is never copied).
    let output = if original.role == Role::BashExecution {
        "output"
    } else {
        "content"
    };
    let mut obj = Map::with_capacity(stored.len());
    for (key, value) in stored {
        if key == output {
            obj.insert(
                key.clone(),
                if output == "output" {
                    Value::String(line.clone())
                } else {
                    json!([{ "type": "text", "text": line }])
                },
            );
        } else if key != "details" {
            obj.insert(key.clone(), value.clone());
        }
    }
    finish(obj, STUB_LINE_VARIANT, line)
}

/// The excerpt size (head and tail together) for a huge-message limit: a power of two, so the
/// few sizes there are each have their own [`excerpt_variant`].
pub fn excerpt_tokens(share: u32) -> u32 {
    let capped = share.clamp(MIN_EXCERPT_TOKENS, MAX_EXCERPT_TOKENS);
    1 << (31 - capped.leading_zeros())
}

/// The handover variant of an excerpt of `tokens` (a value [`excerpt_tokens`] returned).
pub fn excerpt_variant(tokens: u32) -> i64 {
    let k = (tokens.max(MIN_EXCERPT_TOKENS) / MIN_EXCERPT_TOKENS).ilog2();
    2 + i64::from(k)
}

/// The longest head of `text` within `tokens`, ending at a line break when one is near.
fn head_within(text: &str, tokens: u32) -> &str {
    let limit = u64::from(tokens) * 4;
    let mut used = 0;
    let mut cut = text.len();
    for (i, c) in text.char_indices() {
        used += char_quarters(c);
        if used > limit {
            cut = i;
            break;
        }
    }
    let head = &text[..cut];
    match head.rfind('\n') {
        Some(nl) if cut < text.len() && nl >= cut / 2 => &head[..nl],
        _ => head,
    }
}

/// The longest tail of `text` within `tokens`, starting after a line break when one is near.
fn tail_within(text: &str, tokens: u32) -> &str {
    let limit = u64::from(tokens) * 4;
    let mut used = 0;
    let mut cut = 0;
    for (i, c) in text.char_indices().rev() {
        used += char_quarters(c);
        if used > limit {
            cut = i + c.len_utf8();
            break;
        }
    }
    let tail = &text[cut..];
    match tail.find('\n') {
        Some(nl) if cut > 0 && nl <= tail.len() / 2 => &tail[nl + 1..],
        _ => tail,
    }
}

/// The text an excerpt is cut from, per role: what the model reads of the message.
fn excerpt_source(role: Role, value: &Value) -> Result<String> {
    Ok(match role {
        Role::Assistant => value
            .get("content")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        Role::BashExecution => value
            .get("output")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        _ => text_of_value(value)?,
    })
}

/// A huge message's excerpt of about `tokens` (head and tail together), or None when it would
/// not be shorter than the message.
pub fn render_excerpt(original: &Original<'_>, tokens: u32) -> Result<Option<Rendered>> {
    let mut obj = object(original)?.clone();
    let source = excerpt_source(original.role, original.value)?;
    let head = head_within(&source, tokens / 2);
    let tail = tail_within(&source[head.len()..], tokens / 2);
    if head.len() + tail.len() >= source.len() {
        return Ok(None);
    }
    let line = stub_line(original, &obj, &source, None, true);
    let shown = crate::core::tokens::estimate_text(head) + crate::core::tokens::estimate_text(tail);
    let left_out = thousands(u64::from(original.tokens.saturating_sub(shown)));
    let body = format!("{head}\n[… about {left_out} tokens of this message left out of the view …]\n{tail}\n{line}");
    match original.role {
        Role::Assistant => {
            let calls: Vec<Value> = obj
                .get("content")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("toolCall"))
                .cloned()
                .collect();
            let mut content = vec![json!({ "type": "text", "text": body })];
            content.extend(calls);
            obj.insert("content".to_owned(), Value::Array(content));
        }
        Role::BashExecution => {
            obj.insert("output".to_owned(), Value::String(body));
        }
        Role::CompactionSummary | Role::BranchSummary => {
            obj.insert("summary".to_owned(), Value::String(body));
        }
        Role::User if obj.get("content").is_some_and(Value::is_string) => {
            obj.insert("content".to_owned(), Value::String(body));
        }
        Role::User | Role::Custom | Role::ToolResult => {
            obj.insert(
                "content".to_owned(),
                json!([{ "type": "text", "text": body }]),
            );
            obj.remove("details");
        }
    }
    let rendered = finish(obj, excerpt_variant(tokens), line)?;
    Ok((rendered.tokens < original.tokens).then_some(rendered))
}

/// The stub line a rendered stub or excerpt carries, read back from its JSON: the last line of
/// its text that is one (an assistant's tool calls render after it).
pub fn stub_line_of(view_json: &str) -> Option<String> {
    let text = text_of_raw_json(view_json).ok()?;
    text.lines()
        .rev()
        .find(|l| l.starts_with("[tool output stored:") || l.starts_with("[message stored:"))
        .map(str::to_owned)
}

/// What the summarizer is shown of a stubbed output: the head and tail of its stored text (so a
/// summary still knows which test failed and how), then the stub line the model saw.
pub fn summarizer_text(stored_text: &str, line: &str) -> String {
    let total = stored_text.chars().count();
    if total <= SUMMARY_HEAD_CHARS + SUMMARY_TAIL_CHARS + 16 {
        return format!("{}\n{line}", stored_text.trim_end());
    }
    let head: String = stored_text.chars().take(SUMMARY_HEAD_CHARS).collect();
    let tail: String = stored_text
        .chars()
        .skip(total - SUMMARY_TAIL_CHARS)
        .collect();
    format!("{} […] {}\n{line}", head.trim_end(), tail.trim())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::tokens::estimate_text;

    fn result_json(text: &str, is_error: bool) -> Value {
        json!({"role": "toolResult", "toolCallId": "call_7", "toolName": "bash", "content": [{"type": "text", "text": text}], "details": {"stdout": text}, "isError": is_error, "timestamp": 42})
    }

    fn original(raw: &Value, tokens: u32) -> Original<'_> {
        Original {
            message_id: 123,
            role: Role::ToolResult,
            value: raw,
            tokens,
            call: Some(ToolCall {
                name: "bash",
                arguments: r#"{"command":"cargo test"}"#,
            }),
        }
    }

    #[test]
    fn a_line_stub_names_the_tool_arguments_size_status_and_the_expand_id() {
        let raw = result_json(&"test x ... FAILED\n".repeat(210), true);
        let stub = render_line(&original(&raw, 4_812), None).unwrap();
        assert_eq!(
            stub.line,
            r#"[tool output stored: bash {"command":"cargo test"} → 4,812 tokens, 210 lines, error; lcm_expand {"messageId": 123}]"#
        );
        let value: Value = serde_json::from_str(&stub.json).unwrap();
        assert_eq!(
            value["toolCallId"], "call_7",
            "the pairing with the call is kept"
        );
        assert_eq!(value["isError"], true);
        assert_eq!(value["timestamp"], 42);
        assert!(
            value.get("details").is_none(),
            "the host's UI copy is left out"
        );
        assert_eq!(value["content"][0]["text"], stub.line);
        assert_eq!(stub.tokens, parse_message(&value, "t").unwrap().tokens);
        assert!(
            stub.tokens < 80,
            "a stub is one short line: {} tokens",
            stub.tokens
        );
        assert_eq!(stub.variant, STUB_LINE_VARIANT);
        assert_eq!(
            stub_line_of(&stub.json).as_deref(),
            Some(stub.line.as_str())
        );
    }

    #[test]
    fn stubs_are_deterministic_and_say_when_a_newer_copy_is_identical() {
        let raw = result_json("ok\n", false);
        let a = render_line(&original(&raw, 900), Some(130)).unwrap();
        assert_eq!(
            a,
            render_line(&original(&raw, 900), Some(130)).unwrap(),
            "same inputs, same bytes"
        );
        assert!(
            a.line
                .contains(", ok; identical to the newer output in message 130; lcm_expand"),
            "{}",
            a.line
        );
    }

    #[test]
    fn long_arguments_are_clipped_and_unknown_calls_still_render() {
        let raw = result_json("x", false);
        let long_args = format!(r#"{{"pattern":"{}"}}"#, "a".repeat(300));
        let mut o = original(&raw, 500);
        o.call = Some(ToolCall {
            name: "grep",
            arguments: &long_args,
        });
        let line = render_line(&o, None).unwrap().line;
        assert!(
            line.contains(&format!("grep {}…", &long_args[..ARGS_MAX_CHARS])),
            "{line}"
        );
        o.call = None;
        assert!(
            render_line(&o, None)
                .unwrap()
                .line
                .starts_with("[tool output stored: bash → 500 tokens"),
            "the stored toolName stands in"
        );
    }

    #[test]
    fn bash_executions_keep_their_command_and_only_tool_outputs_get_line_stubs() {
        let raw = json!({"role": "bashExecution", "command": "make all", "output": "cc -o x\n".repeat(50), "exitCode": 2, "timestamp": 1});
        let o = Original {
            message_id: 9,
            role: Role::BashExecution,
            value: &raw,
            tokens: 300,
            call: None,
        };
        let stub = render_line(&o, None).unwrap();
        assert!(
            stub.line
                .starts_with("[tool output stored: bash make all → 300 tokens, 50 lines, error;"),
            "{}",
            stub.line
        );
        let value: Value = serde_json::from_str(&stub.json).unwrap();
        assert_eq!(value["command"], "make all");
        let user = json!({"role": "user", "content": "hi"});
        assert!(render_line(
            &Original {
                message_id: 1,
                role: Role::User,
                value: &user,
                tokens: 5,
                call: None
            },
            None
        )
        .is_err());
        assert!(render_line(
            &Original {
                message_id: 1,
                role: Role::ToolResult,
                value: &json!([1]),
                tokens: 5,
                call: None
            },
            None
        )
        .is_err());
    }

    #[test]
    fn an_excerpt_keeps_head_and_tail_within_its_size_plus_the_stub_line() {
        let lines: Vec<String> = (0..4_000)
            .map(|i| format!("log line {i:05} with some words in it"))
            .collect();
        let text = lines.join("\n");
        let raw = result_json(&text, false);
        let tokens = estimate_text(&text) + 4;
        let excerpt = render_excerpt(&original(&raw, tokens), 2_048)
            .unwrap()
            .unwrap();
        let shown = text_of_raw_json(&excerpt.json).unwrap();
        assert!(shown.starts_with("log line 00000 "), "the head comes first");
        assert!(
            shown.contains("log line 03999 with some words in it\n[tool output stored:"),
            "the tail ends before the stub line"
        );
        assert!(shown.contains("tokens of this message left out of the view"));
        assert!(
            excerpt
                .line
                .contains("; head and tail shown above; lcm_expand {\"messageId\": 123}"),
            "{}",
            excerpt.line
        );
        assert!(excerpt.tokens <= 2_048 + 120, "{} tokens", excerpt.tokens);
        assert_eq!(excerpt.variant, excerpt_variant(2_048));
        assert!(
            render_excerpt(&original(&result_json("short", false), 5), 2_048)
                .unwrap()
                .is_none(),
            "nothing to cut"
        );
    }

    #[test]
    fn excerpts_of_every_role_keep_the_role_and_an_assistants_tool_calls() {
        let big = "word ".repeat(20_000);
        let cases = [
            (
                Role::User,
                json!({"role": "user", "content": big, "timestamp": 1}),
            ),
            (
                Role::User,
                json!({"role": "user", "content": [{"type": "text", "text": big}, {"type": "image", "data": "AAAA", "mimeType": "image/png"}]}),
            ),
            (
                Role::Assistant,
                json!({"role": "assistant", "content": [{"type": "text", "text": big}, {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a"}}]}),
            ),
            (
                Role::BashExecution,
                json!({"role": "bashExecution", "command": "cat x", "output": big}),
            ),
            (
                Role::BranchSummary,
                json!({"role": "branchSummary", "summary": big}),
            ),
            (
                Role::Custom,
                json!({"role": "custom", "customType": "note", "content": big}),
            ),
        ];
        for (role, value) in cases {
            let stored = parse_message(&value, "m").unwrap();
            let o = Original {
                message_id: 5,
                role,
                value: &value,
                tokens: stored.tokens,
                call: None,
            };
            let excerpt = render_excerpt(&o, 1_024).unwrap().unwrap();
            let shown: Value = serde_json::from_str(&excerpt.json).unwrap();
            assert_eq!(shown["role"], value["role"]);
            assert!(
                excerpt.tokens < stored.tokens / 4,
                "{role:?}: {} of {}",
                excerpt.tokens,
                stored.tokens
            );
            assert!(stub_line_of(&excerpt.json).is_some(), "{role:?}");
            if role == Role::Assistant {
                assert_eq!(
                    shown["content"][1]["id"], "c1",
                    "the tool call stays, so its result stays paired"
                );
            }
        }
    }

    #[test]
    fn excerpt_sizes_are_powers_of_two_with_their_own_variants() {
        assert_eq!(excerpt_tokens(5_000), 4_096);
        assert_eq!(excerpt_tokens(10), MIN_EXCERPT_TOKENS);
        assert_eq!(excerpt_tokens(u32::MAX), MAX_EXCERPT_TOKENS);
        assert_eq!(excerpt_variant(256), 2);
        assert_eq!(excerpt_variant(4_096), 6);
        assert_ne!(excerpt_variant(4_096), STUB_LINE_VARIANT);
    }

    #[test]
    fn the_summarizer_sees_head_tail_and_the_stub_line() {
        let text = format!(
            "error[E0308]: mismatched types{}test result: FAILED. 1 failed",
            " filler".repeat(200)
        );
        let shown = summarizer_text(&text, "[tool output stored: bash → 9 tokens]");
        assert!(shown.starts_with("error[E0308]: mismatched types"));
        assert!(
            shown.contains("[…] ")
                && shown.contains("test result: FAILED. 1 failed\n[tool output stored:"),
            "{shown}"
        );
        assert!(shown.chars().count() < SUMMARY_HEAD_CHARS + SUMMARY_TAIL_CHARS + 60);
        assert_eq!(summarizer_text("tiny", "[line]"), "tiny\n[line]");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(thousands(12), "12");
    }
}
