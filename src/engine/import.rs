//! Import from lossless-claw: reads an `lcm.db` through [`crate::store::lossless_claw`] (only
//! `SELECT`s on the source connection, which the caller opens read-only) and writes through the
//! store: messages by the same `append` ingestion uses, summaries with their DAG, and the
//! source's view when it reaches every message (else the all-messages view, which compaction
//! will shrink). Conversations arrive archived (searchable by their key and agent; the host's own
//! transcript starts the active one). Truncation and emergency fallbacks become `level = 'fallback'` so `repair` can
//! redo them. Idempotent: a conversation or summary imported before is recognised by its source
//! key and a message by an identity derived from its source row, so a second import adds nothing
//! (and a source that grew adds only what is new). One transaction per conversation.

use std::collections::{HashMap, HashSet};

use serde::Serialize;
use serde_json::{json, Value};

use super::Engine;
use crate::core::assemble::summary_item_tokens;
use crate::core::identity::Fingerprint;
use crate::core::message::parse_message;
use crate::error::{Error, Result};
use crate::store::import::{self as store, ImportedSummary, ViewItem};
use crate::store::lossless_claw::{
    self as source, is_fallback, parse_time, ForeignConversation, ForeignItem, ForeignMessage,
};
use crate::store::{messages, Sql};

/// The archive cause of conversations that were active in the source.
pub(super) const IMPORTED_CAUSE: &str = "imported-from-lossless-claw";

/// What an import from lossless-claw added.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportReport {
    /// Conversations created by this import (others were imported before).
    pub conversations: usize,
    /// Messages stored by this import (those imported before are skipped).
    pub messages: usize,
    /// Summaries stored by this import.
    pub summaries: usize,
    /// Of the new summaries, how many are fallbacks (`/lcm repair` redoes them).
    pub fallback_summaries: usize,
    /// Conversations whose view was taken from the source.
    pub views: usize,
    /// One sentence per thing worth telling the operator.
    pub notes: Vec<String>,
}

fn host_message(m: &ForeignMessage, fallback_time: i64) -> Result<Value> {
    let timestamp = parse_time(&m.created_at).unwrap_or(fallback_time);
    let content = json!([{ "type": "text", "text": m.content }]);
    Ok(match m.role.as_str() {
        "user" => json!({ "role": "user", "content": content, "timestamp": timestamp }),
        "assistant" => json!({ "role": "assistant", "content": content, "timestamp": timestamp }),
        "tool" => json!({
            "role": "toolResult",
            "toolCallId": m.tool_call_id.clone().unwrap_or_else(|| format!("lossless-claw-{}", m.id)),
            "toolName": m.tool_name.clone().unwrap_or_else(|| "unknown".to_owned()),
            "content": content,
            "isError": false,
            "timestamp": timestamp,
        }),
        "system" => {
            json!({ "role": "custom", "customType": "lossless-claw-system", "content": content, "timestamp": timestamp })
        }
        other => {
            return Err(Error::input(
                format!("source message {}", m.id),
                format!("unknown role {other:?}"),
            ))
        }
    })
}

fn identity(conversation_key: &str, message_id: i64) -> String {
    let mut fp = Fingerprint::new();
    fp.field("lossless-claw-import")
        .field(conversation_key)
        .field(&message_id.to_string());
    fp.hex()
}

impl<S: Sql> Engine<S> {
    /// Imports every conversation of a lossless-claw database.
    pub fn import_lossless_claw(
        &mut self,
        src: &mut impl Sql,
        now_ms: i64,
    ) -> Result<ImportReport> {
        source::check_schema(src)?;
        let mut report = ImportReport::default();
        for conversation in source::conversations(src)? {
            self.import_conversation(src, &conversation, now_ms, &mut report)?;
        }
        self.store.refresh_statistics_after(report.messages);
        self.views = Default::default();
        Ok(report)
    }

