//! The recall tools' logic: `grep` (search this conversation or all of this agent's; [`grep`]),
//! `describe` (a summary's place in the DAG, or a message's place in its conversation;
//! [`describe`]) and `expand` (a summary's children down to the original messages, paged under a
//! token limit this module enforces whatever the caller asks; [`expand`]). This file holds what
//! they share: the caller's reach, and the target `describe` and `expand` load through it.
//!
//! Scoping is a security boundary. The caller's reach is derived from its own session key, never
//! from the ids or scope it passes: a key `agent:<id>:...` reaches every conversation whose key
//! starts with `agent:<id>:` (its sub-agents included, archived ones too); any other key reaches
//! only conversations under exactly that key. Every row is checked against that reach before it
//! is returned, and an id outside it gets the same answer as an id that does not exist.

use serde::Deserialize;
use serde_json::Value;

use super::params::{validate_session, SessionRef};
use super::Engine;
use crate::error::{Error, Result};
use crate::store::recall::{self, MessageRow, SummaryRow};
use crate::store::Sql;

mod describe;
mod expand;
mod grep;

pub use describe::Description;
pub use expand::{Expansion, EXPAND_DEFAULT_TOKENS, EXPAND_MAX_TOKENS, EXPAND_MIN_TOKENS};
pub use grep::{GrepParams, GrepResult};

/// What a session may read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Reach {
    /// Every conversation whose session key starts with this prefix (`agent:<id>:`).
    Agent(String),
    /// Only conversations under exactly this session key.
    Key(String),
}

impl Reach {
    pub(super) fn of(session: &SessionRef) -> Reach {
        let key = session.key();
        let agent = key
            .strip_prefix("agent:")
            .and_then(|rest| rest.split_once(':'))
            .filter(|(id, rest)| !id.is_empty() && !rest.is_empty());
        match agent {
            Some((id, _)) => Reach::Agent(format!("agent:{id}:")),
            None => Reach::Key(key.to_owned()),
        }
    }

    pub(super) fn allows(&self, session_key: &str) -> bool {
        match self {
            Reach::Agent(prefix) => session_key.starts_with(prefix.as_str()),
            Reach::Key(key) => session_key == key,
        }
    }

    pub(super) fn conversations(&self, sql: &mut impl Sql) -> Result<Vec<i64>> {
        match self {
            Reach::Agent(prefix) => recall::conversations_with_key_prefix(sql, prefix),
            Reach::Key(key) => recall::conversations_with_key(sql, key),
        }
    }
}

/// Parses an id given as a number, a numeric string, or with our prefixes (`sum_12`, `msg_12`).
pub(super) fn parse_id(field: &str, value: &Value) -> Result<i64> {
    let bad = || {
        Error::input(
            field,
            format!("expected a numeric id such as 12 (or \"sum_12\" / \"msg_12\"), got {value}"),
        )
    };
    let id = match value {
        Value::Number(n) => n.as_i64().ok_or_else(bad)?,
        Value::String(s) => {
            // Also the labels lcm_ask cites (`m12`, `s5`) and `#12`, as models copy them.
            let t = s.trim().trim_start_matches('[').trim_end_matches(']');
            let digits = ["sum_", "msg_", "m", "s", "#"]
                .iter()
                .find_map(|p| t.strip_prefix(p))
                .unwrap_or(t);
            digits.parse::<i64>().map_err(|_| bad())?
        }
        _ => return Err(bad()),
    };
    if id <= 0 {
        return Err(bad());
    }
    Ok(id)
}

/// The arguments of `lcm_describe` and `lcm_expand`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecallTarget {
    /// The caller's session, from which its reach is derived.
    #[serde(flatten)]
    pub session: SessionRef,
    /// A row id of `summaries`: a number, a numeric string or `"sum_<id>"`.
    #[serde(default)]
    pub summary_id: Option<Value>,
    /// A row id of `messages`: a number or a numeric string.
    #[serde(default)]
    pub message_id: Option<Value>,
    /// expand: where the previous page stopped.
    #[serde(default)]
    pub cursor: Option<Value>,
    /// expand: the page's token limit (clamped to [EXPAND_MIN_TOKENS, EXPAND_MAX_TOKENS]).
    #[serde(default)]
    pub max_tokens: Option<u32>,
    /// expand: list the original messages under the summary at any depth instead of its children.
    #[serde(default)]
    pub all_messages: Option<bool>,
}

