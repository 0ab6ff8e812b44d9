//! The words a second lexical round of a recall searches for (multi-hop questions): the names
//! that the first round's best evidence says and the question does not. "How did Lucas's friend
//! do in the Boston marathon?" finds "My best friend Dmitri signed up for the Boston marathon";
//! the answer, sessions later, says only "Dmitri crossed the finish line", which neither the
//! question's words nor a ranking by meaning lead to, and the bridging name does.
//!
//! A name here is a capitalised word inside a sentence (not its first word, not a month or a
//! weekday) or an identifier (`config_loader`, `pg-stage-3`, `zq2x`).

/// Bridging names taken at most (each one more search). Measured with `cargo bench --bench
/// recall_eval` (the engine's rows): 2, 3 and 4 give the same 91.0 % overall; after an
/// extractive sweep 2 gives 86.3 %, 3 and 4 85.7 %. Through the package on sql.js, 4 took
/// `lcm_ask`'s p50 at 100K messages from 46.6 to 59.6 ms, 2 to 47.9 ms.
pub const MAX_BRIDGING_NAMES: usize = 2;

/// Capitalised words that name a date, not a thing.
const CALENDAR_WORDS: &[&str] = &[
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
];

/// The names in `texts`, in order, that none of `known` (the question's search terms) already
/// is, case-insensitively, at most [`MAX_BRIDGING_NAMES`].
pub fn bridging_names(texts: &[String], known: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for text in texts {
        let mut sentence_start = true;
        for raw in text.split_whitespace() {
            let starts = sentence_start;
            sentence_start = raw.ends_with(['.', '!', '?', ':', ']']);
            let word = raw.trim_matches(|c: char| !c.is_alphanumeric() && c != '_' && c != '-');
            if out.len() == MAX_BRIDGING_NAMES || !(is_name(word, starts) || is_identifier(word)) {
                continue;
            }
            let lower = word.to_lowercase();
            if CALENDAR_WORDS.contains(&lower.as_str()) {
                continue;
            }
            if !known.iter().chain(&out).any(|k| k.to_lowercase() == lower) {
                out.push(word.to_owned());
            }
        }
    }
    out
}

fn is_name(word: &str, starts_sentence: bool) -> bool {
    !starts_sentence
        && word.chars().count() >= 3
        && word.chars().next().is_some_and(char::is_uppercase)
}

fn is_identifier(word: &str) -> bool {
    let alphabetic = word.chars().any(char::is_alphabetic);
    alphabetic && (word.contains(['_', '-']) || word.chars().any(|c| c.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| (*x).to_owned()).collect()
    }

    #[test]
    fn names_inside_sentences_and_identifiers_that_the_question_does_not_say() {
        let texts = strings(&[
            "[25 June 2022] Lucas: My best friend Dmitri signed up for the Boston marathon.",
            "Moved the flag into config_loader and pg-stage-3 on Monday. Then lunch.",
        ]);
        let names = bridging_names(&texts, &strings(&["marathon", "boston"]));
        assert_eq!(names, strings(&["Dmitri", "config_loader"]));
        let names = bridging_names(&texts[1..], &strings(&["config_loader"]));
        assert_eq!(names, strings(&["pg-stage-3"]), "not Monday, nor Then");
    }

    #[test]
    fn at_most_two_and_nothing_from_plain_text() {
        let texts = strings(&["we met Ana, Bea, Cid, Dov and Eve there"]);
        assert_eq!(bridging_names(&texts, &[]), strings(&["Ana", "Bea"]));
        assert!(bridging_names(&strings(&["all lower case here. 2022 and 42."]), &[]).is_empty());
        assert!(bridging_names(&[], &[]).is_empty());
    }
}
