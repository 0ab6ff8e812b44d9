//! Why one summarizer attempt was not accepted: every rejection the escalation can make, the
//! sentence the log and `compact` results carry for it, whether a stricter prompt could fix it,
//! and how it counts for backoff and the breaker. A new kind of rejection is a new variant here,
//! so no answer is ever turned away without a reason an operator can read.

use serde::Serialize;

use super::plausibility::NotASummary;
use super::retry::RetryKind;
use super::ErrorKind;

/// Why one attempt was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "failure", rename_all = "snake_case")]
pub enum Failure {
    /// The summarizer threw, timed out, or returned something that is not text.
    Summarizer {
        /// How the call failed.
        kind: ErrorKind,
        /// What the host or provider said.
        message: String,
    },
    /// The answer was empty, or nothing but whitespace once formatted.
    EmptyOutput,
    /// The answer was nothing but reasoning (`<think>` blocks and the like).
    ReasoningOnly {
        /// Characters of reasoning text the answer held.
        reasoning_chars: u32,
    },
    /// The provider stopped at the output limit (`stopReason`/`finish_reason` "length"): the
    /// answer ends mid-sentence.
    Truncated {
        /// Estimated tokens of the cut-off answer.
        output_tokens: u32,
    },
    /// The same word run over and over.
    RepetitionLoop {
        /// The word run repeated.
        phrase: String,
        /// How many times it occurs.
        repeats: u32,
    },
    /// One short unit written over and over with no space (`1111…`): a loop at the character
    /// level.
    CharRun {
        /// The unit repeated.
        unit: String,
        /// How many times in a row it occurs.
        repeats: u32,
    },
    /// The answer restates the prompt's instructions or sends its template back.
    RestatedInstructions {
        /// Percent of the answer copied from the prompt.
        copied_percent: u32,
    },
    /// The output contains the wrapper we render summaries in (or our prompt marker): storing it
    /// would nest one summary inside another.
    OurMarkup,
    /// The output is far longer than the level asked for.
    OverCap {
        /// Estimated tokens of the answer.
        output_tokens: u32,
        /// The most tokens the level asked for.
        cap_tokens: u32,
    },
    /// The answer is no shorter than its input, by the token estimate.
    NotShorter {
        /// Estimated tokens of the answer.
        output_tokens: u32,
        /// Estimated tokens of the input it summarizes.
        input_tokens: u32,
    },
    /// In the view, the summary (with its framing) would cost at least what the range it
    /// replaces costs now.
    NoSaving {
        /// Tokens the summary would cost in the view, framing included.
        summary_tokens: u32,
        /// Tokens the replaced range costs in the view now.
        range_tokens: u32,
    },
    /// There was nothing to summarize.
    EmptySource,
    /// An HTML document or a gateway's status text (a proxy answered, not the model).
    ErrorPage {
        /// The page's title or status text.
        title: String,
    },
    /// A JSON error body returned as if it were the completion.
    ErrorBody {
        /// The error message the body carries.
        message: String,
    },
    /// The model declined to summarize.
    Refusal {
        /// The refusal's opening words.
        opening: String,
    },
    /// Most of the answer is the input copied back.
    EchoedInput {
        /// Percent of the answer copied word for word from the input.
        copied_percent: u32,
    },
}

impl From<NotASummary> for Failure {
    fn from(why: NotASummary) -> Self {
        match why {
            NotASummary::ErrorPage(title) => Failure::ErrorPage { title },
            NotASummary::ErrorBody(message) => Failure::ErrorBody { message },
            NotASummary::Refusal(opening) => Failure::Refusal { opening },
            NotASummary::Echo { copied_percent } => Failure::EchoedInput { copied_percent },
        }
    }
}

