//! Rendering a decided batch: reads the stored messages it changes and the tool calls they
//! answer, finds older outputs that a newer one repeats exactly (same tool, same arguments,
//! same content: the older copy's stub names the newer message), and renders every stub and
//! excerpt. A rendering that would not be smaller than what the view shows now is dropped.
//! Reads only; the caller applies the batch.

use std::collections::HashMap;

use serde_json::Value;

use crate::core::masking::{
    render_excerpt, render_line, Candidate, MaskDecision, Original, Plan, Rendered, ScanItem,
    ToolCall,
};
use crate::core::message::Role;
use crate::error::Result;
use crate::store::masking::{self as store, Restub, StoredRow};
use crate::store::Sql;

/// One item's new form.
pub(super) struct Stubbed {
    pub ordinal: i64,
    pub message_id: i64,
    pub role: Role,
    /// Its tokens in the view before the batch.
    pub old_tokens: u32,
    pub rendered: Rendered,
}

/// A rendered batch, oldest item first.
pub(super) struct Batch {
    pub items: Vec<Stubbed>,
    /// Line stubs, how many of them name an identical newer copy, and excerpts.
    pub lines: u32,
    pub identical: u32,
    pub excerpts: u32,
}

impl Batch {
    pub(super) fn restubs(&self) -> Vec<Restub<'_>> {
        self.items
            .iter()
            .map(|s| Restub {
                ordinal: s.ordinal,
                message_id: s.message_id,
                old_tokens: s.old_tokens,
                tokens: s.rendered.tokens,
                variant: s.rendered.variant,
                view_json: &s.rendered.json,
            })
            .collect()
    }

    /// Where the batch breaks the prompt cache.
    pub(super) fn first_ordinal(&self) -> Option<i64> {
        self.items.first().map(|s| s.ordinal)
    }
}

/// The call a result answers, owned.
struct Call {
    name: String,
    arguments: String,
}

fn parse(raw_json: &str) -> Value {
    serde_json::from_str(raw_json).unwrap_or(Value::Null)
}

/// The calls, by id, made in the stored assistant messages given (by call id).
fn calls_by_id(assistants: HashMap<String, String>) -> HashMap<String, Call> {
    let mut out = HashMap::new();
    for (id, raw) in assistants {
        let value = parse(&raw);
        let block = value["content"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|b| b["type"] == "toolCall" && b["id"].as_str() == Some(id.as_str()));
        if let Some(block) = block {
            let name = block["name"].as_str().unwrap_or_default().to_owned();
            let arguments = block
                .get("arguments")
                .map_or_else(String::new, Value::to_string);
            out.insert(id, Call { name, arguments });
        }
    }
    out
}

fn call_id(row: &StoredRow, value: &Value) -> Option<String> {
    (row.role == Role::ToolResult)
        .then(|| value["toolCallId"].as_str().map(str::to_owned))
        .flatten()
}

/// What makes two outputs identical: the tool, its arguments and the whole content.
fn identity(row: &StoredRow, value: &Value, call: Option<&Call>) -> Option<String> {
    match row.role {
        Role::ToolResult => {
            let name = call
                .map(|c| c.name.as_str())
                .or(value["toolName"].as_str())
                .unwrap_or_default();
            let args = call.map_or("", |c| c.arguments.as_str());
            Some(format!(
                "{name}\u{1f}{args}\u{1f}{}\u{1f}{}",
                value["content"], value["isError"]
            ))
        }
        Role::BashExecution => Some(format!(
            "bash\u{1f}{}\u{1f}{}\u{1f}{}",
            value["command"], value["output"], value["exitCode"]
        )),
        _ => None,
    }
}

