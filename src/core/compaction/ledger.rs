//! The artifact ledger: files modified and read, commands run, errors seen, and the latest user
//! request, copied verbatim from source messages so no summarizer can paraphrase a path or a
//! command away. Extraction reads tool-call arguments, tool results' `isError`, shell commands,
//! and error-looking output lines.
//!
//! Entries are single lines clipped at a fixed length (the full text stays in the stored message,
//! reachable with `lcm_expand`); a repeated entry moves to the newest position instead of
//! appearing twice, so merging ledgers never grows them with duplicates. This module must not
//! decide how much of a ledger fits a summary: that is [`super::format`]'s budget.

use std::collections::HashMap;

use serde_json::Value;

use super::markup::strip_our_markup;
use super::SourceMessage;
use crate::core::message::Role;

/// Longest ledger entry, in characters.
pub const ENTRY_MAX_CHARS: usize = 300;
/// Longest kept latest request, in characters.
pub const REQUEST_MAX_CHARS: usize = 2_000;
/// Error-looking lines taken from one message: a failing build prints hundreds.
const ERROR_LINES_PER_MESSAGE: usize = 3;

/// What an entry records. The order here is the order entries render in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A file the conversation modified.
    Modified,
    /// A file the conversation read.
    Read,
    /// A command that was run.
    Command,
    /// An error that was seen.
    Error,
    /// An artifacts line a summarizer wrote that fits no other kind.
    Note,
}

impl EntryKind {
    /// Every kind, in rendering order.
    pub const ALL: [EntryKind; 5] = [
        EntryKind::Modified,
        EntryKind::Read,
        EntryKind::Command,
        EntryKind::Error,
        EntryKind::Note,
    ];

    /// The rendered prefix (`- modified: src/lib.rs`); notes have none.
    pub fn prefix(self) -> &'static str {
        match self {
            EntryKind::Modified => "modified: ",
            EntryKind::Read => "read: ",
            EntryKind::Command => "ran: ",
            EntryKind::Error => "error: ",
            EntryKind::Note => "",
        }
    }
}

/// Artifacts of a span of conversation. Each list is oldest first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ledger {
    /// Files modified.
    pub modified: Vec<String>,
    /// Files read.
    pub read: Vec<String>,
    /// Commands run.
    pub commands: Vec<String>,
    /// Errors seen.
    pub errors: Vec<String>,
    /// Artifacts lines a summarizer wrote that fit no other kind.
    pub notes: Vec<String>,
    /// The user's latest request in the span, clipped to [`REQUEST_MAX_CHARS`] characters.
    pub latest_request: Option<String>,
}

/// Collapses a text to one line and clips it, marking the clip.
pub fn one_line(text: &str, max_chars: usize) -> String {
    let mut flat = String::with_capacity(text.len().min(max_chars.saturating_mul(4)));
    for word in text.split_whitespace() {
        if !flat.is_empty() {
            flat.push(' ');
        }
        flat.push_str(word);
    }
    clip(&flat, max_chars)
}

pub(crate) fn clip(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// An entry's identity for deduplication: its words, lower-cased, whitespace-insensitive.
fn normalized(entry: &str) -> impl Iterator<Item = char> + '_ {
    entry
        .split_whitespace()
        .flat_map(|w| std::iter::once(' ').chain(w.chars()))
        .flat_map(char::to_lowercase)
}

fn same_entry(a: &str, b: &str) -> bool {
    normalized(a).eq(normalized(b))
}

/// FNV-1a over the normalized form, without building it: every merge deduplicates a few
/// hundred entries, and a hash hit is always confirmed with [`same_entry`].
fn entry_hash(entry: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |c: char| hash = (hash ^ u64::from(c)).wrapping_mul(0x0000_0100_0000_01b3);
    for word in entry.split_whitespace() {
        feed(' ');
        for c in word.chars() {
            if c.is_ascii() {
                feed(c.to_ascii_lowercase());
            } else {
                c.to_lowercase().for_each(&mut feed);
            }
        }
    }
    hash
}

