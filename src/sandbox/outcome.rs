//! [`Outcome`]: what a run produced, and its two renderings — text (stdout, then the error on
//! stderr) and the `--json` object.

use std::time::Duration;

use serde_json::{Value as Json, json};

use super::Capture;
use crate::tools::{ErrorKind, ToolError, Value};

/// Most bytes of a traceback shown; longer ones keep their end.
pub(crate) const MAX_TRACEBACK: usize = 8 * 1024;

/// What became of the compiled guest a CPython backend loads.
#[cfg_attr(not(feature = "wasm"), expect(dead_code, reason = "only the wasm backend runs the guest"))]
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
    /// An error with no line and no frames: a limit, or codeact's own failure.
    #[must_use]
    pub(crate) fn plain(error: &ToolError) -> Self {
        let kind = error.kind.python_name().to_owned();
        let traceback = format!("{kind}: {}", error.message);
        Self { kind, message: error.message.clone(), line: None, traceback }
    }

    /// codeact itself failed while running the program (not the program).
    #[must_use]
    pub(crate) fn internal(message: impl Into<String>) -> Self {
        Self::plain(&ToolError::new(ErrorKind::Runtime, message))
    }
}

impl Outcome {
    #[must_use]
    pub(crate) fn success(&self) -> bool {
        self.error.is_none()
    }

    /// The `--json` object. A return value whose JSON is larger than `max_output` bytes is
    /// replaced by its `repr`, cut to head and tail like stdout, and `truncated` is set.
    #[must_use]
    pub(crate) fn to_json(&self, max_output: usize) -> Json {
        let mut truncated = self.truncated;
        let return_value = match (&self.return_value, &self.return_repr) {
            (Some(value), repr) => {
                let json = value.to_json();
                let size = serde_json::to_string(&json).map_or(usize::MAX, |text| text.len());
                if size > max_output {
                    truncated = true;
                    let mut capture = Capture::new(max_output);
                    capture.push(repr.as_deref().unwrap_or_default());
                    Json::String(capture.finish().0)
                } else {
                    json
                }
            }
            (None, _) => Json::Null,
        };
        let error = self.error.as_ref().map_or(
            Json::Null,
            |e| json!({"type": e.kind, "message": e.message, "line": e.line, "traceback": e.traceback}),
        );
        let mut object = json!({
            "success": self.success(),
            "stdout": self.stdout,
            "stderr": self.stderr,
            "return_value": return_value,
            "error": error,
            "backend": self.backend,
            "duration_ms": u64::try_from(self.duration.as_millis()).unwrap_or(u64::MAX),
            "tool_calls": self.tool_calls,
            "truncated": truncated,
        });
        if let (Some(cache), Json::Object(map)) = (self.guest_cache, &mut object) {
            map.insert("guest_cache".into(), cache.name().into());
        }
        object
    }
}
