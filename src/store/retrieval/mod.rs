//! Finding things in the history: ranked full-text search (FTS5 on SQLite, tsvector on
//! PostgreSQL) and its index backlog, literal and raw-JSON matching, snippets, and the candidate
//! reads behind delegated recall.
//!
//! PostgreSQL's search and its vector statements are the `_pg` siblings of the modules that pick
//! them (`search_pg`, `vectors_pg`), private to this folder.

pub mod literal;
pub mod raw_match;
pub mod recall;
pub mod search;
pub mod search_hit;
pub mod search_index;
mod search_pg;
pub mod snippet;
pub mod vectors;
mod vectors_pg;
