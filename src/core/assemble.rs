//! Assembly of the model's view: which stored messages, newest first, fit the token budget.
//! Pure selection over (role, tokens) pairs; the engine supplies them and renders the result.
//! A view never starts with a tool result whose call was cut off, because providers reject a
//! result without its call.

use super::message::Role;

/// The static system-prompt addition. It never varies between turns: a changing system prompt
/// would invalidate the provider's prompt cache on every turn.
pub const SYSTEM_PROMPT_ADDITION: &str = "[lossless-wasm] This conversation's history is managed by the \
lossless-wasm context engine. Every message is stored permanently; when older turns are summarized, \
their details can be recovered.";

/// A summary as the model sees it: a user-role message carrying the summary text, its id,
/// depth and time span, and how to recover details. Same inputs, same bytes.
pub fn render_summary_message(id: i64, depth: i64, content: &str, earliest_at: Option<i64>, latest_at: Option<i64>) -> String {
    let span = match (earliest_at, latest_at) {
        (Some(a), Some(b)) => format!(" span_ms=\"{a}..{b}\""),
        _ => String::new(),
    };
    let text = format!(
        "<lossless-summary id=\"{id}\" depth=\"{depth}\"{span}>\n{content}\n</lossless-summary>\n\
         (Earlier messages summarized. Use lcm_expand with this id or lcm_grep to recover details.)"
    );
    serde_json::json!({ "role": "user", "content": text, "timestamp": latest_at.unwrap_or(0) }).to_string()
}

/// What the selection needs to know about one stored message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Candidate {
    pub role: Role,
    pub tokens: u32,
}

/// Given candidates ordered newest first, returns how many of them form the view.
/// Stops at the first message that would exceed `budget`, then drops tool results that would
/// open the view without their call.
pub fn select_newest(newest_first: &[Candidate], budget: u32) -> usize {
    let mut used: u64 = 0;
    let mut take = 0;
    for candidate in newest_first {
        used += u64::from(candidate.tokens);
        if used > u64::from(budget) {
            break;
        }
        take += 1;
    }
    // The oldest selected message is at index take-1; orphaned results there are dropped.
    while take > 0 && newest_first[take - 1].role == Role::ToolResult {
        take -= 1;
    }
    take
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(role: Role, tokens: u32) -> Candidate {
        Candidate { role, tokens }
    }

    #[test]
    fn takes_newest_messages_within_budget() {
        let msgs = [c(Role::Assistant, 10), c(Role::User, 10), c(Role::Assistant, 10)];
        assert_eq!(select_newest(&msgs, 25), 2);
        assert_eq!(select_newest(&msgs, 30), 3);
        assert_eq!(select_newest(&msgs, 5), 0);
        assert_eq!(select_newest(&[], 100), 0);
    }

    #[test]
    fn view_never_starts_with_an_orphaned_tool_result() {
        // newest first: assistant, toolResult, toolResult, assistant(call), user
        let msgs = [c(Role::Assistant, 10), c(Role::ToolResult, 10), c(Role::ToolResult, 10), c(Role::Assistant, 10), c(Role::User, 10)];
        assert_eq!(select_newest(&msgs, 35), 1);
        assert_eq!(select_newest(&msgs, 40), 4);
    }
}
