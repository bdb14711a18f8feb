//! User-defined tools: Markdown tool files (agentschema v0.2) and the problems `codeact check`
//! reports in them and in config files.

pub mod call;
pub mod check;
pub mod load;
pub mod markdown;
pub mod pyworker;
pub mod secrets;

use std::path::{Path, PathBuf};

/// How bad a problem is: errors fail `check` (exit 4), warnings do not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

/// One problem in one file, at one line (1-based).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct Problem {
    pub path: PathBuf,
    pub line: usize,
    pub severity: Severity,
    pub message: String,
}

impl Problem {
    #[must_use]
    pub fn error(path: &Path, line: usize, message: String) -> Self {
        Self { path: path.to_path_buf(), line: line.max(1), severity: Severity::Error, message }
    }

    #[must_use]
    pub fn warning(path: &Path, line: usize, message: String) -> Self {
        Self { path: path.to_path_buf(), line: line.max(1), severity: Severity::Warning, message }
    }
}

/// A lowercase identifier: `[a-z][a-z0-9_]*`.
#[must_use]
pub fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}