/// Keeps the newest occurrence of each entry, preserving order otherwise.
pub fn dedupe_newest(list: &mut Vec<String>) {
    let mut seen: HashMap<u64, usize> = HashMap::with_capacity(list.len());
    let mut kept: Vec<String> = Vec::with_capacity(list.len());
    for entry in list.drain(..).rev() {
        let hash = entry_hash(&entry);
        match seen.get(&hash) {
            Some(&i) if kept.get(i).is_some_and(|k| same_entry(k, &entry)) => continue,
            // A collision between different entries keeps both; only a true repeat is dropped.
            Some(_) => {}
            None => {
                seen.insert(hash, kept.len());
            }
        }
        kept.push(entry);
    }
    kept.reverse();
    *list = kept;
}

impl Ledger {
    /// The list of entries of `kind`.
    pub fn list(&self, kind: EntryKind) -> &Vec<String> {
        match kind {
            EntryKind::Modified => &self.modified,
            EntryKind::Read => &self.read,
            EntryKind::Command => &self.commands,
            EntryKind::Error => &self.errors,
            EntryKind::Note => &self.notes,
        }
    }

    /// The list of entries of `kind`, to change.
    pub fn list_mut(&mut self, kind: EntryKind) -> &mut Vec<String> {
        match kind {
            EntryKind::Modified => &mut self.modified,
            EntryKind::Read => &mut self.read,
            EntryKind::Command => &mut self.commands,
            EntryKind::Error => &mut self.errors,
            EntryKind::Note => &mut self.notes,
        }
    }

    /// Adds an entry as the newest of its kind; an equal older entry is removed, and empty
    /// entries are ignored.
    pub fn add(&mut self, kind: EntryKind, text: &str) {
        let entry = one_line(text, ENTRY_MAX_CHARS);
        if entry.is_empty() {
            return;
        }
        let list = self.list_mut(kind);
        list.retain(|e| !same_entry(e, &entry));
        list.push(entry);
    }

    /// Removes repeated entries from every list, keeping each one's newest position.
    pub fn dedupe(&mut self) {
        for kind in EntryKind::ALL {
            dedupe_newest(self.list_mut(kind));
        }
    }

    /// Keeps `text` as the latest request, without our markup and clipped; blank text is ignored.
    pub fn set_latest_request(&mut self, text: &str) {
        let cleaned = strip_our_markup(text);
        let trimmed = cleaned.trim();
        if !trimmed.is_empty() {
            self.latest_request = Some(clip(trimmed, REQUEST_MAX_CHARS));
        }
    }

    /// Appends a newer ledger: its entries become the newest, its request (if any) wins.
    pub fn absorb(&mut self, newer: Ledger) {
        for kind in EntryKind::ALL {
            self.list_mut(kind).extend(newer.list(kind).iter().cloned());
        }
        self.dedupe();
        if newer.latest_request.is_some() {
            self.latest_request = newer.latest_request;
        }
    }

    /// Whether the ledger has no entry and no request.
    pub fn is_empty(&self) -> bool {
        EntryKind::ALL.iter().all(|k| self.list(*k).is_empty()) && self.latest_request.is_none()
    }

    /// Reads one artifacts line (bullet already removed) back into the ledger. Repeats are kept
    /// until [`Ledger::dedupe`] runs once for the whole batch, which keeps parsing linear.
    pub fn push_rendered_line(&mut self, content: &str) {
        let lower = content.to_lowercase();
        if matches!(lower.trim(), "" | "none" | "files: none" | "(none)") {
            return;
        }
        let kind = EntryKind::ALL
            .into_iter()
            .filter(|k| *k != EntryKind::Note)
            .find(|k| lower.starts_with(k.prefix()))
            .unwrap_or(EntryKind::Note);
        let rest = content.get(kind.prefix().len()..).unwrap_or(content);
        let entry = one_line(rest, ENTRY_MAX_CHARS);
        if !entry.is_empty() {
            self.list_mut(kind).push(entry);
        }
    }
}

