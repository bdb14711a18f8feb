//! [`Choice`]: the backend a user asks for, on the command line, in the environment or in
//! `config.json`.

use clap::ValueEnum;
use serde::{Deserialize, Serialize};

/// Where Python runs, as asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Choice {
    /// Monty, and CPython for a program Monty cannot run.
    Auto,
    /// `Monty`, the embedded interpreter (always available).
    Monty,
    /// Full `CPython` as a `WebAssembly` component.
    Wasm,
    /// Full `CPython` in a `Hyperlight` micro-VM (needs KVM).
    Hyperlight,
}

impl Choice {
    /// Every backend a user may name, as clap spells and parses them: `auto, monty, wasm, …`.
    #[must_use]
    pub(crate) fn names() -> String {
        let names: Vec<String> = Self::value_variants()
            .iter()
            .filter_map(ValueEnum::to_possible_value)
            .map(|value| value.get_name().to_owned())
            .collect();
        names.join(", ")
    }

    #[must_use]
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Monty => "monty",
            Self::Wasm => "wasm",
            Self::Hyperlight => "hyperlight",
        }
    }

    /// Whether a session keeps its programs' state on this choice: on Monty, where `auto`
    /// runs programs first.
    #[must_use]
    pub(crate) fn keeps_state(self) -> bool {
        matches!(self, Self::Auto | Self::Monty)
    }
}
