//! `compact`: summarization is not part of this build yet, so compaction reports honestly that it
//! did nothing. It never claims success it did not have; `assemble` keeps the view inside the
//! budget meanwhile, so no turn overflows.

use super::params::{validate_session, CompactParams, CompactResult};
use super::Engine;
use crate::error::Result;
use crate::store::Sql;

impl<S: Sql> Engine<S> {
    pub fn compact(&mut self, params: CompactParams) -> Result<CompactResult> {
        validate_session(&params.session)?;
        let stored = self.stored_count(&params.session)?;
        Ok(CompactResult {
            ok: true,
            compacted: false,
            reason: format!(
                "summarization is not available in this build; all {stored} stored messages are kept and assemble fits the view to the token budget"
            ),
        })
    }
}
