//! Credential redaction: what may cross to a summarizer. Every text sent to a summarizer (and
//! so every text that can end up in a stored summary) goes through [`redact`], which replaces
//! each credential with a typed placeholder, `[credential: aws-secret-key]`, and counts what it
//! replaced per class (never the values).
//!
//! The patterns are data ([`patterns::BUILTIN`], plus the user's `redactPatterns`), compiled once
//! into a [`Redactor`] per engine. Finding works in two steps so a 20K-token prompt costs well
//! under a millisecond: one pass finds every rule's keywords ([`scan`]), then each rule's regex
//! runs only in small windows around its hits; a few hand-written finders cover what has no
//! keyword ([`finders`], [`assign`]). Where matches overlap, the earlier row of the table wins.
//!
//! Pure: no I/O, no clock. This module must not decide *where* redaction applies; the engine
//! applies it where text leaves for a summarizer, and the stored messages never change.

mod assign;
mod checks;
pub mod custom;
mod finders;
mod json;
pub mod patterns;
mod scan;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use regex_lite::Regex;
use serde::Serialize;

pub use custom::CustomPattern;
use patterns::{Check, Finder, BUILTIN};

use crate::error::{Error, Result};

/// The placeholder a credential of `class` is replaced with.
pub fn placeholder(class: &str) -> String {
    format!("[credential: {class}]")
}

/// How many credentials of each class were replaced.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Counts(BTreeMap<String, u32>);

impl Counts {
    /// Adds `n` replacements of `class`.
    pub fn add(&mut self, class: &str, n: u32) {
        if n > 0 {
            *self.0.entry(class.to_owned()).or_insert(0) += n;
        }
    }

    /// Adds every count of `other`.
    pub fn merge(&mut self, other: &Counts) {
        for (class, n) in &other.0 {
            self.add(class, *n);
        }
    }

    /// Replacements of every class together.
    pub fn total(&self) -> u32 {
        self.0.values().sum()
    }

    /// Whether nothing was replaced.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Replacements of `class`.
    pub fn get(&self, class: &str) -> u32 {
        self.0.get(class).copied().unwrap_or(0)
    }

