//! The hook's enforcement mode.

use serde::Deserialize;

/// How the pre-tool-use hook steers the model toward codeact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Mode {
    /// Allow every call.
    Off,
    /// Deny the Nth read-only call in a row, with the codeact program to run instead.
    Nudge,
    /// Deny everything but codeact runs and skill loads.
    Exclusive,
}

impl Mode {
    /// Parses `off`, `nudge` or `exclusive` (any case).
    #[must_use]
    pub(crate) fn parse(text: &str) -> Option<Self> {
        match text.trim().to_ascii_lowercase().as_str() {
            "off" => Some(Self::Off),
            "nudge" => Some(Self::Nudge),
            "exclusive" => Some(Self::Exclusive),
            _ => None,
        }
    }
}
