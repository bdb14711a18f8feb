//! The PowerShell lexer: words (bare, or one quoted string each), `|`, `;` and newlines, the
//! error-stream redirections that write no file (`2>$null`, `2>&1`), the call operator `&`, and
//! single-quoted here-strings. Anything else makes the whole line unlexed, and [`parse`] groups
//! the tokens into the commands of a line.
//!
//! PowerShell takes the typographic quotes (`‘ ’ ‚ ‛`, `“ ” „`) as its own and the en and em
//! dashes as `-`: outside quotes only ASCII is lexed, and inside them every quote of a family
//! ends or escapes its string, as PowerShell reads it.

/// The characters PowerShell reads as a single quote.
const SINGLE_QUOTES: [char; 5] = ['\'', '\u{2018}', '\u{2019}', '\u{201A}', '\u{201B}'];

/// The characters PowerShell reads as a double quote.
const DOUBLE_QUOTES: [char; 4] = ['"', '\u{201C}', '\u{201D}', '\u{201E}'];

/// A lexed token.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Word(Word),
    /// `|`, `;` or a newline (`\n`, `\r\n` or `\r`).
    Separator(&'static str),
    /// `2>$null` or `2>&1`: the error stream dropped, or merged into the output.
    ErrorRedirect,
    /// `&`, the call operator.
    Call,
    /// A single-quoted here-string (`@'`, a newline, the text, a newline, `'@`), with its text.
    HereString(String),
}

/// A command name or argument, with its quotes removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Word {
    pub(super) text: String,
    /// Written as one quoted string: always a value, never a parameter or a command name.
    pub(super) quoted: bool,
}

/// Splits a command line into tokens; `None` for anything this lexer does not follow: `$`
/// (variables, `$(…)`), `@` but a single-quoted here-string's header (splatting, `@(…)`,
/// double-quoted here-strings, which expand), backticks, parentheses, braces (script blocks),
/// brackets (types), commas (arrays), `<`, `&&`, `||`, any other redirection, a double-quoted
/// string with `$` or a backtick, NUL bytes, and any character outside ASCII outside quotes.
fn lex(input: &str) -> Option<Vec<Token>> {
    if input.contains('\0') {
        return None;
    }
    let chars: Vec<char> = input.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let next = chars.get(i + 1).copied();
        match chars[i] {
            ' ' | '\t' => i += 1,
            '\r' | '\n' => {
                tokens.push(Token::Separator("\n"));
                i = after_newline(&chars, i);
            }
            '#' => {
                while i < chars.len() && !matches!(chars[i], '\r' | '\n') {
                    i += 1;
                }
            }
            '|' if next != Some('|') => {
                tokens.push(Token::Separator("|"));
                i += 1;
            }
            ';' => {
                tokens.push(Token::Separator(";"));
                i += 1;
            }
            '&' if next != Some('&') => {
                tokens.push(Token::Call);
                i += 1;
            }
            '@' if next.is_some_and(|c| SINGLE_QUOTES.contains(&c)) => {
                let (text, end) = here_string(&chars, i + 2)?;
                tokens.push(Token::HereString(text));
                i = end;
            }
            '2' if next == Some('>') => {
                tokens.push(Token::ErrorRedirect);
                i = error_redirect(&chars, i + 2)?;
            }
            c if SINGLE_QUOTES.contains(&c) => {
                let (text, end) = single_quoted(&chars, i + 1)?;
                tokens.push(Token::Word(Word { text, quoted: true }));
                i = end;
            }
            c if DOUBLE_QUOTES.contains(&c) => {
                let (text, end) = double_quoted(&chars, i + 1)?;
                tokens.push(Token::Word(Word { text, quoted: true }));
                i = end;
            }
            c if is_bare(c) => {
                let end = chars[i..].iter().position(|c| !is_bare(*c)).map_or(chars.len(), |p| i + p);
                tokens.push(Token::Word(Word { text: chars[i..end].iter().collect(), quoted: false }));
                i = end;
            }
            _ => return None,
        }
        // A token runs up to a blank, a newline, `|` or `;`: `a'b'`, `'a'b`, `a,b`, `a>b`,
        // `a$b` would be one word or an expression to PowerShell.
        if i > 0 && !matches!(chars[i - 1], ' ' | '\t' | '\r' | '\n' | '|' | ';' | '&') && !ends_token(&chars, i) {
            return None;
        }
    }
    Some(tokens)
}

