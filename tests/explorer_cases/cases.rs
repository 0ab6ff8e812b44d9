// The context explorer's tests (agent scopes, the DAG and its warnings, expansion), shared by
// explorer_native.rs (SQLite) and explorer_pg.rs (PostgreSQL): each defines `Db` (the connection
// type) and `open_db()` (a fresh, empty store) and includes this file.
use lossless_wasm::core::config::Config;
use lossless_wasm::engine::compaction::CompactionStep;
use lossless_wasm::engine::inspect::ExpandItem;
use lossless_wasm::engine::*;
use lossless_wasm::store::Sql;
use serde_json::{json, Value};

fn engine() -> Engine<Db> {
    let config = Config::from_json(&json!({"freshTailCount": 4, "leafChunkTokens": 600, "condensedFanout": 2, "leafBudgetHeadroomFactor": 0, "leafSkipReductionThreshold": 0})).unwrap();
    Engine::open(open_db(), config, 0).unwrap()
}

/// Commits `turns` turns under `key`, with a forced extractive sweep after every fourth.
fn fill(e: &mut Engine<Db>, key: &str, turns: usize) {
    for t in 0..turns {
        let ts = (t * 10) as i64;
        let messages = vec![
            json!({"role": "user", "content": format!("{key} request {t}: SECRET-{key}-{t} {}", "detail ".repeat(40)), "timestamp": ts}),
            json!({"role": "assistant", "content": [{"type": "text", "text": format!("Done {t}. {}", "because ".repeat(30))}], "timestamp": ts + 1}),
        ];
        let p = decode("commitTurn", json!({"sessionId": "s", "sessionKey": key, "advancementKey": format!("{key}-t{t}"), "messages": messages})).unwrap();
        e.commit_turn(p, ts).unwrap();
        if t % 4 == 3 {
            let p = decode("compactionStart", json!({"sessionId": "s", "sessionKey": key, "mode": "sweep", "summarizer": "extractive", "force": true, "tokenBudget": 1200})).unwrap();
            assert!(matches!(e.compaction_start(p, ts + 5).unwrap(), CompactionStep::Done(_)));
        }
    }
}

fn scope(agent: &str) -> explorer::ExplorerScope {
    decode("explorerConversations", json!({"agentId": agent})).unwrap()
}

fn dag(e: &mut Engine<Db>, p: Value) -> lossless_wasm::error::Result<explorer::Dag> {
    e.explorer_dag(decode("explorerDag", p).unwrap())
}

fn two_agents() -> Engine<Db> {
    let mut e = engine();
    fill(&mut e, "agent:alpha:main", 16);
    fill(&mut e, "agent:beta:main", 16);
    fill(&mut e, "agent:alphabet:x", 4);
    e
}

#[test]
fn an_agent_scope_lists_only_that_agents_conversations() {
    let mut e = two_agents();
    let alpha = e.explorer_conversations(scope("alpha")).unwrap();
    assert_eq!(alpha.len(), 1, "alpha has one conversation (agent:alphabet:… is another agent)");
    assert_eq!(alpha[0].session_key, "agent:alpha:main");
    assert!(alpha[0].summaries >= 3, "the fill compacted: {:?}", alpha[0]);
    assert_eq!(alpha[0].message_count, 32);
    let beta = e.explorer_conversations(scope("beta")).unwrap();
    assert_eq!(beta.iter().map(|c| c.session_key.as_str()).collect::<Vec<_>>(), ["agent:beta:main"]);
    assert!(e.explorer_conversations(scope("gamma")).unwrap().is_empty());
}

#[test]
fn another_agents_conversation_summary_and_expansion_are_not_found() {
    let mut e = two_agents();
    let beta = e.explorer_conversations(scope("beta")).unwrap()[0].clone();
    let beta_dag = dag(&mut e, json!({"agentId": "beta", "conversationId": beta.id})).unwrap();
    let beta_summary = beta_dag.summaries[0].id;
    let err = dag(&mut e, json!({"agentId": "alpha", "conversationId": beta.id})).unwrap_err().to_string();
    assert!(err.contains("no conversation") && err.contains("conversationId"), "{err}");
    let err = e.explorer_summary(decode("explorerSummary", json!({"agentId": "alpha", "summaryId": beta_summary})).unwrap()).unwrap_err().to_string();
    assert!(err.contains("no summary"), "{err}");
    let err = e.explorer_expand(decode("explorerExpand", json!({"agentId": "alpha", "summaryId": beta_summary, "toMessages": true})).unwrap()).unwrap_err().to_string();
    assert!(err.contains("no summary"), "{err}");
    // The same id is readable in its own agent's scope: the refusal above was the scope.
    assert!(e.explorer_expand(decode("explorerExpand", json!({"agentId": "beta", "summaryId": beta_summary, "toMessages": true})).unwrap()).is_ok());
}

#[test]
fn an_agent_id_that_could_widen_the_prefix_is_refused() {
    let mut e = two_agents();
    for bad in ["", "alpha:main", "al%", "a b", &"x".repeat(65)] {
        let err = e.explorer_conversations(scope(bad)).unwrap_err().to_string();
        assert!(err.contains("agentId"), "{bad:?}: {err}");
    }
}

