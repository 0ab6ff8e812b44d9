//! `WasmEngine`: the engine as JS sees it. Every method takes the host's parameter object and the
//! current time, converts with serde-wasm-bindgen, calls [`Engine`], and converts the result.
//! Errors become JS `Error`s with the crate's message.

use js_sys::{Array, Object, Reflect};
use serde::Serialize;
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::sqljs::{SqlJsDatabase, SqlJsSql};
use super::{depth, js_error, json_messages, plain_error};
use crate::core::config::Config;
use crate::engine::{
    checked_tail_start, decode, next_bootstrap_chunk, AfterTurnParams, AssembleParams,
    BootstrapParams, CommitTurnParams, Engine, IngestParams, FIRST_BOOTSTRAP_CHUNK,
};
use crate::error::Error;

/// The context engine over a sql.js database.
#[wasm_bindgen]
pub struct WasmEngine {
    inner: Engine<SqlJsSql>,
}

fn from_js(call: &str, value: JsValue) -> Result<Value, JsValue> {
    depth::check(&value, call).map_err(js_error)?;
    serde_wasm_bindgen::from_value(value)
        .map_err(|e| js_error(Error::input(format!("{call} params"), e.to_string())))
}

/// Separates `messages` from the rest of a params object without converting it. The host passes
/// its whole history to `assemble` and `afterTurn` on every turn; converting all of it would make
/// every turn cost time proportional to the history, so only the messages actually needed are.
fn split_messages(call: &str, params: &JsValue) -> Result<(Value, Array), JsValue> {
    let invalid = |reason: &str| js_error(Error::input(format!("{call} params"), reason));
    let object = params
        .dyn_ref::<Object>()
        .ok_or_else(|| invalid("expected an object"))?;
    let messages = Reflect::get(params, &"messages".into()).unwrap_or(JsValue::UNDEFINED);
    let messages = if messages.is_undefined() || messages.is_null() {
        Array::new()
    } else {
        messages
            .dyn_into::<Array>()
            .map_err(|_| js_error(Error::input("messages", "expected an array of messages")))?
    };
    let rest = Object::assign(&Object::new(), object);
    let _ = Reflect::delete_property(&rest, &"messages".into());
    Ok((from_js(call, rest.into())?, messages))
}

/// Fails naming the call when `params` has no `messages` (calls whose params type requires them;
/// [`split_messages`] reads a missing list as empty).
fn require_messages(call: &str, params: &JsValue) -> Result<(), JsValue> {
    if Reflect::get(params, &"messages".into()).map_or(true, |m| m.is_undefined()) {
        return Err(js_error(Error::input(
            format!("{call} params"),
            "missing field `messages`",
        )));
    }
    Ok(())
}

/// `rest` with an empty `messages` array, for params types that require the field (the
/// messages themselves are converted apart).
fn with_empty_messages(mut rest: Value) -> Value {
    if let Some(object) = rest.as_object_mut() {
        object.insert("messages".to_owned(), Value::Array(Vec::new()));
    }
    rest
}

/// The host's history for `assemble`, converted only if called (when the host holds messages
/// we never stored: history from before the engine was installed, possibly thousands).
fn host_history(messages: Array) -> impl FnOnce() -> crate::error::Result<Vec<Value>> {
    move || json_messages::messages_from_js("assemble", &messages, 0)
}

/// A status with the time it was taken at.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct StatusAsOf<'a> {
    #[serde(flatten)]
    status: &'a crate::engine::Status,
    as_of_ms: i64,
}

fn to_js<T: Serialize>(value: &T) -> Result<JsValue, JsValue> {
    value
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| plain_error(&format!("converting a result for JS: {e}")))
}

