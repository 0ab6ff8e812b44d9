//! Getting messages in: `bootstrap` (existing history), `ingest`/`ingestBatch` (single messages or
//! batches), and `afterTurn` (the new tail of the host's full snapshot). All validate the whole
//! input first and store it in one transaction, skipping messages already stored.

use serde_json::Value;

use super::masking::TurnItems;
use super::params::{
    checked_tail_start, validate_session, AfterTurnParams, BootstrapParams, BootstrapResult,
    IngestParams, SessionRef,
};
use super::semantic;
use super::Engine;
use crate::core::message::{parse_host_messages, parse_messages, HostMessage, StoredMessage};
use crate::error::Result;
use crate::store::claim::{self, Claim};
use crate::store::conversations::Conversation;
use crate::store::lock_before_append;
use crate::store::messages::Appended;
use crate::store::{archived_identities, bulk};
use crate::store::{conversations, Sql, WriteTx};

impl<S: Sql> Engine<S> {
    /// Stores the messages of `values` not already stored in the session's conversation.
    /// `first_index` is the position of `values[0]` in the host's list, for error messages.
    pub fn ingest_from(
        &mut self,
        session: &SessionRef,
        values: &[Value],
        first_index: usize,
        now_ms: i64,
    ) -> Result<Appended> {
        validate_session(session)?;
        let parsed = parse_messages(values, first_index)?;
        Ok(self.store_parsed(session, &parsed, 0, None, now_ms)?.0)
    }

    /// Stores already parsed messages, as [`Engine::ingest_from`] does; also returns the
    /// conversation as the append left it (valid while the transaction that stored them is open)
    /// and, when `scan_limit` > 0 and the lock statement could tell, the items the stub pass
    /// would read after the append ([`TurnItems`]).
    fn store_parsed(
        &mut self,
        session: &SessionRef,
        parsed: &[StoredMessage],
        scan_limit: i64,
        claim: Option<Claim>,
        now_ms: i64,
    ) -> Result<(Appended, Conversation, Option<TurnItems>)> {
        // A turn's tail (scan_limit > 0: afterTurn) may leave its vectors to after the turn.
        let embedder = if scan_limit > 0 {
            self.turn_embedder()
        } else {
            self.embedder.clone()
        };
        self.store.write(|tx| {
            let locked = lock_before_append::resolve_for_append(
                tx.sql(),
                session.key(),
                &session.session_id,
                parsed,
                scan_limit,
                claim,
                now_ms,
            )?;
            let appended =
                bulk::append_resolved(tx, &locked.conversation, parsed, locked.stored, now_ms)?;
            semantic::embed_appended(
                tx,
                embedder.as_ref(),
                &locked.conversation,
                parsed,
                &appended,
            )?;
            let after = appended.applied_to(&locked.conversation);
            let items = locked
                .unstubbed
                .and_then(|before| TurnItems::after_append(before, &after, parsed, &appended));
            Ok((appended, after, items))
        })
    }

    /// Imports a session's existing history (idempotent: a second run imports nothing).
    pub fn bootstrap(&mut self, params: BootstrapParams, now_ms: i64) -> Result<BootstrapResult> {
        let mut history = Some(params.messages).filter(|m| !m.is_empty());
        self.bootstrap_chunked(&params.session, || Ok(history.take()), now_ms)
    }

