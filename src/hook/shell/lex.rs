//! The shell lexer: words with their quotes removed, separators, redirections and quoted
//! here-documents, and [`Token::Unsupported`] for every construct it does not follow.

/// A lexed token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Token {
    /// A word with its quotes removed; `quoted` when any part was quoted; `assignment` when the
    /// shell reads it as `NAME=value` (the name and `=` unquoted); `expands` when an unquoted
    /// part may become other words or another text: a `$` expansion (split into words), a glob
    /// or brace character (those of zsh's and ksh's extended globs too), a leading `~` or `=`
    /// (zsh's command path).
    Word { text: String, quoted: bool, assignment: bool, expands: bool },
    /// `|`, `||`, `&&`, `;`, `&`, newline.
    Separator(&'static str),
    /// `<`, `<<`, `<<-`, `<<<`, `>`, `>>`, `>&`, `<&`, `>|`, `&>`, with an optional fd before it.
    /// A here-document's delimiter is always quoted: the lexer refuses the unquoted kind.
    Redirect { fd: Option<u32>, op: &'static str },
    /// `(` or `)`, `{`, `}` or anything else that opens a construct this lexer does not follow.
    Unsupported,
}

/// Splits a command line into tokens. Returns `None` for unterminated quotes, substitutions,
/// unquoted here-documents, NUL bytes, or anything else that could hide a second command.
#[must_use]
pub(crate) fn lex(input: &str) -> Option<Vec<Token>> {
    if input.contains('\0') {
        return None;
    }
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
                // Skip the bodies of here-documents opened on this line. Their delimiters were
                // quoted, so the shell takes each line as it is: no expansion, no joining.
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
                i = redirect(&chars, i + width, None, op, &mut tokens, &mut heredocs)?;
            }
            '(' | ')' | '{' | '}' | '`' => {
                tokens.push(Token::Unsupported);
                i += 1;
            }
            _ => {
                let (word, next) = read_word(&chars, i)?;
                // A number directly followed by a redirection is its file descriptor.
                if !word.quoted
                    && word.text.chars().all(|c| c.is_ascii_digit())
                    && matches!(chars.get(next), Some('<' | '>'))
                {
                    let (op, width) = redirect_op(&chars[next..]);
                    i = redirect(&chars, next + width, word.text.parse().ok(), op, &mut tokens, &mut heredocs)?;
                    continue;
                }
                let assignment = is_assignment(&word.text) && word.text.find('=').is_some_and(|eq| eq < word.plain);
                tokens.push(Token::Word { text: word.text, quoted: word.quoted, assignment, expands: word.expands });
                i = next;
            }
        }
    }
    Some(tokens)
}

/// Pushes a redirection whose operator ends before `i`; a here-document's delimiter is read
/// too, and its body queued to be skipped after the line. Returns the index after both.
fn redirect(
    chars: &[char],
    i: usize,
    fd: Option<u32>,
    op: &'static str,
    tokens: &mut Vec<Token>,
    heredocs: &mut Vec<(String, bool)>,
) -> Option<usize> {
    tokens.push(Token::Redirect { fd, op });
    if op != "<<" && op != "<<-" {
        return Some(i);
    }
    let (word, next) = read_word(chars, skip_blanks(chars, i))?;
    // An unquoted delimiter makes the shell expand the body (`$(…)`, backticks) and join
    // its backslash-newlines, which can end the document on a line this lexer never sees.
    if !word.quoted {
        return None;
    }
    heredocs.push((word.text.clone(), op == "<<-"));
    tokens.push(Token::Word { text: word.text, quoted: true, assignment: false, expands: false });
    Some(next)
}

fn skip_blanks(chars: &[char], mut i: usize) -> usize {
    while matches!(chars.get(i), Some(' ' | '\t')) {
        i += 1;
    }
    i
}

/// The index after any backslash-newlines (line continuations) starting at `i`.
fn skip_continuations(chars: &[char], mut i: usize) -> usize {
    while chars.get(i) == Some(&'\\') && chars.get(i + 1) == Some(&'\n') {
        i += 2;
    }
    i
}

