//! Backends: where Python runs. [`select`] turns the requested [`BackendChoice`] into a backend
//! that can run here, or says why none can; [`Backend::run`] runs a program on it.

pub mod monty;

use crate::cli::BackendChoice;
use crate::sandbox::{Host, Outcome};

/// A backend that can run on this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Monty,
}

/// The Python a backend offers, in model-facing words.
#[derive(Debug, Clone, Copy)]
pub struct PythonNotes {
    pub title: &'static str,
    pub text: &'static str,
}

/// The requested backend cannot run here (exit 3).
#[derive(Debug, thiserror::Error)]
#[error("the `{name}` backend is not available in this build\nhint: {hint}")]
pub struct BackendUnavailable {
    pub name: &'static str,
    pub hint: &'static str,
}

impl Backend {
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Monty => "monty",
        }
    }

    /// What the backend's Python can and cannot do, for the instructions.
    #[must_use]
    pub fn python_notes(self) -> PythonNotes {
        match self {
            Self::Monty => PythonNotes {
                title: "Monty, a subset of Python 3",
                text: "No class inheritance (so no custom exceptions: raise `ValueError` or `RuntimeError`), no \
                       generators or `yield`, `del`, `match`, `%` formatting (use f-strings) or method decorators. \
                       Modules: `re`, `json`, `collections`, `itertools` (no `product`, `combinations`, `groupby`), \
                       `functools`, `math`, `datetime`, `dataclasses`. No `open()` for writing, `os.environ` or \
                       `subprocess`: use the tools.",
            },
        }
    }

    /// Runs `program` with `host` serving its tool calls.
    pub fn run(self, program: &str, host: &mut Host) -> Outcome {
        match self {
            Self::Monty => monty::run(program, host),
        }
    }
}

/// One backend's availability here, for `detect`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Status {
    pub backend: &'static str,
    pub available: bool,
    pub reason: String,
}

/// One preflight check.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Check {
    pub name: &'static str,
    pub ok: bool,
    pub detail: String,
    /// What to do when the check fails, as one line.
    pub fix: Option<String>,
}

/// Every backend in the order `auto` tries them, with whether it can run here and why.
#[must_use]
pub fn statuses() -> Vec<Status> {
    let missing = |name| Status { backend: name, available: false, reason: "not part of this build of codeact".into() };
    vec![
        missing("hyperlight"),
        missing("wasm"),
        Status {
            backend: "monty",
            available: true,
            reason: format!("Monty {} is embedded in the binary (always available)", monty::VERSION),
        },
    ]
}

/// The checks that decide whether `choice` can run here. `auto` is checked as what it picks.
#[must_use]
pub fn preflight(choice: BackendChoice) -> (&'static str, Vec<Check>) {
    match select(choice) {
        Ok(backend) => (
            backend.name(),
            vec![Check {
                name: "interpreter",
                ok: true,
                detail: format!("Monty {} is embedded in this binary", monty::VERSION),
                fix: None,
            }],
        ),
        Err(unavailable) => (
            unavailable.name,
            vec![Check {
                name: "compiled in",
                ok: false,
                detail: format!("the {} backend is not part of this build of codeact", unavailable.name),
                fix: Some(unavailable.hint.to_owned()),
            }],
        ),
    }
}

/// Picks the backend for `choice`. `auto` falls back to Monty, which is always built in.
pub fn select(choice: BackendChoice) -> Result<Backend, BackendUnavailable> {
    match choice {
        BackendChoice::Auto | BackendChoice::Monty => Ok(Backend::Monty),
        BackendChoice::Wasm => Err(BackendUnavailable {
            name: "wasm",
            hint: "use `--backend monty` (the embedded interpreter, always available)",
        }),
        BackendChoice::Hyperlight => Err(BackendUnavailable {
            name: "hyperlight",
            hint: "use `--backend monty` (the embedded interpreter, always available)",
        }),
    }
}
