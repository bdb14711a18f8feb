//! The only place that writes to stdout and stderr — [`diagnostic`] included, which lives in
//! `terminal` so that the layers below this one (a host-side tool's prints) can write through it.
//!
//! stdout carries data only (program output, JSON, Markdown); messages for people go to stderr.
//! A closed stdout pipe (`codeact run … | head`) is not an error: writes to it are dropped.
//!
//! Text that reaches a terminal cannot drive it: when stderr is a terminal, control characters
//! other than newline and tab in messages (file names, an MCP server's stderr, a program's
//! traceback) are shown as escapes (`\x1b`, `\r`, `\x9b`); when stdout is a terminal, the same
//! holds for a program's text-mode output. Into a pipe or a file both pass unchanged, since a
//! program's output is data there. JSON never carries a raw control character: serde escapes
//! C0 ones, and DEL and the C1 range are written as `\u` escapes too (the same JSON value).
//! The escaping is `terminal`'s.

#![expect(clippy::print_stderr, reason = "this module is the one place allowed to print")]

use std::fmt::Write as _;
use std::io::{self, IsTerminal, Write};

use anyhow::Context as _;

use crate::hint;
use crate::sandbox::Outcome;
use crate::terminal::{for_stderr, visible};

/// Writes data to stdout. A closed pipe is ignored; other failures are returned.
pub(crate) fn data(bytes: &[u8]) -> anyhow::Result<()> {
    let mut out = io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(err) if err.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("failed to write to stdout"),
    }
}

/// Writes text for people to stdout (listings, reports): like [`data`], with control characters
/// shown as escapes when stdout is a terminal, so names and values from a repository cannot
/// drive it.
pub(crate) fn text(text: &str) -> anyhow::Result<()> {
    if io::stdout().is_terminal() { data(visible(text).as_bytes()) } else { data(text.as_bytes()) }
}

/// Writes a JSON value to stdout, followed by a newline.
pub(crate) fn json(value: &serde_json::Value) -> anyhow::Result<()> {
    let mut text = escape_c1(serde_json::to_string_pretty(value).context("failed to write JSON")?);
    text.push('\n');
    data(text.as_bytes())
}

/// How a run reports its outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Report {
    /// The program's output and its last expression's `repr` on stdout, then the program's
    /// stderr and any error on stderr.
    Text,
    /// The `--json` object.
    Json,
    /// `{"result": <the --json object>, "text": <what Text prints, stdout then stderr>, "after":
    /// <the text after stdout>}`: what `codeact mcp serve` reads back from the run it starts for
    /// a call.
    Mcp,
}

/// Writes a run's report in the form `report` asks for.
pub(crate) fn report(outcome: &Outcome, report: Report, max_output: usize) -> anyhow::Result<()> {
    match report {
        Report::Json => json(&outcome.to_json(max_output)),
        Report::Mcp => {
            let mut read = outcome.text(max_output);
            for extra in [Some(outcome.stderr.as_str()), outcome.error.as_ref().map(|e| e.traceback.as_str())] {
                if let Some(extra) = extra.filter(|extra| !extra.is_empty()) {
                    read.push_str(extra);
                    if !read.ends_with('\n') {
                        read.push('\n');
                    }
                }
            }
            // What follows the output, for a server that showed the output as it was printed.
            let after = read.get(outcome.stdout.len()..).unwrap_or_default().to_owned();
            let object = serde_json::json!({"result": outcome.to_json(max_output), "text": read, "after": after});
            let mut line = serde_json::to_string(&object).context("failed to write JSON")?;
            line.push('\n');
            data(line.as_bytes())
        }
        Report::Text => {
            text(&outcome.text(max_output))?;
            if !outcome.stderr.is_empty() {
                diagnostic(&outcome.stderr);
            }
            if let Some(error) = &outcome.error {
                diagnostic(&error.traceback);
            }
            Ok(())
        }
    }
}

/// Writes text to stderr (program stderr, tracebacks), ending it with a newline.
pub(crate) use crate::terminal::diagnostic;

/// Prints `warning: …` on stderr.
pub(crate) fn warning(message: &str) {
    eprintln!("{}: {}", paint("warning", "33"), for_stderr(message));
}

/// Prints an error and its chain of causes in the house style:
/// `error: failed to read `x`: No such file or directory`, then its `hint:` line, if any.
pub(crate) fn error(err: &anyhow::Error) {
    let (message, hint) = hint::split(err);
    let mut err = io::stderr().lock();
    let _ = writeln!(err, "{}: {}", paint("error", "31"), for_stderr(&message));
    if let Some(hint) = hint {
        let _ = writeln!(err, "{}: {}", paint("hint", "36"), for_stderr(&hint));
    }
}

/// Pretty JSON with DEL and the C1 controls (which serde leaves raw) as `\u` escapes. Outside
/// strings JSON is ASCII, so only string contents change, and only in how they are spelled.
fn escape_c1(text: String) -> String {
    if !text.contains(|c: char| ('\u{7f}'..='\u{9f}').contains(&c)) {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if ('\u{7f}'..='\u{9f}').contains(&c) {
            let _ = write!(out, "\\u{:04x}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    out
}

/// Colours a label when stderr is a terminal and `NO_COLOR` is not set.
fn paint(label: &str, colour: &str) -> String {
    let wanted = io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    if wanted { format!("\x1b[1;{colour}m{label}\x1b[0m") } else { label.to_owned() }
}

/// Downloads shown as progress bars on stderr when it is a terminal, else as a line each (a log
/// shows what an install was doing).
#[derive(Debug, Default)]
pub(crate) struct ProgressBars {
    bar: Option<indicatif::ProgressBar>,
}

impl crate::guest::install::Progress for ProgressBars {
    fn start(&mut self, label: &str, len: u64) {
        if !io::stderr().is_terminal() {
            diagnostic(&format!(
                "downloading {label} ({})",
                crate::limits::format_size(usize::try_from(len).unwrap_or(0))
            ));
        }
        let bar = indicatif::ProgressBar::with_draw_target(Some(len), indicatif::ProgressDrawTarget::stderr());
        if let Ok(style) =
            indicatif::ProgressStyle::with_template("{msg} [{bar:30}] {bytes}/{total_bytes} ({bytes_per_sec}, {eta})")
        {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_message(label.to_owned());
        self.bar = Some(bar);
    }

    fn advance(&mut self, bytes: u64) {
        if let Some(bar) = &self.bar {
            bar.inc(bytes);
        }
    }

    fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terminal::is_terminal_control;

    #[test]
    fn json_spells_c1_controls_as_escapes_and_keeps_the_value() {
        let value = serde_json::json!({"s": "a\u{9b}2J\u{7f}\u{1b}é"});
        let text = escape_c1(serde_json::to_string_pretty(&value).unwrap());
        assert!(!text.contains(is_terminal_control), "{text:?}");
        assert_eq!(serde_json::from_str::<serde_json::Value>(&text).unwrap(), value);
    }
}
