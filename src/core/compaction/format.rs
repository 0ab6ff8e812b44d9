//! How a summary reads, and why it stays flat (seed 03).
//!
//! A summary is one header line and fixed sections — Goal, Progress, Decisions, Artifacts,
//! Latest request — each a flat list of single-line bullets. Any text (an LLM's output, an older
//! summary, several summaries concatenated) is *parsed* into that shape and *rendered* back
//! from it: repeated headings fold into their section, nested bullets and wrapper lines such as
//! "Previously compacted context:" lose their nesting, duplicates collapse to their newest
//! occurrence, and the result is cut to a token budget by dropping whole bullets, oldest and
//! least important first. Merging therefore cannot nest, and its size cannot grow past the
//! budget however many merges run.
//!
//! This module also owns our markup: the wrapper a summary is rendered in for the model
//! ([`render_for_context`]) and its detection and removal, so summarizer output can never carry
//! one summary inside another. It must not invent content: everything rendered comes from the
//! parsed input or the ledger.

use super::ledger::{clip, dedupe_newest, one_line, EntryKind, Ledger, ENTRY_MAX_CHARS};
pub use super::markup::{contains_our_markup, strip_our_markup};
use super::timefmt;
use crate::core::tokens::estimate_text;

/// First line of every summary.
pub const HEADER: &str = "# Summary";

/// The sections, in rendering order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// What the conversation is trying to achieve.
    Goal,
    /// What has been done so far.
    Progress,
    /// Decisions, constraints and preferences that still hold.
    Decisions,
    /// The artifact ledger: files, commands and errors.
    Artifacts,
    /// The user's latest request.
    LatestRequest,
}

impl Section {
    /// Every section, in rendering order.
    pub const ALL: [Section; 5] = [
        Section::Goal,
        Section::Progress,
        Section::Decisions,
        Section::Artifacts,
        Section::LatestRequest,
    ];

    /// The section's Markdown heading, such as `## Goal`.
    pub fn heading(self) -> &'static str {
        match self {
            Section::Goal => "## Goal",
            Section::Progress => "## Progress",
            Section::Decisions => "## Decisions",
            Section::Artifacts => "## Artifacts",
            Section::LatestRequest => "## Latest request",
        }
    }

    /// Maps any heading or label a summarizer might write to a section; unknown ones become
    /// progress, the section with the largest share of the budget.
    fn from_label(label: &str) -> Section {
        let l = label.to_lowercase();
        let has = |words: &[&str]| words.iter().any(|w| l.contains(w));
        if has(&["request", "pending ask", "user ask"]) {
            Section::LatestRequest
        } else if has(&["goal", "objective", "intent", "task snapshot"]) {
            Section::Goal
        } else if has(&["decision", "constraint", "preference"]) {
            Section::Decisions
        } else if has(&["artifact", "file", "command", "error", "ledger"]) {
            Section::Artifacts
        } else {
            Section::Progress
        }
    }
}

/// A summary in its canonical shape. Lists are oldest first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SummaryDoc {
    /// Lines of the Goal section.
    pub goal: Vec<String>,
    /// Lines of the Progress section.
    pub progress: Vec<String>,
    /// Lines of the Decisions section.
    pub decisions: Vec<String>,
    /// Artifacts and the latest request.
    pub ledger: Ledger,
}

/// Lines of earlier summarizers' scaffolding that carry no content of their own.
const WRAPPER_LINES: [&str; 4] = [
    "previously compacted context",
    "newly compacted context",
    "conversation summary",
    "summary",
];

/// Removes bullet markers, numbering and quote markers, however deeply repeated.
fn strip_bullets(line: &str) -> &str {
    let mut s = line.trim();
    loop {
        let before = s;
        for marker in ["- ", "* ", "+ ", "• ", "> "] {
            if let Some(rest) = s.strip_prefix(marker) {
                s = rest.trim_start();
            }
        }
        let digits = s.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && digits < 4 {
            if let Some(rest) = s
                .get(digits..)
                .and_then(|r| r.strip_prefix(". ").or_else(|| r.strip_prefix(") ")))
            {
                s = rest.trim_start();
            }
        }
        if s == before {
            return s;
        }
    }
}

fn is_wrapper(content: &str) -> bool {
    let label = content.trim().trim_end_matches(':').trim().to_lowercase();
    WRAPPER_LINES.contains(&label.as_str())
}

