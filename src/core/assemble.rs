//! Assembly of the model's view: which stored messages, newest first, fit the token budget.
//! Pure selection over (role, tokens) pairs; the engine supplies them and renders the result.
//! A view never starts with a tool result whose call was cut off, because providers reject a
//! result without its call.

use super::compaction::format::{render_for_context, SummaryView};
use super::message::Role;
use super::tokens::{estimate_text, MESSAGE_OVERHEAD_TOKENS};

/// The system-prompt addition when the host does not say which tools the model has (older hosts,
/// browser embedders): it names all four recall tools. It never varies between turns: a changing
/// system prompt would invalidate the provider's prompt cache on every turn.
pub const SYSTEM_PROMPT_ADDITION: &str = "[lossless-wasm] This conversation's history is managed by the \
lossless-wasm context engine. Every message is stored permanently; when older turns are summarized, \
their details can be recovered: lcm_grep searches all stored history, lcm_describe tells what a summary \
covers, lcm_expand brings back a summary's original messages, and lcm_ask answers one question about \
the stored history in a short reply that cites the message ids it rests on.";

/// The recall tools, in the order the addition names them, each with what the model reads of it.
pub const RECALL_TOOLS: [(&str, &str); 4] = [
    ("lcm_grep", "lcm_grep searches all stored history"),
    ("lcm_describe", "lcm_describe tells what a summary covers"),
    (
        "lcm_expand",
        "lcm_expand brings back a summary's original messages",
    ),
    (
        "lcm_ask",
        "lcm_ask answers one question about the stored history in a short reply that cites the message ids it rests on",
    ),
];

/// The system-prompt addition for a turn whose model can call `available` (the host's
/// `availableTools`; None when the host does not say): it names only the recall tools the model
/// can call, since a named tool it cannot call fails with "Unknown tool id". No recall tool
/// callable: no addition (empty). The text depends only on which recall tools are in the set,
/// never on their order or on the other tools, so the prompt cache holds across turns.
pub fn system_prompt_addition(available: Option<&[String]>) -> String {
    let Some(available) = available else {
        return SYSTEM_PROMPT_ADDITION.to_owned();
    };
    let named: Vec<&str> = RECALL_TOOLS
        .iter()
        .filter(|(name, _)| available.iter().any(|a| a == name))
        .map(|(_, text)| *text)
        .collect();
    let list = match named.as_slice() {
        [] => return String::new(),
        [one] => (*one).to_owned(),
        [rest @ .., last] => format!("{}, and {last}", rest.join(", ")),
    };
    format!(
        "[lossless-wasm] This conversation's history is managed by the lossless-wasm context engine. \
         Every message is stored permanently; when older turns are summarized, their details can be \
         recovered: {list}."
    )
}

/// A summary as the model sees it: a user-role message whose text is the summary rendered by
/// [`render_for_context`] (id, depth, time span, how to recover details). Same inputs, same bytes.
pub fn render_summary_message(
    id: i64,
    depth: i64,
    content: &str,
    earliest_at: Option<i64>,
    latest_at: Option<i64>,
) -> String {
    let text = render_summary_text(id, depth, content, earliest_at, latest_at);
    serde_json::json!({ "role": "user", "content": text, "timestamp": latest_at.unwrap_or(0) })
        .to_string()
}

fn render_summary_text(
    id: i64,
    depth: i64,
    content: &str,
    earliest_at: Option<i64>,
    latest_at: Option<i64>,
) -> String {
    let id = id.to_string();
    let depth = u32::try_from(depth).unwrap_or(0);
    render_for_context(&SummaryView {
        id: &id,
        depth,
        earliest_ms: earliest_at,
        latest_ms: latest_at,
        text: content,
    })
}

/// The tokens a summary costs in the view (what [`render_summary_message`] shows the model).
pub fn summary_item_tokens(
    id: i64,
    depth: i64,
    content: &str,
    earliest_at: Option<i64>,
    latest_at: Option<i64>,
) -> u32 {
    estimate_text(&render_summary_text(
        id,
        depth,
        content,
        earliest_at,
        latest_at,
    ))
    .saturating_add(MESSAGE_OVERHEAD_TOKENS)
}