/// What `describe` and `expand` act on, once the caller's reach allows it.
pub(super) enum Target {
    Summary(SummaryRow),
    Message(MessageRow),
}

/// The first `count` characters of `text` from character `from` on.
fn char_slice(text: &str, from: usize, count: usize) -> String {
    text.chars().skip(from).take(count).collect()
}

impl<S: Sql> Engine<S> {
    /// Loads the summary or message the caller names, if its reach allows it.
    pub(in crate::engine) fn recall_target(&mut self, params: &RecallTarget) -> Result<Target> {
        validate_session(&params.session)?;
        let reach = Reach::of(&params.session);
        let given = |v: &Option<Value>| v.clone().filter(|v| !v.is_null());
        let (field, target) = match (given(&params.summary_id), given(&params.message_id)) {
            (Some(id), None) => {
                let id = parse_id("summaryId", &id)?;
                (
                    "summaryId",
                    recall::summary(self.store.sql(), id)?
                        .map(Target::Summary)
                        .ok_or(id),
                )
            }
            (None, Some(id)) => {
                let id = parse_id("messageId", &id)?;
                (
                    "messageId",
                    recall::message(self.store.sql(), id)?
                        .map(Target::Message)
                        .ok_or(id),
                )
            }
            _ => {
                return Err(Error::input(
                    "summaryId",
                    "give exactly one of summaryId or messageId",
                ))
            }
        };
        let not_found = |id: i64| {
            Error::input(
                field,
                format!(
                    "no {} {id} in this agent's history",
                    &field[..field.len() - 2]
                ),
            )
        };
        let target = target.map_err(not_found)?;
        let (id, conversation) = match &target {
            Target::Summary(s) => (s.id, s.conversation_id),
            Target::Message(m) => (m.id, m.conversation_id),
        };
        let key = recall::conversation_key(self.store.sql(), conversation)?;
        if !key.is_some_and(|k| reach.allows(&k)) {
            return Err(not_found(id));
        }
        Ok(target)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(key: &str) -> SessionRef {
        SessionRef {
            session_id: "s".into(),
            session_key: Some(key.into()),
        }
    }

    #[test]
    fn reach_comes_from_the_callers_own_key() {
        assert_eq!(
            Reach::of(&session("agent:main:telegram:1")),
            Reach::Agent("agent:main:".into())
        );
        assert_eq!(
            Reach::of(&session("agent:main:subagent:x")),
            Reach::Agent("agent:main:".into())
        );
        assert_eq!(
            Reach::of(&session("agent::x")),
            Reach::Key("agent::x".into())
        );
        assert_eq!(
            Reach::of(&session("agent:main")),
            Reach::Key("agent:main".into())
        );
        assert!(!Reach::Agent("agent:main:".into()).allows("agent:mainframe:x"));
        assert!(!Reach::Key("k".into()).allows("k2"));
    }

    #[test]
    fn ids_parse_from_numbers_and_prefixed_strings_and_reject_the_rest() {
        assert_eq!(parse_id("summaryId", &Value::from(12)).ok(), Some(12));
        assert_eq!(parse_id("summaryId", &Value::from("sum_12")).ok(), Some(12));
        assert_eq!(parse_id("messageId", &Value::from(" 7 ")).ok(), Some(7));
        assert_eq!(
            parse_id("messageId", &Value::from("m7")).ok(),
            Some(7),
            "lcm_ask's labels"
        );
        assert_eq!(parse_id("summaryId", &Value::from("[s5]")).ok(), Some(5));
        assert_eq!(parse_id("messageId", &Value::from("#9")).ok(), Some(9));
        for bad in [
            Value::from("12; DROP TABLE x"),
            Value::from(-1),
            Value::from(1.5),
            Value::Null,
            Value::from(""),
        ] {
            let err = parse_id("summaryId", &bad)
                .map(|_| ())
                .unwrap_err()
                .to_string();
            assert!(err.contains("summaryId"), "{err}");
        }
    }
}
