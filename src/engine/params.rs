//! The host's call parameters and our results, as plain data. Field names follow the OpenClaw
//! context-engine contract (camelCase); unknown fields are ignored because hosts add them freely.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, Result};

/// Which session a call is about. The session key identifies the conversation; the session id
/// identifies one generation of it (a new id under the same key starts a new conversation).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SessionRef {
    /// The host's session id: one generation of the conversation.
    pub session_id: String,
    /// The host's session key, naming the conversation across generations; the session id when
    /// absent.
    #[serde(default)]
    pub session_key: Option<String>,
}

impl SessionRef {
    /// The conversation key: the session key when the host gives one, else the session id.
    pub fn key(&self) -> &str {
        self.session_key
            .as_deref()
            .filter(|k| !k.is_empty())
            .unwrap_or(&self.session_id)
    }

    fn validate(&self) -> Result<()> {
        if self.session_id.trim().is_empty() {
            return Err(Error::input("sessionId", "must be a non-empty string"));
        }
        Ok(())
    }
}

/// Decodes host parameters, naming the missing or mistyped field on failure.
pub fn decode<T: for<'de> Deserialize<'de>>(call: &str, value: Value) -> Result<T> {
    check_common_fields(call, &value)?;
    serde_json::from_value(value).map_err(|e| Error::input(format!("{call} params"), e.to_string()))
}

/// serde's messages for these fields would not name them (a flattened `sessionId` that is null
/// reads "invalid type: null, expected a string"), so they are checked by name first.
fn check_common_fields(call: &str, value: &Value) -> Result<()> {
    let Some(obj) = value.as_object() else {
        return Err(Error::input(format!("{call} params"), "expected an object"));
    };
    match obj.get("sessionId") {
        None | Some(Value::String(_)) => {}
        Some(Value::Null) => {
            return Err(Error::input(
                "sessionId",
                "is required (a non-empty string)",
            ))
        }
        Some(_) => return Err(Error::input("sessionId", "must be a string")),
    }
    // Required strings of some calls; when present but null (JS undefined), name them.
    for key in ["advancementKey", "pattern"] {
        match obj.get(key) {
            Some(Value::Null) => return Err(Error::input(key, "is required (a string)")),
            Some(v) if !v.is_string() => return Err(Error::input(key, "must be a string")),
            _ => {}
        }
    }
    if obj
        .get("sessionKey")
        .is_some_and(|k| !k.is_null() && !k.is_string())
    {
        return Err(Error::input("sessionKey", "must be a string"));
    }
    if obj.get("availableTools").is_some_and(|t| {
        !t.is_null()
            && !t
                .as_array()
                .is_some_and(|names| names.iter().all(Value::is_string))
    }) {
        return Err(Error::input(
            "availableTools",
            "must be a list of tool names (strings)",
        ));
    }
    if obj
        .get("messages")
        .is_some_and(|m| !m.is_null() && !m.is_array())
    {
        return Err(Error::input("messages", "expected an array of messages"));
    }
    Ok(())
}

/// `bootstrap`'s arguments.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BootstrapParams {
    /// The session to set up.
    #[serde(flatten)]
    pub session: SessionRef,
    /// Existing history, when the host passes it.
    #[serde(default)]
    pub messages: Vec<Value>,
}

/// `bootstrap`'s answer.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct BootstrapResult {
    /// True once the conversation exists (always, when the call succeeds).
    pub bootstrapped: bool,
    /// Messages of `messages` newly stored (those already stored are skipped).
    pub imported_messages: usize,
    /// One line on what was imported, for the host's log.
    pub reason: String,
}

/// `ingest`'s arguments.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IngestParams {
    /// The session the messages belong to.
    #[serde(flatten)]
    pub session: SessionRef,
    /// The host messages to store, in order, as the host sends them.
    pub messages: Vec<Value>,
    /// True when the messages were read back from the host's own transcript (the catch-up of a
    /// turn whose commit never came): one that an archived conversation of the session key
    /// stores (a transcript keeps what came before a `/reset`) is skipped too.
    #[serde(default)]
    pub from_transcript: bool,
}

