//! The semantic index, the engine's half: which embedder the engine uses, embedding what is
//! stored (a turn's messages inside the turn's write, or right after the turn when the caller
//! defers it; summaries inside the write that stores them), the backfill of what has no vector
//! yet (resumable, in bounded batches, from the host's `maintain`, never inside a turn), and
//! the semantic ranking of a recall: the question's
//! vector against every vector of the caller's reach, brute force over an in-memory copy that
//! is brought up to date from the store before each use.
//!
//! The ranking itself, over in-memory copies of the stored vectors, is `vector_cache.rs`.
//!
//! Scoping is the caller's: every ranking takes the list of conversations the caller may read
//! and reads vectors of those conversations only. Nothing here decides who may read what.

use std::sync::Arc;

use crate::core::embed::Embedder;
use crate::core::message::StoredMessage;
use crate::error::Result;
use crate::store::conversations::Conversation;
use crate::store::messages::Appended;
use crate::store::vectors::{self, Owner};
use crate::store::{Sql, WriteTx};

pub use super::vector_cache::{Near, VectorCache};
use super::Engine;

/// The embedder an engine shares with its writes.
pub type SharedEmbedder = Arc<dyn Embedder + Send + Sync>;

/// Characters of a text that are embedded: its start says what it is about, and a huge tool
/// output must not cost a turn milliseconds.
pub const EMBEDDED_CHARS: usize = 4_000;
/// Messages the backfill embeds in one `maintain`: `maintain` counts in the turn's overhead, so a
/// batch is small (the shipped embedder takes ~10-20 µs for a 160-character message natively;
/// docs/recall.md has the measured batch).
pub const BACKFILL_MESSAGES: usize = 64;
/// Summaries the backfill embeds in one `maintain`.
pub const BACKFILL_SUMMARIES: usize = 8;

/// The engine's default embedder when `semanticRecall` is on: the static table that ships in
/// the package (`core::embed::default_embedder`, built once per process).
pub fn default_embedder() -> Option<SharedEmbedder> {
    Some(Arc::new(Shipped(crate::core::embed::default_embedder())))
}

