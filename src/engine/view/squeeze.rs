//! When the active task alone does not fit the view's budget: its big tool outputs become
//! head-and-tail excerpts, each with its stub line (`lcm_expand` brings the whole output back),
//! instead of anything of it leaving the view. Requests and the assistant's text are never cut.
//!
//! The excerpt size is one cap for all of them, the largest that makes the view fit: outputs
//! above the cap are cut to it, smaller ones stay whole. The cap is rounded down to a power of
//! two ([`excerpt_tokens`]), so the same pressure gives the same bytes on every turn (the
//! provider's prompt cache keeps its prefix) and each size has a handover key of its own. A
//! view-time excerpt is not stored: when the budget grows again the view is rebuilt whole.

use serde_json::Value;

use crate::core::masking::stub::MIN_EXCERPT_TOKENS;
use crate::core::masking::{excerpt_tokens, render_excerpt, Original, ToolCall};
use crate::core::message::Role;

/// Handover variants of view-time excerpts start here, apart from the stored stubs' variants
/// (a line stub is 1, a stored excerpt 2 and up), so a key never names two different byte
/// strings.
pub(super) const VIEW_EXCERPT_VARIANT_BASE: i64 = 16;
/// What an excerpt adds besides its head and tail (the left-out line and the stub line).
const EXCERPT_FRAMING_TOKENS: u64 = 80;

/// One item the squeeze may cut: its index in the view and its tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Cuttable {
    pub index: usize,
    pub tokens: u32,
}

/// The excerpt size that takes `over` tokens out of the view, cutting the largest of
/// `cuttable` first down to one common cap (never below [`MIN_EXCERPT_TOKENS`]); None when
/// nothing is above the smallest excerpt.
pub(super) fn cap_for(cuttable: &[Cuttable], over: u64) -> Option<u32> {
    let mut sizes: Vec<u64> = cuttable
        .iter()
        .map(|c| u64::from(c.tokens))
        .filter(|t| *t > u64::from(MIN_EXCERPT_TOKENS) + EXCERPT_FRAMING_TOKENS)
        .collect();
    if sizes.is_empty() {
        return None;
    }
    sizes.sort_unstable_by(|a, b| b.cmp(a));
    let mut sum = 0u64;
    for (k, size) in sizes.iter().enumerate() {
        sum += size;
        let n = k as u64 + 1;
        let next = sizes.get(k + 1).copied().unwrap_or(0);
        // Cutting the n largest to `cap` saves sum − n × (cap + framing).
        let cap = sum
            .saturating_sub(over)
            .checked_div(n)
            .unwrap_or(0)
            .saturating_sub(EXCERPT_FRAMING_TOKENS);
        if cap >= next {
            return Some(excerpt_tokens(u32::try_from(cap).unwrap_or(u32::MAX)));
        }
    }
    Some(MIN_EXCERPT_TOKENS)
}

/// A tool call's name and its arguments as compact JSON, from the assistant message that
/// makes it.
pub(super) fn call_in(assistant_json: &str, call_id: &str) -> Option<(String, String)> {
    let value: Value = serde_json::from_str(assistant_json).ok()?;
    let block = value["content"]
        .as_array()?
        .iter()
        .find(|b| b["type"] == "toolCall" && b["id"].as_str() == Some(call_id))?;
    Some((
        block["name"].as_str().unwrap_or_default().to_owned(),
        block
            .get("arguments")
            .map_or_else(String::new, Value::to_string),
    ))
}

/// The excerpt of a stored tool output at `cap` tokens: its JSON, tokens and handover variant.
/// None when the message cannot be read or the excerpt would not be shorter.
pub(super) fn excerpt(
    message_id: i64,
    role: Role,
    json: &str,
    tokens: u32,
    call: Option<&(String, String)>,
    cap: u32,
) -> Option<(String, u32, i64)> {
    let value: Value = serde_json::from_str(json).ok()?;
    let original = Original {
        message_id,
        role,
        value: &value,
        tokens,
        call: call.map(|(name, arguments)| ToolCall { name, arguments }),
    };
    let rendered = render_excerpt(&original, cap).ok()??;
    Some((
        rendered.json,
        rendered.tokens,
        VIEW_EXCERPT_VARIANT_BASE + rendered.variant,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::masking::stub::MAX_EXCERPT_TOKENS;

    fn cut(sizes: &[u32]) -> Vec<Cuttable> {
        sizes
            .iter()
            .enumerate()
            .map(|(index, &tokens)| Cuttable { index, tokens })
            .collect()
    }

    #[test]
    fn the_cap_cuts_the_largest_first_and_is_a_power_of_two() {
        // 20,000 + 3,000 + 200: taking 10,000 out cuts only the largest, to at most 10,000.
        let cap = cap_for(&cut(&[20_000, 3_000, 200]), 10_000).unwrap();
        assert!(
            cap.is_power_of_two() && cap <= 10_000 && cap > 3_000,
            "{cap}"
        );
        // Taking out nearly everything cuts every output above the smallest excerpt to it.
        assert_eq!(
            cap_for(&cut(&[20_000, 3_000]), 50_000),
            Some(MIN_EXCERPT_TOKENS)
        );
        // A small pressure on a huge output is bounded by the largest excerpt size.
        assert_eq!(cap_for(&cut(&[200_000]), 10), Some(MAX_EXCERPT_TOKENS));
        assert_eq!(cap_for(&cut(&[300, 100]), 1_000), None);
        assert_eq!(cap_for(&[], 1_000), None);
    }

    #[test]
    fn a_tool_output_excerpt_keeps_its_pairing_and_points_to_lcm_expand() {
        let text = (0..2_000)
            .map(|i| format!("line {i}\n"))
            .collect::<String>();
        let json = serde_json::json!({"role": "toolResult", "toolCallId": "c1", "toolName": "read",
            "content": [{"type": "text", "text": text}], "isError": false, "timestamp": 5})
        .to_string();
        let call = call_in(
            r#"{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"a.rs"}}]}"#,
            "c1",
        );
        assert_eq!(
            call,
            Some(("read".to_owned(), r#"{"path":"a.rs"}"#.to_owned()))
        );
        let (cut, tokens, variant) =
            excerpt(42, Role::ToolResult, &json, 4_000, call.as_ref(), 512).unwrap();
        assert!(tokens < 1_000, "{tokens}");
        assert!(variant > VIEW_EXCERPT_VARIANT_BASE);
        assert!(
            cut.contains("\"toolCallId\":\"c1\"")
                && cut.contains("line 0")
                && cut.contains("line 1999")
        );
        assert!(
            cut.contains("head and tail shown above; lcm_expand {\\\"messageId\\\": 42}"),
            "{cut}"
        );
        assert_eq!(
            excerpt(42, Role::ToolResult, &json, 4_000, call.as_ref(), 512)
                .unwrap()
                .0,
            cut,
            "same inputs, same bytes"
        );
        assert_eq!(
            excerpt(42, Role::ToolResult, "not json", 4_000, None, 512),
            None
        );
    }
}