/// Renders the batch `decision` chose from `plan` (over `items`, oldest first).
pub(super) fn batch(
    sql: &mut impl Sql,
    conversation_id: i64,
    items: &[ScanItem],
    plan: &Plan,
    decision: &MaskDecision,
    excerpt_tokens: u32,
) -> Result<Batch> {
    let (lines, small): (&[Candidate], &[Candidate]) = if decision.stub {
        (&plan.candidates, &plan.small)
    } else {
        (&[], &[])
    };
    let huge: &[Candidate] = if decision.excerpt_huge {
        &plan.huge
    } else {
        &[]
    };
    // Newer whole outputs of exactly the same size may repeat a candidate: only those are read.
    let partners = |c: &Candidate| -> Vec<i64> {
        items
            .iter()
            .filter(|i| {
                i.ordinal > c.ordinal
                    && i.stub.is_none()
                    && i.tokens == c.tokens
                    && i.role == Some(c.role)
            })
            .filter_map(|i| i.message_id)
            .collect()
    };
    let whole = |c: &&Candidate| {
        items
            .iter()
            .any(|i| i.ordinal == c.ordinal && i.stub.is_none())
    };
    let pairs: Vec<(i64, Vec<i64>)> = lines
        .iter()
        .chain(small)
        .filter(whole)
        .map(|c| (c.message_id, partners(c)))
        .filter(|(_, p)| !p.is_empty())
        .collect();
    let mut ids: Vec<i64> = lines
        .iter()
        .chain(small)
        .chain(huge)
        .map(|c| c.message_id)
        .collect();
    ids.extend(pairs.iter().flat_map(|(_, p)| p.iter().copied()));
    ids.sort_unstable();
    ids.dedup();
    let stored = store::load_messages(sql, &ids)?;
    // Each stored message is parsed once, here.
    let parsed: HashMap<i64, Value> = stored
        .iter()
        .map(|(id, row)| (*id, parse(&row.raw_json)))
        .collect();
    let call_ids: HashMap<i64, String> = stored
        .iter()
        .filter_map(|(id, row)| Some((*id, call_id(row, parsed.get(id)?)?)))
        .collect();
    let wanted: Vec<String> = call_ids.values().cloned().collect();
    let calls = if wanted.is_empty() {
        HashMap::new()
    } else {
        calls_by_id(store::load_calls(sql, conversation_id, &wanted)?)
    };
    let call_of = |id: i64| call_ids.get(&id).and_then(|c| calls.get(c));
    let mut identities: HashMap<i64, Option<String>> = HashMap::new();
    let mut identity_of = |id: i64| -> Option<String> {
        identities
            .entry(id)
            .or_insert_with(|| identity(stored.get(&id)?, parsed.get(&id)?, call_of(id)))
            .clone()
    };
    let same_as: HashMap<i64, i64> = pairs
        .iter()
        .filter_map(|(id, newer)| {
            let own = identity_of(*id)?;
            newer
                .iter()
                .rev()
                .find(|n| identity_of(**n).as_deref() == Some(own.as_str()))
                .map(|n| (*id, *n))
        })
        .collect();
    let mut out = Batch {
        items: Vec::new(),
        lines: 0,
        identical: 0,
        excerpts: 0,
    };
    let work = lines
        .iter()
        .map(|c| (c, false))
        .chain(
            small
                .iter()
                .filter(|c| same_as.contains_key(&c.message_id))
                .map(|c| (c, false)),
        )
        .chain(huge.iter().map(|c| (c, true)));
    for (c, excerpt) in work {
        let (Some(row), Some(value)) = (stored.get(&c.message_id), parsed.get(&c.message_id))
        else {
            continue;
        };
        let call = call_of(c.message_id).map(|k| ToolCall {
            name: &k.name,
            arguments: &k.arguments,
        });
        let original = Original {
            message_id: row.id,
            role: row.role,
            value,
            tokens: row.tokens,
            call,
        };
        let rendered = if excerpt {
            render_excerpt(&original, excerpt_tokens)?
        } else {
            Some(render_line(&original, same_as.get(&c.message_id).copied())?)
        };
        let Some(rendered) = rendered.filter(|r| r.tokens < c.tokens) else {
            continue;
        };
        match (excerpt, same_as.contains_key(&c.message_id)) {
            (true, _) => out.excerpts += 1,
            (false, true) => {
                out.lines += 1;
                out.identical += 1;
            }
            (false, false) => out.lines += 1,
        }
        out.items.push(Stubbed {
            ordinal: c.ordinal,
            message_id: c.message_id,
            role: c.role,
            old_tokens: c.tokens,
            rendered,
        });
    }
    out.items.sort_by_key(|s| s.ordinal);
    Ok(out)
}
