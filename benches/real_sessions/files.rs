//! Which files a tool call reads and which it edits, for the "unseen edits" metric of the
//! real-session replay. Best effort, by these rules (docs/benchmarks.md, "Real sessions"):
//!
//! - **file tools**: `Read`/`read` read the `file_path` (or `path`) argument; `Edit`,
//!   `MultiEdit`, `Write`, `edit`, `write` edit it (names compared case-insensitively);
//! - **shell** (`Bash`/`bash`, argument `command`): the command is cut into simple commands at
//!   `&&`, `||`, `;`, `|` and line ends (quotes respected, here-document bodies skipped and kept
//!   for the command that opened them); a leading `cd DIR` makes later relative paths relative
//!   to DIR. Reads: `cat`, `head`, `tail`, `nl` of a path, `sed -n SCRIPT PATH`. Edits:
//!   `sed -i` of a path, `cat > PATH` / `cat >> PATH`, `tee PATH`, and `patch`, `git apply`,
//!   `applypatch`, `apply_patch`, which edit the paths their patch names (`+++ b/PATH`,
//!   `*** Update File: PATH`): from a here-document in the same command, or from a patch file an
//!   earlier `cat > FILE` of this session wrote. Other writes (`echo x > f`, a Python script
//!   that rewrites a file) are not seen.
//! - two paths are the same file when equal or when one ends with `/` + the other.

use std::collections::HashMap;

use serde_json::Value;

/// What one tool call does to files.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct FileOps {
    pub reads: Vec<String>,
    pub edits: Vec<String>,
    /// Of `edits`, the files written whole (`Write`, `cat >`, `cat >>`, `tee`): their old text
    /// is not needed to write them.
    pub whole: Vec<String>,
}

/// Classifies a session's tool calls in order; it remembers the patch files written earlier.
#[derive(Debug, Default)]
pub struct Classifier {
    patch_files: HashMap<String, Vec<String>>,
}

/// True when `a` and `b` name the same file (see the module doc).
pub fn same_file(a: &str, b: &str) -> bool {
    a == b || a.ends_with(&format!("/{b}")) || b.ends_with(&format!("/{a}"))
}

fn normalize(path: &str, cwd: Option<&str>) -> String {
    let mut p = path.trim();
    while let Some(rest) = p.strip_prefix("./") {
        p = rest;
    }
    let joined = match cwd {
        Some(dir) if !p.starts_with('/') && !p.starts_with('~') => {
            format!("{}/{p}", dir.trim_end_matches('/'))
        }
        _ => p.to_owned(),
    };
    joined.replace("//", "/")
}

/// A shell word or operator.
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Word(String),
    /// `&&`, `||`, `;`, `|`, `>`, `>>`, `<`, `<<`, `2>` (any redirect of another descriptor).
    Op(&'static str),
}

/// One line of shell split into words and operators (quotes removed).
fn tokenize(line: &str) -> Vec<Tok> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    let flush = |word: &mut String, in_word: &mut bool, out: &mut Vec<Tok>| {
        if *in_word {
            out.push(Tok::Word(std::mem::take(word)));
            *in_word = false;
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    word.push(q);
                }
            }
            '"' => {
                in_word = true;
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => {
                            if let Some(n) = chars.next() {
                                word.push(n);
                            }
                        }
                        _ => word.push(q),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(n) = chars.next() {
                    word.push(n);
                }
            }
            ' ' | '\t' => flush(&mut word, &mut in_word, &mut out),
            '&' if chars.peek() == Some(&'&') => {
                chars.next();
                flush(&mut word, &mut in_word, &mut out);
                out.push(Tok::Op("&&"));
            }
            '|' => {
                flush(&mut word, &mut in_word, &mut out);
                if chars.peek() == Some(&'|') {
                    chars.next();
                    out.push(Tok::Op("||"));
                } else {
                    out.push(Tok::Op("|"));
                }
            }
            ';' => {
                flush(&mut word, &mut in_word, &mut out);
                out.push(Tok::Op(";"));
            }
            '>' => {
                // `2>` / `&>`: another descriptor's redirect, whose target is never an edit here.
                let other_fd = in_word && (word == "2" || word == "&");
                let stdout_fd = in_word && word == "1";
                if other_fd || stdout_fd {
                    word.clear();
                    in_word = false;
                }
                flush(&mut word, &mut in_word, &mut out);
                let append = chars.peek() == Some(&'>');
                if append {
                    chars.next();
                }
                if chars.peek() == Some(&'&') {
                    // `>&2`: a descriptor, not a file.
                    chars.next();
                    chars.next();
                    continue;
                }
                out.push(Tok::Op(if other_fd {
                    "2>"
                } else if append {
                    ">>"
                } else {
                    ">"
                }));
            }
            '<' => {
                flush(&mut word, &mut in_word, &mut out);
                if chars.peek() == Some(&'<') {
                    chars.next();
                    if chars.peek() == Some(&'-') {
                        chars.next();
                    }
                    out.push(Tok::Op("<<"));
                } else {
                    out.push(Tok::Op("<"));
                }
            }
            _ => {
                in_word = true;
                word.push(c);
            }
        }
    }
    flush(&mut word, &mut in_word, &mut out);
    out
}