/// How many of the oldest items (given oldest first as `(role, tokens)`, totalling `total`
/// tokens) must go for the rest to fit `budget`: the oldest go first until the rest fits, then
/// any tool results left at the start, since providers reject a result without its call.
pub fn oldest_to_drop(
    oldest_first: impl IntoIterator<Item = (Role, u32)>,
    total: u64,
    budget: u32,
) -> usize {
    let mut remaining = total;
    let mut drop = 0;
    for (role, tokens) in oldest_first {
        if remaining <= u64::from(budget) && role != Role::ToolResult {
            break;
        }
        remaining -= u64::from(tokens).min(remaining);
        drop += 1;
    }
    drop
}

/// What the omission line costs in the view: a fixed allowance, so the budget does not depend
/// on how many digits the count has.
pub const OMISSION_LINE_TOKENS: u32 = 64;

/// The one fixed line that opens a view which had to leave older messages out (when summaries
/// could not keep up): how many are stored, and that the recall tools bring them back. A
/// user-role message, so every provider accepts it first. Undated (timestamp 0); the view's
/// engine dates it with [`dated_omission_message`].
pub fn omission_message(omitted: i64) -> String {
    dated_omission_message(omitted, 0)
}

/// The omission line with the timestamp `at` (ms since the epoch), so a host that renders
/// message dates shows the time the view starts at instead of 1970-01-01.
pub fn dated_omission_message(omitted: i64, at: i64) -> String {
    let text = format!(
        "[lossless-wasm] {omitted} earlier messages of this conversation are stored but left out of this view to fit the \
         context window; lcm_grep searches them and lcm_expand brings them back."
    );
    serde_json::json!({ "role": "user", "content": text, "timestamp": at }).to_string()
}

/// How many of the view's first items may be read for the omission line's date: each is parsed,
/// and a view's cost must not grow with its length for a date.
pub const OMISSION_DATE_LOOKAHEAD: usize = 8;

/// The date for the omission line of a view whose items (oldest first, as JSON) follow it: the
/// first positive numeric `timestamp` among them, the oldest item shown that has one (a summary
/// carries the end of its span). None when none of the first [`OMISSION_DATE_LOOKAHEAD`] has
/// one. Reads only the top-level field.
pub fn omission_date<'a>(items: impl IntoIterator<Item = &'a str>) -> Option<i64> {
    #[derive(serde::Deserialize)]
    struct Stamp {
        #[serde(default)]
        timestamp: Option<serde_json::Value>,
    }
    items
        .into_iter()
        .take(OMISSION_DATE_LOOKAHEAD)
        .find_map(|json| {
            let stamp: Stamp = serde_json::from_str(json).ok()?;
            let at = stamp.timestamp?.as_f64()?;
            (1.0..=9.0e15).contains(&at).then_some(at as i64)
        })
}

/// Text of the result put in for a tool call whose result is not in the view.
pub const UNAVAILABLE_RESULT: &str =
    "[result unavailable: this tool call's result was not recorded]";
/// What such a synthetic result costs in the view.
pub const SYNTHETIC_RESULT_TOKENS: u32 = 24;

/// The tool-call structure of one view item: the calls it issues and the call it answers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolLinks {
    /// `(call id, tool name)` of each tool call an assistant message makes.
    pub calls: Vec<(String, String)>,
    /// The call id a tool result answers.
    pub answers: Option<String>,
}

/// Reads the tool links of a stored message's JSON (tolerant: a message we stored parsed once).
pub fn tool_links(role: Role, raw_json: &str) -> ToolLinks {
    let Ok(value) = serde_json::from_str::<serde_json::Value>(raw_json) else {
        return ToolLinks::default();
    };
    match role {
        Role::Assistant => ToolLinks {
            calls: value["content"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|b| b["type"] == "toolCall")
                .filter_map(|b| {
                    Some((
                        b["id"].as_str()?.to_owned(),
                        b["name"].as_str().unwrap_or("").to_owned(),
                    ))
                })
                .collect(),
            answers: None,
        },
        Role::ToolResult => ToolLinks {
            calls: Vec::new(),
            answers: value["toolCallId"].as_str().map(str::to_owned),
        },
        _ => ToolLinks::default(),
    }
}

/// A tool call in the view whose result is not: providers reject such a transcript, so the view
/// carries a synthetic "result unavailable" result instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DanglingCall {
    /// The synthetic result goes right after this item (the call, or the results that follow it).
    pub after: usize,
    /// The tool call's id (the `toolCallId` its result would carry).
    pub call_id: String,
    /// The name of the tool that was called.
    pub tool_name: String,
}

