//! [`Outcome`]: what a run produced, and its two renderings — text (stdout, then the error on
//! stderr) and the `--json` object. Both stay within the output budget however the program
//! shapes its result: the return value is measured as it is printed, and an exception's
//! message and traceback are cut to a fixed size.

use std::io;
use std::time::Duration;

use serde_json::{Value as Json, json};

use super::Capture;
use super::capture::{keep_tail, shorten};
use crate::tools::{ErrorKind, ToolError, Value};

/// Most bytes of a traceback shown; longer ones keep their end.
pub(crate) const MAX_TRACEBACK: usize = 8 * 1024;

/// Most bytes of an exception's message kept; longer ones keep their start and their end.
pub(crate) const MAX_MESSAGE: usize = 4 * 1024;

/// What became of the compiled guest a CPython backend loads.
#[cfg_attr(not(guest_backend), expect(dead_code, reason = "only the wasm and hyperlight backends run the guest"))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GuestCache {
    /// The cached compilation was loaded.
    Hit,
    /// There was none: the guest was compiled for this machine first.
    Compiled,
    /// The cached file had changed since codeact wrote it, so it was compiled again.
    Recompiled,
}

impl GuestCache {
    /// The name `--json` gives it.
    #[must_use]
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Hit => "hit",
            Self::Compiled => "compiled",
            Self::Recompiled => "recompiled",
        }
    }
}

/// The result of one run.
#[derive(Debug)]
pub(crate) struct Outcome {
    /// Kept stdout.
    pub(crate) stdout: String,
    pub(crate) truncated: bool,
    /// The program's stderr: tool warnings.
    pub(crate) stderr: String,
    /// The last expression's value, when it is not `None`.
    pub(crate) return_value: Option<Value>,
    /// Its Python `repr`, printed after stdout in text mode.
    pub(crate) return_repr: Option<String>,
    pub(crate) error: Option<ProgramError>,
    pub(crate) backend: &'static str,
    /// Set when Monty could not run the program: it does not compile it, or the error is one of
    /// Monty's own limits, on which CPython may run it. Monty's error as `Type: message`.
    pub(crate) beyond_monty: Option<String>,
    /// Set when the program ran on CPython because Monty could not run it: Monty's error.
    pub(crate) fell_back: Option<String>,
    /// For a CPython backend, whether its compiled guest came from the cache.
    pub(crate) guest_cache: Option<GuestCache>,
    pub(crate) duration: Duration,
    pub(crate) tool_calls: u64,
}

/// An uncaught exception or a limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ProgramError {
    /// Python exception type, e.g. `ValueError`.
    pub(crate) kind: String,
    pub(crate) message: String,
    pub(crate) line: Option<u32>,
    /// The short traceback as a person reads it, ending with `Type: message`.
    pub(crate) traceback: String,
}

impl ProgramError {
    /// An error as a backend reported it, its message and traceback cut to
    /// [`MAX_MESSAGE`] and [`MAX_TRACEBACK`].
    #[must_use]
    pub(crate) fn new(kind: String, message: &str, line: Option<u32>, traceback: &str) -> Self {
        Self { kind, message: shorten(message, MAX_MESSAGE), line, traceback: keep_tail(traceback, MAX_TRACEBACK) }
    }

    /// An error with no line and no frames: a limit, or codeact's own failure.
    #[must_use]
    pub(crate) fn plain(error: &ToolError) -> Self {
        let kind = error.kind.python_name().to_owned();
        let message = shorten(&error.message, MAX_MESSAGE);
        let traceback = format!("{kind}: {message}");
        Self { kind, message, line: None, traceback }
    }

    /// codeact itself failed while running the program (not the program).
    #[must_use]
    pub(crate) fn internal(message: impl Into<String>) -> Self {
        Self::plain(&ToolError::new(ErrorKind::Runtime, message))
    }
}

impl Outcome {
    /// A run that never started on `backend`, failing with `error`.
    #[cfg_attr(
        all(feature = "wasm", hyperlight),
        expect(dead_code, reason = "only a build without a backend runs nothing")
    )]
    #[must_use]
    pub(crate) fn not_run(backend: &'static str, error: ProgramError, duration: Duration) -> Self {
        Self {
            stdout: String::new(),
            truncated: false,
            stderr: String::new(),
            return_value: None,
            return_repr: None,
            error: Some(error),
            backend,
            beyond_monty: None,
            fell_back: None,
            guest_cache: None,
            duration,
            tool_calls: 0,
        }
    }

    #[must_use]
    pub(crate) fn success(&self) -> bool {
        self.error.is_none()
    }

    /// Text mode's stdout: the program's output, then the last expression's `repr` on its own
    /// line, cut to head and tail like the output.
    #[must_use]
    pub(crate) fn text(&self, max_output: usize) -> String {
        let mut out = self.stdout.clone();
        if let Some(repr) = &self.return_repr {
            let mut capture = Capture::new(max_output);
            capture.push(repr);
            out.push_str(&capture.finish().0);
            out.push('\n');
        }
        out
    }

    /// The `--json` object. A return value that would print as more than `max_output` bytes
    /// (pretty-printed, as the object is) is replaced by its `repr`, cut to head and tail like
    /// stdout, and `truncated` is set.
    #[must_use]
    pub(crate) fn to_json(&self, max_output: usize) -> Json {
        let mut truncated = self.truncated;
        let return_value = match (&self.return_value, &self.return_repr) {
            (Some(value), repr) => {
                let json = value.to_json();
                if prints_within(&json, max_output) {
                    json
                } else {
                    truncated = true;
                    let mut capture = Capture::new(max_output);
                    capture.push(repr.as_deref().unwrap_or_default());
                    Json::String(capture.finish().0)
                }
            }
            (None, _) => Json::Null,
        };
        let error = self.error.as_ref().map_or(
            Json::Null,
            |e| json!({"type": e.kind, "message": e.message, "line": e.line, "traceback": e.traceback}),
        );
        let (stdout, cut_out) = within_json(&self.stdout, max_output);
        let (stderr, cut_err) = within_json(&self.stderr, max_output);
        truncated |= cut_out || cut_err;
        let mut object = json!({
            "success": self.success(),
            "stdout": stdout,
            "stderr": stderr,
            "return_value": return_value,
            "error": error,
            "backend": self.backend,
            "duration_ms": u64::try_from(self.duration.as_millis()).unwrap_or(u64::MAX),
            "tool_calls": self.tool_calls,
            "truncated": truncated,
        });
        if let Json::Object(map) = &mut object {
            if let Some(cache) = self.guest_cache {
                map.insert("guest_cache".into(), cache.name().into());
            }
            if let Some(because) = &self.fell_back {
                map.insert("fallback".into(), json!({"from": "monty", "because": because}));
            }
        }
        object
    }
}