/// Extracts the ledger of `messages` (oldest first).
pub fn extract(messages: &[SourceMessage<'_>]) -> Ledger {
    let mut ledger = Ledger::default();
    for message in messages {
        let raw: Value = serde_json::from_str(message.raw_json).unwrap_or(Value::Null);
        match message.role {
            Role::User => ledger.set_latest_request(message.text),
            Role::Assistant => {
                for block in raw
                    .get("content")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if block.get("type").and_then(Value::as_str) == Some("toolCall") {
                        record_tool_call(&mut ledger, block);
                    }
                }
            }
            Role::ToolResult => {
                let text = strip_our_markup(message.text);
                if raw.get("isError").and_then(Value::as_bool) == Some(true) {
                    if let Some(first) = text.lines().map(str::trim).find(|l| !l.is_empty()) {
                        ledger.add(EntryKind::Error, first);
                    }
                }
                record_error_lines(&mut ledger, &text);
            }
            Role::BashExecution => {
                if let Some(command) = raw.get("command").and_then(Value::as_str) {
                    ledger.add(EntryKind::Command, command);
                }
                if let Some(output) = raw.get("output").and_then(Value::as_str) {
                    record_error_lines(&mut ledger, output);
                }
            }
            Role::CompactionSummary | Role::BranchSummary | Role::Custom => {}
        }
    }
    ledger
}

const PATH_KEYS: [&str; 7] = [
    "path",
    "file_path",
    "filePath",
    "file",
    "filename",
    "target_file",
    "notebook_path",
];
const PATH_LIST_KEYS: [&str; 2] = ["paths", "files"];
const COMMAND_KEYS: [&str; 3] = ["command", "cmd", "script"];
const MODIFYING_WORDS: [&str; 14] = [
    "write", "edit", "create", "patch", "apply", "replace", "delete", "remove", "move", "rename",
    "insert", "append", "save", "update",
];

/// Tools are classified by name: anything that sounds like it changes a file counts as
/// modifying it; every other tool that names a path is recorded as reading it.
fn record_tool_call(ledger: &mut Ledger, block: &Value) {
    let name = block
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_lowercase();
    let Some(args) = block.get("arguments").and_then(Value::as_object) else {
        return;
    };
    let kind = if MODIFYING_WORDS.iter().any(|w| name.contains(w)) {
        EntryKind::Modified
    } else {
        EntryKind::Read
    };
    for key in PATH_KEYS {
        if let Some(path) = args.get(key).and_then(Value::as_str) {
            ledger.add(kind, path);
        }
    }
    for key in PATH_LIST_KEYS {
        for path in args
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            ledger.add(kind, path);
        }
    }
    for key in COMMAND_KEYS {
        match args.get(key) {
            Some(Value::String(command)) => ledger.add(EntryKind::Command, command),
            Some(Value::Array(parts)) => {
                let words: Vec<&str> = parts.iter().filter_map(Value::as_str).collect();
                ledger.add(EntryKind::Command, &words.join(" "));
            }
            _ => {}
        }
    }
}

/// Whether a line reads like an error report rather than ordinary output.
pub fn looks_like_error(line: &str) -> bool {
    let lower = line.trim().to_lowercase();
    const STARTS: [&str; 7] = [
        "error",
        "fatal",
        "panic",
        "traceback",
        "exception",
        "failed",
        "npm err!",
    ];
    const CONTAINS: [&str; 4] = ["error:", "error[", "panicked at", "exception:"];
    STARTS.iter().any(|s| lower.starts_with(s)) || CONTAINS.iter().any(|s| lower.contains(s))
}

