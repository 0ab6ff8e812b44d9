//! The message model: parsing and validating the host's `AgentMessage` JSON into a
//! [`StoredMessage`] — role, plain text (for search and token counts), structured parts, and a
//! content identity. The original JSON is kept untouched so any message can be handed back to the
//! host exactly as it arrived. Parsing never panics; every problem names the offending field.

use serde_json::Value;

use super::identity::Fingerprint;
use super::tokens::{estimate_text, BINARY_BLOCK_TOKENS, MESSAGE_OVERHEAD_TOKENS};
use crate::error::{Error, Result};

/// The roles an OpenClaw host sends (`AgentMessage` in the host contract).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// `user`: a message from the user.
    User,
    /// `assistant`: the model's answer, with any tool calls it makes.
    Assistant,
    /// `toolResult`: a tool's output, answering the call named by `toolCallId`.
    ToolResult,
    /// `compactionSummary`: a summary written by the host's own compaction (text in `summary`).
    CompactionSummary,
    /// `branchSummary`: a summary of a session branch, written by the host (text in `summary`).
    BranchSummary,
    /// `bashExecution`: a shell command and its output (`command`, `output`).
    BashExecution,
    /// `custom`: a host- or extension-defined message, with `content` like a user message.
    Custom,
}

impl Role {
    /// Every role, in declaration order.
    pub const ALL: [Role; 7] = [
        Role::User,
        Role::Assistant,
        Role::ToolResult,
        Role::CompactionSummary,
        Role::BranchSummary,
        Role::BashExecution,
        Role::Custom,
    ];

    /// The role's name in the host's JSON, such as `toolResult`.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::ToolResult => "toolResult",
            Role::CompactionSummary => "compactionSummary",
            Role::BranchSummary => "branchSummary",
            Role::BashExecution => "bashExecution",
            Role::Custom => "custom",
        }
    }

    /// The role a host's role name stands for; `None` for an unknown name.
    pub fn parse(name: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|role| role.as_str() == name)
    }
}

/// The kinds of structured block a message can carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartKind {
    /// A `text` block.
    Text,
    /// A `thinking` block: the model's reasoning, left out of the plain text.
    Reasoning,
    /// A `toolCall` block.
    ToolCall,
    /// An `image` block.
    Image,
    /// A `file` block.
    File,
}

impl PartKind {
    fn from_block_type(name: &str) -> Option<PartKind> {
        match name {
            "text" => Some(PartKind::Text),
            "thinking" => Some(PartKind::Reasoning),
            "toolCall" => Some(PartKind::ToolCall),
            "image" => Some(PartKind::Image),
            "file" => Some(PartKind::File),
            _ => None,
        }
    }
}

/// One structured block of a message.
#[derive(Debug, Clone, PartialEq)]
pub struct MessagePart {
    /// What kind of block it is.
    pub kind: PartKind,
    /// Plain-text rendering (empty for images and files).
    pub text: String,
    /// The tool call id, for tool calls.
    pub tool_call_id: Option<String>,
    /// The tool's name, for tool calls.
    pub tool_name: Option<String>,
}

/// A validated host message, ready to store.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredMessage {
    /// Who wrote the message.
    pub role: Role,
    /// Plain text: what search matches and what the token estimate counts.
    pub text: String,
    /// The message's structured blocks, in order.
    pub parts: Vec<MessagePart>,
    /// For tool results: the id of the call they answer.
    pub tool_call_id: Option<String>,
    /// The host's epoch-millisecond timestamp, when it sent a number.
    pub timestamp_ms: Option<i64>,
    /// Tokens the message counts, by the engine's estimate (parts plus a per-message overhead).
    pub tokens: u32,
    /// Content identity (see [`super::identity`]): role, timestamp and content, not metadata
    /// such as usage that a host may attach later.
    pub identity: String,
    /// The message exactly as the host sent it, serialized.
    pub raw_json: String,
    /// The host's transcript entry id, when the host names it (set by the caller, not parsed).
    pub host_entry_id: Option<String>,
    /// For tool results: the tool's name.
    pub tool_name: Option<String>,
}

const BLOCK_TYPES: &str = "text, thinking, toolCall, image, file";