impl Failure {
    /// A short reason for logs and `compact` results.
    pub fn reason(&self) -> String {
        match self {
            Failure::Summarizer {
                kind: ErrorKind::Auth,
                message,
            } => format!("summarizer authentication failed: {message}"),
            Failure::Summarizer {
                kind: ErrorKind::Timeout,
                message,
            } => format!("summarizer timed out: {message}"),
            Failure::Summarizer {
                kind: ErrorKind::Other,
                message,
            } => format!("summarizer error: {message}"),
            Failure::Summarizer {
                kind: ErrorKind::Truncated,
                ..
            } => "summarizer stopped at its output limit".to_owned(),
            Failure::EmptyOutput => "summarizer returned empty output".to_owned(),
            Failure::ReasoningOnly { reasoning_chars } => {
                format!("summarizer returned only reasoning ({reasoning_chars} characters of <think> text) and no summary")
            }
            Failure::Truncated { output_tokens } => {
                format!("summarizer stopped at its output limit after {output_tokens} tokens; the answer is cut off")
            }
            Failure::RepetitionLoop { phrase, repeats } => {
                format!("summarizer answer is a repetition loop ({phrase:?} {repeats} times)")
            }
            Failure::CharRun { unit, repeats } => {
                format!(
                    "summarizer answer is a repetition loop ({unit:?} {repeats} times in a row)"
                )
            }
            Failure::RestatedInstructions { copied_percent } => {
                format!("summarizer restated its instructions instead of summarizing ({copied_percent}% copied from the prompt)")
            }
            Failure::OurMarkup => "summarizer output contained summary markup".to_owned(),
            Failure::OverCap {
                output_tokens,
                cap_tokens,
            } => {
                format!(
                    "summary of {output_tokens} tokens is far over its {cap_tokens}-token limit"
                )
            }
            Failure::NotShorter {
                output_tokens,
                input_tokens,
            } => {
                format!("summary of {output_tokens} tokens is not shorter than its {input_tokens}-token input")
            }
            Failure::NoSaving {
                summary_tokens,
                range_tokens,
            } => {
                format!("summary would take {summary_tokens} tokens of the view, not less than the {range_tokens} tokens it replaces")
            }
            Failure::EmptySource => "nothing to summarize".to_owned(),
            Failure::ErrorPage { title } => {
                format!("summarizer returned an error page, not a summary: {title:?}")
            }
            Failure::ErrorBody { message } => {
                format!("summarizer returned an error body, not a summary: {message:?}")
            }
            Failure::Refusal { opening } => {
                format!("summarizer refused instead of summarizing: {opening:?}")
            }
            Failure::EchoedInput { copied_percent } => {
                format!("summarizer repeated its input instead of summarizing ({copied_percent}% copied word for word)")
            }
        }
    }

    /// Failures a stricter, shorter prompt can fix: the answer ran long, or ran off into a loop
    /// or into the instructions. Errors, empty answers and echoes give up at once.
    pub(super) fn escalates(&self) -> bool {
        matches!(
            self,
            Failure::NotShorter { .. }
                | Failure::OverCap { .. }
                | Failure::NoSaving { .. }
                | Failure::Truncated { .. }
                | Failure::RepetitionLoop { .. }
                | Failure::CharRun { .. }
                | Failure::RestatedInstructions { .. }
        )
    }

    /// Whether the answer was too long for its chunk: the next attempt needs a larger chunk to
    /// pay off (a summarizer's answers do not shrink because its input did).
    pub fn too_long(&self) -> bool {
        matches!(
            self,
            Failure::NotShorter { .. }
                | Failure::OverCap { .. }
                | Failure::NoSaving { .. }
                | Failure::Truncated { .. }
        )
    }

    /// The answer's size, for failures that judged it too long.
    pub fn answer_tokens(&self) -> Option<u32> {
        match self {
            Failure::NotShorter { output_tokens, .. }
            | Failure::OverCap { output_tokens, .. }
            | Failure::Truncated { output_tokens } => Some(*output_tokens),
            Failure::NoSaving { summary_tokens, .. } => Some(*summary_tokens),
            _ => None,
        }
    }

    /// How the failure counts for backoff and the breaker: a refused credential or a provider
    /// that failed to answer backs off in time; an answer that was not a usable summary is
    /// retried on the next turn (see [`super::retry`]).
    pub fn retry_kind(&self) -> RetryKind {
        match self {
            Failure::Summarizer {
                kind: ErrorKind::Auth,
                ..
            } => RetryKind::Auth,
            // An error page or error body is a provider failure that arrived as text.
            Failure::Summarizer { .. } | Failure::ErrorPage { .. } | Failure::ErrorBody { .. } => {
                RetryKind::Provider
            }
            _ => RetryKind::Output,
        }
    }
}
