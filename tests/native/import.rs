//! Import from lossless-claw on native SQLite, from a fixture built to the `lcm.db` schema the
//! reference describes (conversations, messages, message_parts, summaries with `model`,
//! summary_messages, summary_parents with its inverted naming, context_items), with real-looking
//! content including both kinds of truncation fallback. The import brings everything over, marks
//! fallbacks for repair, is idempotent, and never modifies the source file. The cases
//! (`import_cases/cases.rs`) also import into PostgreSQL (import_pg.rs).

sqlite_store!();

include!("../import_cases/cases.rs");
