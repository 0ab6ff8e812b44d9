//! Assembly of the model's view: which stored messages, newest first, fit the token budget.
//! Pure selection over (role, tokens) pairs; the engine supplies them and renders the result.
//! A view never starts with a tool result whose call was cut off, because providers reject a
//! result without its call.

use super::compaction::format::{render_for_context, SummaryView};
use super::message::Role;
use super::tokens::{estimate_text, MESSAGE_OVERHEAD_TOKENS};

/// The static system-prompt addition. It never varies between turns: a changing system prompt
/// would invalidate the provider's prompt cache on every turn.
pub const SYSTEM_PROMPT_ADDITION: &str = "[lossless-wasm] This conversation's history is managed by the \
lossless-wasm context engine. Every message is stored permanently; when older turns are summarized, \
their details can be recovered.";

/// A summary as the model sees it: a user-role message whose text is the summary rendered by
/// [`render_for_context`] (id, depth, time span, how to recover details). Same inputs, same bytes.
pub fn render_summary_message(id: i64, depth: i64, content: &str, earliest_at: Option<i64>, latest_at: Option<i64>) -> String {
    let text = render_summary_text(id, depth, content, earliest_at, latest_at);
    serde_json::json!({ "role": "user", "content": text, "timestamp": latest_at.unwrap_or(0) }).to_string()
}

fn render_summary_text(id: i64, depth: i64, content: &str, earliest_at: Option<i64>, latest_at: Option<i64>) -> String {
    let id = id.to_string();
    let depth = u32::try_from(depth).unwrap_or(0);
    render_for_context(&SummaryView { id: &id, depth, earliest_ms: earliest_at, latest_ms: latest_at, text: content })
}

/// The tokens a summary costs in the view (what [`render_summary_message`] shows the model).
pub fn summary_item_tokens(id: i64, depth: i64, content: &str, earliest_at: Option<i64>, latest_at: Option<i64>) -> u32 {
    estimate_text(&render_summary_text(id, depth, content, earliest_at, latest_at)).saturating_add(MESSAGE_OVERHEAD_TOKENS)
}

/// How many of the oldest items (given oldest first as `(role, tokens)`, totalling `total`
/// tokens) must go for the rest to fit `budget`: the oldest go first until the rest fits, then
/// any tool results left at the start, since providers reject a result without its call.
pub fn oldest_to_drop(oldest_first: impl IntoIterator<Item = (Role, u32)>, total: u64, budget: u32) -> usize {
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
        let items = [(Role::User, 10), (Role::Assistant, 10), (Role::ToolResult, 10), (Role::ToolResult, 10), (Role::Assistant, 10)];
        assert_eq!(oldest_to_drop(items, total(&items), 35), 4);
        assert_eq!(oldest_to_drop(items, total(&items), 45), 1);
    }

    #[test]
    fn summary_rendering_is_deterministic_and_points_to_recall_tools() {
        let a = render_summary_message(7, 1, "text", Some(1), Some(2));
        assert_eq!(a, render_summary_message(7, 1, "text", Some(1), Some(2)));
        assert!(a.contains("lcm_expand") && a.contains("id=\\\"7\\\""), "{a}");
        assert!(summary_item_tokens(7, 1, "text", Some(1), Some(2)) > MESSAGE_OVERHEAD_TOKENS);
    }
}
