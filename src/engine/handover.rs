//! Handing the view over incrementally. The host asks for the view at least once per turn, and a
//! turn changes a few items of a view that may hold thousands of messages; serializing and
//! parsing all of them again is the cost that would dominate a turn. So the caller (the JS shim)
//! keeps the decoded messages of the view it was last given, identified by a token, and each
//! hand-over sends the view as keys plus the JSON of only the entries the caller does not hold.
//!
//! Keys: a message's id (its JSON never changes; a stubbed message's key adds its stub variant
//! times 2^44, since its JSON is the stub's), a summary's negated id (valid only within the
//! epoch it was sent in, `View::summaries_epoch`: a repair rewrites summaries in
//! place and moves the epoch on; a compaction writes new summaries and keeps it), and
//! 0 for lines the view makes up (always sent). A token that is not the one this engine last
//! issued for the conversation (another caller, a restart, a lost cache) gets everything.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// A hasher for the integer keys: one multiply, instead of SipHash on every lookup.
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_i64(&mut self, n: i64) {
        self.0 = (n as u64)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .rotate_left(29);
    }
}

type KeySet = HashSet<i64, BuildHasherDefault<KeyHasher>>;

/// What was last handed over for one conversation.
#[derive(Debug, Default)]
struct Sent {
    token: u64,
    epoch: i64,
    keys: KeySet,
}

/// A view as keys and the JSON of the entries the caller lacks.
#[derive(Debug, Clone, PartialEq)]
pub struct Handover {
    /// Names this hand-over; the caller passes it back on its next call.
    pub token: u64,
    /// One key per view message, in order.
    pub keys: Vec<f64>,
    /// 1 where the entry's JSON is in `fresh_json`, 0 where the caller holds it.
    pub fresh: Vec<u8>,
    /// A JSON array of the fresh entries, in view order.
    pub fresh_json: String,
}

/// The hand-over state of every conversation.
#[derive(Debug, Default)]
pub struct Handovers {
    last_token: u64,
    sent: HashMap<i64, Sent>,
}

/// Conversations whose hand-over state is kept; beyond that it starts over (callers then get
/// everything once).
const MAX_TRACKED: usize = 64;

impl Handovers {
    /// Hands over `entries` (a view of `conversation_id` in context epoch `epoch`) to a caller
    /// that holds the hand-over named `held`.
    pub fn hand_over(
        &mut self,
        conversation_id: i64,
        epoch: i64,
        held: Option<u64>,
        entries: &[(i64, Cow<'_, str>)],
    ) -> Handover {
        if self.sent.len() >= MAX_TRACKED && !self.sent.contains_key(&conversation_id) {
            self.sent.clear();
        }
        self.last_token += 1;
        let token = self.last_token;
        let sent = self.sent.entry(conversation_id).or_default();
        let holds = held.is_some_and(|t| t == sent.token);
        let same_epoch = sent.epoch == epoch;
        let mut keys = Vec::with_capacity(entries.len());
        let mut fresh = Vec::with_capacity(entries.len());
        let mut fresh_json = String::from("[");
        for (key, json) in entries {
            let held_here =
                holds && *key != 0 && (*key > 0 || same_epoch) && sent.keys.contains(key);
            keys.push(*key as f64);
            fresh.push(u8::from(!held_here));
            if !held_here {
                if fresh_json.len() > 1 {
                    fresh_json.push(',');
                }
                fresh_json.push_str(json);
            }
        }
        fresh_json.push(']');
        sent.keys.clear();
        sent.keys
            .extend(entries.iter().map(|(k, _)| *k).filter(|k| *k != 0));
        sent.token = token;
        sent.epoch = epoch;
        Handover {
            token,
            keys,
            fresh,
            fresh_json,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(keys: &[i64]) -> Vec<(i64, Cow<'static, str>)> {
        keys.iter()
            .map(|k| (*k, Cow::Owned(format!("{{\"k\":{k}}}"))))
            .collect()
    }

    #[test]
    fn a_first_hand_over_sends_everything() {
        let mut h = Handovers::default();
        let out = h.hand_over(1, 0, None, &entries(&[0, 5, 6, -2]));
        assert_eq!(out.fresh, vec![1, 1, 1, 1]);
        assert_eq!(out.fresh_json, r#"[{"k":0},{"k":5},{"k":6},{"k":-2}]"#);
        assert_eq!(out.keys, vec![0.0, 5.0, 6.0, -2.0]);
    }

    #[test]
    fn the_holder_of_the_last_token_gets_only_new_entries_and_made_up_lines() {
        let mut h = Handovers::default();
        let first = h.hand_over(1, 0, None, &entries(&[5, 6, -2]));
        let second = h.hand_over(1, 0, Some(first.token), &entries(&[0, 6, -2, 7]));
        assert_eq!(second.fresh, vec![1, 0, 0, 1]);
        assert_eq!(second.fresh_json, r#"[{"k":0},{"k":7}]"#);
        // An old token (or none) gets everything again.
        let stale = h.hand_over(1, 0, Some(first.token), &entries(&[6, 7]));
        assert_eq!(stale.fresh, vec![1, 1]);
    }

    #[test]
    fn summaries_are_resent_after_an_epoch_change_but_messages_are_not() {
        let mut h = Handovers::default();
        let first = h.hand_over(1, 3, None, &entries(&[-2, 5]));
        let second = h.hand_over(1, 4, Some(first.token), &entries(&[-2, 5]));
        assert_eq!(second.fresh, vec![1, 0]);
    }

    #[test]
    fn tokens_do_not_carry_across_conversations() {
        let mut h = Handovers::default();
        let a = h.hand_over(1, 0, None, &entries(&[5]));
        let b = h.hand_over(2, 0, Some(a.token), &entries(&[5]));
        assert_eq!(b.fresh, vec![1]);
    }
}
