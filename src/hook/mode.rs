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
    /// Every mode, from the loosest to the strictest.
    const ALL: [Self; 3] = [Self::Off, Self::Nudge, Self::Exclusive];

    /// The mode's name, as the config file and `CODEACT_MODE` spell it.
    #[must_use]
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::Nudge => "nudge",
            Self::Exclusive => "exclusive",
        }
    }

    /// Every mode's name: `off, nudge, exclusive`.
    #[must_use]
    pub(crate) fn names() -> String {
        Self::ALL.map(Self::name).join(", ")
    }

    /// Parses a mode's [name](Self::name), in any case.
    #[must_use]
    pub(crate) fn parse(text: &str) -> Option<Self> {
        let text = text.trim();
        Self::ALL.into_iter().find(|mode| mode.name().eq_ignore_ascii_case(text))
    }
}

#[cfg(test)]
mod tests {
    use super::Mode;

    #[test]
    fn every_mode_is_named_parsed_back_in_any_case_and_listed() {
        assert_eq!(Mode::names(), "off, nudge, exclusive");
        for mode in Mode::ALL {
            let name = mode.name();
            for spelling in [name.to_owned(), name.to_ascii_uppercase(), format!(" {name}\n")] {
                assert_eq!(Mode::parse(&spelling), Some(mode), "{spelling:?}");
            }
            let json = serde_json::from_str::<Mode>(&format!("\"{name}\"")).unwrap();
            assert_eq!(json, mode, "the config file spells {mode:?} as {name}");
        }
        for wrong in ["", "of", "nudges", "ex clusive"] {
            assert_eq!(Mode::parse(wrong), None, "{wrong:?}");
        }
    }
}
