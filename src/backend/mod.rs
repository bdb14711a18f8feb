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
                text: "Works: functions, closures, lambdas, comprehensions, f-strings, `str.format`, try/except/finally, \
                       `with`, simple classes and `@dataclass`, async/await. Modules: `re`, `json`, `collections`, \
                       `itertools` (no product/permutations/combinations/groupby), `functools`, `math`, `datetime`, \
                       `dataclasses`, `base64`, `typing`.\n\
                       Not supported: class inheritance (so no custom exception classes: raise `ValueError` or \
                       `RuntimeError`), generators and `yield`, `del`, `match`, `%` formatting (use f-strings), \
                       decorators on methods. No `open()` for writing, no `os.environ`, no `subprocess`: use the tools.",
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
