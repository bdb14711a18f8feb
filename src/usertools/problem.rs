//! A problem `codeact check` reports: one file, one line, how bad, which rule, what.

use std::path::{Path, PathBuf};

/// How bad a problem is: errors fail `check` (exit 4), warnings do not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Severity {
    Error,
    Warning,
}

/// One problem in one file, at one line (1-based).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub(crate) struct Problem {
    pub(crate) path: PathBuf,
    pub(crate) line: usize,
    pub(crate) severity: Severity,
    pub(crate) message: String,
    /// Which rule it breaks, a stable id such as `name-invalid` (`check --json` shows it, so
    /// scripts need not match wording).
    pub(crate) rule: &'static str,
}

impl Problem {
    #[must_use]
    pub(crate) fn error(path: &Path, line: usize, rule: &'static str, message: String) -> Self {
        Self { path: path.to_path_buf(), line: line.max(1), severity: Severity::Error, message, rule }
    }

    #[must_use]
    pub(crate) fn warning(path: &Path, line: usize, rule: &'static str, message: String) -> Self {
        Self { severity: Severity::Warning, ..Self::error(path, line, rule, message) }
    }
}

/// A lowercase identifier: `[a-z][a-z0-9_]*`.
#[must_use]
pub(crate) fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}