/// A simple command: its words, redirect targets and here-document body.
#[derive(Debug, Default)]
struct Simple {
    words: Vec<String>,
    out_targets: Vec<String>,
    in_files: Vec<String>,
    heredoc: Option<String>,
}

/// Splits a whole command (many lines, here-documents) into simple commands.
fn simple_commands(command: &str) -> Vec<Simple> {
    let mut out = Vec::new();
    let mut lines = command.lines();
    while let Some(line) = lines.next() {
        let toks = tokenize(line);
        let mut current = Simple::default();
        let mut pending_heredoc: Option<(usize, String)> = None;
        let mut i = 0;
        let mut line_cmds: Vec<Simple> = Vec::new();
        while i < toks.len() {
            match &toks[i] {
                Tok::Op("&&" | "||" | ";" | "|") => {
                    line_cmds.push(std::mem::take(&mut current));
                }
                Tok::Op(op) => {
                    if let Some(Tok::Word(target)) = toks.get(i + 1) {
                        match *op {
                            ">" | ">>" => current.out_targets.push(target.clone()),
                            "<" => current.in_files.push(target.clone()),
                            "<<" => pending_heredoc = Some((line_cmds.len(), target.clone())),
                            _ => {}
                        }
                        i += 1;
                    }
                }
                Tok::Word(w) => current.words.push(w.clone()),
            }
            i += 1;
        }
        line_cmds.push(current);
        if let Some((index, delimiter)) = pending_heredoc {
            let mut body = String::new();
            for next in lines.by_ref() {
                if next.trim() == delimiter {
                    break;
                }
                body.push_str(next);
                body.push('\n');
            }
            if let Some(cmd) = line_cmds.get_mut(index) {
                cmd.heredoc = Some(body);
            }
        }
        out.extend(line_cmds.into_iter().filter(|c| !c.words.is_empty()));
    }
    out
}

/// The files a patch text names.
fn patch_targets(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let path = if let Some(rest) = line.strip_prefix("+++ ") {
            rest.split_whitespace()
                .next()
                .map(|p| p.strip_prefix("b/").unwrap_or(p))
        } else {
            ["*** Update File: ", "*** Add File: "]
                .iter()
                .find_map(|p| line.strip_prefix(p))
                .map(str::trim)
        };
        if let Some(p) = path.filter(|p| !p.is_empty() && *p != "/dev/null") {
            if !out.iter().any(|o| o == p) {
                out.push(p.to_owned());
            }
        }
    }
    out
}

/// Non-option arguments (words after the command name that do not start with `-`).
fn operands(words: &[String]) -> impl Iterator<Item = &String> {
    words.iter().skip(1).filter(|w| !w.starts_with('-'))
}

impl Classifier {
    /// What the tool call `name(arguments)` reads and edits.
    pub fn classify(&mut self, name: &str, arguments: &Value) -> FileOps {
        let path = arguments
            .get("file_path")
            .or_else(|| arguments.get("path"))
            .and_then(Value::as_str)
            .map(|p| normalize(p, None));
        match name.to_ascii_lowercase().as_str() {
            "read" => FileOps {
                reads: path.into_iter().collect(),
                ..FileOps::default()
            },
            "edit" | "multiedit" => FileOps {
                edits: path.into_iter().collect(),
                ..FileOps::default()
            },
            "write" => FileOps {
                edits: path.iter().cloned().collect(),
                whole: path.into_iter().collect(),
                ..FileOps::default()
            },
            "bash" => arguments
                .get("command")
                .and_then(Value::as_str)
                .map_or_else(FileOps::default, |c| self.shell(c)),
            _ => FileOps::default(),
        }
    }

