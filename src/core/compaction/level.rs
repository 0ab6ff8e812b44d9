//! How strongly a range is summarized: the level stored with each summary, and the most tokens
//! an answer may take at each level. Shared by the prompts, the escalation and the extractive
//! fallback, which all depend on it and not on each other for it.

use serde::{Deserialize, Serialize};

/// Summarization strength. Stored with each summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// The default prompt.
    Normal,
    /// A stricter prompt asking for about half the length, after a normal answer that ran too long.
    Aggressive,
    /// The extractive summarizer's text, stored because the summarizer gave no usable answer
    /// for the range; compaction and `repair` redo it when the summarizer answers again. Never
    /// a level a prompt asks at.
    Fallback,
}

impl Level {
    /// The level's name as stored and logged: `normal`, `aggressive` or `fallback`.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Normal => "normal",
            Level::Aggressive => "aggressive",
            Level::Fallback => "fallback",
        }
    }

    /// The level a stored name stands for; `None` for an unknown name.
    pub fn parse(name: &str) -> Option<Level> {
        [Level::Normal, Level::Aggressive, Level::Fallback]
            .into_iter()
            .find(|l| l.as_str() == name)
    }
}

/// The most tokens each level asked for; an output over [`super::escalation::OVER_CAP_FACTOR`] times that is
/// rejected rather than stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputLimits {
    /// The most tokens the normal level asked for.
    pub normal: u32,
    /// The most tokens the aggressive level asked for.
    pub aggressive: u32,
}

impl OutputLimits {
    pub(crate) fn for_level(&self, level: Level) -> u32 {
        match level {
            Level::Normal => self.normal,
            Level::Aggressive | Level::Fallback => self.aggressive,
        }
    }
}
