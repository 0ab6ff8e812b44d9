//! Recognising a user message of the host's transcript that a turn already stored in another
//! shape. OpenClaw 2026.7 keeps two copies of each user message: its transcript (JSONL) holds the
//! message it prepared when the turn was admitted (`content` a string, `timestamp` the admission
//! time), while the agent's own copy, which `afterTurn` hands over and the store keeps, has the
//! same words as text parts (`[{type:"text",text}]`) and the time the model was prompted, a few
//! hundred milliseconds to seconds later. Their content identities differ in both fields, so a
//! catch-up from the transcript would store every user message twice.
//!
//! Here a transcript message and a stored one are the same user turn when both are user messages
//! of text only, their plain texts are equal, and the stored one was stamped at the transcript
//! one's time or up to [`SAME_TURN_WINDOW_MS`] after it. Each stored message stands for at most
//! one transcript message (the nearest in time first), so the same words sent twice are two
//! messages, and a lost one among them is still stored once.

use std::collections::HashMap;

use super::message::{PartKind, Role, StoredMessage};

/// How long after the transcript's timestamp the agent's copy of a user message may be stamped
/// (observed: 0.2–1.1 s on a loaded 2-core machine, the first turn after a gateway restart the
/// slowest). Generous, so a slow turn start is still recognised; the words must match exactly.
pub const SAME_TURN_WINDOW_MS: i64 = 300_000;

/// What a user message is compared by: its plain text and its timestamp.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserTurnKey<'a> {
    /// The message's plain text.
    pub text: &'a str,
    /// The host's epoch-millisecond timestamp.
    pub at_ms: i64,
}

/// The key of a user message whose content is text only (a string or text parts), with a
/// timestamp; None for any other message (other roles, images, files, no timestamp), which only
/// its content identity recognises.
pub fn user_turn_key(message: &StoredMessage) -> Option<UserTurnKey<'_>> {
    if message.role != Role::User || message.parts.iter().any(|p| p.kind != PartKind::Text) {
        return None;
    }
    Some(UserTurnKey {
        text: &message.text,
        at_ms: message.timestamp_ms?,
    })
}

/// For each of `transcript` (None: a message that has no key), whether one of `stored` is the same
/// user turn. Pairs are taken nearest in time first, each stored message at most once.
pub fn matched_in_store(
    transcript: &[Option<UserTurnKey<'_>>],
    stored: &[UserTurnKey<'_>],
) -> Vec<bool> {
    // Stored messages by their words: a whole transcript read after a restart compares
    // thousands of messages, each with the few that have its words.
    let mut by_text: HashMap<&str, Vec<usize>> = HashMap::new();
    for (j, s) in stored.iter().enumerate() {
        by_text.entry(s.text).or_default().push(j);
    }
    let mut pairs: Vec<(i64, usize, usize)> = Vec::new();
    for (i, t) in transcript.iter().enumerate() {
        let Some(t) = t else { continue };
        for &j in by_text.get(t.text).map(Vec::as_slice).unwrap_or_default() {
            let after = stored[j].at_ms.saturating_sub(t.at_ms);
            if (0..=SAME_TURN_WINDOW_MS).contains(&after) {
                pairs.push((after, i, j));
            }
        }
    }
    pairs.sort_unstable();
    let mut matched = vec![false; transcript.len()];
    let mut used = vec![false; stored.len()];
    for (_, i, j) in pairs {
        if !matched[i] && !used[j] {
            matched[i] = true;
            used[j] = true;
        }
    }
    matched
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::message::parse_message;
    use serde_json::json;

    fn key(text: &str, at_ms: i64) -> UserTurnKey<'_> {
        UserTurnKey { text, at_ms }
    }

    #[test]
    fn a_string_and_text_parts_with_the_same_words_give_the_same_key() {
        let transcript = parse_message(
            &json!({"role": "user", "content": "note 4", "timestamp": 1000}),
            "t",
        )
        .unwrap();
        let agent = parse_message(&json!({"role": "user", "content": [{"type": "text", "text": "note 4"}], "timestamp": 1900}), "a").unwrap();
        assert_ne!(
            transcript.identity, agent.identity,
            "the identities differ (shape and time)"
        );
        assert_eq!(user_turn_key(&transcript), Some(key("note 4", 1000)));
        assert_eq!(user_turn_key(&agent), Some(key("note 4", 1900)));
    }

    #[test]
    fn only_text_only_user_messages_with_a_timestamp_have_a_key() {
        let cases = [
            json!({"role": "assistant", "content": [{"type": "text", "text": "hi"}], "timestamp": 1}),
            json!({"role": "user", "content": "no time"}),
            json!({"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "image", "data": "x", "mimeType": "image/png"}], "timestamp": 1}),
        ];
        for (i, m) in cases.iter().enumerate() {
            assert_eq!(
                user_turn_key(&parse_message(m, "m").unwrap()),
                None,
                "case {i}"
            );
        }
    }

    #[test]
    fn the_stored_copy_must_follow_within_the_window_with_the_same_words() {
        let t = [Some(key("note", 1000))];
        assert_eq!(
            matched_in_store(&t, &[key("note", 1000)]),
            [true],
            "same time"
        );
        assert_eq!(
            matched_in_store(&t, &[key("note", 1000 + SAME_TURN_WINDOW_MS)]),
            [true],
            "window end"
        );
        assert_eq!(
            matched_in_store(&t, &[key("note", 1001 + SAME_TURN_WINDOW_MS)]),
            [false],
            "after the window"
        );
        assert_eq!(
            matched_in_store(&t, &[key("note", 999)]),
            [false],
            "stamped before the transcript's copy"
        );
        assert_eq!(
            matched_in_store(&t, &[key("note!", 1200)]),
            [false],
            "other words"
        );
        assert_eq!(
            matched_in_store(&[None], &[key("note", 1000)]),
            [false],
            "no key"
        );
    }

    #[test]
    fn each_stored_message_stands_for_one_transcript_message_nearest_first() {
        // The same words sent twice, both stored: both recognised, each by its own copy.
        let t = [Some(key("ok", 1000)), Some(key("ok", 2000))];
        assert_eq!(
            matched_in_store(&t, &[key("ok", 1500), key("ok", 2400)]),
            [true, true]
        );
        // ... the first one lost (a crash): only one copy, the second message's (nearest).
        assert_eq!(matched_in_store(&t, &[key("ok", 2400)]), [false, true]);
        // Nothing stored: both are new.
        assert_eq!(matched_in_store(&t, &[]), [false, false]);
    }
}