fn record_error_lines(ledger: &mut Ledger, text: &str) {
    for line in text
        .lines()
        .filter(|l| looks_like_error(l))
        .take(ERROR_LINES_PER_MESSAGE)
    {
        ledger.add(EntryKind::Error, line.trim());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::message::parse_message;
    use serde_json::json;

    fn extract_json(values: &[Value]) -> Ledger {
        let stored: Vec<_> = values
            .iter()
            .map(|v| parse_message(v, "m").unwrap())
            .collect();
        let sources: Vec<SourceMessage> = stored.iter().map(SourceMessage::from).collect();
        extract(&sources)
    }

    #[test]
    fn ledger_keeps_paths_commands_errors_and_the_latest_request_verbatim() {
        let ledger = extract_json(&[
            json!({"role":"user","content":"Fix the failing build in  src/lib.rs"}),
            json!({"role":"assistant","content":[
                {"type":"toolCall","id":"c1","name":"read","arguments":{"path":"src/lib.rs"}},
                {"type":"toolCall","id":"c2","name":"bash","arguments":{"command":"cargo test --lib"}},
                {"type":"toolCall","id":"c3","name":"edit_file","arguments":{"file_path":"src/lib.rs","old":"a","new":"b"}}]}),
            json!({"role":"toolResult","toolCallId":"c2","isError":true,"content":[{"type":"text","text":"\nexit status 101\nerror[E0308]: mismatched types"}]}),
            json!({"role":"bashExecution","command":"git status","output":"fatal: not a git repository"}),
            json!({"role":"user","content":"Now also update the README"}),
        ]);
        assert_eq!(ledger.read, vec!["src/lib.rs"]);
        assert_eq!(ledger.modified, vec!["src/lib.rs"]);
        assert_eq!(ledger.commands, vec!["cargo test --lib", "git status"]);
        assert_eq!(
            ledger.errors,
            vec![
                "exit status 101",
                "error[E0308]: mismatched types",
                "fatal: not a git repository"
            ]
        );
        assert_eq!(
            ledger.latest_request.as_deref(),
            Some("Now also update the README")
        );
    }

    #[test]
    fn repeated_entries_move_to_newest_instead_of_duplicating() {
        let mut older = Ledger::default();
        older.add(EntryKind::Read, "a.rs");
        older.add(EntryKind::Read, "b.rs");
        let mut newer = Ledger::default();
        newer.add(EntryKind::Read, "A.rs ");
        older.absorb(newer);
        assert_eq!(older.read, vec!["b.rs", "A.rs"]);
    }

    #[test]
    fn long_entries_are_clipped_and_marked() {
        let mut ledger = Ledger::default();
        ledger.add(EntryKind::Command, &"é".repeat(1_000));
        assert_eq!(ledger.commands[0].chars().count(), ENTRY_MAX_CHARS + 1);
        assert!(ledger.commands[0].ends_with('…'));
    }

    #[test]
    fn malformed_tool_calls_and_json_are_ignored_not_fatal() {
        let sources = [
            SourceMessage {
                role: Role::Assistant,
                text: "",
                raw_json: "not json",
                timestamp_ms: None,
            },
            SourceMessage {
                role: Role::Assistant,
                text: "",
                raw_json: r#"{"content":[{"type":"toolCall","arguments":7}]}"#,
                timestamp_ms: None,
            },
            SourceMessage {
                role: Role::BashExecution,
                text: "",
                raw_json: r#"{"command":5}"#,
                timestamp_ms: None,
            },
        ];
        assert!(extract(&sources).is_empty());
    }

    #[test]
    fn rendered_lines_parse_back_into_their_kinds() {
        let mut ledger = Ledger::default();
        for line in [
            "modified: x.rs",
            "Read: y.rs",
            "ran: ls -la",
            "error: boom",
            "Files: none",
            "something else",
            "read: Y.rs",
        ] {
            ledger.push_rendered_line(line);
        }
        ledger.dedupe();
        assert_eq!(
            (
                ledger.modified.len(),
                ledger.read.len(),
                ledger.commands.len(),
                ledger.errors.len()
            ),
            (1, 1, 1, 1)
        );
        assert_eq!(ledger.notes, vec!["something else"]);
        assert_eq!(ledger.read, vec!["Y.rs"]);
    }
}
