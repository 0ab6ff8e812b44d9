//! What a summary request shows of stubbed messages. The model saw a stub; the summarizer needs
//! a little more to write a summary that still knows what happened, but not the whole output
//! (that is what made summaries of tool-heavy sessions expensive):
//!
//! - a **line stub** is shown as the head and tail of the stored output (160 and 80
//!   characters: the command's first lines and its verdict, e.g. `test result: FAILED`) followed
//!   by the stub line the model saw;
//! - an **excerpt** is shown as the model saw it (head, tail and stub line).
//!
//! The artifact ledger is taken from the stored messages before this, so the files, commands
//! and error lines it copies verbatim still come from the whole outputs.

use crate::core::masking::{stub_line_of, summarizer_text, STUB_LINE_VARIANT};
use crate::core::message::text_of_raw_json;
use crate::error::Result;
use crate::store::compaction::SourceRow;
use crate::store::masking as store;
use crate::store::Sql;

/// Replaces the text of the stubbed rows among `rows` by what the summarizer is shown of them.
pub(crate) fn mask_sources(sql: &mut impl Sql, rows: &mut [SourceRow]) -> Result<()> {
    let ids: Vec<i64> = rows.iter().map(|r| r.id).collect();
    let views = store::stubbed_views(sql, &ids)?;
    if views.is_empty() {
        return Ok(());
    }
    for row in rows.iter_mut() {
        let Some((variant, json)) = views.get(&row.id) else {
            continue;
        };
        if *variant == STUB_LINE_VARIANT {
            if let Some(line) = stub_line_of(json) {
                row.text = summarizer_text(&row.text, &line);
            }
        } else {
            row.text = text_of_raw_json(json)?;
        }
    }
    Ok(())
}