    /// Imports a history delivered in chunks (`next` yields each in turn, then None), all in one
    /// transaction as [`Engine::bootstrap`] does: a bad message anywhere stores nothing. Only one
    /// chunk is ever decoded at a time, so importing a long history needs memory for a chunk,
    /// not for the whole history. A chunk is plain values or [`HostMessage`]s that carry their
    /// JSON text.
    ///
    /// Parsed messages are written [`BULK_WRITE_BYTES`] at a time, several of the host's chunks
    /// together: every write is a round of statements, and the search index flushes a segment
    /// at each (a segment per 64 KiB chunk made FTS4 merge segments over and over).
    pub fn bootstrap_chunked<M: Into<HostMessage>>(
        &mut self,
        session: &SessionRef,
        mut next: impl FnMut() -> Result<Option<Vec<M>>>,
        now_ms: i64,
    ) -> Result<BootstrapResult> {
        validate_session(session)?;
        let mut total = 0usize;
        let appended = self.store.write(|tx| {
            let mut appended = Appended::default();
            let mut pending: Vec<StoredMessage> = Vec::new();
            // Where each chunk of `pending` ends: the search index takes a chunk at a time.
            let mut chunk_ends: Vec<usize> = Vec::new();
            let mut pending_bytes = 0usize;
            let mut write = |tx: &mut WriteTx<'_, S>,
                             pending: &mut Vec<StoredMessage>,
                             chunk_ends: &mut Vec<usize>|
             -> Result<()> {
                // The conversation's totals as the previous write left them.
                let conversation =
                    conversations::resolve(tx.sql(), session.key(), &session.session_id, now_ms)?;
                if pending.is_empty() {
                    return Ok(());
                }
                let step =
                    bulk::append_in_segments(tx, &conversation, pending, chunk_ends, now_ms)?;
                appended.inserted += step.inserted;
                appended.skipped += step.skipped;
                pending.clear();
                chunk_ends.clear();
                Ok(())
            };
            while let Some(chunk) = next()? {
                let count = chunk.len();
                let parsed =
                    parse_host_messages(chunk.into_iter().map(Into::into).collect(), total)?;
                total += count;
                pending_bytes += parsed.iter().map(|m| m.raw_json.len()).sum::<usize>();
                pending.extend(parsed);
                chunk_ends.push(pending.len());
                if pending_bytes >= BULK_WRITE_BYTES {
                    write(tx, &mut pending, &mut chunk_ends)?;
                    pending_bytes = 0;
                }
            }
            // Also when nothing was passed: the conversation exists after a bootstrap.
            write(tx, &mut pending, &mut chunk_ends)?;
            Ok(appended)
        })?;
        // A long history leaves the planner's statistics stale (PostgreSQL).
        self.store.refresh_statistics_after(appended.inserted);
        let reason = if total == 0 {
            "no history passed; conversation ready".to_owned()
        } else {
            format!(
                "imported {} new of {} messages ({} already stored)",
                appended.inserted, total, appended.skipped
            )
        };
        Ok(BootstrapResult {
            bootstrapped: true,
            imported_messages: appended.inserted,
            reason,
        })
    }

    /// Ingests messages; returns how many were new. Messages `from_transcript` that a session
    /// key's archived conversation stores are not new either ([`archived_identities`]), nor a
    /// user message a conversation of the key stores in another shape
    /// ([`crate::core::transcript_match`]).
    pub fn ingest(&mut self, params: IngestParams, now_ms: i64) -> Result<usize> {
        validate_session(&params.session)?;
        let mut parsed = parse_messages(&params.messages, 0)?;
        if params.from_transcript {
            let identities: Vec<&str> = parsed.iter().map(|m| m.identity.as_str()).collect();
            let archived = archived_identities::stored_in_archived(
                self.store.sql(),
                params.session.key(),
                &identities,
            )?;
            parsed.retain(|m| !archived.contains(&m.identity));
            // A user message a turn stored in another shape (OpenClaw 2026.7's transcript and
            // afterTurn stamp and shape it differently) is not new either.
            let elsewhere = self.stored_in_another_shape(params.session.key(), &parsed)?;
            let mut flags = elsewhere.into_iter();
            parsed.retain(|_| !flags.next().unwrap_or(false));
            if parsed.is_empty() {
                return Ok(0);
            }
        }
        Ok(self
            .store_parsed(&params.session, &parsed, 0, None, now_ms)?
            .0
            .inserted)
    }

    /// Ingests the messages after `prePromptMessageCount` of the host's full snapshot.
    pub fn after_turn(&mut self, params: AfterTurnParams, now_ms: i64) -> Result<usize> {
        let start = checked_tail_start(params.pre_prompt_message_count, params.messages.len())?;
        self.ingest_turn_tail(
            &params.session,
            &params.messages[start..],
            start,
            params.model_context_window,
            now_ms,
        )
    }

    /// Stores a finished turn's new messages (`first_index` is their position in the host's
    /// snapshot), learns what the turn teaches about the real prompt (hosts that call afterTurn
    /// have no commitTurn; `window` is the model's window when the host reports it), and
    /// evaluates the compaction trigger when any message was new: one transaction.
    pub fn ingest_turn_tail(
        &mut self,
        session: &SessionRef,
        tail: &[Value],
        first_index: usize,
        window: Option<f64>,
        now_ms: i64,
    ) -> Result<usize> {
        validate_session(session)?;
        let parsed = parse_messages(tail, first_index)?;
        // A steady turn on PostgreSQL first tries on a claim (`claims`); one that did not hold
        // wrote nothing, and the turn runs again, reading under the lock.
        if let Some(claim) =
            self.claims
                .take(session.key(), &session.session_id, self.store.commits())
        {
            match self.store_turn_tail(session, tail, &parsed, window, Some(claim), now_ms) {
                Err(err) if claim::is_conflict(&err) => {}
                outcome => return outcome,
            }
        }
        self.store_turn_tail(session, tail, &parsed, window, None, now_ms)
    }