/// The process-wide default embedder, shared by every engine.
struct Shipped(&'static crate::core::embed::StaticEmbedder);

impl Embedder for Shipped {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn dim(&self) -> usize {
        self.0.dim()
    }
    fn embed(&self, text: &str) -> Vec<i8> {
        self.0.embed(text)
    }
}

/// The vector of `text` (its first [`EMBEDDED_CHARS`] characters).
pub fn embed(embedder: &dyn Embedder, text: &str) -> Vec<i8> {
    let end = text
        .char_indices()
        .nth(EMBEDDED_CHARS)
        .map_or(text.len(), |(i, _)| i);
    embedder.embed(&text[..end])
}

/// Whether a vector says anything: a text without words (a tool call's empty text, whitespace)
/// embeds as all zeros, which is similar to nothing; such a vector is not stored (an eighth to a
/// quarter of a coding session's messages). Summaries, which always have words, keep theirs.
pub fn has_meaning(vector: &[i8]) -> bool {
    vector.iter().any(|c| *c != 0)
}

/// Inside the write that appended `parsed` to `before` (the conversation as it was): stores the
/// vectors of the messages the append stored. When it skipped some (already stored), which
/// `seq` each new one got is not known here: those wait for the backfill.
pub fn embed_appended(
    tx: &mut WriteTx<'_, impl Sql>,
    embedder: Option<&SharedEmbedder>,
    before: &Conversation,
    parsed: &[StoredMessage],
    appended: &Appended,
) -> Result<()> {
    let Some(embedder) = embedder else {
        return Ok(());
    };
    if appended.inserted == 0 || appended.skipped > 0 || appended.inserted != parsed.len() {
        return Ok(());
    }
    let rows: Vec<(i64, Vec<i8>)> = parsed
        .iter()
        .enumerate()
        .map(|(i, m)| {
            (
                before.message_count + 1 + i as i64,
                embed(embedder.as_ref(), &m.text),
            )
        })
        .filter(|(_, v)| has_meaning(v))
        .collect();
    vectors::put_by_seq(tx, before.id, &rows)
}

/// Inside the write that stored (or rewrote) a summary: stores its vector.
pub fn embed_summary(
    sql: &mut impl Sql,
    embedder: Option<&SharedEmbedder>,
    summary_id: i64,
    conversation_id: i64,
    text: &str,
) -> Result<()> {
    let Some(embedder) = embedder else {
        return Ok(());
    };
    let vector = embed(embedder.as_ref(), text);
    vectors::put(
        sql,
        Owner::Summary,
        &[(summary_id, conversation_id, vector)],
    )
}

/// What the semantic index ranks for one query.
#[derive(Debug, Default)]
pub struct Nearest {
    /// Messages, nearest first.
    pub messages: Vec<Near>,
    /// Summaries, nearest first.
    pub summaries: Vec<Near>,
    /// The query's vector (empty when nothing was ranked).
    pub query: Vec<i8>,
}

impl<S: Sql> Engine<S> {
    /// The embedder in use, if semantic recall is on.
    pub fn embedder(&self) -> Option<&SharedEmbedder> {
        self.embedder.as_ref()
    }

    /// Uses `embedder` from now on (None: semantic recall off). A store whose vectors came from
    /// another embedder drops them; the backfill makes them again.
    pub fn set_embedder(&mut self, embedder: Option<SharedEmbedder>) -> Result<()> {
        if let Some(e) = &embedder {
            let (name, dim) = (vectors::space_name(e.name()), e.dim());
            let recorded = vectors::space(self.store.sql())?;
            if recorded.is_none_or(|s| s.embedder != name || s.dim != dim as i64) {
                self.store.write(|tx| vectors::adopt(tx, &name, dim))?;
            }
        }
        self.vectors.clear();
        self.embedder = embedder;
        Ok(())
    }

    /// From now on a turn's writes (`commitTurn`, `afterTurn`) store their messages without
    /// vectors, and `maintain`'s housekeeping leaves the backfill to the caller, who runs
    /// [`Engine::backfill_vectors`] once the turn is answered (the Node worker thread: after it
    /// replied to `housekeep`), off the turn's path. Nothing is missed meanwhile: a recall first
    /// embeds a batch of what waits (see [`Engine::nearest`]). Imports (`bootstrap`, `ingest`)
    /// still embed inside their write.
    pub fn defer_turn_embedding(&mut self) {
        self.turn_embedding_deferred = true;
    }

    /// The embedder a turn's write uses: none when its embedding is deferred.
    pub(super) fn turn_embedder(&self) -> Option<SharedEmbedder> {
        self.embedder
            .clone()
            .filter(|_| !self.turn_embedding_deferred)
    }

    /// Housekeeping: embeds up to [`BACKFILL_MESSAGES`] messages and [`BACKFILL_SUMMARIES`]
    /// summaries that have no vector yet, in one write; returns how many. Resumable: the
    /// position is stored with the vectors, so an interrupted backfill goes on where the last
    /// committed batch ended.
    pub fn backfill_vectors(&mut self) -> Result<usize> {
        let Some(embedder) = self.embedder.clone() else {
            return Ok(0);
        };
        let (messages, through) = vectors::waiting_messages(self.store.sql(), BACKFILL_MESSAGES)?;
        let summaries = vectors::waiting_summaries(self.store.sql(), BACKFILL_SUMMARIES)?;
        let position = vectors::space(self.store.sql())?.map_or(0, |s| s.backfilled_through);
        // Nothing to embed: the position moves only now and then, so a steady store's
        // housekeeping writes nothing.
        if messages.is_empty()
            && summaries.is_empty()
            && through - position < BACKFILL_MESSAGES as i64
        {
            return Ok(0);
        }
        // Every summary gets a vector (one without meaning too: it would otherwise wait forever).
        let embed_all =
            |rows: &[(i64, i64, String)], keep_empty: bool| -> Vec<(i64, i64, Vec<i8>)> {
                rows.iter()
                    .map(|(id, c, text)| (*id, *c, embed(embedder.as_ref(), text)))
                    .filter(|(_, _, v)| keep_empty || has_meaning(v))
                    .collect()
            };
        let (m, s) = (embed_all(&messages, false), embed_all(&summaries, true));
        self.store.write(|tx| {
            vectors::put(tx.sql(), Owner::Message, &m)?;
            vectors::put(tx.sql(), Owner::Summary, &s)?;
            vectors::advance(tx.sql(), through)
        })?;
        Ok(messages.len() + summaries.len())
    }

    /// True when a message or summary still waits for its vector (the backfill has more to
    /// do); false without an embedder.
    pub fn vectors_waiting(&mut self) -> Result<bool> {
        if self.embedder.is_none() {
            return Ok(false);
        }
        let (messages, _) = vectors::waiting_messages(self.store.sql(), 1)?;
        Ok(!messages.is_empty() || !vectors::waiting_summaries(self.store.sql(), 1)?.is_empty())
    }

    /// The messages and summaries of `conversations` nearest in meaning to `text`: up to
    /// `limit` of each, those inside `window` when one is given (its messages' own times).
    pub(super) fn nearest(
        &mut self,
        conversations: &[i64],
        text: &str,
        limit: usize,
        window: Option<crate::core::ask::when::Window>,
    ) -> Result<Nearest> {
        let Some(embedder) = self.embedder.clone() else {
            return Ok(Nearest::default());
        };
        let query = embed(embedder.as_ref(), text);
        if query.iter().all(|c| *c == 0) {
            return Ok(Nearest::default());
        }
        // A turn's messages whose vectors the caller has not made yet (defer_turn_embedding)
        // are embedded before they are ranked.
        if self.turn_embedding_deferred {
            self.backfill_vectors()?;
        }
        let commits = self.store.commits();
        for owner in [Owner::Message, Owner::Summary] {
            self.vectors
                .refresh(self.store.sql(), owner, conversations, commits, query.len())?;
        }
        let keep = |at: i64| window.is_none_or(|w| w.contains(at));
        Ok(Nearest {
            messages: self
                .vectors
                .nearest(Owner::Message, conversations, &query, limit, keep),
            summaries: self
                .vectors
                .nearest(Owner::Summary, conversations, &query, limit, keep),
            query,
        })
    }

    /// The similarity of a message (of `conversation`, held since the last [`Engine::nearest`])
    /// to `text`.
    pub(super) fn similarity_to(
        &self,
        conversation: i64,
        message_id: i64,
        query: &[i8],
    ) -> Option<f32> {
        self.vectors.similarity_of(conversation, message_id, query)
    }

    /// The newest message time held for `conversations` (after [`Engine::nearest`]).
    pub(super) fn newest_held(&self, conversations: &[i64]) -> Option<i64> {
        self.vectors.newest(conversations)
    }
}