    fn shell(&mut self, command: &str) -> FileOps {
        let mut ops = FileOps::default();
        let mut cwd: Option<String> = None;
        for cmd in simple_commands(command) {
            let at = |p: &str| normalize(p, cwd.as_deref());
            let name = cmd.words[0].rsplit('/').next().unwrap_or("").to_owned();
            match name.as_str() {
                "cd" => {
                    if let Some(dir) = cmd.words.get(1) {
                        cwd = Some(at(dir));
                    }
                }
                "cat" if !cmd.out_targets.is_empty() => {
                    for target in &cmd.out_targets {
                        let target = at(target);
                        if let Some(body) = &cmd.heredoc {
                            let named = patch_targets(body);
                            if !named.is_empty() {
                                self.patch_files.insert(target.clone(), named);
                            }
                        }
                        ops.whole.push(target.clone());
                        ops.edits.push(target);
                    }
                }
                "cat" | "nl" => ops.reads.extend(operands(&cmd.words).map(|p| at(p))),
                "head" | "tail" => {
                    // `-n 50` / `-c 100`: the option's value is not a path.
                    let mut skip = false;
                    for w in cmd.words.iter().skip(1) {
                        if skip {
                            skip = false;
                        } else if w == "-n" || w == "-c" {
                            skip = true;
                        } else if !w.starts_with('-') && !w.starts_with('+') {
                            ops.reads.push(at(w));
                        }
                    }
                }
                "sed" => {
                    let in_place = cmd.words.iter().skip(1).any(|w| {
                        w.starts_with("-i")
                            || w == "--in-place"
                            || (w.starts_with('-') && !w.starts_with("--") && w.contains('i'))
                    });
                    let quiet = cmd.words.iter().skip(1).any(|w| {
                        w == "-n"
                            || w == "--quiet"
                            || (w.starts_with('-') && !w.starts_with("--") && w.contains('n'))
                    });
                    let has_e = cmd.words.iter().any(|w| w == "-e");
                    // The script is the first operand unless given with -e; `-i ''` (BSD sed's
                    // backup suffix) leaves an empty word.
                    let mut files: Vec<&String> =
                        operands(&cmd.words).filter(|w| !w.is_empty()).collect();
                    if has_e {
                        let scripts: Vec<&String> = cmd
                            .words
                            .windows(2)
                            .filter(|w| w[0] == "-e")
                            .map(|w| &w[1])
                            .collect();
                        files.retain(|f| !scripts.contains(f));
                    } else if !files.is_empty() {
                        files.remove(0);
                    }
                    let files = files.into_iter().map(|p| at(p));
                    if in_place {
                        ops.edits.extend(files);
                    } else if quiet {
                        ops.reads.extend(files);
                    }
                }
                "tee" => {
                    let targets: Vec<String> = operands(&cmd.words).map(|p| at(p)).collect();
                    ops.whole.extend(targets.iter().cloned());
                    ops.edits.extend(targets);
                }
                "patch" | "applypatch" | "apply_patch" | "git" => {
                    if name == "git" && cmd.words.get(1).map(String::as_str) != Some("apply") {
                        continue;
                    }
                    let mut named = cmd
                        .heredoc
                        .as_deref()
                        .map(patch_targets)
                        .unwrap_or_default();
                    if named.is_empty() {
                        named = patch_targets(command);
                    }
                    if named.is_empty() {
                        let files = cmd
                            .in_files
                            .iter()
                            .chain(operands(&cmd.words).skip(usize::from(name == "git")));
                        for f in files {
                            let f = at(f);
                            if let Some((_, t)) =
                                self.patch_files.iter().find(|(p, _)| same_file(p, &f))
                            {
                                named.extend(t.iter().cloned());
                            }
                        }
                    }
                    ops.edits.extend(named.iter().map(|p| at(p)));
                }
                _ => {}
            }
        }
        ops
    }
}
