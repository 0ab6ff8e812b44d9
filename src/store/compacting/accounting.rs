//! Persistence of [`HostFacts`], one value per conversation (`conversations.host_facts_json`
//! since schema 12; a table of its own before), so what the engine learned about the
//! host's prompt survives the process (OpenClaw's CLI runs one process per turn).

use crate::core::accounting::HostFacts;
use crate::error::{Error, Result, StorageErrorKind};
use crate::store::sql::Sql;
use crate::store::WriteTx;

/// Reads a conversation's `host_facts_json` (no row when none is stored).
pub const LOAD_SQL: &str =
    "SELECT host_facts_json FROM conversations WHERE id = ?1 AND host_facts_json IS NOT NULL";
/// Writes a conversation's `host_facts_json` and the time it was saved (`host_facts_at`, ms since
/// the epoch).
pub const SAVE_SQL: &str =
    "UPDATE conversations SET host_facts_json = ?2, host_facts_at = ?3 WHERE id = ?1";

/// The facts learned for a conversation (all unknown when none were stored).
pub fn load(sql: &mut impl Sql, conversation_id: i64) -> Result<HostFacts> {
    let row = sql.query_row(LOAD_SQL, &[conversation_id.into()])?;
    parse(row.map(|r| r.text(0)).transpose()?.as_deref())
}

/// The facts in a `host_facts_json` value as stored (None: all unknown).
pub fn parse(json: Option<&str>) -> Result<HostFacts> {
    match json {
        Some(text) => serde_json::from_str(text).map_err(|e| {
            Error::unexpected_data(format!("conversations.host_facts_json is corrupt: {e}"))
        }),
        None => Ok(HostFacts::default()),
    }
}

/// Stores the facts.
pub fn save(
    tx: &mut WriteTx<'_, impl Sql>,
    conversation_id: i64,
    facts: &HostFacts,
    now_ms: i64,
) -> Result<()> {
    let json = serde_json::to_string(facts)
        .map_err(|e| Error::storage(StorageErrorKind::Other, e.to_string()))?;
    tx.execute(
        SAVE_SQL,
        &[conversation_id.into(), json.into(), now_ms.into()],
    )
}