/// Whether a token may end before `i`: at the end, or before a blank, a newline, `|` or `;`.
fn ends_token(chars: &[char], i: usize) -> bool {
    chars.get(i).is_none_or(|c| matches!(c, ' ' | '\t' | '\r' | '\n' | '|' | ';'))
}

/// Characters of an unquoted word: none that PowerShell reads as anything but text in an
/// argument (no `$ @ ( ) { } [ ] , ; | & < > # ' " %` or backtick, so no `--%` either).
fn is_bare(c: char) -> bool {
    c.is_ascii_alphanumeric() || "-_./\\:=+*?~!".contains(c)
}

/// The index after the newline at `i`.
fn after_newline(chars: &[char], i: usize) -> usize {
    if chars[i] == '\r' && chars.get(i + 1) == Some(&'\n') { i + 2 } else { i + 1 }
}

/// The target of `2>` at `i`: `&1`, or `$null` (case-insensitive, after blanks). Returns the
/// index after it.
fn error_redirect(chars: &[char], i: usize) -> Option<usize> {
    if chars.get(i) == Some(&'&') {
        return (chars.get(i + 1) == Some(&'1')).then_some(i + 2);
    }
    let start = chars[i..].iter().position(|c| !matches!(c, ' ' | '\t')).map_or(chars.len(), |p| i + p);
    let target: String = chars[start..].iter().take(5).collect();
    target.eq_ignore_ascii_case("$null").then_some(start + 5)
}

/// A single-quoted string's text, from after its opening quote at `i`; a doubled quote is one
/// quote. Returns the text and the index after the closing quote.
fn single_quoted(chars: &[char], mut i: usize) -> Option<(String, usize)> {
    let mut text = String::new();
    loop {
        let c = *chars.get(i)?;
        if SINGLE_QUOTES.contains(&c) {
            match chars.get(i + 1) {
                Some(second) if SINGLE_QUOTES.contains(second) => {
                    text.push(*second);
                    i += 2;
                }
                _ => return Some((text, i + 1)),
            }
        } else {
            text.push(c);
            i += 1;
        }
    }
}

/// A double-quoted string's text, from after its opening quote at `i`, when it expands nothing:
/// no `$`, no backtick, no doubled quote.
fn double_quoted(chars: &[char], mut i: usize) -> Option<(String, usize)> {
    let mut text = String::new();
    loop {
        match *chars.get(i)? {
            '$' | '`' => return None,
            c if DOUBLE_QUOTES.contains(&c) => {
                return (!chars.get(i + 1).is_some_and(|c| DOUBLE_QUOTES.contains(c))).then_some((text, i + 1));
            }
            c => {
                text.push(c);
                i += 1;
            }
        }
    }
}

/// A single-quoted here-string from after its `@'` at `i`: blanks and a newline, then lines up
/// to the first that starts with a single quote and `@` (no blank before it: PowerShell ends
/// the string only there). Returns its text, without the newline before the terminator, and the
/// index after the terminator. `None` for anything else on the header's line, or no terminator.
fn here_string(chars: &[char], i: usize) -> Option<(String, usize)> {
    let header_end = chars[i..].iter().position(|c| !matches!(c, ' ' | '\t')).map_or(chars.len(), |p| i + p);
    if !matches!(chars.get(header_end), Some('\r' | '\n')) {
        return None;
    }
    let start = after_newline(chars, header_end);
    let mut line = start;
    // Where the text ends: before the newline that precedes the terminator's line.
    let mut text_end = start;
    loop {
        if chars.get(line).is_some_and(|c| SINGLE_QUOTES.contains(c)) && chars.get(line + 1) == Some(&'@') {
            return Some((chars[start..text_end].iter().collect(), line + 2));
        }
        text_end = chars[line..].iter().position(|c| matches!(c, '\r' | '\n')).map(|p| line + p)?;
        line = after_newline(chars, text_end);
    }
}

