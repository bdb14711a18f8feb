//! The only place that writes to stdout and stderr.
//!
//! stdout carries data only (program output, JSON, Markdown); messages for people go to stderr.
//! A closed stdout pipe (`codeact run … | head`) is not an error: writes to it are dropped.

#![expect(clippy::print_stderr, reason = "this module is the one place allowed to print")]

use std::io::{self, IsTerminal, Write};

/// Writes data to stdout. A closed pipe is ignored; other failures are returned.
pub fn data(bytes: &[u8]) -> io::Result<()> {
    let mut out = io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(err) if err.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// Writes a JSON value to stdout, followed by a newline.
pub fn json(value: &serde_json::Value) -> io::Result<()> {
    let mut text = serde_json::to_string_pretty(value).map_err(io::Error::other)?;
    text.push('\n');
    data(text.as_bytes())
}

/// Writes text to stderr as it is (program stderr, tracebacks).
pub fn diagnostic(text: &str) {
    let mut err = io::stderr().lock();
    // Nothing useful can be done when stderr itself is gone.
    let _ = err.write_all(text.as_bytes());
    if !text.ends_with('\n') && !text.is_empty() {
        let _ = err.write_all(b"\n");
    }
}

/// Prints `warning: …` on stderr.
pub fn warning(message: &str) {
    eprintln!("{}: {message}", paint("warning", "33"));
}

/// Prints an error and its chain of causes in the house style:
/// `error: failed to read `x`: No such file or directory`, then an optional `hint:` line.
pub fn error(err: &anyhow::Error) {
    let mut message = err.to_string();
    for cause in err.chain().skip(1) {
        message.push_str(": ");
        message.push_str(&cause.to_string());
    }
    let (message, hint) = match message.split_once("\nhint: ") {
        Some((message, hint)) => (message.to_owned(), Some(hint.to_owned())),
        None => (message, None),
    };
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

/// A progress bar for `len` bytes on stderr, shown only when stderr is a terminal.
#[must_use]
pub fn progress_bar(len: u64, label: &str) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::with_draw_target(Some(len), indicatif::ProgressDrawTarget::stderr());
    if let Ok(style) =
        indicatif::ProgressStyle::with_template("{msg} [{bar:30}] {bytes}/{total_bytes} ({bytes_per_sec}, {eta})")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(label.to_owned());
    bar
}
