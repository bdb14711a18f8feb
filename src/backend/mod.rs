//! Backends: where Python runs. [`select`] turns the requested [`BackendChoice`] into a backend
//! that can run here, or says why none can; [`Backend::start`] sets it up and
//! [`Started::run`] runs a program on it.

pub mod monty;
pub mod wasm;

use crate::cli::BackendChoice;
use crate::guest;
use crate::sandbox::{Host, Outcome};

/// A backend that can run on this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Monty,
    Wasm,
}

/// The Python a backend offers, in model-facing words.
#[derive(Debug, Clone, Copy)]
pub struct PythonNotes {
    pub title: &'static str,
    pub text: &'static str,
}

/// The requested backend cannot run here (exit 3).
#[derive(Debug, thiserror::Error)]
#[error("the `{name}` backend is not available: {reason}\nhint: {hint}")]
pub struct BackendUnavailable {
    pub name: &'static str,
    pub reason: String,
    pub hint: String,
}

impl Backend {
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Monty => "monty",
            Self::Wasm => "wasm",
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
            Self::Wasm => PythonNotes {
                title: "full CPython 3.14 (WebAssembly sandbox)",
                text: "Classes, inheritance, custom exceptions, generators, `match`, `%` formatting all work. \
                       Standard library: `re`, `json`, `itertools`, `collections`, `dataclasses`, `datetime`, \
                       `pathlib` (pure paths), `textwrap`, `difflib`, `statistics`, `hashlib`, `csv`, `decimal` and \
                       more; no `asyncio` event loop. `call_tool(\"view\", path=…)` works too. The sandbox has no \
                       files, network, environment or processes of its own: `open()`, `os.environ`, sockets and \
                       `subprocess` do not reach the machine; use the tools.",
            },
        }
    }

    /// Starts what the backend sets up before it runs a program: the wasm backend loads its
    /// compiled guest on another thread, meanwhile the caller reads the program and builds the
    /// host.
    #[must_use]
    pub fn start(self) -> Started {
        match self {
            Self::Monty => Started::Monty,
            Self::Wasm => Started::Wasm(Box::new(wasm::Loading::start())),
        }
    }
}

/// A backend whose set-up is under way.
pub enum Started {
    Monty,
    Wasm(Box<wasm::Loading>),
}

impl Started {
    /// Runs `program` with `host` serving its tool calls.
    pub fn run(self, program: &str, host: &mut Host) -> Outcome {
        match self {
            Self::Monty => monty::run(program, host),
            Self::Wasm(loading) => wasm::run(program, host, *loading),
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
    let wasm = match wasm_ready() {
        Ok(()) => Status {
            backend: "wasm",
            available: true,
            reason: format!("CPython {} guest installed, wasmtime {}", guest::PYTHON_VERSION, wasm::WASMTIME_VERSION),
        },
        Err(unavailable) => Status { backend: "wasm", available: false, reason: unavailable.reason },
    };
    vec![
        Status { backend: "hyperlight", available: false, reason: "not part of this build of codeact".into() },
        wasm,
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
        Ok(Backend::Monty) => (
            "monty",
            vec![Check {
                name: "interpreter",
                ok: true,
                detail: format!("Monty {} is embedded in this binary", monty::VERSION),
                fix: None,
            }],
        ),
        Ok(Backend::Wasm) => ("wasm", wasm_checks()),
        Err(unavailable) if unavailable.name == "wasm" => ("wasm", wasm_checks()),
        Err(unavailable) => (
            unavailable.name,
            vec![Check { name: "compiled in", ok: false, detail: unavailable.reason, fix: Some(unavailable.hint) }],
        ),
    }
}

/// What to do when this build has no `wasm` backend.
const NOT_COMPILED_FIX: &str = "build codeact with `--features wasm`, or use `--backend monty`";

fn wasm_checks() -> Vec<Check> {
    let mut checks = vec![Check {
        name: "compiled in",
        ok: wasm::COMPILED_IN,
        detail: if wasm::COMPILED_IN {
            format!("wasmtime {} is compiled into this binary", wasm::WASMTIME_VERSION)
        } else {
            "the wasm backend is not compiled into this build of codeact".to_owned()
        },
        fix: (!wasm::COMPILED_IN).then(|| NOT_COMPILED_FIX.to_owned()),
    }];
    checks.push(match guest::installed() {
        Ok(installed) => Check {
            name: "guest",
            ok: true,
            detail: format!("CPython {} guest in {}", installed.manifest.python, installed.dir.display()),
            fix: None,
        },
        Err(missing) => {
            Check { name: "guest", ok: false, detail: missing.to_string(), fix: Some(guest::INSTALL_HINT.to_owned()) }
        }
    });
    checks
}

/// Whether the wasm backend can run here.
fn wasm_ready() -> Result<(), BackendUnavailable> {
    let unavailable = |reason: String, hint: &str| BackendUnavailable { name: "wasm", reason, hint: hint.to_owned() };
    if !wasm::COMPILED_IN {
        return Err(unavailable("it is not compiled into this build of codeact".into(), NOT_COMPILED_FIX));
    }
    guest::installed().map(|_| ()).map_err(|missing| {
        unavailable(missing.to_string(), &format!("run `{}` (or use `--backend monty`)", guest::INSTALL_HINT))
    })
}

/// Picks the backend for `choice`. `auto` takes `wasm` when its guest is installed, else Monty,
/// which is always built in.
pub fn select(choice: BackendChoice) -> Result<Backend, BackendUnavailable> {
    match choice {
        BackendChoice::Monty => Ok(Backend::Monty),
        BackendChoice::Auto => Ok(if wasm_ready().is_ok() { Backend::Wasm } else { Backend::Monty }),
        BackendChoice::Wasm => wasm_ready().map(|()| Backend::Wasm),
        BackendChoice::Hyperlight => Err(BackendUnavailable {
            name: "hyperlight",
            reason: "it is not part of this build of codeact".into(),
            hint: "use `--backend wasm` (full CPython, no hypervisor) or `--backend monty`".into(),
        }),
    }
}
