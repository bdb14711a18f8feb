//! Just enough of the POSIX shell grammar to classify a `bash` tool call: is it one codeact
//! invocation, and is it read-only? Words, quotes, operators and here-documents are lexed;
//! nothing is expanded or run. Anything the lexer does not understand classifies as "neither",
//! which is the safe answer for both questions.

/// A lexed token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Token {
    /// A word with its quotes removed; `quoted` when any part was quoted.
    Word { text: String, quoted: bool },
    /// `|`, `||`, `&&`, `;`, `&`, newline.
    Separator(&'static str),
    /// `<`, `<<`, `<<-`, `<<<`, `>`, `>>`, `>&`, `<&`, `>|`, `&>`, with an optional fd before it.
    Redirect { fd: Option<u32>, op: &'static str },
    /// `(` or `)`, `{`, `}` or anything else that opens a construct this lexer does not follow.
    Unsupported,
}

/// Splits a command line into tokens. Returns `None` for unterminated quotes, command
/// substitution, or anything else that could hide a second command.
#[must_use]
pub(crate) fn lex(input: &str) -> Option<Vec<Token>> {
    let chars: Vec<char> = input.chars().collect();
    let mut tokens = Vec::new();
    let mut heredocs: Vec<(String, bool)> = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            ' ' | '\t' => i += 1,
            '\\' if chars.get(i + 1) == Some(&'\n') => i += 2,
            '\n' => {
                tokens.push(Token::Separator("\n"));
                i += 1;
                // Skip the bodies of here-documents opened on this line.
                for (delimiter, strip_tabs) in heredocs.drain(..) {
                    loop {
                        let end = chars[i..].iter().position(|c| *c == '\n').map_or(chars.len(), |p| i + p);
                        let line: String = chars[i..end].iter().collect();
                        let line = if strip_tabs { line.trim_start_matches('\t').to_owned() } else { line };
                        i = (end + 1).min(chars.len());
                        if line == delimiter {
                            break;
                        }
                        if end >= chars.len() {
                            // An unterminated here-document runs to the end of the input.
                            return Some(tokens);
                        }
                    }
                }
            }
            '#' => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '|' | '&' | ';' => {
                let next = chars.get(i + 1).copied();
                let (op, width) = match (c, next) {
                    ('|', Some('|')) => ("||", 2),
                    ('&', Some('&')) => ("&&", 2),
                    ('&', Some('>')) => {
                        tokens.push(Token::Redirect { fd: None, op: "&>" });
                        i += 2;
                        continue;
                    }
                    (';', Some(';')) => return None,
                    ('|', _) => ("|", 1),
                    ('&', _) => ("&", 1),
                    _ => (";", 1),
                };
                tokens.push(Token::Separator(op));
                i += width;
            }
            '<' | '>' => {
                let (op, width) = redirect_op(&chars[i..]);
                tokens.push(Token::Redirect { fd: None, op });
                i += width;
                if op == "<<" || op == "<<-" {
                    let (word, next) = read_word(&chars, skip_blanks(&chars, i))?;
                    heredocs.push((word.0, op == "<<-"));
                    tokens.push(Token::Word { text: String::new(), quoted: true });
                    i = next;
                }
            }
            '(' | ')' | '{' | '}' | '`' => {
                tokens.push(Token::Unsupported);
                i += 1;
            }
            _ => {
                let ((text, quoted), next) = read_word(&chars, i)?;
                // A number directly followed by a redirection is its file descriptor.
                if !quoted && text.chars().all(|c| c.is_ascii_digit()) && matches!(chars.get(next), Some('<' | '>')) {
                    let (op, width) = redirect_op(&chars[next..]);
                    tokens.push(Token::Redirect { fd: text.parse().ok(), op });
                    i = next + width;
                    continue;
                }
                tokens.push(Token::Word { text, quoted });
                i = next;
            }
        }
    }
    Some(tokens)
}

fn skip_blanks(chars: &[char], mut i: usize) -> usize {
    while matches!(chars.get(i), Some(' ' | '\t')) {
        i += 1;
    }
    i
}

fn redirect_op(chars: &[char]) -> (&'static str, usize) {
    let two: String = chars.iter().take(3).collect();
    for op in ["<<<", "<<-", "<<", ">>", ">&", "<&", ">|", "<>"] {
        if two.starts_with(op) {
            return (op, op.len());
        }
    }
    if chars.first() == Some(&'<') { ("<", 1) } else { (">", 1) }
}