/// A `Label: rest` line whose label names a section exactly.
fn section_label(content: &str) -> Option<(Section, &str)> {
    let (label, rest) = content.split_once(':')?;
    let label = label.trim().trim_matches('*').trim();
    let exact = Section::ALL.into_iter().find(|s| {
        s.heading()
            .trim_start_matches("## ")
            .eq_ignore_ascii_case(label)
    })?;
    Some((exact, rest.trim()))
}

impl SummaryDoc {
    /// Parses any text into the canonical shape. Never fails: unknown text becomes progress.
    pub fn parse(text: &str) -> SummaryDoc {
        let mut doc = SummaryDoc::default();
        let mut section = Section::Progress;
        let mut request: Vec<String> = Vec::new();
        let cleaned = strip_our_markup(text);
        for line in cleaned.lines() {
            let trimmed = line.trim();
            // Quoted request lines are taken as written: a `## x` inside a request is not a heading.
            if section == Section::LatestRequest {
                if let Some(quoted) = trimmed.strip_prefix('>') {
                    let quoted = quoted.strip_prefix(' ').unwrap_or(quoted);
                    if !quoted.trim().is_empty() {
                        request.push(quoted.to_owned());
                    }
                    continue;
                }
            }
            if trimmed.starts_with("# ") || trimmed == "#" || trimmed.starts_with("```") {
                continue;
            }
            if let Some(heading) = trimmed.strip_prefix("##") {
                section = Section::from_label(heading.trim_start_matches('#'));
                if section == Section::LatestRequest {
                    // Sources arrive oldest first, so the last request section is the newest.
                    request.clear();
                }
                continue;
            }
            let content = strip_bullets(trimmed);
            if content.is_empty() || is_wrapper(content) {
                continue;
            }
            // `Decisions:` alone opens a section; `Goal: ship it` files one line under Goal.
            let (target, content) = match section_label(content) {
                Some((labelled, rest)) => {
                    if labelled == Section::LatestRequest {
                        request.clear();
                    }
                    if rest.is_empty() {
                        section = labelled;
                        continue;
                    }
                    (labelled, rest)
                }
                None => (section, content),
            };
            match target {
                Section::Goal => doc.goal.push(one_line(content, ENTRY_MAX_CHARS)),
                Section::Progress => doc.progress.push(one_line(content, ENTRY_MAX_CHARS)),
                Section::Decisions => doc.decisions.push(one_line(content, ENTRY_MAX_CHARS)),
                Section::Artifacts => doc.ledger.push_rendered_line(content),
                Section::LatestRequest => request.push(content.to_owned()),
            }
        }
        if !request.is_empty() {
            doc.ledger.set_latest_request(&request.join("\n"));
        }
        doc.dedupe();
        doc
    }

    /// Appends a newer summary: its bullets become the newest.
    pub fn absorb(&mut self, newer: SummaryDoc) {
        self.goal.extend(newer.goal);
        self.progress.extend(newer.progress);
        self.decisions.extend(newer.decisions);
        self.ledger.absorb(newer.ledger);
        self.dedupe();
    }

    fn dedupe(&mut self) {
        dedupe_newest(&mut self.goal);
        dedupe_newest(&mut self.progress);
        dedupe_newest(&mut self.decisions);
        self.ledger.dedupe();
    }

    /// Whether the summary has no content in any section.
    pub fn is_empty(&self) -> bool {
        self.goal.is_empty()
            && self.progress.is_empty()
            && self.decisions.is_empty()
            && self.ledger.is_empty()
    }

    /// The canonical text. Empty sections are left out.
    pub fn render(&self) -> String {
        let mut out = String::from(HEADER);
        let mut section = |heading: &str, lines: Vec<String>| {
            if !lines.is_empty() {
                out.push('\n');
                out.push_str(heading);
                for line in lines {
                    out.push('\n');
                    out.push_str(&line);
                }
            }
        };
        let bullets = |items: &[String]| items.iter().map(|i| format!("- {i}")).collect::<Vec<_>>();
        section(Section::Goal.heading(), bullets(&self.goal));
        section(Section::Progress.heading(), bullets(&self.progress));
        section(Section::Decisions.heading(), bullets(&self.decisions));
        let artifacts: Vec<String> = EntryKind::ALL
            .iter()
            .flat_map(|kind| {
                self.ledger
                    .list(*kind)
                    .iter()
                    .map(move |e| format!("- {}{e}", kind.prefix()))
            })
            .collect();
        section(Section::Artifacts.heading(), artifacts);
        let request: Vec<String> = self
            .ledger
            .latest_request
            .iter()
            .flat_map(|r| r.lines())
            .map(|l| format!("> {l}"))
            .collect();
        section(Section::LatestRequest.heading(), request);
        out
    }

