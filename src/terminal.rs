//! Text from elsewhere (file names, a server's or a tool's output, a traceback) shown to a
//! person without letting it drive their terminal: the control characters that could, how they
//! are written instead, and [`diagnostic`], the one writer of stderr below `output` (which
//! re-exports it) — for what a host-side tool prints as it runs.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io::{self, IsTerminal as _, Write as _};

/// Whether `c` could change a terminal's state: a control character (C0, DEL, C1) other than
/// newline and tab.
#[must_use]
pub(crate) fn is_terminal_control(c: char) -> bool {
    c.is_control() && c != '\n' && c != '\t'
}

/// `text` with every [terminal control](is_terminal_control) written as a visible escape:
/// `\r`, or `\x` and two hex digits (`\x1b` for ESC, `\x9b` for the one-character CSI).
#[must_use]
pub(crate) fn visible(text: &str) -> Cow<'_, str> {
    if !text.contains(is_terminal_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '\r' => out.push_str("\\r"),
            c if is_terminal_control(c) => {
                let _ = write!(out, "\\x{:02x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// `text` as it may be shown on stderr: [escaped](visible) when stderr is a terminal, as is
/// into a pipe or a file, where it is data.
#[must_use]
pub(crate) fn for_stderr(text: &str) -> Cow<'_, str> {
    if io::stderr().is_terminal() { visible(text) } else { Cow::Borrowed(text) }
}

/// Writes `text` to stderr, [as it may be shown there](for_stderr), ending it with a newline.
pub(crate) fn diagnostic(text: &str) {
    let text = for_stderr(text);
    let mut err = io::stderr().lock();
    // Nothing useful can be done when stderr itself is gone.
    let _ = err.write_all(text.as_bytes());
    if !text.ends_with('\n') && !text.is_empty() {
        let _ = err.write_all(b"\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_controls_become_visible_escapes() {
        assert_eq!(visible("plain\ttext\n"), "plain\ttext\n");
        assert_eq!(visible("x\x1b[2K\x1b[1A\x1b]0;pwned\x07.md"), "x\\x1b[2K\\x1b[1A\\x1b]0;pwned\\x07.md");
        assert_eq!(visible("a\rb\u{9b}2Jc\u{7f}"), "a\\rb\\x9b2Jc\\x7f");
        assert_eq!(visible("é ✓"), "é ✓");
    }
}