/// Reads one word starting at `start`: returns (text, quoted) and the index after it.
/// `$(`, backticks and `$((` make the whole command unclassifiable.
fn read_word(chars: &[char], start: usize) -> Option<((String, bool), usize)> {
    let mut text = String::new();
    let mut quoted = false;
    let mut i = start;
    while i < chars.len() {
        match chars[i] {
            ' ' | '\t' | '\n' | '|' | '&' | ';' | '<' | '>' | '(' | ')' => break,
            '\'' => {
                quoted = true;
                let end = chars[i + 1..].iter().position(|c| *c == '\'')? + i + 1;
                text.extend(&chars[i + 1..end]);
                i = end + 1;
            }
            '"' => {
                quoted = true;
                i += 1;
                loop {
                    match chars.get(i)? {
                        '"' => break,
                        '\\' if matches!(chars.get(i + 1), Some('"' | '\\' | '$' | '`')) => {
                            text.push(chars[i + 1]);
                            i += 2;
                        }
                        '`' => return None,
                        '$' if chars.get(i + 1) == Some(&'(') => return None,
                        c => {
                            text.push(*c);
                            i += 1;
                        }
                    }
                }
                i += 1;
            }
            '\\' => {
                quoted = true;
                text.push(*chars.get(i + 1)?);
                i += 2;
            }
            '`' => return None,
            '$' if chars.get(i + 1) == Some(&'(') => return None,
            c => {
                text.push(c);
                i += 1;
            }
        }
    }
    if i == start {
        return None;
    }
    Some(((text, quoted), i))
}

/// One simple command: its words, its redirections, and the separator after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SimpleCommand {
    pub(crate) words: Vec<String>,
    pub(crate) redirects: Vec<Redirect>,
    pub(crate) separator: Option<&'static str>,
}

/// A redirection: `2>&1` is `{ fd: Some(2), op: ">&", target: "1" }`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Redirect {
    pub(crate) fd: Option<u32>,
    pub(crate) op: &'static str,
    pub(crate) target: String,
}

/// The simple commands of a command line. `None` when the line has constructs this module
/// does not follow (subshells, groups, substitutions, unterminated quotes).
#[must_use]
pub(crate) fn parse(line: &str) -> Option<Vec<SimpleCommand>> {
    let tokens = lex(line)?;
    let mut out = Vec::new();
    let mut current = SimpleCommand { words: Vec::new(), redirects: Vec::new(), separator: None };
    let mut iter = tokens.into_iter();
    while let Some(token) = iter.next() {
        match token {
            Token::Word { text, .. } => current.words.push(text),
            Token::Redirect { fd, op } => {
                let Some(Token::Word { text: target, .. }) = iter.next() else { return None };
                current.redirects.push(Redirect { fd, op, target });
            }
            Token::Separator(separator) => {
                if !current.words.is_empty() || !current.redirects.is_empty() {
                    current.separator = Some(separator);
                    out.push(std::mem::replace(
                        &mut current,
                        SimpleCommand { words: Vec::new(), redirects: Vec::new(), separator: None },
                    ));
                } else if separator != "\n" {
                    // `&& foo` or `; foo` with nothing before it.
                    return None;
                }
            }
            Token::Unsupported => return None,
        }
    }
    if !current.words.is_empty() || !current.redirects.is_empty() {
        out.push(current);
    }
    Some(out)
}

/// Whether `word` is `NAME=value`.
fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit())
    })
}

/// The words after leading `NAME=value` assignments and an `exec`.
fn program_words(words: &[String]) -> &[String] {
    let start = words.iter().position(|w| !is_assignment(w)).unwrap_or(words.len());
    let rest = &words[start..];
    if rest.first().is_some_and(|w| w == "exec") { &rest[1..] } else { rest }
}

/// Commands after any leading `cd DIR &&`.
fn skip_cd(commands: &[SimpleCommand]) -> &[SimpleCommand] {
    let start = commands
        .iter()
        .position(|c| !(program_words(&c.words).first().is_some_and(|w| w == "cd") && c.separator == Some("&&")))
        .unwrap_or(commands.len());
    &commands[start..]
}

/// Whether `line` is exactly one codeact run: after `cd … &&`, assignments and `exec`, the
/// program is codeact (per `is_codeact`) running `run`, `--code` or `--file`, with nothing
/// chained after it and only stdin redirected (a here-document, say) or stderr merged.
pub(crate) fn is_codeact_run(line: &str, is_codeact: impl Fn(&str) -> bool) -> bool {
    let Some(commands) = parse(line) else { return false };
    let [command] = skip_cd(&commands) else { return false };
    if !matches!(command.separator, None | Some("\n")) {
        return false;
    }
    let redirects_ok = command.redirects.iter().all(|r| {
        matches!((r.fd, r.op), (None | Some(0), "<" | "<<" | "<<-" | "<<<"))
            || (r.fd == Some(2) && ((r.op == ">&" && r.target == "1") || (r.op == ">" && r.target == "/dev/null")))
    });
    let mut words = program_words(&command.words);
    // `sh path/to/bin/codeact …` runs the launcher script.
    if words.first().is_some_and(|w| w == "sh" || w == "bash") {
        words = &words[1..];
    }
    let Some((program, args)) = words.split_first() else { return false };
    let runs = match args.first().map(String::as_str) {
        Some("run") => true,
        Some(first) => ["--code", "--file"].iter().any(|flag| first == *flag || first.starts_with(&format!("{flag}="))),
        None => false,
    };
    redirects_ok && runs && is_codeact(program)
}

