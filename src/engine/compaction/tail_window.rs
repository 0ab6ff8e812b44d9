//! The newest raw messages' token counts per conversation, kept between turns for the per-turn
//! trigger, which needs the fresh tail's tokens after every stored turn. Reading them back from
//! `context_items` was the slowest statement of a 4-message turn (~25-60 µs of ~250 µs in
//! node:sqlite, however few rows it read). A turn only appends, so the kept window is advanced by
//! the token counts the turn appended, and read again from the store only when the conversation
//! shows that something else changed it.
//!
//! A window is valid for a conversation state named by its [`Stamp`]: the context epoch (bumped
//! by every compaction, import and repair that replaces items), the last context ordinal (moved
//! only by appends) and the raw messages' running token total (moved by appends and by anything
//! that removes messages from the context). A turn that appended `k` messages of `t` tokens may
//! advance a window whose stamp is exactly (epoch, ordinal − k, raw − t); any other change (another
//! process's turn, a compaction, a rolled-back turn) fails the check and the window is read
//! again. This module holds no SQL; the trigger reads the store.

use std::collections::{HashMap, VecDeque};

/// The state of a conversation's context a window was taken from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    pub epoch: i64,
    pub last_ordinal: i64,
    pub raw_tokens: i64,
}

#[derive(Debug, Clone)]
struct Window {
    stamp: Stamp,
    count: u32,
    /// Token counts of the newest `count` raw messages, oldest first.
    tokens: VecDeque<i64>,
}

/// Windows per conversation id.
#[derive(Debug, Default)]
pub(crate) struct TailWindows {
    windows: HashMap<i64, Window>,
}

impl TailWindows {
    /// The window of `conversation_id` at `stamp`, advanced by `appended` (the token counts of
    /// the message items just appended, oldest first) when its stamp shows nothing else changed;
    /// None when it must be read from the store.
    pub(crate) fn advance(
        &mut self,
        conversation_id: i64,
        count: u32,
        stamp: Stamp,
        appended: Option<&[i64]>,
    ) -> Option<Vec<i64>> {
        let appended = appended?;
        let window = self.windows.get_mut(&conversation_id)?;
        let added: i64 = appended.iter().sum();
        let before = Stamp {
            epoch: stamp.epoch,
            last_ordinal: stamp.last_ordinal - appended.len() as i64,
            raw_tokens: stamp.raw_tokens - added,
        };
        if window.count != count || window.stamp != before {
            self.windows.remove(&conversation_id);
            return None;
        }
        window.tokens.extend(appended.iter().copied());
        while window.tokens.len() > count as usize {
            window.tokens.pop_front();
        }
        window.stamp = stamp;
        Some(window.tokens.iter().copied().collect())
    }

    /// Keeps `tokens` (the newest `count` raw messages' token counts, oldest first) as the
    /// window of `conversation_id` at `stamp`.
    pub(crate) fn store(
        &mut self,
        conversation_id: i64,
        count: u32,
        stamp: Stamp,
        tokens: Vec<i64>,
    ) {
        self.windows.insert(
            conversation_id,
            Window {
                stamp,
                count,
                tokens: tokens.into(),
            },
        );
    }

    /// Forgets every window (a turn rolled back: what it appended is not in the store).
    pub(crate) fn clear(&mut self) {
        self.windows.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamp(last_ordinal: i64, raw_tokens: i64) -> Stamp {
        Stamp {
            epoch: 0,
            last_ordinal,
            raw_tokens,
        }
    }

    #[test]
    fn a_window_advances_only_from_the_state_it_was_taken_at() {
        let mut windows = TailWindows::default();
        windows.store(1, 3, stamp(10, 100), vec![5, 7, 9]);
        assert_eq!(
            windows.advance(1, 3, stamp(12, 123), Some(&[11, 12])),
            Some(vec![9, 11, 12])
        );
        // Something else appended too (the ordinal moved by 3, the turn appended 2): read again.
        assert_eq!(windows.advance(1, 3, stamp(15, 150), Some(&[13, 14])), None);
        windows.store(1, 3, stamp(15, 150), vec![1, 13, 14]);
        // A compaction bumped the epoch.
        assert_eq!(
            windows.advance(
                1,
                3,
                Stamp {
                    epoch: 1,
                    last_ordinal: 16,
                    raw_tokens: 160
                },
                Some(&[10])
            ),
            None
        );
        // No window, an unknown append (a duplicate was skipped), another tail count: read again.
        assert_eq!(windows.advance(2, 3, stamp(1, 1), Some(&[1])), None);
        windows.store(1, 3, stamp(15, 150), vec![1, 13, 14]);
        assert_eq!(windows.advance(1, 3, stamp(16, 160), None), None);
        windows.store(1, 3, stamp(15, 150), vec![1, 13, 14]);
        assert_eq!(windows.advance(1, 4, stamp(16, 160), Some(&[10])), None);
        windows.store(1, 3, stamp(15, 150), vec![1, 13, 14]);
        windows.clear();
        assert_eq!(windows.advance(1, 3, stamp(16, 160), Some(&[10])), None);
    }
}