    fn import_conversation(
        &mut self,
        src: &mut impl Sql,
        fc: &ForeignConversation,
        now_ms: i64,
        report: &mut ImportReport,
    ) -> Result<()> {
        // Read everything first: no transaction stays open while the source is read.
        let fmessages = source::messages(src, fc.id)?;
        let fsummaries = source::summaries(src, fc.id)?;
        let mut edges = Vec::with_capacity(fsummaries.len());
        for s in &fsummaries {
            edges.push((
                source::summary_messages(src, &s.id)?,
                source::summary_sources(src, &s.id)?,
            ));
        }
        let fview = source::context(src, fc.id)?;
        let created_at = parse_time(&fc.created_at).unwrap_or(now_ms);
        let conversation_key = format!(
            "lossless-claw:conversation:{}:{}:{}",
            fc.id, fc.session_id, fc.created_at
        );
        let parsed = fmessages
            .iter()
            .map(|m| {
                let mut stored = parse_message(
                    &host_message(m, created_at)?,
                    &format!("source message {}", m.id),
                )?;
                stored.identity = identity(&conversation_key, m.id);
                Ok(stored)
            })
            .collect::<Result<Vec<_>>>()?;

        self.store.write(|tx| {
            let (conversation, first) = match store::imported(tx.sql(), &conversation_key)? {
                Some(id) => (store::conversation(tx.sql(), id)?, false),
                None => {
                    let key = fc.session_key.clone().filter(|k| !k.is_empty()).unwrap_or_else(|| fc.session_id.clone());
                    // Always archived: the host still holds these sessions' transcripts and
                    // passes them to the engine on the next turn, with identities an import cannot
                    // reproduce, so an active imported conversation would be stored twice. An
                    // archived one stays searchable under the same key (and the same agent).
                    let cause = if fc.active { IMPORTED_CAUSE.to_owned() } else { fc.archive_cause.clone().unwrap_or_else(|| "archived".to_owned()) };
                    let c = store::create_conversation(tx.sql(), &key, &fc.session_id, Some(&cause), created_at, now_ms)?;
                    store::record(tx.sql(), &conversation_key, "conversation", c.id, now_ms)?;
                    report.conversations += 1;
                    (c, true)
                }
            };
            let appended = messages::append(tx, &conversation, &parsed, now_ms)?;
            report.messages += appended.inserted;

            let mut local_messages: HashMap<i64, (i64, u32)> = HashMap::new();
            let dialect = tx.dialect();
            for (m, stored) in fmessages.iter().zip(&parsed) {
                let row = tx.query_row("SELECT id, token_count FROM messages WHERE conversation_id = ?1 AND identity_hash = ?2", &[conversation.id.into(), messages::identity_key(&stored.identity, dialect)])?;
                if let Some(row) = row {
                    local_messages.insert(m.id, (row.int(0)?, u32::try_from(row.int(1)?).unwrap_or(u32::MAX)));
                }
            }
            let mut local_summaries: HashMap<String, (i64, u32)> = HashMap::new();
            let mut below: HashMap<i64, (Vec<i64>, Vec<i64>)> = HashMap::new();
            for (s, (fmsgs, fsources)) in fsummaries.iter().zip(&edges) {
                let summary_key = format!("lossless-claw:summary:{}", s.id);
                let msgs: Vec<i64> = fmsgs.iter().filter_map(|id| local_messages.get(id).map(|(local, _)| *local)).collect();
                let sources: Vec<i64> = fsources.iter().filter_map(|id| local_summaries.get(id).map(|(local, _)| *local)).collect();
                if msgs.len() < fmsgs.len() || sources.len() < fsources.len() {
                    report.notes.push(format!("summary {} refers to rows missing from the source; imported with the edges that exist", s.id));
                }
                let (earliest, latest) = (s.earliest_at.as_deref().and_then(parse_time), s.latest_at.as_deref().and_then(parse_time));
                let local = match store::imported(tx.sql(), &summary_key)? {
                    Some(id) => id,
                    None => {
                        let level = if is_fallback(s) { "fallback" } else { "normal" };
                        let id = store::insert_summary(
                            tx.sql(),
                            &ImportedSummary {
                                conversation_id: conversation.id,
                                kind: if s.kind == "condensed" { "condensed" } else { "leaf" },
                                depth: s.depth.max(0),
                                content: &s.content,
                                tokens: s.token_count,
                                earliest_at: earliest,
                                latest_at: latest,
                                source_tokens: s.source_message_token_count,
                                model: s.model.as_deref(),
                                level,
                                created_at: parse_time(&s.created_at).unwrap_or(now_ms),
                                messages: &msgs,
                                sources: &sources,
                            },
                        )?;
                        store::record(tx.sql(), &summary_key, "summary", id, now_ms)?;
                        report.summaries += 1;
                        report.fallback_summaries += usize::from(level == "fallback");
                        id
                    }
                };
                let tokens = summary_item_tokens(local, s.depth.max(0), &s.content, earliest, latest);
                local_summaries.insert(s.id.clone(), (local, tokens));
                below.insert(local, (msgs, sources));
            }
            if !first {
                return Ok(());
            }
            // The source's view, if it reaches every message; a view that lost messages is not
            // carried over (the all-messages view from append stays, and compaction shrinks it).
            let mut items: Vec<ViewItem> = Vec::with_capacity(fview.len());
            let mut reached: HashSet<i64> = HashSet::new();
            let mut stack = Vec::new();
            for item in &fview {
                match item {
                    ForeignItem::Message(id) => {
                        if let Some((local, tokens)) = local_messages.get(id) {
                            items.push((Some(*local), None, *tokens));
                            reached.insert(*local);
                        }
                    }
                    ForeignItem::Summary(id) => {
                        if let Some((local, tokens)) = local_summaries.get(id) {
                            items.push((None, Some(*local), *tokens));
                            stack.push(*local);
                        }
                    }
                }
            }
            let mut seen = HashSet::new();
            while let Some(summary) = stack.pop() {
                if !seen.insert(summary) {
                    continue;
                }
                if let Some((msgs, sources)) = below.get(&summary) {
                    reached.extend(msgs.iter().copied());
                    stack.extend(sources.iter().copied());
                }
            }
            let all: HashSet<i64> = local_messages.values().map(|(id, _)| *id).collect();
            let missing = all.difference(&reached).count();
            if items.is_empty() || missing > 0 {
                if !fview.is_empty() {
                    report.notes.push(format!(
                        "conversation {} ({}): the source's view leaves {missing} messages unreachable; kept a view of all messages instead",
                        fc.id, fc.session_id
                    ));
                }
                return Ok(());
            }
            store::replace_view(tx.sql(), conversation.id, &items)?;
            report.views += 1;
            Ok(())
        })
    }
}
