//! The recall tools' logic (grep, describe, expand, ask) on native SQLite: what was summarized
//! away is found and reached again, pages stay under the token limit, and one agent can never read
//! another agent's conversations whatever ids or scope it passes.

sqlite_store!();

include!("../recall_cases/cases.rs");