    /// Drops whole bullets until the rendered text fits `budget_tokens`, always the oldest bullet
    /// of the list most over its share of the budget (shares weight importance: progress 4,
    /// decisions and modified files 2, the rest 1). Each list keeps its newest bullet (notes
    /// excepted) and the latest request is never dropped, so a summary stays meaningful even
    /// when the budget is too small for it. Returns whether anything was dropped.
    pub fn bound(&mut self, budget_tokens: u32) -> bool {
        let budget = u64::from(budget_tokens);
        // The latest request is kept, but never more than a quarter of the summary: quoting a
        // whole note would make the summary of a short chunk as long as the chunk.
        let request_share = (budget / REQUEST_SHARE_DIVISOR).max(REQUEST_MIN_TOKENS);
        let mut clipped = false;
        if let Some(request) = &self.ledger.latest_request {
            if u64::from(estimate_text(request)) > request_share {
                let keep = usize::try_from(request_share * 4).unwrap_or(usize::MAX);
                self.ledger.latest_request = Some(clip(request, keep));
                clipped = true;
            }
        }
        let mut total = u64::from(estimate_text(&self.render()));
        if total <= budget {
            return clipped;
        }
        let mut piles: Vec<Pile> = SHARES
            .iter()
            .map(|&(slot, weight, keep)| Pile::new(self.slot(slot), weight, keep))
            .collect();
        while total > budget {
            let Some(pile) = heaviest(&mut piles) else {
                break;
            };
            total = total.saturating_sub(pile.drop_oldest());
        }
        for (&(slot, _, _), pile) in SHARES.iter().zip(&piles) {
            self.slot(slot).drain(..pile.dropped);
        }
        true
    }

    fn slot(&mut self, slot: Slot) -> &mut Vec<String> {
        match slot {
            Slot::Goal => &mut self.goal,
            Slot::Progress => &mut self.progress,
            Slot::Decisions => &mut self.decisions,
            Slot::Ledger(kind) => self.ledger.list_mut(kind),
        }
    }
}

#[derive(Clone, Copy)]
enum Slot {
    Goal,
    Progress,
    Decisions,
    Ledger(EntryKind),
}

/// (list, weight of its share, newest bullets it always keeps), least important first.
const SHARES: [(Slot, u64, usize); 8] = [
    (Slot::Ledger(EntryKind::Note), 1, 0),
    (Slot::Ledger(EntryKind::Read), 1, 1),
    (Slot::Ledger(EntryKind::Command), 1, 1),
    (Slot::Goal, 1, 1),
    (Slot::Ledger(EntryKind::Error), 1, 1),
    (Slot::Decisions, 2, 1),
    (Slot::Ledger(EntryKind::Modified), 2, 1),
    (Slot::Progress, 4, 1),
];

/// One list's bullets while bounding: their costs, how many of the oldest are dropped so far.
struct Pile {
    costs: Vec<u64>,
    dropped: usize,
    sum: u64,
    weight: u64,
    keep: usize,
}

impl Pile {
    fn new(lines: &[String], weight: u64, keep: usize) -> Pile {
        // A lower bound of what removing the rendered line saves, so the running total never
        // claims the text fits when it does not.
        let costs: Vec<u64> = lines
            .iter()
            .map(|l| u64::from(estimate_text(&format!("- {l}\n")).saturating_sub(1)))
            .collect();
        let sum = costs.iter().sum();
        Pile {
            costs,
            dropped: 0,
            sum,
            weight,
            keep,
        }
    }

    fn can_drop(&self) -> bool {
        self.costs.len().saturating_sub(self.dropped) > self.keep
    }