/// `afterTurn`'s arguments (hosts without `commitTurn`, e.g. OpenClaw 2026.7).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AfterTurnParams {
    /// The session the turn belongs to.
    #[serde(flatten)]
    pub session: SessionRef,
    /// The agent's whole message array after the turn.
    #[serde(default)]
    pub messages: Vec<Value>,
    /// How many of `messages` came before the turn; the ones after it are stored.
    #[serde(default)]
    pub pre_prompt_message_count: usize,
    /// The model's context window, when the host reports it (OpenClaw 2026.7 passes no
    /// `commitTurn`; its `afterTurn` carries the window as `tokenBudget`).
    #[serde(default)]
    pub model_context_window: Option<f64>,
}

/// Checks `prePromptMessageCount` against the snapshot length; the new messages start there.
pub fn checked_tail_start(pre_prompt_message_count: usize, snapshot_len: usize) -> Result<usize> {
    if pre_prompt_message_count > snapshot_len {
        return Err(Error::input(
            "prePromptMessageCount",
            format!("is {pre_prompt_message_count} but only {snapshot_len} messages were passed"),
        ));
    }
    Ok(pre_prompt_message_count)
}

/// `commitTurn`'s arguments: one turn, stored in one transaction.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CommitTurnParams {
    /// The session the turn belongs to.
    #[serde(flatten)]
    pub session: SessionRef,
    /// The host's key for the turn: a retry under the same key is stored once.
    pub advancement_key: String,
    /// The turn's messages, in order.
    pub messages: Vec<Value>,
    /// The host's transcript anchor of the turn's user message.
    #[serde(default)]
    pub admission: Option<EntryAnchor>,
    /// The host's transcript anchor of the turn's last message.
    #[serde(default)]
    pub terminal: Option<EntryAnchor>,
    /// The model's context window, when the host reports it (OpenClaw: `runtimeContext.modelContextWindow`).
    #[serde(default)]
    pub model_context_window: Option<f64>,
}

/// The part of the host's `TranscriptEntryAnchor` we keep: its stable entry id.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct EntryAnchor {
    /// The host's id of the transcript entry.
    #[serde(default)]
    pub entry_id: Option<String>,
}

/// What `commitTurn` did with the turn.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum CommitStatus {
    /// The turn was stored.
    Committed,
    /// The turn's `advancementKey` was already stored: nothing was written.
    Duplicate,
}

/// `commitTurn`'s answer.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct CommitTurnResult {
    /// Whether the turn was stored or was a duplicate.
    pub status: CommitStatus,
    /// Messages stored by this call (0 for a duplicate).
    pub stored_messages: usize,
    /// Set when something is off but the turn is safe (e.g. a key reused with other content).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
    /// The compaction trigger's decision after storing the turn, for the log.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compaction: Option<TriggerReport>,
}

/// The trigger's decision, as reported to the caller.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct TriggerReport {
    /// "leaf" or "sweep" when compaction is now pending (run by the next maintain), else None.
    pub pending: Option<&'static str>,
    /// One line on what the trigger decided and why, for the host's log.
    pub log_line: String,
}

/// `assemble`'s arguments.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AssembleParams {
    /// The session whose view to build.
    #[serde(flatten)]
    pub session: SessionRef,
    /// The host's message history as it stands (OpenClaw: the whole visible history).
    #[serde(default)]
    pub messages: Vec<Value>,
    /// The token budget for the view, in tokens; `defaultTokenBudget` when absent.
    #[serde(default)]
    pub token_budget: Option<f64>,
    /// True when `messages` is the host's whole visible history (OpenClaw), so an empty list
    /// while we hold messages means the host reset the session.
    #[serde(default)]
    pub history_is_complete: bool,
    /// The current user prompt, which the host sends after the view (its size is budgeted).
    #[serde(default)]
    pub prompt: Option<String>,
    /// The reply budget the host will request (OpenClaw: `runtimeSettings.limits.maxOutputTokens`).
    #[serde(default)]
    pub max_output_tokens: Option<f64>,
    /// The host's reserve below the window where its preflight check asks for compaction, when
    /// it is not OpenClaw 2026.9's (`core::accounting::HostFacts::preflight_threshold`).
    #[serde(default)]
    pub preflight_reserve_tokens: Option<f64>,
    /// The factor by which the host pads its own estimate of a prompt when it decides the
    /// reply's room, when it is not OpenClaw 2026.9's 1.2 (`core::accounting::HostFacts`).
    #[serde(default)]
    pub host_estimate_safety: Option<f64>,
    /// The names of the tools the model can call this turn (OpenClaw's `availableTools` Set, as a
    /// list); None when the host does not say. The system-prompt addition names only these.
    #[serde(default)]
    pub available_tools: Option<Vec<String>>,
}