/// One command of a line: whether the call operator runs it, its words, and the separator after
/// it. Its error-stream redirections write no file and are left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Command {
    pub(super) call: bool,
    pub(super) words: Vec<Word>,
    pub(super) separator: Option<&'static str>,
}

/// A command line as [`parse`] reads it: the here-string piped into its first command, if any,
/// and its commands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Line {
    pub(super) here_string: Option<String>,
    pub(super) commands: Vec<Command>,
}

/// The commands of `line`; `None` for a line [`lex`] does not follow, or whose tokens are in an
/// order it does not know: a here-string anywhere but first and piped, `&` anywhere but before
/// a command name, a separator with no command before it, a pipe with none after it.
#[must_use]
pub(super) fn parse(line: &str) -> Option<Line> {
    let mut tokens = lex(line)?.into_iter().skip_while(|t| *t == Token::Separator("\n")).peekable();
    let here_string = match tokens.peek() {
        Some(Token::HereString(text)) => {
            let text = text.clone();
            tokens.next();
            if tokens.next() != Some(Token::Separator("|")) {
                return None;
            }
            Some(text)
        }
        _ => None,
    };
    let mut commands = Vec::new();
    let mut current = Command { call: false, words: Vec::new(), separator: None };
    // Whether the last separator was a pipe: the pipeline goes on past a newline.
    let mut piped = here_string.is_some();
    let mut redirected = false;
    for token in tokens {
        match token {
            Token::Word(word) => current.words.push(word),
            Token::Call if !current.call && current.words.is_empty() => current.call = true,
            Token::ErrorRedirect if !current.words.is_empty() => redirected = true,
            Token::Separator("\n") if current.words.is_empty() && !current.call && !redirected => {}
            Token::Separator(separator) if !current.words.is_empty() => {
                current.separator = Some(separator);
                piped = separator == "|";
                redirected = false;
                commands
                    .push(std::mem::replace(&mut current, Command { call: false, words: Vec::new(), separator: None }));
            }
            _ => return None,
        }
    }
    if !current.words.is_empty() {
        commands.push(current);
        piped = false;
    } else if current.call || redirected {
        return None;
    }
    (!piped).then_some(Line { here_string, commands })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<Vec<(String, bool)>> {
        parse(line)
            .unwrap()
            .commands
            .into_iter()
            .map(|c| c.words.into_iter().map(|w| (w.text, w.quoted)).collect())
            .collect()
    }

    #[test]
    fn quotes_are_removed_as_powershell_removes_them() {
        assert_eq!(
            words("Get-Content 'it''s' \"a b\" ‘c’’d’ plain"),
            [[("Get-Content", false), ("it's", true), ("a b", true), ("c’d", true), ("plain", false)]
                .map(|(t, q)| (t.to_owned(), q))]
        );
    }

    #[test]
    fn a_here_string_ends_only_at_a_quote_and_at_sign_starting_a_line() {
        let line = parse("@'\nprint('a')\n  '@\nx'@\n'@ | codeact run").unwrap();
        assert_eq!(line.here_string.as_deref(), Some("print('a')\n  '@\nx'@"));
        let line = parse("@'  \r\nr\r\n’@|codeact run").unwrap();
        assert_eq!(line.here_string.as_deref(), Some("r"));
        assert_eq!(parse("@'\n'@ | codeact run").unwrap().here_string.as_deref(), Some(""));
        // A lone carriage return ends a line too.
        assert_eq!(parse("@'\ra\r'@ | codeact run").unwrap().here_string.as_deref(), Some("a"));
    }

    #[test]
    fn a_pipeline_goes_on_past_a_newline_after_the_pipe() {
        assert_eq!(words("gc a |\n  sls b\n\n").len(), 2);
        assert!(parse("gc a |").is_none());
        assert!(parse("| gc a").is_none());
    }
}