    /// Drops the oldest remaining bullet, returning its cost.
    fn drop_oldest(&mut self) -> u64 {
        let cost = self.costs.get(self.dropped).copied().unwrap_or(0);
        self.dropped += 1;
        self.sum = self.sum.saturating_sub(cost);
        cost
    }
}

/// The droppable pile with the largest cost per unit of weight; ties go to the less important.
fn heaviest(piles: &mut [Pile]) -> Option<&mut Pile> {
    let mut best: Option<usize> = None;
    for (i, pile) in piles.iter().enumerate().filter(|(_, p)| p.can_drop()) {
        let heavier = best
            .and_then(|b| piles.get(b))
            .is_none_or(|b| pile.sum.saturating_mul(b.weight) > b.sum.saturating_mul(pile.weight));
        if heavier {
            best = Some(i);
        }
    }
    piles.get_mut(best?)
}

/// Turns a summarizer's output into the stored summary: parsed flat, the sources' verbatim
/// ledger merged in (it wins over the summarizer's paraphrase), deduplicated, bounded.
pub fn finalize(summarizer_text: &str, sources_ledger: &Ledger, budget_tokens: u32) -> String {
    let mut doc = SummaryDoc::parse(summarizer_text);
    doc.absorb(SummaryDoc {
        ledger: sources_ledger.clone(),
        ..SummaryDoc::default()
    });
    doc.bound(budget_tokens);
    doc.render()
}

/// Merges summaries (oldest first) into one flat, bounded summary without any summarizer.
pub fn merge(texts: &[&str], budget_tokens: u32) -> String {
    let mut doc = SummaryDoc::default();
    for text in texts {
        doc.absorb(SummaryDoc::parse(text));
    }
    doc.bound(budget_tokens);
    doc.render()
}

/// The union of the ledgers recorded in summaries (oldest first).
pub fn ledger_of(texts: &[&str]) -> Ledger {
    let mut ledger = Ledger::default();
    for text in texts {
        ledger.absorb(SummaryDoc::parse(text).ledger);
    }
    ledger
}

/// The latest request may fill at most this fraction (1/n) of a bounded summary...
const REQUEST_SHARE_DIVISOR: u64 = 4;
/// ...but always keeps this many tokens (about 120 characters).
const REQUEST_MIN_TOKENS: u64 = 30;

const OPEN_TAG: &str = "<lossless-summary";
const CLOSE_TAG: &str = "</lossless-summary>";
const HINT_PREFIX: &str = "Recover details of this summary with lcm_expand";

/// What the model sees of one stored summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SummaryView<'a> {
    /// The summary's id, as the model sees it in the wrapper and passes to `lcm_expand`.
    pub id: &'a str,
    /// How many levels of condensation the summary is above raw messages (a leaf summary is 0).
    pub depth: u32,
    /// The earliest time the summary covers (ms since the epoch), if known.
    pub earliest_ms: Option<i64>,
    /// The latest time the summary covers (ms since the epoch), if known.
    pub latest_ms: Option<i64>,
    /// The summary's stored text.
    pub text: &'a str,
}

