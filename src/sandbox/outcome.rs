//! [`Outcome`]: what a run produced, and its two renderings — text (stdout, then the error on
//! stderr) and the `--json` object.

use std::time::Duration;

use serde_json::{Value as Json, json};

use super::Capture;
use crate::tools::Value;

/// Most bytes of a traceback shown; longer ones keep their end.
pub const MAX_TRACEBACK: usize = 8 * 1024;

/// The result of one run.
#[derive(Debug)]
pub struct Outcome {
    /// Kept stdout.
    pub stdout: String,
    pub truncated: bool,
    /// The program's stderr: tool warnings.
    pub stderr: String,
    /// The last expression's value, when it is not `None`.
    pub return_value: Option<Value>,
    /// Its Python `repr`, printed after stdout in text mode.
    pub return_repr: Option<String>,
    pub error: Option<ProgramError>,
    pub backend: &'static str,
    pub duration: Duration,
    pub tool_calls: u64,
}

/// An uncaught exception or a limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgramError {
    /// Python exception type, e.g. `ValueError`.
    pub kind: String,
    pub message: String,
    pub line: Option<u32>,
    /// The short traceback as a person reads it, ending with `Type: message`.
    pub traceback: String,
}

impl Outcome {
    #[must_use]
    pub fn success(&self) -> bool {
        self.error.is_none()
    }

    /// The `--json` object. A return value whose JSON is larger than `max_output` bytes is
    /// replaced by its `repr`, cut to head and tail like stdout, and `truncated` is set.
    #[must_use]
    pub fn to_json(&self, max_output: usize) -> Json {
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
        json!({
            "success": self.success(),
            "stdout": self.stdout,
            "stderr": self.stderr,
            "return_value": return_value,
            "error": error,
            "backend": self.backend,
            "duration_ms": u64::try_from(self.duration.as_millis()).unwrap_or(u64::MAX),
            "tool_calls": self.tool_calls,
            "truncated": truncated,
        })
    }
}