/// `text`, cut to its start and end when, written as a JSON string, it would take more than
/// `limit` bytes: escaping makes each control character six bytes, so text within the budget
/// could print at six times it. Returns whether it was cut.
fn within_json(text: &str, limit: usize) -> (String, bool) {
    let printed = json_len(text);
    if printed <= limit {
        return (text.to_owned(), false);
    }
    // Shortened in proportion to how much escaping adds, then halved until it fits.
    let mut keep = limit.saturating_mul(text.len()) / printed;
    loop {
        let cut = shorten(text, keep);
        if keep == 0 || json_len(&cut) <= limit + 128 {
            return (cut, true);
        }
        keep /= 2;
    }
}

/// The bytes `text` takes as a JSON string as codeact prints it (C0 and C1 controls and DEL as
/// `\u` escapes), quotes included.
fn json_len(text: &str) -> usize {
    let escaped = |c: char| match c {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
        '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' => 6,
        c => c.len_utf8(),
    };
    text.chars().map(escaped).sum::<usize>() + 2
}

/// Whether `value`, pretty-printed as a field of the `--json` object (one level deep), takes at
/// most `limit` bytes. Stops writing as soon as it does not: a value whose indentation grows
/// with its depth is never printed in full just to be measured.
fn prints_within(value: &Json, limit: usize) -> bool {
    /// Counts what would be printed, failing past the limit. Every line after the first gets
    /// two more spaces of indentation inside the object.
    struct Measure {
        printed: usize,
        limit: usize,
    }
    impl io::Write for Measure {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            #[expect(clippy::naive_bytecount, reason = "the writes are short; not worth a dependency")]
            let newlines = buf.iter().filter(|b| **b == b'\n').count();
            self.printed = self.printed.saturating_add(buf.len()).saturating_add(2 * newlines);
            if self.printed > self.limit {
                return Err(io::Error::other("over the output budget"));
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    serde_json::to_writer_pretty(Measure { printed: 0, limit }, value).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(depth: usize) -> Json {
        (0..depth).fold(json!(0), |inner, _| json!([inner]))
    }

    #[test]
    fn a_value_is_measured_as_it_is_printed_inside_the_object() {
        let value = nested(100);
        let printed = serde_json::to_string_pretty(&json!({ "v": value })).unwrap().len();
        // Compact, it is a few hundred bytes; pretty and one level deep, over ten thousand.
        assert!(serde_json::to_string(&value).unwrap().len() < 300);
        assert!(prints_within(&value, printed));
        assert!(!prints_within(&value, printed / 2));
    }

    #[test]
    fn a_return_value_that_prints_past_the_budget_is_its_cut_repr() {
        let outcome = Outcome {
            stdout: String::new(),
            truncated: false,
            stderr: String::new(),
            return_value: Some(Value::from_json(&nested(200))),
            return_repr: Some(format!("{}0{}", "[".repeat(200), "]".repeat(200))),
            error: None,
            backend: "monty",
            beyond_monty: None,
            fell_back: None,
            guest_cache: None,
            duration: Duration::ZERO,
            tool_calls: 0,
        };
        let object = outcome.to_json(2_000);
        assert_eq!(object["truncated"], json!(true));
        assert!(object["return_value"].as_str().is_some_and(|repr| repr.starts_with("[[[")), "{object}");
        assert!(serde_json::to_string_pretty(&object).unwrap().len() < 2_000 + 400);
    }

    #[test]
    fn errors_keep_a_bounded_message_and_traceback() {
        let message = "x".repeat(1_000_000);
        let error = ProgramError::new("ValueError".into(), &message, Some(1), &format!("ValueError: {message}"));
        assert!(error.message.len() < MAX_MESSAGE + 100 && error.message.contains("elided"));
        assert!(error.traceback.len() < MAX_TRACEBACK + 100);
        let plain = ProgramError::plain(&ToolError::new(ErrorKind::Value, message));
        assert!(plain.traceback.len() < MAX_MESSAGE + 100, "{}", plain.traceback.len());
    }
}