fn now(ms: f64) -> i64 {
    if ms.is_finite() {
        ms as i64
    } else {
        0
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AssembleOut {
    /// A JSON array of the view's messages: one `JSON.parse` on the JS side instead of a
    /// conversion per field.
    messages_json: String,
    estimated_tokens: u64,
    system_prompt_addition: String,
    stored_messages: i64,
    notice: Option<String>,
}

#[wasm_bindgen]
impl WasmEngine {
    /// Opens the engine on a sql.js database, validating `config` and migrating the schema.
    #[wasm_bindgen(constructor)]
    pub fn new(db: SqlJsDatabase, config: JsValue, now_ms: f64) -> Result<WasmEngine, JsValue> {
        let config = Config::from_json(&from_js("config", config)?).map_err(js_error)?;
        let sql = SqlJsSql::new(db).map_err(js_error)?;
        Ok(WasmEngine {
            inner: Engine::open(sql, config, now(now_ms)).map_err(js_error)?,
        })
    }

    /// `{sessionId, sessionKey?, messages?}`: creates the conversation and stores the existing
    /// history, converted a chunk at a time. Returns `{bootstrapped, importedMessages, reason}`.
    pub fn bootstrap(&mut self, params: JsValue, now_ms: f64) -> Result<JsValue, JsValue> {
        let (rest, messages) = split_messages("bootstrap", &params)?;
        let params: BootstrapParams = decode("bootstrap", rest).map_err(js_error)?;
        // A long history is converted a chunk at a time (one transaction still stores it all).
        let len = messages.length();
        let mut offset = 0u32;
        let mut size = FIRST_BOOTSTRAP_CHUNK;
        let next = || {
            if offset >= len {
                return Ok(None);
            }
            let end = offset.saturating_add(size).min(len);
            let (chunk, bytes) = json_messages::sized_messages_from_js(
                "bootstrap",
                &messages.slice(offset, end),
                offset as usize,
            )?;
            size = next_bootstrap_chunk(end - offset, bytes);
            offset = end;
            Ok(Some(chunk))
        };
        to_js(
            &self
                .inner
                .bootstrap_chunked(&params.session, next, now(now_ms))
                .map_err(js_error)?,
        )
    }

    /// Ingests `{sessionId, sessionKey?, messages}`; returns how many messages were new.
    pub fn ingest(&mut self, params: JsValue, now_ms: f64) -> Result<u32, JsValue> {
        require_messages("ingest", &params)?;
        let (rest, messages) = split_messages("ingest", &params)?;
        let mut params: IngestParams =
            decode("ingest", with_empty_messages(rest)).map_err(js_error)?;
        params.messages =
            json_messages::messages_from_js("ingest", &messages, 0).map_err(js_error)?;
        let inserted = self.inner.ingest(params, now(now_ms)).map_err(js_error)?;
        Ok(u32::try_from(inserted).unwrap_or(u32::MAX))
    }

    /// Ingests the new tail (after `prePromptMessageCount`) of the host's full snapshot,
    /// converting only that tail.
    #[wasm_bindgen(js_name = afterTurn)]
    pub fn after_turn(&mut self, params: JsValue, now_ms: f64) -> Result<u32, JsValue> {
        let (rest, messages) = split_messages("afterTurn", &params)?;
        let params: AfterTurnParams = decode("afterTurn", rest).map_err(js_error)?;
        let start = checked_tail_start(params.pre_prompt_message_count, messages.length() as usize)
            .map_err(js_error)?;
        let tail = json_messages::messages_from_js(
            "afterTurn",
            &messages.slice(start as u32, messages.length()),
            start,
        )
        .map_err(js_error)?;
        let inserted = self
            .inner
            .ingest_turn_tail(
                &params.session,
                &tail,
                start,
                params.model_context_window,
                now(now_ms),
            )
            .map_err(js_error)?;
        Ok(u32::try_from(inserted).unwrap_or(u32::MAX))
    }

    /// `{sessionId, sessionKey?, advancementKey, messages, admission?, terminal?,
    /// modelContextWindow?}`: stores the turn in one transaction, once per `advancementKey`.
    /// Returns `{status: "committed"|"duplicate", storedMessages, warning?, compaction?}`.
    #[wasm_bindgen(js_name = commitTurn)]
    pub fn commit_turn(&mut self, params: JsValue, now_ms: f64) -> Result<JsValue, JsValue> {
        require_messages("commitTurn", &params)?;
        let (rest, messages) = split_messages("commitTurn", &params)?;
        let mut params: CommitTurnParams =
            decode("commitTurn", with_empty_messages(rest)).map_err(js_error)?;
        params.messages =
            json_messages::messages_from_js("commitTurn", &messages, 0).map_err(js_error)?;
        to_js(
            &self
                .inner
                .commit_turn(params, now(now_ms))
                .map_err(js_error)?,
        )
    }

    /// The view. The host's history is converted only when the engine needs it (it holds more
    /// messages than we stored: history from before the engine was installed); normally never.
    pub fn assemble(&mut self, params: JsValue, now_ms: f64) -> Result<JsValue, JsValue> {
        let (rest, messages) = split_messages("assemble", &params)?;
        let params: AssembleParams = decode("assemble", rest).map_err(js_error)?;
        let len = messages.length() as usize;
        let history = host_history(messages);
        let view = self
            .inner
            .assemble_with(params, len, history, now(now_ms))
            .map_err(js_error)?;
        to_js(&AssembleOut {
            messages_json: format!("[{}]", view.messages.join(",")),
            estimated_tokens: view.estimated_tokens,
            system_prompt_addition: view.system_prompt_addition,
            stored_messages: view.stored_messages,
            notice: view.notice,
        })
    }

    /// `assemble`, handing the view over incrementally (src/engine/handover.rs): `held` is the
    /// token of the hand-over the caller holds the messages of. Returns `{token, keys:
    /// Float64Array, fresh: Uint8Array, freshJson, estimatedTokens, systemPromptAddition,
    /// storedMessages}`.
    #[wasm_bindgen(js_name = assembleView)]
    pub fn assemble_view(
        &mut self,
        params: JsValue,
        held: Option<f64>,
        now_ms: f64,
    ) -> Result<JsValue, JsValue> {
        let (rest, messages) = split_messages("assemble", &params)?;
        let params: AssembleParams = decode("assemble", rest).map_err(js_error)?;
        let len = messages.length() as usize;
        let history = host_history(messages);
        let held = held
            .filter(|t| t.is_finite() && *t >= 0.0)
            .map(|t| t as u64);
        let out = self
            .inner
            .assemble_handover(params, len, history, held, now(now_ms))
            .map_err(js_error)?;
        let object = Object::new();
        let set = |key: &str, value: JsValue| {
            Reflect::set(&object, &key.into(), &value)
                .map(|_| ())
                .map_err(|_| plain_error("building the assemble result"))
        };
        set("token", JsValue::from_f64(out.view.token as f64))?;
        set(
            "keys",
            js_sys::Float64Array::from(out.view.keys.as_slice()).into(),
        )?;
        set(
            "fresh",
            js_sys::Uint8Array::from(out.view.fresh.as_slice()).into(),
        )?;
        set("freshJson", JsValue::from_str(&out.view.fresh_json))?;
        set(
            "estimatedTokens",
            JsValue::from_f64(out.estimated_tokens as f64),
        )?;
        set(
            "systemPromptAddition",
            JsValue::from_str(&out.system_prompt_addition),
        )?;
        set(
            "storedMessages",
            JsValue::from_f64(out.stored_messages as f64),
        )?;
        if let Some(notice) = &out.notice {
            set("notice", JsValue::from_str(notice))?;
        }
        Ok(object.into())
    }

    /// Starts compaction: `{sessionId, sessionKey?, mode: "pending"|"sweep", summarizer:
    /// "host"|"extractive", force?, tokenBudget?, currentTokenCount?}`. Returns
    /// `{type: "needSummary", jobId, prompt, maxTokens, purpose, ...}` or `{type: "done", ...report}`.
    #[wasm_bindgen(js_name = compactionStart)]
    pub fn compaction_start(&mut self, params: JsValue, now_ms: f64) -> Result<JsValue, JsValue> {
        let params =
            decode("compactionStart", from_js("compactionStart", params)?).map_err(js_error)?;
        to_js(
            &self
                .inner
                .compaction_start(params, now(now_ms))
                .map_err(js_error)?,
        )
    }

    /// Answers a summary request: `{jobId, text}` or `{jobId, error: {kind, message}}`, plus
    /// `model?`. Returns the next step, as `compactionStart`.
    #[wasm_bindgen(js_name = compactionContinue)]
    pub fn compaction_continue(
        &mut self,
        answer: JsValue,
        now_ms: f64,
    ) -> Result<JsValue, JsValue> {
        let answer = decode("compactionContinue", from_js("compactionContinue", answer)?)
            .map_err(js_error)?;
        to_js(
            &self
                .inner
                .compaction_continue(answer, now(now_ms))
                .map_err(js_error)?,
        )
    }

    /// Renews the lease of compaction job `{jobId}`'s request while its caller waits for the
    /// answer (every `LEASE_RENEW_MS`, core/compaction/hold.rs). Returns whether it was renewed.
    #[wasm_bindgen(js_name = compactionRenew)]
    pub fn compaction_renew(&mut self, params: JsValue, now_ms: f64) -> Result<bool, JsValue> {
        let params: crate::engine::compaction::JobRef =
            decode("compactionRenew", from_js("compactionRenew", params)?).map_err(js_error)?;
        self.inner
            .compaction_renew(params.job_id, now(now_ms))
            .map_err(js_error)
    }

    /// A successor between jobs: `{sessionId, sessionKey?, standing}`. Standing, it marks the
    /// conversation's summaries as handed to it (one-shot turns refrain) and returns whether
    /// compaction is pending; leaving (`standing: false`) clears the mark.
    #[wasm_bindgen(js_name = successorStandby)]
    pub fn successor_standby(&mut self, params: JsValue, now_ms: f64) -> Result<bool, JsValue> {
        let params: crate::engine::compaction::SuccessorStandby =
            decode("successorStandby", from_js("successorStandby", params)?).map_err(js_error)?;
        self.inner
            .successor_standby(&params, now(now_ms))
            .map_err(js_error)
    }

    /// Archives the session key's active conversation (the host reported a reset):
    /// `{sessionId, sessionKey?, cause?}`. Returns whether there was one.
    pub fn reset(&mut self, params: JsValue, now_ms: f64) -> Result<bool, JsValue> {
        let params = decode("reset", from_js("reset", params)?).map_err(js_error)?;
        self.inner.reset(params, now(now_ms)).map_err(js_error)
    }

    /// Config values that were clamped, one sentence each, for the caller to log.
    #[wasm_bindgen(js_name = configWarnings)]
    pub fn config_warnings(&self) -> Vec<String> {
        self.inner.config().warnings.clone()
    }

    /// Searches stored messages and summaries: `{sessionId, sessionKey?, pattern, mode?, scope?, limit?}`.
    pub fn search(&mut self, params: JsValue) -> Result<JsValue, JsValue> {
        let params = decode("search", from_js("search", params)?).map_err(js_error)?;
        to_js(&self.inner.search(params).map_err(js_error)?)
    }

    /// `lcm_grep`: `{sessionId, sessionKey?, pattern, mode?, scope?: "conversation"|"agent",
    /// since?, before?, limit?}`; only conversations the caller's own session key reaches.
    #[wasm_bindgen(js_name = recallGrep)]
    pub fn recall_grep(&mut self, params: JsValue) -> Result<JsValue, JsValue> {
        let params = decode("lcm_grep", from_js("lcm_grep", params)?).map_err(js_error)?;
        to_js(&self.inner.recall_grep(params).map_err(js_error)?)
    }

    /// `lcm_describe`: `{sessionId, sessionKey?, summaryId? | messageId?}`.
    #[wasm_bindgen(js_name = recallDescribe)]
    pub fn recall_describe(&mut self, params: JsValue) -> Result<JsValue, JsValue> {
        let params = decode("lcm_describe", from_js("lcm_describe", params)?).map_err(js_error)?;
        to_js(&self.inner.recall_describe(params).map_err(js_error)?)
    }

    /// `lcm_expand`: `{sessionId, sessionKey?, summaryId? | messageId?, cursor?, maxTokens?, messages?}`.
    #[wasm_bindgen(js_name = recallExpand)]
    pub fn recall_expand(&mut self, params: JsValue) -> Result<JsValue, JsValue> {
        let params = decode("lcm_expand", from_js("lcm_expand", params)?).map_err(js_error)?;
        to_js(&self.inner.recall_expand(params).map_err(js_error)?)
    }

    /// `lcm_ask`, first step: `{sessionId, sessionKey?, question, pattern?, summaryIds?, scope?,
    /// since?, before?, maxEvidenceTokens?}`. Returns `{prompt, maxTokens, evidence, ...}` for the
    /// one LLM call, or `{prompt: null, answer}` when nothing was found.
    #[wasm_bindgen(js_name = recallAsk)]
    pub fn recall_ask(&mut self, params: JsValue) -> Result<JsValue, JsValue> {
        let params = decode("lcm_ask", from_js("lcm_ask", params)?).map_err(js_error)?;
        to_js(&self.inner.ask_start(params).map_err(js_error)?)
    }

    /// `lcm_ask`, last step: `{outcome: "answered"|"llm_failed"|"timed_out"|"no_llm", text?,
    /// detail?, evidence}`. Returns the capped answer with the ids it rests on.
    #[wasm_bindgen(js_name = recallAskFinish)]
    pub fn recall_ask_finish(&mut self, params: JsValue) -> Result<JsValue, JsValue> {
        let params = serde_wasm_bindgen::from_value(params)
            .map_err(|e| js_error(Error::input("lcm_ask answer", e.to_string())))?;
        to_js(&self.inner.ask_finish(params).map_err(js_error)?)
    }

    /// `/lcm status`: `{sessionId?, sessionKey?}`: totals, this session's conversation, the
    /// latest compactions and failures, and `asOfMs`, the engine's time they are read against (on
    /// a shared store the server's, which the stored leases and retry times are in).
    pub fn status(&mut self, params: JsValue, now_ms: f64) -> Result<JsValue, JsValue> {
        let params = decode("status", from_js("status", params)?).map_err(js_error)?;
        let status = self.inner.status(params).map_err(js_error)?;
        to_js(&StatusAsOf {
            status: &status,
            as_of_ms: now(now_ms),
        })
    }

    /// `/lcm doctor`: `{fix?}`: the integrity checks, and the safe fixes when asked.
    pub fn doctor(&mut self, params: JsValue) -> Result<JsValue, JsValue> {
        let params = decode("doctor", from_js("doctor", params)?).map_err(js_error)?;
        to_js(&self.inner.doctor(params).map_err(js_error)?)
    }

    /// `/lcm repair`: `{sessionId?, sessionKey?, dryRun?, summarizer?: "host"|"extractive"}`.
    /// Returns `{type: "needSummary", jobId, prompt, maxTokens, purpose, ...}` (as compaction
    /// does) or `{type: "done", ok, dryRun, planned, repaired, failures}`.
    #[wasm_bindgen(js_name = repairStart)]
    pub fn repair_start(&mut self, params: JsValue) -> Result<JsValue, JsValue> {
        let params = decode("repairStart", from_js("repairStart", params)?).map_err(js_error)?;
        to_js(&self.inner.repair_start(params).map_err(js_error)?)
    }

    /// Answers a repair's summary request: `{jobId, text}` or `{jobId, error: {kind, message}}`.
    #[wasm_bindgen(js_name = repairContinue)]
    pub fn repair_continue(&mut self, answer: JsValue) -> Result<JsValue, JsValue> {
        let answer =
            decode("repairContinue", from_js("repairContinue", answer)?).map_err(js_error)?;
        to_js(&self.inner.repair_continue(answer).map_err(js_error)?)
    }

    /// Imports a lossless-claw `lcm.db`, given as a second (read-only) database; returns
    /// `{conversations, messages, summaries, fallbackSummaries, views, notes}`.
    #[wasm_bindgen(js_name = importLosslessClaw)]
    pub fn import_lossless_claw(
        &mut self,
        source: SqlJsDatabase,
        now_ms: f64,
    ) -> Result<JsValue, JsValue> {
        let mut source = SqlJsSql::new(source).map_err(js_error)?;
        to_js(
            &self
                .inner
                .import_lossless_claw(&mut source, now(now_ms))
                .map_err(js_error)?,
        )
    }

    /// After-turn housekeeping: indexes the messages waiting for search once a batch of them has
    /// gathered; returns how many it indexed.
    #[wasm_bindgen(js_name = indexSearchBatch)]
    pub fn index_search_batch(&mut self) -> Result<usize, JsValue> {
        self.inner.index_search_batch().map_err(js_error)
    }

    /// Housekeeping: embeds one bounded batch of the messages and summaries that have no vector
    /// yet (a store written before semantic recall, a bootstrap, an embedder change); returns
    /// how many. `indexSearchBatch` runs one batch too; this is for callers that catch up in a
    /// loop (benchmarks, an operator).
    #[wasm_bindgen(js_name = backfillVectors)]
    pub fn backfill_vectors(&mut self) -> Result<usize, JsValue> {
        self.inner.backfill_vectors().map_err(js_error)
    }

    /// True when a message or summary still has no vector: `backfillVectors` has more to do.
    #[wasm_bindgen(js_name = vectorsWaiting)]
    pub fn vectors_waiting(&mut self) -> Result<bool, JsValue> {
        self.inner.vectors_waiting().map_err(js_error)
    }

    /// From now on `commitTurn` and `afterTurn` store their messages without vectors and
    /// `indexSearchBatch` embeds none: the caller runs `backfillVectors` once the turn is
    /// answered (the Node worker thread, after its reply to `housekeep`). A recall embeds what
    /// still waits before it ranks.
    #[wasm_bindgen(js_name = deferTurnEmbedding)]
    pub fn defer_turn_embedding(&mut self) {
        self.inner.defer_turn_embedding()
    }

    /// True when a write committed since the last call: the caller should persist.
    #[wasm_bindgen(js_name = takeDirty)]
    pub fn take_dirty(&mut self) -> bool {
        self.inner.take_dirty()
    }

    /// Describes the session's conversation (totals and the summary DAG), or one summary
    /// (`summaryId`) or message (`messageId`) of it; read-only, the base of `lcm_describe`.
    pub fn describe(&mut self, params: JsValue) -> Result<JsValue, JsValue> {
        let params = decode("describe", from_js("describe", params)?).map_err(js_error)?;
        to_js(&self.inner.describe(params).map_err(js_error)?)
    }

    /// Expands a summary into its children, or (`toMessages`) every original message under it,
    /// one page under `tokenLimit`; read-only, the base of `lcm_expand`.
    pub fn expand(&mut self, params: JsValue) -> Result<JsValue, JsValue> {
        let params = decode("expand", from_js("expand", params)?).map_err(js_error)?;
        to_js(&self.inner.expand(params).map_err(js_error)?)
    }

    /// The compaction log of the session's conversation, oldest first (`afterId?`, `limit?`).
    #[wasm_bindgen(js_name = compactionEvents)]
    pub fn compaction_events(&mut self, params: JsValue) -> Result<JsValue, JsValue> {
        let params =
            decode("compactionEvents", from_js("compactionEvents", params)?).map_err(js_error)?;
        to_js(&self.inner.compaction_events(params).map_err(js_error)?)
    }

    /// The context explorer: one agent's conversations (`{agentId}`), newest first.
    #[wasm_bindgen(js_name = explorerConversations)]
    pub fn explorer_conversations(&mut self, params: JsValue) -> Result<JsValue, JsValue> {
        let params = decode(
            "explorerConversations",
            from_js("explorerConversations", params)?,
        )
        .map_err(js_error)?;
        to_js(
            &self
                .inner
                .explorer_conversations(params)
                .map_err(js_error)?,
        )
    }

    /// The context explorer: one conversation's summary DAG and warnings (`{agentId, conversationId}`).
    #[wasm_bindgen(js_name = explorerDag)]
    pub fn explorer_dag(&mut self, params: JsValue) -> Result<JsValue, JsValue> {
        let params = decode("explorerDag", from_js("explorerDag", params)?).map_err(js_error)?;
        to_js(&self.inner.explorer_dag(params).map_err(js_error)?)
    }

    /// The context explorer: one summary and its text (`{agentId, summaryId}`).
    #[wasm_bindgen(js_name = explorerSummary)]
    pub fn explorer_summary(&mut self, params: JsValue) -> Result<JsValue, JsValue> {
        let params =
            decode("explorerSummary", from_js("explorerSummary", params)?).map_err(js_error)?;
        to_js(&self.inner.explorer_summary(params).map_err(js_error)?)
    }

    /// The context explorer: a summary expanded to its children or (`toMessages`) its originals.
    #[wasm_bindgen(js_name = explorerExpand)]
    pub fn explorer_expand(&mut self, params: JsValue) -> Result<JsValue, JsValue> {
        let params =
            decode("explorerExpand", from_js("explorerExpand", params)?).map_err(js_error)?;
        to_js(&self.inner.explorer_expand(params).map_err(js_error)?)
    }

    /// The database as SQLite file bytes, for persisting.
    #[wasm_bindgen(js_name = exportDatabase)]
    pub fn export_database(&mut self) -> Result<Vec<u8>, JsValue> {
        self.inner.sql().export().map_err(js_error)
    }
}