#[test]
fn the_dag_shows_depths_tokens_and_expands_a_node_to_its_originals_as_expand_does() {
    let mut e = two_agents();
    let conv = e.explorer_conversations(scope("alpha")).unwrap()[0].clone();
    let d = dag(&mut e, json!({"agentId": "alpha", "conversationId": conv.id})).unwrap();
    assert_eq!(d.summaries.len() as i64, conv.summaries);
    assert!(d.summaries.iter().any(|s| s.depth >= 1), "condensed summaries above the leaves");
    assert_eq!(conv.max_depth, d.summaries.iter().map(|s| s.depth).max().unwrap());
    assert!(d.summaries.iter().all(|s| s.tokens > 0 && s.source_tokens > 0));
    let top = d.summaries.iter().max_by_key(|s| s.depth).unwrap().clone();
    let page = e.explorer_expand(decode("explorerExpand", json!({"agentId": "alpha", "summaryId": top.id, "toMessages": true, "tokenLimit": 200000})).unwrap()).unwrap();
    let texts: Vec<String> = page.items.iter().map(|i| match i { ExpandItem::Message { message } => message.content.clone(), ExpandItem::Summary { .. } => panic!("toMessages gives messages") }).collect();
    assert_eq!(texts.len() as i64, top.message_count, "every original under the node");
    assert!(texts.iter().any(|t| t.contains("SECRET-agent:alpha:main-0")), "the first original is reached: {:?}", &texts[..1]);
    // The same page as the session-scoped `expand` behind lcm_expand returns.
    let same = e.expand(decode("expand", json!({"sessionId": "s", "sessionKey": "agent:alpha:main", "summaryId": top.id, "toMessages": true, "tokenLimit": 200000})).unwrap()).unwrap();
    assert_eq!(same.items, page.items);
    let text = e.explorer_summary(decode("explorerSummary", json!({"agentId": "alpha", "summaryId": top.id})).unwrap()).unwrap();
    assert_eq!(text.conversation_id, conv.id);
    assert!(!text.content.is_empty());
}

#[test]
fn the_dag_carries_the_fallback_failure_and_rejection_warnings_the_store_records() {
    let mut e = two_agents();
    let conv = e.explorer_conversations(scope("alpha")).unwrap()[0].clone();
    assert_eq!((conv.fallback_summaries, conv.failed_passes, conv.rejected_answers), (0, 0, 0), "a clean history first");
    let leaf = dag(&mut e, json!({"agentId": "alpha", "conversationId": conv.id})).unwrap().summaries[0].id;
    // What the store holds after a fallback summary, a failed pass and a rejected answer.
    let sql = e.sql();
    sql.execute("UPDATE summaries SET level = 'fallback' WHERE id = ?1", &[leaf.into()]).unwrap();
    sql.execute("INSERT INTO compaction_events (conversation_id, created_at, pass, outcome, reason) VALUES (?1, 500, 'leaf', 'failed', 'summarizer timed out')", &[conv.id.into()]).unwrap();
    sql.execute("INSERT INTO summarizer_calls (conversation_id, created_at, pass, level, input_tokens, output_tokens, counted_by, outcome, reason) VALUES (?1, 501, 'leaf', 'normal', 900, 40, 'estimate', 'rejected', 'answer longer than its sources')", &[conv.id.into()]).unwrap();
    let conv = e.explorer_conversations(scope("alpha")).unwrap()[0].clone();
    assert_eq!((conv.fallback_summaries, conv.failed_passes, conv.rejected_answers), (1, 1, 1));
    let d = dag(&mut e, json!({"agentId": "alpha", "conversationId": conv.id})).unwrap();
    assert_eq!(d.summaries.iter().filter(|s| s.level == "fallback").map(|s| s.id).collect::<Vec<_>>(), [leaf]);
    assert_eq!(d.failures.len(), 1);
    assert_eq!(d.failures[0].event.reason, "summarizer timed out");
    assert_eq!(d.rejected.len(), 1);
    assert_eq!(d.rejected[0].reason.as_deref(), Some("answer longer than its sources"));
    assert!(d.spend.iter().any(|p| p.pass == "leaf" && p.spend.rejected == 1));
}

#[test]
fn the_hosts_internal_runs_are_listed_after_the_users_conversations_and_marked() {
    let mut e = engine();
    fill(&mut e, "agent:main:main", 1);
    fill(&mut e, "agent:main:internal-session-effects:flush-1", 1);
    fill(&mut e, "agent:main:telegram:direct:42", 1);
    fill(&mut e, "agent:main:internal-session-effects:flush-2", 1);
    let listed = e.explorer_conversations(scope("main")).unwrap();
    let keys: Vec<(&str, bool)> = listed.iter().map(|c| (c.session_key.as_str(), c.internal)).collect();
    assert_eq!(
        keys,
        [
            ("agent:main:telegram:direct:42", false),
            ("agent:main:main", false),
            ("agent:main:internal-session-effects:flush-2", true),
            ("agent:main:internal-session-effects:flush-1", true),
        ],
        "the user's newest first, then the internal runs newest first"
    );
    assert!(listed.iter().all(|c| c.message_count == 2), "internal runs are stored too (lossless)");
}