/// Programs that only read, when used without their writing options.
const READ_ONLY: &[&str] =
    &["cat", "head", "tail", "ls", "find", "grep", "egrep", "fgrep", "rg", "wc", "sed", "cd", "pwd"];

/// Whether every command of `line` only reads: the programs in [`READ_ONLY`] (`sed` only with
/// `-n` and without `-i`; `find` without `-exec`, `-delete` and friends; `rg` without `--pre`),
/// joined by pipes or sequenced, with no output redirected anywhere but `/dev/null`.
#[must_use]
pub(crate) fn is_read_only(line: &str) -> bool {
    let Some(commands) = parse(line) else { return false };
    !commands.is_empty()
        && commands.iter().all(|command| {
            let words = program_words(&command.words);
            let Some((program, args)) = words.split_first() else { return false };
            let name = program.rsplit('/').next().unwrap_or(program);
            let separator_ok = !matches!(command.separator, Some("&"));
            let redirects_ok = command.redirects.iter().all(|r| match r.op {
                "<" => true,
                ">" | ">>" | "&>" => r.target == "/dev/null",
                ">&" => r.target == "1" || r.target == "2",
                _ => false,
            });
            let args_ok = match name {
                "sed" => {
                    args.iter().any(|a| a == "-n" || a == "--quiet" || a == "--silent")
                        && !args.iter().any(|a| {
                            a.starts_with("-i") || a.starts_with("--in-place") || a.contains('w') && !a.starts_with('-')
                        })
                }
                "find" => !args.iter().any(|a| {
                    ["-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"]
                        .contains(&a.as_str())
                }),
                "rg" => !args.iter().any(|a| a == "--pre" || a.starts_with("--pre=")),
                _ => true,
            };
            separator_ok && redirects_ok && args_ok && READ_ONLY.contains(&name)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codeact(word: &str) -> bool {
        word.rsplit('/').next() == Some("codeact")
    }

    #[test]
    fn codeact_runs_are_recognised_by_their_program_word() {
        for line in [
            "codeact run <<'PY'\nprint(1)\nPY",
            "/opt/bin/codeact run --backend monty <<'PY'\nfor f in glob(pattern='*'):\n    print(f)\nPY\n",
            "cd /repo && codeact run --code 'print(1)'",
            "CODEACT_TIMEOUT=5 exec codeact run < prog.py",
            "codeact --code 'print(1)' 2>&1",
            "codeact --file=prog.py",
            "sh /plugins/codeact/bin/codeact run <<'PY'\n1\nPY",
        ] {
            assert!(is_codeact_run(line, codeact), "{line}");
        }
    }

    #[test]
    fn strings_that_merely_mention_codeact_are_not_codeact_runs() {
        for line in [
            "echo codeact run",
            "codeact discover",
            "codeact run --code 1 && rm -rf /",
            "codeact run --code 1; curl evil",
            "codeact run --code 1 > out.txt",
            "codeact run --code 1 | sh",
            "cat prog.py | codeact run",
            "notcodeact run --code 1",
            "$(codeact run --code 1)",
            "codeact run --code \"$(rm -rf /)\"",
            "grep codeact README.md",
        ] {
            assert!(!is_codeact_run(line, codeact), "{line}");
        }
    }

    #[test]
    fn a_here_document_body_is_not_parsed_as_commands() {
        let line = "codeact run <<'PY'\nprint('a; b && c | d')\nrm -rf /\nPY\n";
        assert!(is_codeact_run(line, codeact));
    }

    #[test]
    fn read_only_commands_and_pipes_of_them_are_read_only() {
        for line in ["cat src/a.py", "ls -la src | head -20", "grep -rn TODO src | wc -l", "sed -n '1,20p' src/a.py"] {
            assert!(is_read_only(line), "{line}");
        }
        assert!(is_read_only("cd src && rg -n 'fn main' 2>/dev/null"));
        assert!(is_read_only("find . -name '*.rs' -type f"));
    }

    #[test]
    fn commands_that_write_or_run_programs_are_not_read_only() {
        for line in [
            "sed -i 's/a/b/' x",
            "sed 's/a/b/' x",
            "cat a > b",
            "find . -delete",
            "find . -exec rm {} ;",
            "rg --pre ./script pattern",
            "ls | xargs rm",
            "cat a & rm b",
            "echo hi",
            "ls $(rm -rf /)",
            "",
        ] {
            assert!(!is_read_only(line), "{line}");
        }
    }
}
