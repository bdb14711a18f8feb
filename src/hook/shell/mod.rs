//! Just enough of the POSIX shell grammar to classify a `bash` tool call: is it one codeact
//! invocation, and is it read-only? Words, quotes, operators and quoted here-documents are
//! lexed; nothing is expanded or run. Anything the lexer does not follow classifies as
//! "neither", which is the safe answer for both questions: command and arithmetic substitution,
//! `${…}` beyond a plain name, `$'…'` and `$"…"`, unquoted here-documents (the shell expands
//! their bodies and joins their lines), NUL bytes (the shell drops them, so `P<NUL>Y` would end
//! a `PY` here-document there and not here), and a backslash-newline inside a word.
//!
//! The lexer never resolves a program: the caller says what a program word names
//! ([`Program`]), looking at the file system as it must.
//!
//! [`parse()`] splits a command line into simple commands ([`SimpleCommand`]) over the tokens of
//! [`lex`]; [`classify`] answers the two questions on them. [`powershell`] answers them for
//! PowerShell, and [`Dialect`] picks one by the tool's name.

mod classify;
mod dialect;
mod lex;
mod parse;
pub(crate) mod powershell;
mod quote;

pub(crate) use classify::{Invocation, Program, is_read_only};
pub(crate) use dialect::Dialect;
pub(crate) use parse::{SimpleCommand, is_literal, parse};
pub(crate) use quote::{posix_word, powershell_word};