/// The dangling calls of a view (items oldest first), in view order. One pass from the newest
/// item back, remembering the results seen so far: linear in the view, however many calls it has.
pub fn dangling_calls(links: &[&ToolLinks]) -> Vec<DanglingCall> {
    let mut answered_later: std::collections::HashSet<&str> = std::collections::HashSet::new();
    let mut newest_first = Vec::new();
    for (i, item) in links.iter().enumerate().rev() {
        if !item.calls.is_empty() {
            // Results of a call follow it directly; the synthetic ones go after those.
            let mut after = i;
            while links.get(after + 1).is_some_and(|l| l.answers.is_some()) {
                after += 1;
            }
            for (id, name) in item.calls.iter().rev() {
                if !answered_later.contains(id.as_str()) {
                    newest_first.push(DanglingCall {
                        after,
                        call_id: id.clone(),
                        tool_name: name.clone(),
                    });
                }
            }
        }
        if let Some(answer) = item.answers.as_deref() {
            answered_later.insert(answer);
        }
    }
    newest_first.reverse();
    newest_first
}

/// The synthetic result message for a dangling call.
pub fn unavailable_result(call: &DanglingCall) -> String {
    serde_json::json!({
        "role": "toolResult",
        "toolCallId": call.call_id,
        "toolName": call.tool_name,
        "content": [{ "type": "text", "text": UNAVAILABLE_RESULT }],
        "isError": true,
        "timestamp": 0,
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn total(items: &[(Role, u32)]) -> u64 {
        items.iter().map(|(_, t)| u64::from(*t)).sum()
    }

    #[test]
    fn drops_the_oldest_until_the_rest_fits() {
        let items = [(Role::User, 10), (Role::Assistant, 10), (Role::User, 10)];
        assert_eq!(oldest_to_drop(items, total(&items), 30), 0);
        assert_eq!(oldest_to_drop(items, total(&items), 25), 1);
        assert_eq!(oldest_to_drop(items, total(&items), 5), 3);
        assert_eq!(oldest_to_drop([], 0, 100), 0);
    }

    #[test]
    fn view_never_starts_with_an_orphaned_tool_result() {
        let items = [
            (Role::User, 10),
            (Role::Assistant, 10),
            (Role::ToolResult, 10),
            (Role::ToolResult, 10),
            (Role::Assistant, 10),
        ];
        assert_eq!(oldest_to_drop(items, total(&items), 35), 4);
        assert_eq!(oldest_to_drop(items, total(&items), 45), 1);
    }

    /// The quadratic definition the linear pass must agree with.
    fn dangling_by_definition(links: &[&ToolLinks]) -> Vec<(usize, String)> {
        let mut out = Vec::new();
        for (i, item) in links.iter().enumerate() {
            let answered: Vec<&str> = links[i + 1..]
                .iter()
                .filter_map(|l| l.answers.as_deref())
                .collect();
            let mut after = i;
            while links.get(after + 1).is_some_and(|l| l.answers.is_some()) {
                after += 1;
            }
            for (id, _) in &item.calls {
                if !answered.contains(&id.as_str()) {
                    out.push((after, id.clone()));
                }
            }
        }
        out
    }

    #[test]
    fn the_linear_dangling_pass_matches_the_definition() {
        // Calls of 1-3 ids, results for some of them, in several orders; deterministic variety.
        let mut seed = 17u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize
        };
        for _ in 0..200 {
            let mut items = Vec::new();
            for n in 0..(next() % 12) {
                items.push(match next() % 3 {
                    0 => ToolLinks {
                        calls: (0..1 + next() % 3)
                            .map(|k| (format!("c{}", (n + k) % 7), "t".to_owned()))
                            .collect(),
                        answers: None,
                    },
                    1 => ToolLinks {
                        calls: Vec::new(),
                        answers: Some(format!("c{}", next() % 7)),
                    },
                    _ => ToolLinks::default(),
                });
            }
            let links: Vec<&ToolLinks> = items.iter().collect();
            let fast: Vec<(usize, String)> = dangling_calls(&links)
                .into_iter()
                .map(|d| (d.after, d.call_id))
                .collect();
            assert_eq!(fast, dangling_by_definition(&links));
        }
    }

    #[test]
    fn a_dangling_tool_call_gets_a_synthetic_result_after_its_answered_siblings() {
        let call = tool_links(
            Role::Assistant,
            r#"{"role":"assistant","content":[{"type":"toolCall","id":"a","name":"ls"},{"type":"toolCall","id":"b","name":"cat"}]}"#,
        );
        let result_a = tool_links(
            Role::ToolResult,
            r#"{"role":"toolResult","toolCallId":"a","content":[]}"#,
        );
        let user = ToolLinks::default();
        let dangling = dangling_calls(&[&call, &result_a, &user]);
        assert_eq!(
            dangling,
            vec![DanglingCall {
                after: 1,
                call_id: "b".into(),
                tool_name: "cat".into()
            }]
        );
        assert!(unavailable_result(&dangling[0]).contains("\"toolCallId\":\"b\""));
        assert!(dangling_calls(&[&user, &result_a]).is_empty());
        assert_eq!(
            tool_links(Role::Assistant, "not json"),
            ToolLinks::default()
        );
    }

    #[test]
    fn the_omission_line_counts_the_messages_and_fits_its_allowance() {
        let line = omission_message(1_234_567);
        assert!(
            line.contains("1234567 earlier messages of this conversation are stored"),
            "{line}"
        );
        assert!(line.contains("lcm_grep") && line.contains("\"role\":\"user\""));
        assert!(estimate_text(&line) + MESSAGE_OVERHEAD_TOKENS <= OMISSION_LINE_TOKENS);
    }

    fn tools(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| (*n).to_owned()).collect()
    }

    #[test]
    fn the_addition_names_only_the_recall_tools_the_model_can_call() {
        // Unknown tool set (older hosts, browser embedders): all four, as before.
        assert_eq!(system_prompt_addition(None), SYSTEM_PROMPT_ADDITION);
        let all = tools(&["read", "lcm_ask", "lcm_expand", "lcm_describe", "lcm_grep"]);
        assert_eq!(system_prompt_addition(Some(&all)), SYSTEM_PROMPT_ADDITION);
        // tools.profile "minimal": none of them; a memory-flush run: no tools at all.
        assert_eq!(system_prompt_addition(Some(&tools(&["read", "exec"]))), "");
        assert_eq!(system_prompt_addition(Some(&[])), "");
        let two = system_prompt_addition(Some(&tools(&["lcm_expand", "exec", "lcm_grep"])));
        assert!(
            two.ends_with("recovered: lcm_grep searches all stored history, and lcm_expand brings back a summary's original messages."),
            "{two}"
        );
        assert!(
            !two.contains("lcm_describe") && !two.contains("lcm_ask"),
            "{two}"
        );
        let one = system_prompt_addition(Some(&tools(&["lcm_ask"])));
        assert!(
            one.contains("recovered: lcm_ask answers") && !one.contains("lcm_grep"),
            "{one}"
        );
    }

    #[test]
    fn the_addition_is_byte_stable_for_the_same_recall_tools() {
        let a = system_prompt_addition(Some(&tools(&["lcm_grep", "lcm_describe", "web"])));
        let b = system_prompt_addition(Some(&tools(&["exec", "lcm_describe", "lcm_grep"])));
        assert_eq!(a, b, "order and other tools do not change the text");
    }

    #[test]
    fn the_omission_line_is_dated_by_the_oldest_item_shown() {
        let items = [
            r#"{"role":"user","content":"x"}"#,
            r#"{"role":"user","content":"y","timestamp":0}"#,
            r#"{"role":"assistant","content":[],"timestamp":1764800000000}"#,
            r#"{"role":"user","content":"z","timestamp":1764800009999}"#,
        ];
        assert_eq!(omission_date(items), Some(1_764_800_000_000));
        assert_eq!(
            omission_date([r#"{"timestamp":"2026-01-01"}"#, "not json"]),
            None
        );
        let line = dated_omission_message(12, 1_764_800_000_000);
        assert!(line.contains("\"timestamp\":1764800000000"), "{line}");
        assert_eq!(line, dated_omission_message(12, 1_764_800_000_000));
        assert!(estimate_text(&line) + MESSAGE_OVERHEAD_TOKENS <= OMISSION_LINE_TOKENS);
        assert!(omission_message(12).contains("\"timestamp\":0"));
    }

    #[test]
    fn summary_rendering_is_deterministic_and_points_to_recall_tools() {
        let a = render_summary_message(7, 1, "text", Some(1), Some(2));
        assert_eq!(a, render_summary_message(7, 1, "text", Some(1), Some(2)));
        assert!(
            a.contains("lcm_expand") && a.contains("id=\\\"7\\\""),
            "{a}"
        );
        assert!(summary_item_tokens(7, 1, "text", Some(1), Some(2)) > MESSAGE_OVERHEAD_TOKENS);
    }
}