    /// Each class and its replacements, in class order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, u32)> {
        self.0.iter().map(|(k, v)| (k.as_str(), *v))
    }

    /// `2 aws-secret-key, 1 jwt`, for log lines.
    pub fn describe(&self) -> String {
        self.iter()
            .map(|(class, n)| format!("{n} {class}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// A text with its credentials replaced, and what was replaced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redacted {
    /// The text with each credential replaced by its placeholder.
    pub text: String,
    /// What was replaced, per class.
    pub counts: Counts,
}

/// How one compiled rule finds candidates.
#[derive(Debug, Clone)]
enum Find {
    Windows {
        regex: Regex,
        groups: Vec<usize>,
        before: usize,
        after: usize,
        needs: Option<u8>,
    },
    Whole {
        regex: Regex,
        groups: Vec<usize>,
    },
    TokenRun {
        prefix: &'static str,
        alphabet: patterns::Alphabet,
        len: usize,
        padding: &'static str,
    },
    Assignment,
    DiscordBotToken,
    TelegramBotToken,
    PemPrivateKey,
    Base64Blob,
}

#[derive(Debug, Clone)]
struct Rule {
    class: String,
    /// A rule with keywords runs only on texts holding one of them.
    gated: bool,
    find: Find,
    check: Check,
}

/// A candidate: the byte span to replace, and the class it is reported as.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Span {
    start: usize,
    end: usize,
    class: String,
}

/// The compiled patterns. Build once per engine ([`Redactor::new`]); cheap to share.
#[derive(Debug, Clone)]
pub struct Redactor {
    rules: Vec<Rule>,
    keywords: scan::Keywords,
}

/// Shorter texts hold no credential any rule finds (`pwd=abc` is the shortest thing a rule reads).
const MIN_CREDENTIAL_TEXT: usize = 6;

/// How deep the base64 finder looks: into a blob, but not into a blob inside it.
const MAX_NESTING: u8 = 1;

fn compile_builtin(class: &str, regex: &str) -> Result<Regex> {
    Regex::new(regex).map_err(|err| {
        Error::config(
            custom::KEY,
            format!("built-in pattern `{class}` does not compile: {err}"),
        )
    })
}

impl Redactor {
    /// The built-in patterns followed by `custom` (already validated by [`custom::parse`]).
    pub fn new(custom: &[CustomPattern]) -> Result<Redactor> {
        let mut rules = Vec::with_capacity(BUILTIN.len() + custom.len());
        let mut keywords: Vec<Vec<String>> = Vec::with_capacity(rules.capacity());
        for p in BUILTIN {
            let find = match p.finder {
                // A token right after an escaped `\n` (JSON or source code shown as text) has no
                // word boundary before it: take the escape as one, and replace only the token.
                Finder::Regex {
                    regex,
                    groups: [],
                    before,
                    after,
                    needs,
                } if regex.starts_with(r"\b") => {
                    let wrapped = format!(r"(?:\\[nrt]|\b)({})", &regex[2..]);
                    Find::Windows {
                        regex: compile_builtin(p.class, &wrapped)?,
                        groups: vec![1],
                        before: before.max(2),
                        after,
                        needs,
                    }
                }
                Finder::Regex {
                    regex,
                    groups,
                    before,
                    after,
                    needs,
                } => Find::Windows {
                    regex: compile_builtin(p.class, regex)?,
                    groups: groups.to_vec(),
                    before,
                    after,
                    needs,
                },
                Finder::TokenRun {
                    prefix,
                    alphabet,
                    len,
                    padding,
                } => Find::TokenRun {
                    prefix,
                    alphabet,
                    len,
                    padding,
                },
                Finder::Assignment => Find::Assignment,
                Finder::DiscordBotToken => Find::DiscordBotToken,
                Finder::TelegramBotToken => Find::TelegramBotToken,
                Finder::PemPrivateKey => Find::PemPrivateKey,
                Finder::Base64Blob => Find::Base64Blob,
            };
            rules.push(Rule {
                class: p.class.to_owned(),
                gated: !p.keywords.is_empty(),
                find,
                check: p.check,
            });
            keywords.push(p.keywords.iter().map(|k| (*k).to_owned()).collect());
        }
        for (i, c) in custom.iter().enumerate() {
            let regex =
                custom::compile(&c.pattern).map_err(|reason| custom::entry_error(i, reason))?;
            let secret = regex
                .capture_names()
                .position(|name| name == Some("secret"));
            let groups = secret.map_or_else(Vec::new, |g| vec![g]);
            let find = if c.keywords.is_empty() {
                Find::Whole { regex, groups }
            } else {
                Find::Windows {
                    regex,
                    groups,
                    before: 256,
                    after: 256,
                    needs: None,
                }
            };
            rules.push(Rule {
                class: c.name.clone(),
                gated: !c.keywords.is_empty(),
                find,
                check: Check::None,
            });
            keywords.push(c.keywords.clone());
        }
        Ok(Redactor {
            rules,
            keywords: scan::Keywords::new(&keywords),
        })
    }

    /// The built-in patterns only.
    pub fn builtin() -> Result<Redactor> {
        Redactor::new(&[])
    }

    /// `text` with every credential replaced by its placeholder.
    pub fn redact(&self, text: &str) -> Redacted {
        let spans = self.spans(text, 0);
        let mut counts = Counts::default();
        if spans.is_empty() {
            return Redacted {
                text: text.to_owned(),
                counts,
            };
        }
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for span in &spans {
            out.push_str(&text[at..span.start]);
            out.push_str(&placeholder(&span.class));
            counts.add(&span.class, 1);
            at = span.end;
        }
        out.push_str(&text[at..]);
        Redacted { text: out, counts }
    }

    /// Redacts every string in a JSON value in place; a string under a key that names a secret
    /// (`{"api_key": "…"}`) is replaced whole. Returns what was replaced.
    pub fn redact_json(&self, value: &mut serde_json::Value) -> Counts {
        let mut counts = Counts::default();
        json::walk(self, value, &mut counts);
        counts
    }

    /// Accepted spans in text order: candidates of earlier rules first, later ones only where
    /// they overlap none already taken.
    fn spans(&self, text: &str, depth: u8) -> Vec<Span> {
        // Accepted spans by start; they never overlap, so the one starting last before a
        // candidate's end is the only one that can overlap it.
        let mut taken: BTreeMap<usize, Span> = BTreeMap::new();
        if text.len() < MIN_CREDENTIAL_TEXT {
            return Vec::new();
        }
        let all_hits = self.keywords.hits(text);
        let mut next = 0;
        let mut rule_hits: Vec<scan::Hit> = Vec::new();
        for (index, rule) in self.rules.iter().enumerate() {
            rule_hits.clear();
            while next < all_hits.len() && all_hits[next].0 == index {
                rule_hits.push(all_hits[next].1);
                next += 1;
            }
            if rule.gated && rule_hits.is_empty() {
                continue;
            }
            for span in self.candidates(rule, text, &rule_hits, depth) {
                let overlaps = taken
                    .range(..span.end)
                    .next_back()
                    .is_some_and(|(_, t)| t.end > span.start);
                if !overlaps && span.end > span.start {
                    taken.insert(span.start, span);
                }
            }
        }
        taken.into_values().collect()
    }

    fn candidates(&self, rule: &Rule, text: &str, hits: &[scan::Hit], depth: u8) -> Vec<Span> {
        let span = |(start, end): (usize, usize)| Span {
            start,
            end,
            class: rule.class.clone(),
        };
        let checked = |s: &(usize, usize)| checks::passes(rule.check, &text[s.0..s.1]);
        match &rule.find {
            Find::Windows {
                regex,
                groups,
                before,
                after,
                needs,
            } => {
                let mut out = Vec::new();
                for (start, end) in scan::windows(text, hits, *before, *after) {
                    if needs.is_some_and(|b| !text.as_bytes()[start..end].contains(&b)) {
                        continue;
                    }
                    out.extend(
                        regex_spans(regex, groups, &text[..end], start)
                            .into_iter()
                            .filter(checked)
                            .map(span),
                    );
                }
                out
            }
            Find::Whole { regex, groups } => regex_spans(regex, groups, text, 0)
                .into_iter()
                .filter(checked)
                .map(span)
                .collect(),
            Find::Assignment => assign::find(
                text,
                &hits.iter().map(|h| (h.start, h.end)).collect::<Vec<_>>(),
            )
            .into_iter()
            .map(span)
            .collect(),
            Find::TokenRun {
                prefix,
                alphabet,
                len,
                padding,
            } => finders::token_runs(text, prefix, *alphabet, *len, padding)
                .into_iter()
                .filter(checked)
                .map(span)
                .collect(),
            Find::DiscordBotToken => finders::discord_bot_tokens(text)
                .into_iter()
                .map(span)
                .collect(),
            Find::TelegramBotToken => finders::telegram_bot_tokens(text)
                .into_iter()
                .map(span)
                .collect(),
            Find::PemPrivateKey => finders::pem_private_keys(text, hits.iter().map(|h| h.start))
                .into_iter()
                .map(span)
                .collect(),
            Find::Base64Blob if depth < MAX_NESTING => finders::printable_base64_blobs(text)
                .into_iter()
                .filter_map(|(start, end, decoded)| {
                    self.spans(&decoded, depth + 1)
                        .into_iter()
                        .next()
                        .map(|inner| Span {
                            start,
                            end,
                            class: inner.class,
                        })
                })
                .collect(),
            Find::Base64Blob => Vec::new(),
        }
    }

    /// Every class the built-in table can report, in table order, without repeats.
    pub fn builtin_classes() -> Vec<&'static str> {
        let mut out: Vec<&'static str> = Vec::new();
        for p in BUILTIN {
            if !out.contains(&p.class) && p.finder != Finder::Base64Blob {
                out.push(p.class);
            }
        }
        out
    }
}

/// The secret spans of `regex`'s matches in `haystack` from `start` on (`haystack` may end
/// early; what comes before `start` is context for `\b`). `groups`: first present wins; none
/// given or none present means the whole match.
fn regex_spans(
    regex: &Regex,
    groups: &[usize],
    haystack: &str,
    start: usize,
) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut at = start;
    while at <= haystack.len() {
        let Some(caps) = regex.captures_at(haystack, at) else {
            break;
        };
        let Some(whole) = caps.get(0) else { break };
        let secret = groups.iter().find_map(|g| caps.get(*g)).unwrap_or(whole);
        out.push((secret.start(), secret.end()));
        // Resume after the secret, not after trailing context the pattern consumed, so two
        // credentials separated by one character are both found.
        at = if secret.end() > at {
            secret.end()
        } else {
            next_boundary(haystack, at)
        };
    }
    out
}

fn next_boundary(text: &str, at: usize) -> usize {
    let mut i = at + 1;
    while i < text.len() && !text.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// Redacts `text` with `redactor`: the engine-facing entry point.
pub fn redact(text: &str, redactor: &Redactor) -> Redacted {
    redactor.redact(text)
}