fn attribute(value: &str) -> String {
    value
        .replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Renders a summary for the model's context: id, depth and time span in the wrapper, the text,
/// and how to recover what it left out. The same view always renders the same bytes, which keeps
/// the provider's prompt-cache prefix stable between turns.
pub fn render_for_context(view: &SummaryView<'_>) -> String {
    let id = attribute(view.id);
    let span = attribute(&timefmt::span(view.earliest_ms, view.latest_ms));
    let body = strip_our_markup(view.text);
    format!(
        "{OPEN_TAG} id=\"{id}\" depth=\"{}\" span=\"{span}\">\n{}\n{HINT_PREFIX} (summaryId \"{id}\") or search all stored history with lcm_grep.\n{CLOSE_TAG}",
        view.depth,
        body.trim()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::compaction::markup::MARKERS_LOWER;
    use crate::core::compaction::prompts::PROMPT_MARKER;

    fn leaf_summary(i: usize) -> String {
        let mut doc = SummaryDoc::default();
        doc.goal
            .push(format!("Ship feature {} of the importer", i / 50));
        for k in 0..4 {
            doc.progress.push(format!(
                "Turn {i}.{k}: converted batch {k} of module m{i} and verified its output"
            ));
        }
        doc.decisions.push(format!(
            "Use streaming parser for module m{i} because files exceed memory"
        ));
        doc.ledger
            .add(EntryKind::Read, &format!("src/importer/m{i}.rs"));
        doc.ledger
            .add(EntryKind::Modified, &format!("src/importer/m{i}_out.rs"));
        doc.ledger
            .add(EntryKind::Command, &format!("cargo test importer::m{i}"));
        doc.ledger
            .set_latest_request(&format!("Continue with module m{}", i + 1));
        doc.render()
    }

    /// Echoes its input's headings and lines under claw-code's nesting scaffolding: the worst
    /// case of a summarizer that copies everything and wraps it once more each time.
    fn echo_summarizer(input: &str) -> String {
        let mut out = String::from("Conversation summary:\n- Previously compacted context:\n");
        for line in input.lines() {
            out.push_str("  ");
            out.push_str(line);
            out.push('\n');
        }
        out.push_str("- Newly compacted context:\n");
        out
    }

    #[test]
    fn merged_summaries_stay_flat_over_1000_compactions() {
        let budget = 2_000;
        let mut running: Option<String> = None;
        let mut sizes = Vec::new();
        for i in 1..=1_000 {
            let leaf = leaf_summary(i);
            let sources: Vec<&str> = running
                .iter()
                .map(String::as_str)
                .chain([leaf.as_str()])
                .collect();
            let output = echo_summarizer(&sources.join("\n\n"));
            let merged = finalize(&output, &ledger_of(&sources), budget);
            let rendered = render_for_context(&SummaryView {
                id: "sum_1",
                depth: 1,
                earliest_ms: Some(0),
                latest_ms: Some(i as i64 * 60_000),
                text: &merged,
            });
            sizes.push(rendered.len());
            running = Some(merged);
        }
        let (at_10, at_1000) = (sizes[9], sizes[999]);
        assert!(
            at_1000 <= 2 * at_10,
            "size grew from {at_10} bytes at merge 10 to {at_1000} at merge 1000"
        );
        let last = running.unwrap();
        assert!(estimate_text(&last) <= budget, "bounded by the budget");
        for heading in Section::ALL.map(Section::heading) {
            assert_eq!(last.matches(heading).count(), 1, "{heading} appears once");
        }
        assert!(
            !last.to_lowercase().contains("compacted context"),
            "no wrapper survives"
        );
        assert!(
            last.lines()
                .all(|l| !l.starts_with(' ') && !l.starts_with("- -")),
            "no nesting:\n{last}"
        );
        assert!(
            last.contains("> Continue with module m1001"),
            "newest request kept verbatim"
        );
        assert!(
            last.contains("src/importer/m1000_out.rs"),
            "newest artifacts kept"
        );
    }

    #[test]
    fn nested_wrappers_and_prefix_runs_flatten_to_one_level() {
        let nested = "Conversation summary:\n- Previously compacted context:\n  - Previously compacted context:\n    - - - Scope: importer\n      - Key timeline:\n        - step one\n## Goal\n### Goal\n- ship it\n1. numbered item\n";
        let doc = SummaryDoc::parse(nested);
        assert_eq!(
            doc.progress,
            vec!["Scope: importer", "Key timeline:", "step one"]
        );
        assert_eq!(doc.goal, vec!["ship it", "numbered item"]);
        let rendered = doc.render();
        assert!(rendered.lines().all(|l| !l.starts_with(' ')), "{rendered}");
        assert_eq!(
            SummaryDoc::parse(&rendered),
            doc,
            "render and parse round-trip"
        );
    }

    #[test]
    fn merging_deduplicates_and_keeps_the_newest_occurrence() {
        let a = "## Progress\n- built parser\n- wrote tests\n## Latest request\n> first ask";
        let b = "## Progress\n- Built  parser\n- shipped\n## Artifacts\n- read: a.rs\n## Latest request\n> second ask\n> with two lines";
        let merged = SummaryDoc::parse(&merge(&[a, b], 10_000));
        assert_eq!(
            merged.progress,
            vec!["wrote tests", "Built parser", "shipped"]
        );
        assert_eq!(merged.ledger.read, vec!["a.rs"]);
        assert_eq!(
            merged.ledger.latest_request.as_deref(),
            Some("second ask\nwith two lines")
        );
    }

    #[test]
    fn bounding_drops_old_progress_before_the_ledger_and_never_the_request() {
        let mut doc = SummaryDoc::default();
        for i in 0..200 {
            doc.progress
                .push(format!("progress item number {i} with some detail"));
        }
        doc.ledger.add(EntryKind::Modified, "src/keep.rs");
        doc.ledger.set_latest_request("please keep me");
        assert!(doc.bound(300));
        assert!(estimate_text(&doc.render()) <= 300);
        assert_eq!(
            doc.progress.last().map(String::as_str),
            Some("progress item number 199 with some detail")
        );
        assert_eq!(doc.ledger.modified, vec!["src/keep.rs"]);
        assert_eq!(doc.ledger.latest_request.as_deref(), Some("please keep me"));
        assert!(!doc.clone().bound(300), "already within budget");
    }

    #[test]
    fn a_long_latest_request_is_clipped_to_a_quarter_of_the_summary() {
        let mut doc = SummaryDoc::default();
        doc.goal.push("keep the logbook".to_owned());
        doc.ledger
            .set_latest_request(&"note the tide and the wind ".repeat(70));
        assert!(doc.bound(200));
        let request = doc.ledger.latest_request.clone().unwrap();
        assert!(
            request.starts_with("note the tide") && request.ends_with('…'),
            "{request}"
        );
        assert!(estimate_text(&request) <= 51, "{}", estimate_text(&request));
        assert!(estimate_text(&doc.render()) <= 200);
    }

    #[test]
    fn finalize_merges_the_verbatim_ledger_over_the_summarizers_paraphrase() {
        let mut ledger = Ledger::default();
        ledger.add(EntryKind::Command, "cargo test --lib core::compaction");
        ledger.set_latest_request("Run the tests, then open a PR");
        let out = finalize(
            "Goal: get tests green\nWe ran the tests.\n## Latest request\n> run tests",
            &ledger,
            1_000,
        );
        assert!(
            out.starts_with(
                "# Summary\n## Goal\n- get tests green\n## Progress\n- We ran the tests.\n"
            ),
            "{out}"
        );
        assert!(out.contains("- ran: cargo test --lib core::compaction"));
        assert!(
            out.ends_with("## Latest request\n> Run the tests, then open a PR"),
            "{out}"
        );
    }

    #[test]
    fn context_rendering_is_deterministic_and_hints_at_recovery() {
        let view = SummaryView {
            id: "sum_\"7\"",
            depth: 2,
            earliest_ms: Some(1_700_000_000_000),
            latest_ms: Some(1_700_003_600_000),
            text: "# Summary\n## Goal\n- x\n",
        };
        let a = render_for_context(&view);
        assert_eq!(a, render_for_context(&view));
        assert!(a.starts_with("<lossless-summary id=\"sum_&quot;7&quot;\" depth=\"2\" span=\"from 2023-11-14 22:13 UTC to 2023-11-14 23:13 UTC\">\n# Summary\n"), "{a}");
        assert!(a.contains("lcm_expand") && a.contains("lcm_grep"));
        assert!(contains_our_markup(&a));
    }

    #[test]
    fn our_markup_is_detected_and_stripped_so_summaries_never_nest() {
        let inner = render_for_context(&SummaryView {
            id: "s1",
            depth: 0,
            earliest_ms: None,
            latest_ms: None,
            text: "## Progress\n- old",
        });
        let outer = render_for_context(&SummaryView {
            id: "s2",
            depth: 1,
            earliest_ms: None,
            latest_ms: None,
            text: &inner,
        });
        assert_eq!(outer.matches("<lossless-summary").count(), 1, "{outer}");
        assert!(outer.contains("- old"));
        assert!(contains_our_markup("x\n[LOSSLESS-WASM:SUMMARIZE] leaf"));
        assert!(!contains_our_markup("## Goal\n- plain summary"));
        assert_eq!(
            strip_our_markup("keep\n</lossless-summary>\nalso"),
            "keep\nalso"
        );
        assert_eq!(SummaryDoc::parse(&inner).progress, vec!["old"]);
        let markers =
            [OPEN_TAG, CLOSE_TAG, HINT_PREFIX, PROMPT_MARKER].map(str::to_ascii_lowercase);
        assert_eq!(markers, MARKERS_LOWER.map(str::to_owned));
    }
}
