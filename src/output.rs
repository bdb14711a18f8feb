//! The only place that writes to stdout and stderr.
//!
//! stdout carries data only (program output, JSON, Markdown); messages for people go to stderr.
//! A closed stdout pipe (`codeact run … | head`) is not an error: writes to it are dropped.

#![expect(clippy::print_stderr, reason = "this module is the one place allowed to print")]

use std::io::{self, IsTerminal, Write};

use anyhow::Context as _;

use crate::hint;

/// Writes data to stdout. A closed pipe is ignored; other failures are returned.
pub(crate) fn data(bytes: &[u8]) -> anyhow::Result<()> {
    let mut out = io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(err) if err.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("failed to write to stdout"),
    }
}

/// Writes a JSON value to stdout, followed by a newline.
pub(crate) fn json(value: &serde_json::Value) -> anyhow::Result<()> {
    let mut text = serde_json::to_string_pretty(value).context("failed to write JSON")?;
    text.push('\n');
    data(text.as_bytes())
}

/// Writes text to stderr as it is (program stderr, tracebacks).
pub(crate) fn diagnostic(text: &str) {
    let mut err = io::stderr().lock();
    // Nothing useful can be done when stderr itself is gone.
    let _ = err.write_all(text.as_bytes());
    if !text.ends_with('\n') && !text.is_empty() {
        let _ = err.write_all(b"\n");
    }
}

/// Prints `warning: …` on stderr.
pub(crate) fn warning(message: &str) {
    eprintln!("{}: {message}", paint("warning", "33"));
}

/// Prints an error and its chain of causes in the house style:
/// `error: failed to read `x`: No such file or directory`, then its `hint:` line, if any.
pub(crate) fn error(err: &anyhow::Error) {
    let (message, hint) = hint::split(err);
    eprintln!("{}: {message}", paint("error", "31"));
    if let Some(hint) = hint {
        eprintln!("{}: {hint}", paint("hint", "36"));
    }
}

/// Colours a label when stderr is a terminal and `NO_COLOR` is not set.
fn paint(label: &str, colour: &str) -> String {
    let wanted = io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    if wanted { format!("\x1b[1;{colour}m{label}\x1b[0m") } else { label.to_owned() }
}

/// Downloads shown as progress bars on stderr (drawn only when stderr is a terminal).
#[derive(Debug, Default)]
pub(crate) struct ProgressBars {
    bar: Option<indicatif::ProgressBar>,
}

impl crate::guest::install::Progress for ProgressBars {
    fn start(&mut self, label: &str, len: u64) {
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
