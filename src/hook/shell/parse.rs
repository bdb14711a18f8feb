//! A command line as the shell splits it: simple commands, each with its leading assignments,
//! its words, its redirections and the separator after it. Lines with constructs the lexer does
//! not follow give nothing.

use super::lex::{Token, lex};

/// One simple command: its leading assignments, its words, its redirections, and the
/// separator after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SimpleCommand {
    /// `NAME=value` words before the command name, as the shell reads them.
    pub(crate) assignments: Vec<String>,
    pub(crate) words: Vec<String>,
    pub(crate) redirects: Vec<Redirect>,
    pub(crate) separator: Option<&'static str>,
    /// Whether a word (not an assignment) has an unquoted part the shell expands, which may
    /// make it other words than those lexed here.
    pub(crate) expands: bool,
}

impl SimpleCommand {
    fn new() -> Self {
        Self { assignments: Vec::new(), words: Vec::new(), redirects: Vec::new(), separator: None, expands: false }
    }

    fn is_empty(&self) -> bool {
        self.assignments.is_empty() && self.words.is_empty() && self.redirects.is_empty()
    }
}

/// A redirection: `2>&1` is `{ fd: Some(2), op: ">&", target: "1" }`; a here-document's
/// target is its delimiter.
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
    let mut current = SimpleCommand::new();
    let mut iter = tokens.into_iter();
    while let Some(token) = iter.next() {
        match token {
            // Assignments count only before the command name; after it they are arguments.
            Token::Word { text, assignment: true, .. } if current.words.is_empty() => current.assignments.push(text),
            Token::Word { text, expands, .. } => {
                current.expands |= expands;
                current.words.push(text);
            }
            Token::Redirect { fd, op } => {
                let Some(Token::Word { text: target, .. }) = iter.next() else { return None };
                current.redirects.push(Redirect { fd, op, target });
            }
            Token::Separator(separator) => {
                if !current.is_empty() {
                    current.separator = Some(separator);
                    out.push(std::mem::replace(&mut current, SimpleCommand::new()));
                } else if separator != "\n" {
                    // `&& foo` or `; foo` with nothing before it.
                    return None;
                }
            }
            Token::Unsupported => return None,
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    Some(out)
}
/// Whether the shell takes `word` as it is: no parameter, tilde, brace or pathname expansion
/// could turn it into another file name.
pub(crate) fn is_literal(word: &str) -> bool {
    !word.is_empty() && !word.contains(['$', '~', '*', '?', '[', ']', '{', '}', '!'])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assignments_are_told_apart_as_the_shell_does() {
        let words = |line: &str| {
            lex(line)
                .unwrap()
                .into_iter()
                .filter_map(|t| match t {
                    Token::Word { text, assignment, .. } => Some((text, assignment)),
                    _ => None,
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(
            words("A=1 B=\"2 3\" 'C'=4 D\\=5 e"),
            [("A=1", true), ("B=2 3", true), ("C=4", false), ("D=5", false), ("e", false)]
                .map(|(t, a)| (t.to_owned(), a))
        );
        let [command] = &parse("A=1 prog B=2").unwrap()[..] else { panic!() };
        assert_eq!(
            (command.assignments.clone(), command.words.clone()),
            (vec!["A=1".into()], vec!["prog".into(), "B=2".into()])
        );
    }
}
