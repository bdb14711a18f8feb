//! How a server's failures read: the causes of an SDK error without its type names, and the
//! messages for a server that failed or did not answer in time, each with the end of what the
//! server wrote on stderr and with every value the configuration expanded taken out.

use std::fmt::Write as _;
use std::time::Duration;

use crate::limits::format_seconds;
use crate::mcp::config::Server;
use crate::mcp::stdio::{self, Notes, SharedNotes};
use crate::tools::{ErrorKind, ToolError};

/// Lines of a server's stderr a timeout quotes.
const STDERR_LINES: usize = 5;

/// Characters of a server's stderr a failure quotes.
const STDERR_CHARS: usize = 2000;

/// An error's message and its causes', leaving out what only names the SDK's types.
pub(super) fn causes(err: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut next = Some(err);
    while let Some(err) = next {
        let text = err.to_string();
        let typed = text.contains("::") || text.contains("Send message error");
        if !typed && !text.is_empty() && !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        next = err.source();
    }
    if parts.is_empty() { err.to_string() } else { parts.join(": ") }
}

/// The error for a server that failed: `message` and the end of its stderr, with every value
/// the configuration expanded taken out.
pub(super) fn failed(server: &Server, message: &str, notes: &SharedNotes, kind: ErrorKind) -> ToolError {
    let name = &server.name;
    let text = format!("MCP server '{name}': {message}{}", quoted_output(&stdio::lock(notes), STDERR_CHARS));
    ToolError::new(kind, server.redact(&text))
}

/// The error for a server that did not answer `what` within `within`: what it wrote on stdout
/// that is not MCP, and the last lines of its stderr.
pub(super) fn timed_out(server: &Server, what: &str, within: Duration, notes: &SharedNotes) -> ToolError {
    let notes = stdio::lock(notes);
    // Whole seconds: what is left of a run is never a round number.
    let rounded = within.as_secs() + u64::from(within.subsec_millis() >= 500);
    let seconds = Duration::from_secs(rounded.max(1));
    let mut text = format!("MCP server '{}' did not answer {what} within {}", server.name, format_seconds(seconds));
    if notes.stray_lines > 0 {
        let _ = write!(
            text,
            "\nits stdout had {} line(s) that are not MCP messages, the first: {:?}",
            notes.stray_lines,
            notes.first_stray.as_deref().unwrap_or_default()
        );
    }
    let log = notes.stderr.trim();
    if !log.is_empty() {
        let lines: Vec<&str> = log.lines().collect();
        let tail = lines[lines.len().saturating_sub(STDERR_LINES)..].join("\n");
        let _ = write!(text, "\nserver stderr:\n{tail}");
    }
    ToolError::new(ErrorKind::Timeout, server.redact(&text))
}

/// The end of a server's stderr, up to `chars`, as a block to add to a message.
fn quoted_output(notes: &Notes, chars: usize) -> String {
    let log = notes.stderr.trim();
    if log.is_empty() {
        return String::new();
    }
    let tail = log.char_indices().rev().nth(chars - 1).map_or(log, |(i, _)| &log[i..]);
    format!("\nserver stderr:\n{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn causes_leave_out_type_names_and_repeats() {
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "Connection refused (os error 111)");
        assert_eq!(causes(&io), "Connection refused (os error 111)");
    }
}