/// The view. `messages` are the stored host messages, serialized exactly as received.
#[derive(Debug, Clone, PartialEq)]
pub struct AssembleResult {
    /// The view's messages, each the stored host message's JSON.
    pub messages: Vec<String>,
    /// The view's size, in estimated tokens.
    pub estimated_tokens: u64,
    /// Text the host appends to its system prompt: how to use the recall tools it has.
    pub system_prompt_addition: String,
    /// How many messages the conversation holds (0 when there is none yet).
    pub stored_messages: i64,
    /// A line for the host's log, once per conversation: the active task did not fit the budget.
    pub notice: Option<String>,
}

/// The view handed over incrementally (see [`super::handover`]).
#[derive(Debug, Clone, PartialEq)]
pub struct AssembleHandover {
    /// The view, to be handed over in parts.
    pub view: super::handover::Handover,
    /// The view's size, in estimated tokens.
    pub estimated_tokens: u64,
    /// See [`AssembleResult::system_prompt_addition`].
    pub system_prompt_addition: String,
    /// See [`AssembleResult::stored_messages`].
    pub stored_messages: i64,
    /// See [`AssembleResult::notice`].
    pub notice: Option<String>,
}

/// An explicit reset or rollover reported by the host (e.g. its `before_reset` hook).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResetParams {
    /// The session being reset.
    #[serde(flatten)]
    pub session: SessionRef,
    /// Why, as the host said it ("reset", "new", ...); recorded as the archive cause.
    #[serde(default)]
    pub cause: Option<String>,
}

pub(crate) fn validate_session(session: &SessionRef) -> Result<()> {
    session.validate()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn field_of(value: Value) -> String {
        match decode::<CommitTurnParams>("commitTurn", value) {
            Err(Error::InvalidInput { field, .. }) => field,
            other => panic!("expected an input error, got {other:?}"),
        }
    }

    #[test]
    fn wrong_shapes_of_common_fields_name_the_field() {
        assert_eq!(
            field_of(json!({"sessionId": null, "advancementKey": "a", "messages": []})),
            "sessionId"
        );
        assert_eq!(
            field_of(json!({"sessionId": 7, "advancementKey": "a", "messages": []})),
            "sessionId"
        );
        assert_eq!(
            field_of(
                json!({"sessionId": "s", "sessionKey": [], "advancementKey": "a", "messages": []})
            ),
            "sessionKey"
        );
        assert_eq!(
            field_of(json!({"sessionId": "s", "advancementKey": "a", "messages": "nope"})),
            "messages"
        );
        assert_eq!(field_of(json!("not an object")), "commitTurn params");
        assert_eq!(
            field_of(json!({"sessionId": "s", "advancementKey": null, "messages": []})),
            "advancementKey"
        );
        let missing = decode::<CommitTurnParams>(
            "commitTurn",
            json!({"advancementKey": "a", "messages": []}),
        )
        .unwrap_err();
        assert!(missing.to_string().contains("sessionId"), "{missing}");
    }

    #[test]
    fn a_missing_session_key_and_absent_messages_are_fine() {
        let p: AssembleParams =
            decode("assemble", json!({"sessionId": "s", "sessionKey": null})).unwrap();
        assert_eq!(p.session.key(), "s");
        assert!(p.messages.is_empty());
    }
}
