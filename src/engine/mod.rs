//! The engine: the lifecycle the host drives, over the pure core and the store. Every write is
//! one transaction; every call validates all of its input before it writes anything. The host
//! passes time (`now_ms`) in, so the engine never reads a clock.

mod accounting;
mod ask;
mod ask_candidates;
mod assemble;
mod bridging;
mod claims;
mod commit;
pub mod compaction;
pub mod explorer;
pub mod handover;
mod hybrid;
mod import;
mod ingest;
pub mod inspect;
mod lifecycle;
mod masking;
mod operator;
pub mod params;
mod recall;
mod redaction;
mod repair;
mod search;
pub mod semantic;
mod transcript_shapes;
mod vector_cache;
mod view;

pub use ask::{AskFinishParams, AskParams, AskStart};
pub use import::ImportReport;
pub use ingest::{
    next_bootstrap_chunk, BOOTSTRAP_CHUNK_BYTES, BOOTSTRAP_CHUNK_MESSAGES, FIRST_BOOTSTRAP_CHUNK,
};
pub use operator::{DoctorParams, DoctorReport, SessionStatus, Status, StatusParams};
pub use recall::{
    Description, Expansion, GrepParams, GrepResult, RecallTarget, EXPAND_DEFAULT_TOKENS,
    EXPAND_MAX_TOKENS, EXPAND_MIN_TOKENS,
};
pub use repair::{Planned, RepairParams, RepairReport, RepairStep};
pub use search::SearchParams;

use crate::core::config::Config;
use crate::core::redact::Redactor;
use crate::error::Result;
use crate::store::conversations::{self, Conversation};
use crate::store::{Sql, Store};

pub use params::*;

/// The context engine over a SQL backend.
pub struct Engine<S: Sql> {
    store: Store<S>,
    config: Config,
    views: view::ViewCache,
    handovers: handover::Handovers,
    accounting: accounting::FactsCache,
    tails: compaction::tail_window::TailWindows,
    /// The tool-output stub decision of each conversation's latest stored turn, until the
    /// trigger records it.
    masks: std::collections::HashMap<i64, crate::core::masking::MaskDecision>,
    /// What a steady turn on PostgreSQL claims instead of reading it ([`claims`]).
    claims: claims::Claims,
    /// The files each recent tool output's call touched, for the working set ([`masking`]).
    touches: masking::TouchCache,
    jobs: std::collections::HashMap<u64, compaction::Job>,
    repairs: std::collections::HashMap<u64, repair::RepairJob>,
    next_job: u64,
    /// The credential patterns, compiled once; shared with the passes that use them.
    redactor: std::sync::Arc<Redactor>,
    /// The embedder of the semantic index (None: semantic recall is off).
    embedder: Option<semantic::SharedEmbedder>,
    /// The vectors recalls have read, kept in step with the store.
    vectors: semantic::VectorCache,
    /// A turn's writes leave their messages' vectors to the backfill the caller runs after the
    /// turn ([`Engine::defer_turn_embedding`]).
    turn_embedding_deferred: bool,
}

impl<S: Sql> Engine<S> {
    /// Opens the engine on a connection, migrating the schema.
    pub fn open(sql: S, config: Config, now_ms: i64) -> Result<Self> {
        let redactor = std::sync::Arc::new(Redactor::new(&config.redact_patterns)?);
        Engine {
            store: Store::open(sql, now_ms)?,
            config,
            views: view::ViewCache::default(),
            handovers: Default::default(),
            accounting: Default::default(),
            tails: Default::default(),
            masks: Default::default(),
            claims: Default::default(),
            touches: Default::default(),
            jobs: Default::default(),
            repairs: Default::default(),
            next_job: 0,
            redactor,
            embedder: None,
            vectors: Default::default(),
            turn_embedding_deferred: false,
        }
        .with_default_embedder()
    }

    /// The engine with the default embedder when `semanticRecall` is on.
    fn with_default_embedder(mut self) -> Result<Self> {
        if self.config.semantic_recall {
            self.set_embedder(semantic::default_embedder())?;
        }
        Ok(self)
    }

    /// The configuration the engine was opened with.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Runs a turn's writes (`work`) as one transaction: every store write inside joins it, all
    /// commit or none do. Host facts learned in memory during a turn that rolls back are
    /// forgotten, so they are read again from the store; so are the trigger's tail windows.
    pub(crate) fn in_turn_transaction<T>(
        &mut self,
        work: impl FnOnce(&mut Self) -> Result<T>,
    ) -> Result<T> {
        self.store.begin_batch()?;
        let outcome = work(self);
        let committed = self.store.end_batch(outcome);
        if committed.is_err() {
            self.accounting.facts.clear();
            self.tails.clear();
            self.masks.clear();
            self.claims.clear();
        }
        committed
    }

    /// Housekeeping for after a turn (the host's `maintain`): indexes the messages waiting for
    /// the search index once a batch of them has gathered. Returns how many it indexed.
    pub fn index_search_batch(&mut self) -> Result<usize> {
        let indexed = self
            .store
            .index_when_waiting(crate::store::search_index::INDEX_BATCH)?;
        // Off the turn: the messages and summaries still without a vector, a bounded batch
        // (unless the caller runs it after this call's answer: defer_turn_embedding).
        if !self.turn_embedding_deferred {
            self.backfill_vectors()?;
        }
        Ok(indexed)
    }

    /// Whether a write committed since the last call (the shim persists the database when so).
    pub fn take_dirty(&mut self) -> bool {
        self.store.take_dirty()
    }

    /// Direct access to the store's connection, for tests, benchmarks and exports.
    pub fn sql(&mut self) -> &mut S {
        self.store.sql()
    }

    /// How many messages the session's active conversation holds (0 when there is none).
    pub fn stored_count(&mut self, session: &SessionRef) -> Result<i64> {
        Ok(self.conversation(session)?.map_or(0, |c| c.message_count))
    }

    /// The active conversation of a session, without creating one.
    pub fn conversation(&mut self, session: &SessionRef) -> Result<Option<Conversation>> {
        conversations::find_active(self.store.sql(), session.key())
    }
}