    /// The turn's transaction of [`Engine::ingest_turn_tail`], on `claim` when there is one.
    fn store_turn_tail(
        &mut self,
        session: &SessionRef,
        tail: &[Value],
        parsed: &[StoredMessage],
        window: Option<f64>,
        claim: Option<Claim>,
        now_ms: i64,
    ) -> Result<usize> {
        // `assemble`'s read follows the turn: on PostgreSQL it may travel with the COMMIT.
        crate::store::context::read_active_after_commit(
            self.store.sql(),
            session.key(),
            self.views.known(session.key()),
        );
        self.in_turn_transaction(|e| {
            // The conversation as the append left it, not read again: this transaction holds it
            // (learning writes no conversation column that the steps below read).
            let (appended, conversation, items) = e.store_parsed(
                session,
                parsed,
                TurnItems::lock_limit(parsed.len()),
                claim,
                now_ms,
            )?;
            e.learn_after_turn(session, Some(&conversation), tail, parsed, window, now_ms)?;
            if let Some(conversation) = Some(conversation).filter(|_| appended.inserted > 0) {
                // Stubs first: the trigger then sees the smaller context.
                let conversation =
                    e.stub_after_turn(conversation, appended.inserted, parsed, items, now_ms)?;
                e.evaluate_trigger(
                    &conversation,
                    appended_tokens(parsed, &appended).as_deref(),
                    now_ms,
                )?;
            }
            Ok(appended.inserted)
        })
    }
}

/// The token counts of the context items an append added, oldest first, when it stored every
/// message it was given (then it added one item per message, in order); None when it skipped
/// some, so the trigger reads the newest items from the store.
pub(crate) fn appended_tokens(parsed: &[StoredMessage], appended: &Appended) -> Option<Vec<i64>> {
    (appended.skipped == 0 && appended.inserted == parsed.len())
        .then(|| parsed.iter().map(|m| i64::from(m.tokens)).collect())
}

/// JSON a `bootstrap` converts at a time, in bytes: the chunk's message count adapts to it (many
/// short messages, few long ones). Each chunk leaves a JSON string of about this size for the
/// host's garbage collector; at a fixed 1,000 messages of tool output a chunk's string was ~1 MB.
pub const BOOTSTRAP_CHUNK_BYTES: usize = 64 * 1024;
/// Message JSON a `bootstrap` stores at a time, in bytes (several chunks: see
/// [`Engine::bootstrap_chunked`]). Holding it parsed takes a few times this in wasm memory, which
/// never shrinks: 256 KiB was no faster and ended a 50K import with 1 MiB more of it.
pub(super) const BULK_WRITE_BYTES: usize = 128 * 1024;
/// Messages per chunk, at least and at most.
pub const BOOTSTRAP_CHUNK_MESSAGES: (u32, u32) = (8, 1_000);
/// Messages in the first chunk, before any size is known.
pub const FIRST_BOOTSTRAP_CHUNK: u32 = 64;

/// The message count of a bootstrap's next chunk, from the last chunk's count and JSON bytes.
pub fn next_bootstrap_chunk(count: u32, json_bytes: usize) -> u32 {
    let scaled = (count as usize).saturating_mul(BOOTSTRAP_CHUNK_BYTES) / json_bytes.max(1);
    u32::try_from(scaled)
        .unwrap_or(u32::MAX)
        .clamp(BOOTSTRAP_CHUNK_MESSAGES.0, BOOTSTRAP_CHUNK_MESSAGES.1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bootstrap_chunks_aim_at_a_fixed_json_size_within_bounds() {
        // 64 messages of 1 KiB each: 64 KiB, as aimed.
        assert_eq!(next_bootstrap_chunk(64, 64 * 1024), 64);
        // Short messages (128 bytes): 512 per chunk; tiny ones stop at the ceiling.
        assert_eq!(next_bootstrap_chunk(64, 64 * 128), 512);
        assert_eq!(next_bootstrap_chunk(64, 64 * 8), 1_000);
        // One huge message per chunk never goes below the floor, nor does an empty measurement.
        assert_eq!(next_bootstrap_chunk(8, 8 * 1024 * 1024), 8);
        assert_eq!(next_bootstrap_chunk(1_000, 0), 1_000);
    }
}
