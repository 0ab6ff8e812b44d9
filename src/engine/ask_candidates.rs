//! The evidence candidates `lcm_ask` gathers for one question: stored rows turned into
//! [`Candidate`]s, and the set that loads each row once. Shared by the lexical round (`ask.rs`)
//! and the semantic rounds (`hybrid.rs`), so that neither imports the other's internals.

use std::collections::HashSet;

use crate::core::ask::evidence::{Candidate, Origin};
use crate::store::recall::{MessageRow, SummaryRow};

/// A stored message as an evidence candidate found by `origin` (also the semantic round's).
pub(super) fn from_message(m: MessageRow, origin: Origin) -> Candidate {
    Candidate {
        kind: "message",
        id: m.id,
        conversation_id: m.conversation_id,
        role: m.role,
        at: m.timestamp,
        text: m.content,
        origin,
        follows: None,
    }
}

pub(super) fn from_summary(s: SummaryRow, origin: Origin) -> Candidate {
    Candidate {
        kind: "summary",
        id: s.id,
        conversation_id: s.conversation_id,
        role: "summary".into(),
        at: s.latest_at.unwrap_or(s.created_at),
        text: s.content,
        origin,
        follows: None,
    }
}

/// Candidates gathered for one question, each loaded once.
#[derive(Default)]
pub(super) struct Gathered {
    pub(super) candidates: Vec<Candidate>,
    seen: HashSet<(&'static str, i64)>,
}

impl Gathered {
    pub(super) fn push(&mut self, c: Candidate) {
        if self.seen.insert((c.kind, c.id)) {
            self.candidates.push(c);
        }
    }

    pub(super) fn has(&self, kind: &'static str, id: i64) -> bool {
        self.seen.contains(&(kind, id))
    }
}