/// Where a value sits in the host's input, for error messages (`messages[3].content[1]`). Only
/// an error formats it: building the string for every message and block was ~1 % of a bulk
/// import.
#[derive(Clone, Copy)]
enum Path<'a> {
    Named(&'a str),
    Message(usize),
    Block(&'a Path<'a>, usize),
}

impl std::fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Path::Named(name) => f.write_str(name),
            Path::Message(index) => write!(f, "messages[{index}]"),
            Path::Block(message, index) => write!(f, "{message}.content[{index}]"),
        }
    }
}

fn str_field<'a>(
    obj: &'a serde_json::Map<String, Value>,
    key: &str,
    path: Path,
) -> Result<&'a str> {
    match obj.get(key) {
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(Error::input(
            format!("{path}.{key}"),
            format!("expected a string, got {}", type_name(other)),
        )),
        None => Err(Error::input(format!("{path}.{key}"), "is required")),
    }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn parse_block(block: &Value, path: Path) -> Result<MessagePart> {
    let obj = block.as_object().ok_or_else(|| {
        Error::input(
            path.to_string(),
            format!(
                "a content block must be an object, got {}",
                type_name(block)
            ),
        )
    })?;
    let kind_name = str_field(obj, "type", path)?;
    let kind = PartKind::from_block_type(kind_name).ok_or_else(|| {
        Error::input(
            format!("{path}.type"),
            format!("unknown block type {kind_name:?} (expected one of: {BLOCK_TYPES})"),
        )
    })?;
    let (text, tool_call_id, tool_name) = match kind {
        PartKind::Text => (str_field(obj, "text", path)?.to_owned(), None, None),
        PartKind::Reasoning => (str_field(obj, "thinking", path)?.to_owned(), None, None),
        PartKind::ToolCall => {
            let id = str_field(obj, "id", path)?.to_owned();
            let name = str_field(obj, "name", path)?;
            let args = obj
                .get("arguments")
                .map(Value::to_string)
                .unwrap_or_default();
            (
                format!("[tool call {name} {args}]"),
                Some(id),
                Some(name.to_owned()),
            )
        }
        PartKind::Image | PartKind::File => (String::new(), None, None),
    };
    Ok(MessagePart {
        kind,
        text,
        tool_call_id,
        tool_name,
    })
}

/// Parses `content`, which hosts send either as a string or as an array of blocks.
fn parse_content(value: Option<&Value>, path: Path) -> Result<Vec<MessagePart>> {
    match value {
        Some(Value::String(s)) => Ok(vec![text_part(s.clone())]),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .enumerate()
            .map(|(i, block)| parse_block(block, Path::Block(&path, i)))
            .collect(),
        Some(other) => Err(Error::input(
            format!("{path}.content"),
            format!(
                "expected a string or an array of blocks, got {}",
                type_name(other)
            ),
        )),
        None => Err(Error::input(format!("{path}.content"), "is required")),
    }
}

fn text_part(text: String) -> MessagePart {
    MessagePart {
        kind: PartKind::Text,
        text,
        tool_call_id: None,
        tool_name: None,
    }
}

/// A message's object, its role, its content parts and (for tool results) the answered call id.
type RoleAndParts<'a> = (
    &'a serde_json::Map<String, Value>,
    Role,
    Vec<MessagePart>,
    Option<String>,
);

/// The role, the content parts and (for tool results) the answered call id of one message.
fn role_and_parts<'a>(value: &'a Value, path: Path) -> Result<RoleAndParts<'a>> {
    let obj = value.as_object().ok_or_else(|| {
        Error::input(
            path.to_string(),
            format!("a message must be an object, got {}", type_name(value)),
        )
    })?;
    let role_name = str_field(obj, "role", path)?;
    let role = Role::parse(role_name).ok_or_else(|| {
        let known: Vec<&str> = Role::ALL.iter().map(|r| r.as_str()).collect();
        Error::input(
            format!("{path}.role"),
            format!(
                "unknown role {role_name:?} (expected one of: {})",
                known.join(", ")
            ),
        )
    })?;
    let mut tool_call_id = None;
    let parts = match role {
        Role::User | Role::Assistant | Role::Custom => parse_content(obj.get("content"), path)?,
        Role::ToolResult => {
            tool_call_id = Some(str_field(obj, "toolCallId", path)?.to_owned());
            parse_content(obj.get("content"), path)?
        }
        Role::CompactionSummary | Role::BranchSummary => {
            vec![text_part(str_field(obj, "summary", path)?.to_owned())]
        }
        Role::BashExecution => {
            let command = str_field(obj, "command", path)?;
            let output = str_field(obj, "output", path)?;
            vec![text_part(format!("$ {command}\n{output}"))]
        }
    };
    Ok((obj, role, parts, tool_call_id))
}

