//! The lexical half of a recall's second round (multi-hop questions): the names the first
//! round's best evidence says and the question does not (`core::ask::bridging`), each searched
//! as `lcm_grep`'s text mode within the caller's reach, as one ranking for the fusion at the
//! second round's weight. Lighter than the first round's lexical search: a few hits per name,
//! no neighbours, no originals under matching summaries.
//!
//! Measured (`cargo bench --bench recall_eval`, the engine's rows, 2026-12-05): multi-hop
//! questions 78.3 % → 100 % (76.7 % → 98.3 % after an extractive sweep), overall 86.7 % →
//! 91.0 % (83.3 % → 86.3 %); at weight 0.25 / 1.0 instead of 0.5, 89.0 / 90.7 %. Tried first and
//! not kept: every search term of the best evidence (dates and common words with the names):
//! 87.0 %, and 78.7 % after a sweep.

use super::ask_candidates::Gathered;
use super::Engine;
use crate::core::ask::bridging::bridging_names;
use crate::core::ask::evidence::{self, Candidate, Origin};
use crate::error::Result;
use crate::store::search::TimeWindow;
use crate::store::Sql;

/// Hits read per bridging name.
const HITS_PER_NAME: usize = 8;

impl<S: Sql> Engine<S> {
    /// The candidates that mention a bridging name of `first` (the first round's fused order),
    /// loaded into `found`, rare names first; empty when its best evidence names nothing new.
    pub(super) fn bridging_ranking(
        &mut self,
        terms: &[String],
        first: &[(u32, Candidate)],
        conversations: &[i64],
        window: TimeWindow,
        found: &mut Gathered,
    ) -> Result<Vec<(&'static str, i64)>> {
        let names = bridging_names(&super::hybrid::second_round_texts(first), terms);
        if names.is_empty() {
            return Ok(Vec::new());
        }
        for name in &names {
            self.gather_hits(
                name,
                conversations,
                window,
                HITS_PER_NAME,
                Origin::Similar,
                found,
            )?;
        }
        Ok(evidence::lexical_ranking(&found.candidates, &names))
    }
}