/// Whether `c` ends an unquoted word.
fn ends_word(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '|' | '&' | ';' | '<' | '>' | '(' | ')')
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

/// A word as read: its text with quotes removed, whether any part was quoted, how many bytes
/// of `text` precede the first quoted character (all of it when nothing was quoted), and
/// whether an unquoted part expands ([`Token::Word`]).
struct Lexed {
    text: String,
    quoted: bool,
    plain: usize,
    expands: bool,
}

/// Reads one word starting at `start`, and returns it with the index after it. `None` for
/// anything that could run a command or that this lexer might read otherwise than the shell:
/// `$(`, `$((`, `$[`, backticks, `${…}` other than a plain name, `$'…'` and `$"…"`, and a
/// backslash-newline anywhere but at the end of the word.
fn read_word(chars: &[char], start: usize) -> Option<(Lexed, usize)> {
    let mut text = String::new();
    let mut plain: Option<usize> = None;
    let mut expands = matches!(chars.get(start), Some('~' | '='));
    let mut i = start;
    while i < chars.len() {
        match chars[i] {
            c if ends_word(c) => break,
            '\\' if chars.get(i + 1) == Some(&'\n') => {
                // A line continuation: the shell joins what follows to this word, which is the
                // same as ending it here only when a word boundary follows.
                let after = skip_continuations(chars, i);
                if i > start && chars.get(after).is_none_or(|c| ends_word(*c)) {
                    break;
                }
                return None;
            }
            '\'' => {
                plain.get_or_insert(text.len());
                let end = chars[i + 1..].iter().position(|c| *c == '\'')? + i + 1;
                text.extend(&chars[i + 1..end]);
                i = end + 1;
            }
            '"' => {
                plain.get_or_insert(text.len());
                i += 1;
                loop {
                    match chars.get(i)? {
                        '"' => break,
                        '\\' if chars.get(i + 1) == Some(&'\n') => return None,
                        '\\' if matches!(chars.get(i + 1), Some('"' | '\\' | '$' | '`')) => {
                            text.push(chars[i + 1]);
                            i += 2;
                        }
                        '`' => return None,
                        '$' => i = dollar(chars, i, &mut text)?,
                        c => {
                            text.push(*c);
                            i += 1;
                        }
                    }
                }
                i += 1;
            }
            '\\' => {
                plain.get_or_insert(text.len());
                text.push(*chars.get(i + 1)?);
                i += 2;
            }
            '`' => return None,
            '$' if matches!(chars.get(i + 1), Some('\'' | '"')) => return None,
            '$' => {
                expands = true;
                i = dollar(chars, i, &mut text)?;
            }
            c => {
                // `^`, `#` and `!` are globs too under zsh's `extendedglob` or ksh's `extglob`.
                expands |= matches!(c, '*' | '?' | '[' | '{' | '}' | '^' | '#' | '!');
                text.push(c);
                i += 1;
            }
        }
    }
    if i == start {
        return None;
    }
    let quoted = plain.is_some();
    let plain = plain.unwrap_or(text.len());
    Some((Lexed { text, quoted, plain, expands }, i))
}

/// Reads the `$` at `i` (unquoted or in double quotes) into `text`, returning the index after
/// it. `$NAME` and `${NAME}` are kept as text; `$(…)`, `$((…))` and `$[…]` run commands or
/// arithmetic, and any other `${…}` may evaluate a subscript or an offset, so they are refused.
fn dollar(chars: &[char], i: usize, text: &mut String) -> Option<usize> {
    match chars.get(i + 1) {
        Some('(' | '[') => None,
        Some('{') => {
            let end = chars[i + 2..].iter().position(|c| *c == '}')? + i + 2;
            let name: String = chars[i + 2..end].iter().collect();
            let plain_name = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            let special = name.len() == 1 && "@*#?$!-".contains(name.as_str());
            let positional = !name.is_empty() && name.chars().all(|c| c.is_ascii_digit());
            if !(plain_name || special || positional) {
                return None;
            }
            text.extend(&chars[i..=end]);
            Some(end + 1)
        }
        _ => {
            text.push('$');
            Some(i + 1)
        }
    }
}

/// Whether `word` is `NAME=value`.
fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit())
    })
}