/// The plain-text rendering: the parts' text (reasoning left out) joined by newlines.
/// SQLite's text functions and the FTS tokenizer stop at NUL, so it shows NUL as U+2400; the
/// exact bytes stay in `raw_json`.
fn plain_text(parts: &[MessagePart]) -> String {
    let text = parts
        .iter()
        .filter(|p| p.kind != PartKind::Reasoning && !p.text.is_empty())
        .map(|p| p.text.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    if text.contains('\0') {
        text.replace('\0', "\u{2400}")
    } else {
        text
    }
}

/// The plain text of a stored message, derived from its `raw_json` exactly as [`parse_message`]
/// derived [`StoredMessage::text`] at ingest (the database keeps no second copy of it).
pub fn text_of_raw_json(raw_json: &str) -> Result<String> {
    let value: Value = serde_json::from_str(raw_json).map_err(|err| {
        Error::unexpected_data(format!("a stored message is not valid JSON: {err}"))
    })?;
    text_of_value(&value)
}

/// [`text_of_raw_json`] of a stored message already parsed.
pub fn text_of_value(value: &Value) -> Result<String> {
    let (_, _, parts, _) = role_and_parts(value, Path::Named("raw_json")).map_err(|err| {
        Error::unexpected_data(format!("a stored message no longer parses: {err}"))
    })?;
    Ok(plain_text(&parts))
}

/// A host message to store, and the JSON text it was parsed from when the caller has it: that
/// text becomes `raw_json` as it is, where serializing the value again cost a bulk import ~5 % of
/// its time. The text must be compact JSON of exactly this value (as `JSON.stringify` writes it).
#[derive(Debug, Clone, PartialEq)]
pub struct HostMessage {
    /// The message as parsed JSON.
    pub value: Value,
    /// The compact JSON text it was parsed from, when the caller has it.
    pub json: Option<String>,
}

impl From<Value> for HostMessage {
    fn from(value: Value) -> Self {
        HostMessage { value, json: None }
    }
}

/// Parses one host message. `path` names it in errors, e.g. `messages[3]`.
pub fn parse_message(value: &Value, path: &str) -> Result<StoredMessage> {
    parse_message_with_json(value, None, Path::Named(path))
}

/// Parses a batch of [`HostMessage`]s as [`parse_messages`] does, keeping each one's JSON text.
pub fn parse_host_messages(
    messages: Vec<HostMessage>,
    first_index: usize,
) -> Result<Vec<StoredMessage>> {
    messages
        .into_iter()
        .enumerate()
        .map(|(i, m)| parse_message_with_json(&m.value, m.json, Path::Message(first_index + i)))
        .collect()
}

/// [`parse_message`], with `raw_json` taken from `json` when given.
fn parse_message_with_json(
    value: &Value,
    json: Option<String>,
    path: Path,
) -> Result<StoredMessage> {
    let (obj, role, parts, tool_call_id) = role_and_parts(value, path)?;
    let timestamp_ms = obj
        .get("timestamp")
        .and_then(Value::as_f64)
        .filter(|t| t.is_finite())
        .map(|t| t as i64);
    let text = plain_text(&parts);
    let tokens = parts.iter().fold(MESSAGE_OVERHEAD_TOKENS, |sum, p| {
        let cost = match p.kind {
            PartKind::Image | PartKind::File => BINARY_BLOCK_TOKENS,
            _ => estimate_text(&p.text),
        };
        sum.saturating_add(cost)
    });
    let identity = message_identity(obj, role);
    let tool_name = match role {
        Role::ToolResult => obj
            .get("toolName")
            .and_then(Value::as_str)
            .map(str::to_owned),
        _ => None,
    };
    Ok(StoredMessage {
        role,
        text,
        parts,
        tool_call_id,
        timestamp_ms,
        tokens,
        identity,
        raw_json: json.unwrap_or_else(|| value.to_string()),
        host_entry_id: None,
        tool_name,
    })
}

/// Role, timestamp, tool-call id and the content-bearing fields, in canonical JSON form.
fn message_identity(obj: &serde_json::Map<String, Value>, role: Role) -> String {
    const KEYS: [&str; 7] = [
        "timestamp",
        "toolCallId",
        "content",
        "summary",
        "command",
        "output",
        "customType",
    ];
    // One pass over the message's few fields instead of a hashed lookup per key.
    let mut present: [Option<&Value>; KEYS.len()] = [None; KEYS.len()];
    for (key, value) in obj {
        if let Some(i) = KEYS.iter().position(|k| k == key) {
            present[i] = Some(value);
        }
    }
    let mut fp = Fingerprint::new();
    fp.field(role.as_str());
    for (key, value) in KEYS.iter().zip(present) {
        match value {
            Some(value) => fp.field(key).json(value),
            None => fp.field(""),
        };
    }
    fp.hex()
}

/// Parses a batch; the first invalid message fails the whole batch, so nothing is stored half-way.
/// Errors name `messages[i]`, counting from `first_index` (the batch's position in the host's list).
pub fn parse_messages(values: &[Value], first_index: usize) -> Result<Vec<StoredMessage>> {
    values
        .iter()
        .enumerate()
        .map(|(i, v)| parse_message_with_json(v, None, Path::Message(first_index + i)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn user_message_with_string_content_parses() {
        let m = parse_message(
            &json!({"role":"user","content":"hello","timestamp":1700000000000i64}),
            "m",
        )
        .unwrap();
        assert_eq!(m.role, Role::User);
        assert_eq!(m.text, "hello");
        assert_eq!(m.timestamp_ms, Some(1_700_000_000_000));
        assert!(m.tokens > MESSAGE_OVERHEAD_TOKENS);
    }

    #[test]
    fn assistant_blocks_render_text_and_tool_calls_but_not_reasoning() {
        let m = parse_message(
            &json!({"role":"assistant","content":[
                {"type":"thinking","thinking":"secret plan"},
                {"type":"text","text":"Running it."},
                {"type":"toolCall","id":"c1","name":"bash","arguments":{"cmd":"ls"}}
            ]}),
            "m",
        )
        .unwrap();
        assert_eq!(m.text, "Running it.\n[tool call bash {\"cmd\":\"ls\"}]");
        assert_eq!(m.parts[2].tool_call_id.as_deref(), Some("c1"));
    }

    #[test]
    fn unknown_role_is_rejected_naming_the_field() {
        let err =
            parse_message(&json!({"role":"wizard","content":"x"}), "messages[2]").unwrap_err();
        assert!(err.to_string().contains("messages[2].role"), "{err}");
        assert!(err.to_string().contains("wizard"), "{err}");
    }

    #[test]
    fn unknown_block_type_is_rejected_naming_the_field() {
        let err = parse_message(&json!({"role":"user","content":[{"type":"hologram"}]}), "m")
            .unwrap_err();
        assert!(err.to_string().contains("m.content[0].type"), "{err}");
    }

    #[test]
    fn malformed_messages_are_errors_not_panics() {
        for bad in [
            json!(null),
            json!(42),
            json!({"content":"x"}),
            json!({"role":"user"}),
            json!({"role":"user","content":7}),
            json!({"role":"toolResult","content":[]}),
            json!({"role":"assistant","content":[{"type":"toolCall","name":"x"}]}),
        ] {
            assert!(
                parse_message(&bad, "m").is_err(),
                "{bad} should be rejected"
            );
        }
    }

    #[test]
    fn images_cost_a_fixed_amount_not_their_base64_length() {
        let big = "A".repeat(400_000);
        let m = parse_message(
            &json!({"role":"user","content":[{"type":"image","data":big,"mimeType":"image/png"}]}),
            "m",
        )
        .unwrap();
        assert_eq!(m.tokens, MESSAGE_OVERHEAD_TOKENS + BINARY_BLOCK_TOKENS);
    }

    #[test]
    fn identity_ignores_metadata_but_not_content_or_time() {
        let a = parse_message(&json!({"role":"assistant","content":[{"type":"text","text":"hi"}],"timestamp":1,"usage":{"input":3}}), "m").unwrap();
        let b = parse_message(&json!({"role":"assistant","content":[{"type":"text","text":"hi"}],"timestamp":1,"usage":{"input":9}}), "m").unwrap();
        let c = parse_message(
            &json!({"role":"assistant","content":[{"type":"text","text":"hi"}],"timestamp":2}),
            "m",
        )
        .unwrap();
        assert_eq!(a.identity, b.identity);
        assert_ne!(a.identity, c.identity);
    }

    #[test]
    fn a_batch_with_one_bad_message_fails_whole() {
        let err = parse_messages(
            &[
                json!({"role":"user","content":"ok"}),
                json!({"role":"user"}),
            ],
            0,
        )
        .unwrap_err();
        assert!(err.to_string().contains("messages[1].content"), "{err}");
        let offset = parse_messages(&[json!({"role":"user"})], 7).unwrap_err();
        assert!(
            offset.to_string().contains("messages[7].content"),
            "{offset}"
        );
        // A block's path names its message and its position, on both parsing paths.
        let block =
            json!({"role":"assistant","content":[{"type":"text","text":"ok"},{"type":"video"}]});
        let err =
            parse_messages(&[json!({"role":"user","content":"ok"}), block.clone()], 4).unwrap_err();
        assert!(
            err.to_string().contains("messages[5].content[1].type"),
            "{err}"
        );
        let err = parse_host_messages(vec![HostMessage::from(block)], 9).unwrap_err();
        assert!(
            err.to_string().contains("messages[9].content[1].type"),
            "{err}"
        );
        let err = parse_message(
            &json!({"role":"toolResult","content":[]}),
            "source message 3",
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("source message 3.toolCallId"),
            "{err}"
        );
    }

    #[test]
    fn the_text_derived_from_raw_json_is_the_text_derived_at_ingest() {
        let messages = [
            json!({"role": "user", "content": "a\u{0}b \"q\" \\", "timestamp": 1}),
            json!({"role": "assistant", "content": [{"type": "thinking", "thinking": "t"}, {"type": "text", "text": "x"}, {"type": "toolCall", "id": "c", "name": "n", "arguments": {"k": [1, 2.5]}}]}),
            json!({"role": "bashExecution", "command": "ls", "output": "o"}),
            json!({"role": "branchSummary", "summary": "s"}),
        ];
        for value in &messages {
            let m = parse_message(value, "m").unwrap();
            assert_eq!(text_of_raw_json(&m.raw_json).unwrap(), m.text);
        }
        assert!(text_of_raw_json("not json").is_err());
    }

    #[test]
    fn a_host_message_with_its_json_text_stores_that_text_and_parses_the_same() {
        // serde_json writes JSON.stringify's 100000000000000000000 and 0.000001 as 1e20 and 1e-6:
        // the host's text is kept as it is; text, tokens and identity come from the value.
        let text =
            r#"{"role":"user","content":"x y","timestamp":5,"n":[100000000000000000000,0.000001]}"#;
        let value: Value = serde_json::from_str(text).unwrap();
        let kept = parse_host_messages(
            vec![HostMessage {
                value: value.clone(),
                json: Some(text.to_owned()),
            }],
            0,
        )
        .unwrap();
        let plain = parse_message(&value, "messages[0]").unwrap();
        assert_eq!(kept[0].raw_json, text);
        assert_ne!(
            plain.raw_json, text,
            "serde_json writes these numbers differently"
        );
        assert_eq!(
            StoredMessage {
                raw_json: plain.raw_json.clone(),
                ..kept[0].clone()
            },
            plain
        );
        assert_eq!(text_of_raw_json(&kept[0].raw_json).unwrap(), plain.text);
        let err = parse_host_messages(
            vec![
                HostMessage::from(json!(1)),
                HostMessage::from(json!({"role": "x"})),
            ],
            4,
        )
        .unwrap_err();
        assert!(err.to_string().contains("messages[4]"), "{err}");
    }

    #[test]
    fn raw_json_keeps_the_hosts_key_order() {
        let text = r#"{"role":"user","timestamp":5,"content":"x","zeta":1,"alpha":2}"#;
        let value: Value = serde_json::from_str(text).unwrap();
        assert_eq!(parse_message(&value, "m").unwrap().raw_json, text);
    }
}
