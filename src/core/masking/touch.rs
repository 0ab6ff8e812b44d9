//! Which files a tool call reads, edits or writes, from its name and arguments: what the working
//! set ([`super::workset`]) knows of a tool output. Best effort, and deliberately small:
//!
//! - **file tools** (names compared case-insensitively): `read` / `view` / `open` read the
//!   `file_path` or `path` argument (a part of it when `offset`, `limit`, `view_range` or
//!   `line_range` is given); `edit`, `multiedit`, `str_replace` edit it; `write` / `create` write it
//!   whole;
//! - **shell** (`bash`, `shell`, `exec`, argument `command` or `cmd`): the command is cut into
//!   simple commands at line ends, `&&`, `||`, `;` and `|`; a `cd DIR` makes later relative paths
//!   relative to DIR. `cat` / `nl` of a path read it whole, `head` / `tail` / `sed -n SCRIPT`
//!   read a part; `sed -i` edits; `cat > PATH`, `tee PATH` write. Anything else touches no file.
//!
//! Two paths name the same file when equal or when one ends with `/` and the other
//! ([`same_file`]): a relative and an absolute spelling of one file match.

use serde_json::Value;

/// What a call does to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// Reads it; `part` names the part read (None: the whole file).
    Read {
        /// The part read, as the call limited it (`offset=10,limit=50`, `head -n 20`); None: the
        /// whole file.
        part: Option<String>,
    },
    /// Changes part of it in place.
    Edit,
    /// Writes it whole: the call's arguments carry the new content.
    Write,
}

/// One file a call touches, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Touch {
    /// The file's path as the call spelled it.
    pub path: String,
    /// What the call does to it.
    pub op: Op,
}

/// True when `a` and `b` name the same file.
pub fn same_file(a: &str, b: &str) -> bool {
    fn ends_with_dir(long: &str, short: &str) -> bool {
        long.len() > short.len()
            && long.ends_with(short)
            && long.as_bytes()[long.len() - short.len() - 1] == b'/'
    }
    a == b || ends_with_dir(a, b) || ends_with_dir(b, a)
}

fn normalize(path: &str, cwd: Option<&str>) -> String {
    let mut p = path.trim();
    while let Some(rest) = p.strip_prefix("./") {
        p = rest;
    }
    match cwd {
        Some(dir) if !p.starts_with('/') && !p.starts_with('~') => {
            format!("{}/{p}", dir.trim_end_matches('/'))
        }
        _ => p.to_owned(),
    }
}

fn arg<'a>(arguments: &'a Value, names: &[&str]) -> Option<&'a Value> {
    names.iter().find_map(|n| arguments.get(*n))
}

