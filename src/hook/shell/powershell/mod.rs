//! Just enough of PowerShell to classify a `powershell` tool call (Copilot CLI's shell tool on
//! Windows) as the POSIX classifier does a `bash` one: is it one codeact run, fed a single-quoted
//! here-string, and is it read-only? Words, quotes, `|`, `;`, the call operator and single-quoted
//! here-strings are lexed; nothing is expanded or run. Everything that could run or write
//! something else classifies as "neither", the safe answer for both questions: variables and
//! subexpressions (`$x`, `$(…)`, `@(…)`), script blocks, double-quoted here-strings, backticks,
//! redirections to files, and any command not known to only read.

mod classify;
mod cmdlets;
mod lex;

pub(crate) use classify::{PlainRead, codeact_run, is_read_only, plain_read};
