//! What a session key says about its conversation. OpenClaw runs internal turns of its own under
//! session keys with an `internal-` segment (its memory-flush runs are stored as
//! `agent:main:internal-session-effects:…`). They are stored like any conversation (lossless),
//! but counted and listed apart from the user's conversations. One rule, in Rust for the engine
//! and as a SQL `LIKE` pattern for the store's counts and lists; a test keeps them in step.

/// The SQL `LIKE` pattern an internal session key matches, applied to `LOWER(session_key)`
/// (SQLite's and PostgreSQL's `LIKE` differ on case; lower-casing both sides makes them agree).
pub const INTERNAL_KEY_LIKE: &str = "%:internal-%";

/// Whether `key` belongs to one of the host's internal runs: a `:`-separated segment after the
/// first starts with `internal-` (ASCII case-insensitive).
pub fn is_internal(key: &str) -> bool {
    key.to_ascii_lowercase().contains(":internal-")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_flush_keys_are_internal_and_user_keys_are_not() {
        assert!(is_internal("agent:main:internal-session-effects:abc"));
        assert!(is_internal("agent:ops:Internal-Memory:1"));
        for user in [
            "agent:main:main",
            "agent:main:telegram:direct:42",
            "agent:main:subagent:x",
            "internal-only",
            "agent:main:my-internal-notes",
        ] {
            assert!(!is_internal(user), "{user}");
        }
        assert_eq!(
            INTERNAL_KEY_LIKE, "%:internal-%",
            "the SQL twin of is_internal"
        );
    }
}