/// The files the call `name(arguments)` touches (empty: none, or not known).
pub fn touches(name: &str, arguments: &Value) -> Vec<Touch> {
    let path = arg(arguments, &["file_path", "path", "filePath"])
        .and_then(Value::as_str)
        .filter(|p| !p.trim().is_empty())
        .map(|p| normalize(p, None));
    let file = |op| {
        path.clone()
            .map(|path| Touch { path, op })
            .into_iter()
            .collect()
    };
    match name.to_ascii_lowercase().as_str() {
        "read" | "view" | "open" | "read_file" => {
            let part: Vec<String> = ["offset", "limit", "view_range", "line_range"]
                .iter()
                .filter_map(|k| arguments.get(*k).map(|v| format!("{k}={v}")))
                .collect();
            file(Op::Read {
                part: (!part.is_empty()).then(|| part.join(",")),
            })
        }
        "edit" | "multiedit" | "str_replace" | "edit_file" => file(Op::Edit),
        "write" | "create" | "write_file" => file(Op::Write),
        "bash" | "shell" | "exec" => arg(arguments, &["command", "cmd"])
            .and_then(Value::as_str)
            .map(shell)
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// A command's words with quotes removed, cut at the operators that separate simple commands.
fn simple_commands(command: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = command.chars().peekable();
    let mut quote: Option<char> = None;
    macro_rules! end_word {
        () => {
            if in_word {
                words.push(std::mem::take(&mut word));
                in_word = false;
            }
        };
    }
    macro_rules! end_command {
        () => {
            end_word!();
            if !words.is_empty() {
                out.push(std::mem::take(&mut words));
            }
        };
    }
    while let Some(c) = chars.next() {
        if let Some(q) = quote {
            if c == q {
                quote = None;
            } else {
                word.push(c);
            }
            continue;
        }
        match c {
            '\'' | '"' => {
                quote = Some(c);
                in_word = true;
            }
            ' ' | '\t' => end_word!(),
            '\n' | ';' => {
                end_command!();
            }
            '&' if chars.peek() == Some(&'&') => {
                chars.next();
                end_command!();
            }
            '|' => {
                if chars.peek() == Some(&'|') {
                    chars.next();
                }
                end_command!();
            }
            '>' => {
                // A redirect is a word of its own (`>`, `>>`); `2>` and `&>` are not a file write.
                let fd = in_word && (word == "2" || word == "&");
                if fd {
                    word.clear();
                    in_word = false;
                }
                end_word!();
                let mut op = String::from(if fd { "2>" } else { ">" });
                if chars.peek() == Some(&'>') {
                    chars.next();
                    op.push('>');
                }
                words.push(op);
            }
            _ => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    if !words.is_empty() {
        out.push(words);
    }
    out
}

fn shell(command: &str) -> Vec<Touch> {
    let mut out = Vec::new();
    let mut cwd: Option<String> = None;
    for words in simple_commands(command) {
        let at = |p: &str| normalize(p, cwd.as_deref());
        let name = words[0].rsplit('/').next().unwrap_or_default();
        let redirect = words
            .iter()
            .position(|w| w == ">" || w == ">>")
            .and_then(|i| words.get(i + 1));
        // Operands: words after the name that are no option and no redirect or its target.
        let mut operands = Vec::new();
        let mut skip = false;
        for w in words.iter().skip(1) {
            if skip {
                skip = false;
            } else if w.starts_with('>')
                || w.starts_with("2>")
                || w == "<"
                || ((name == "head" || name == "tail") && (w == "-n" || w == "-c"))
            {
                // A redirect's target, or the count of `head -n 20`, is not a file read.
                skip = true;
            } else if !w.starts_with('-') && !w.starts_with('+') && !w.starts_with("<<") {
                operands.push(w.as_str());
            }
        }
        match name {
            "cd" => {
                if let Some(dir) = words.get(1) {
                    cwd = Some(at(dir));
                }
            }
            "cat" | "tee" if redirect.is_some() || name == "tee" => {
                let targets: Vec<&str> = if name == "tee" {
                    operands
                } else {
                    redirect.map(String::as_str).into_iter().collect()
                };
                out.extend(targets.into_iter().map(|p| Touch {
                    path: at(p),
                    op: Op::Write,
                }));
            }
            "cat" | "nl" => out.extend(operands.into_iter().map(|p| Touch {
                path: at(p),
                op: Op::Read { part: None },
            })),
            "head" | "tail" => {
                let part = words[..words.len().min(3)].join(" ");
                out.extend(operands.into_iter().map(|p| Touch {
                    path: at(p),
                    op: Op::Read {
                        part: Some(part.clone()),
                    },
                }));
            }
            "sed" => {
                let flags = |c: char| {
                    words
                        .iter()
                        .skip(1)
                        .any(|w| w.starts_with('-') && !w.starts_with("--") && w.contains(c))
                };
                let (in_place, quiet) = (
                    flags('i') || words.iter().any(|w| w == "--in-place"),
                    flags('n'),
                );
                let Some((script, files)) = operands.split_first() else {
                    continue;
                };
                for p in files.iter().filter(|p| !p.is_empty()) {
                    let op = if in_place {
                        Op::Edit
                    } else if quiet {
                        Op::Read {
                            part: Some((*script).to_owned()),
                        }
                    } else {
                        continue;
                    };
                    out.push(Touch { path: at(p), op });
                }
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(path: &str, part: Option<&str>) -> Touch {
        Touch {
            path: path.into(),
            op: Op::Read {
                part: part.map(str::to_owned),
            },
        }
    }

    #[test]
    fn file_tools_read_edit_and_write_their_path() {
        assert_eq!(
            touches("Read", &json!({"file_path": "./src/a.rs"})),
            vec![read("src/a.rs", None)]
        );
        assert_eq!(
            touches(
                "read",
                &json!({"path": "src/a.rs", "offset": 10, "limit": 50})
            ),
            vec![read("src/a.rs", Some("offset=10,limit=50"))]
        );
        assert_eq!(
            touches("Edit", &json!({"file_path": "a.rs"}))[0].op,
            Op::Edit
        );
        assert_eq!(touches("write", &json!({"path": "a.rs"}))[0].op, Op::Write);
        assert!(touches("grep", &json!({"path": "src"})).is_empty());
        assert!(touches("read", &json!({})).is_empty(), "no path, no touch");
    }

    #[test]
    fn shell_commands_read_edit_and_write_files_relative_to_cd() {
        let bash = |c: &str| touches("bash", &json!({ "command": c }));
        assert_eq!(
            bash("cd /repo && cat src/a.rs | head -n 5"),
            vec![read("/repo/src/a.rs", None)]
        );
        assert_eq!(
            bash("sed -n '10,40p' 'src/b.rs'"),
            vec![read("src/b.rs", Some("10,40p"))]
        );
        assert_eq!(
            bash("head -n 20 x.py 2>/dev/null"),
            vec![read("x.py", Some("head -n 20"))]
        );
        assert_eq!(bash("sed -i 's/a/b/' c.rs")[0].op, Op::Edit);
        assert_eq!(
            bash("cat > new.rs << 'EOF'\nfn main() {}\nEOF"),
            vec![Touch {
                path: "new.rs".into(),
                op: Op::Write
            }]
        );
        assert!(bash("cargo test 2>&1 | tail -20").is_empty());
        assert!(
            bash("sed 's/a/b/' c.rs").is_empty(),
            "sed to stdout reads nothing whole"
        );
    }

    #[test]
    fn same_file_matches_relative_and_absolute_spellings_only_at_a_slash() {
        assert!(same_file("/repo/src/a.rs", "src/a.rs"));
        assert!(same_file("src/a.rs", "src/a.rs"));
        assert!(!same_file("/repo/src/ba.rs", "a.rs"));
        assert!(!same_file("src/a.rs", "src/b.rs"));
    }
}
