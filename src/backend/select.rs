//! [`select`]: the backend that runs here for a [`Choice`], and what running on it involves.

use super::choice::Choice;
use super::{hyperlight, monty, wasm};
use crate::guest;
use crate::hint::Hint;
use crate::sandbox::{GuestCache, Host, Outcome, PythonRunner};

/// A backend that can run on this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Backend {
    Monty,
    Wasm,
    Hyperlight,
}

/// The requested backend cannot run here (exit 3).
#[derive(Debug, thiserror::Error)]
#[error("the `{}` backend is not available: {reason}", choice.name())]
pub(crate) struct BackendUnavailable {
    pub(crate) choice: Choice,
    pub(crate) reason: String,
    #[source]
    pub(crate) hint: Hint,
}

/// What to do when this build has no `wasm` backend.
pub(super) fn not_compiled_fix() -> String {
    format!("{}, or use `--backend monty`", wasm::BUILD_IT)
}

impl Backend {
    #[must_use]
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Monty => "monty",
            Self::Wasm => "wasm",
            Self::Hyperlight => "hyperlight",
        }
    }

    /// What a model passes as `--backend` to run on this backend: `auto` where a program Monty
    /// cannot run runs again on `fallback`, which only `auto` does.
    #[must_use]
    pub(crate) fn flag(self, fallback: Option<Backend>) -> &'static str {
        if fallback.is_some() { "auto" } else { self.name() }
    }

    /// Runs the Python code of user tools. Every backend uses Monty's: the CPython guest is a
    /// fresh instance per run, too heavy to start per tool call.
    #[must_use]
    pub(crate) fn python_runner(self) -> PythonRunner {
        match self {
            Self::Monty | Self::Wasm | Self::Hyperlight => monty::run_tool,
        }
    }

    /// Starts what the backend sets up before it runs a program: the wasm backend loads its
    /// compiled guest on another thread, meanwhile the caller reads the program and builds the
    /// host.
    #[must_use]
    pub(crate) fn prepare(self) -> Prepared {
        match self {
            Self::Monty => Prepared::Monty,
            Self::Wasm => Prepared::Wasm(Box::new(wasm::Loading::start())),
            Self::Hyperlight => Prepared::Hyperlight,
        }
    }
}

/// A backend whose set-up is under way.
pub(crate) enum Prepared {
    Monty,
    Wasm(Box<wasm::Loading>),
    Hyperlight,
}

impl Prepared {
    /// Whether the compiled guest comes from the cache, once the loader knows (it looks
    /// before it compiles anything); `None` for a backend without one.
    #[must_use]
    pub(crate) fn guest_cache(&self) -> Option<(GuestCache, String)> {
        match self {
            Self::Monty | Self::Hyperlight => None,
            Self::Wasm(loading) => loading.cache(),
        }
    }

    /// Runs `program` with `host` serving its tool calls.
    pub(crate) fn run(self, program: &str, host: &mut Host) -> Outcome {
        match self {
            Self::Monty => monty::run(program, host),
            Self::Wasm(loading) => wasm::run(program, host, *loading),
            Self::Hyperlight => hyperlight::run(program, host),
        }
    }
}

/// A CPython guest kept in memory from one program to the next, for a session of
/// `codeact mcp serve`: what the programs define stays in it, and nothing is saved.
#[cfg_attr(guest_backend, expect(clippy::large_enum_variant, reason = "a worker holds one, for as long as it runs"))]
pub(crate) enum GuestSession {
    Wasm(wasm::Session),
    Hyperlight(hyperlight::Session),
}

impl GuestSession {
    /// A session on `backend`, a CPython one; `None` for Monty, whose sessions are saved.
    pub(crate) fn new(backend: Backend) -> Option<anyhow::Result<Self>> {
        match backend {
            Backend::Monty => None,
            Backend::Wasm => Some(wasm::Session::new().map(Self::Wasm)),
            Backend::Hyperlight => Some(hyperlight::Session::new().map(Self::Hyperlight)),
        }
    }

    #[must_use]
    pub(crate) fn backend(&self) -> Backend {
        match self {
            Self::Wasm(_) => Backend::Wasm,
            Self::Hyperlight(_) => Backend::Hyperlight,
        }
    }

    /// Runs `program` with `host` serving its tool calls, in the session's guest.
    pub(crate) fn run_in(&mut self, program: &str, host: &mut Host) -> Outcome {
        match self {
            Self::Wasm(session) => session.run_in(program, host),
            Self::Hyperlight(session) => session.run_in(program, host),
        }
    }
}

/// Whether the wasm backend can run here.
pub(super) fn wasm_ready() -> Result<(), BackendUnavailable> {
    let unavailable =
        |reason: String, hint: String| BackendUnavailable { choice: Choice::Wasm, reason, hint: Hint(hint) };
    if !wasm::COMPILED_IN {
        return Err(unavailable(wasm::NOT_COMPILED_REASON.into(), not_compiled_fix()));
    }
    guest::installed().map(|_| ()).map_err(|missing| {
        unavailable(missing.to_string(), format!("run `{}` (or use `--backend monty`)", guest::INSTALL_HINT))
    })
}

/// Whether the hyperlight backend can run here: compiled in, its files installed, and a
/// micro-VM started by the probe (whose answer is kept per boot).
pub(super) fn hyperlight_ready() -> Result<(), BackendUnavailable> {
    hyperlight_ready_with(hyperlight::probe)
}

/// [`hyperlight_ready`] as far as it is known without starting a micro-VM: the probe's kept
/// answer, or unavailable when there is none yet.
fn hyperlight_known_ready() -> Result<(), BackendUnavailable> {
    hyperlight_ready_with(|installed| {
        hyperlight::kept_probe(installed).unwrap_or_else(|| Err("not probed yet on this boot".to_owned()))
    })
}

fn hyperlight_ready_with(
    probe: impl FnOnce(&crate::guest::Installed) -> Result<(), String>,
) -> Result<(), BackendUnavailable> {
    let unavailable =
        |reason: String, hint: String| BackendUnavailable { choice: Choice::Hyperlight, reason, hint: Hint(hint) };
    if !hyperlight::COMPILED_IN {
        return Err(unavailable(hyperlight::missing_reason(), hyperlight::missing_fix()));
    }
    // Typed all the way: the hooks ask this before every tool call, and an `anyhow` error would
    // capture a backtrace where `RUST_BACKTRACE` is set (about 10 ms in a static build).
    let not_installed = |missing: guest::Missing| {
        unavailable(
            missing.to_string(),
            format!("run `{}` (or use `--backend wasm` or `--backend monty`)", guest::INSTALL_HINT),
        )
    };
    let installed = guest::installed().map_err(not_installed)?;
    installed.hyperlight().map_err(not_installed)?;
    probe(&installed).map_err(|why| {
        unavailable(format!("no Hyperlight micro-VM starts here: {why}"), hyperlight::NO_MICRO_VM_FIX.to_owned())
    })
}

/// Picks the backend for `choice`. `auto` takes Monty, which is always built in and starts in
/// a millisecond; a program Monty cannot run then runs again on [`cpython`].
pub(crate) fn select(choice: Choice) -> Result<Backend, BackendUnavailable> {
    select_with(choice, hyperlight_ready, wasm_ready)
}

/// Where `auto` runs a program that Monty cannot: `hyperlight` when a micro-VM starts here, else
/// `wasm` when its guest is installed; else why neither can (the `wasm` backend's reason).
pub(crate) fn cpython() -> Result<Backend, BackendUnavailable> {
    cpython_with(hyperlight_ready, wasm_ready)
}

/// [`cpython`] without starting a micro-VM (see [`select_without_probing`]).
fn cpython_without_probing() -> Result<Backend, BackendUnavailable> {
    cpython_with(hyperlight_known_ready, wasm_ready)
}

/// Where a program Monty cannot run runs again for `choice`, as far as is known without starting
/// a micro-VM: only `auto` runs a program again, and only where CPython is installed.
#[must_use]
pub(crate) fn fallback(choice: Choice) -> Option<Backend> {
    (choice == Choice::Auto).then(cpython_without_probing).and_then(Result::ok)
}

fn cpython_with(
    hyperlight_ready: impl Fn() -> Result<(), BackendUnavailable>,
    wasm_ready: impl Fn() -> Result<(), BackendUnavailable>,
) -> Result<Backend, BackendUnavailable> {
    if hyperlight_ready().is_ok() {
        return Ok(Backend::Hyperlight);
    }
    wasm_ready().map(|()| Backend::Wasm)
}

/// [`select`] for the hooks, which must answer at once: no micro-VM is started to find out
/// whether one starts, only what an earlier probe on this boot found is used.
pub(crate) fn select_without_probing(choice: Choice) -> Result<Backend, BackendUnavailable> {
    select_with(choice, hyperlight_known_ready, wasm_ready)
}

fn select_with(
    choice: Choice,
    hyperlight_ready: impl Fn() -> Result<(), BackendUnavailable>,
    wasm_ready: impl Fn() -> Result<(), BackendUnavailable>,
) -> Result<Backend, BackendUnavailable> {
    match choice {
        Choice::Monty | Choice::Auto => Ok(Backend::Monty),
        Choice::Wasm => wasm_ready().map(|()| Backend::Wasm),
        Choice::Hyperlight => hyperlight_ready().map(|()| Backend::Hyperlight),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn missing(choice: Choice) -> impl Fn() -> Result<(), BackendUnavailable> {
        move || Err(BackendUnavailable { choice, reason: "missing".into(), hint: Hint(String::new()) })
    }

    #[test]
    fn auto_runs_monty_first_and_cpython_where_monty_cannot() {
        let ready = || Ok::<(), BackendUnavailable>(());
        let hyperlight = || missing(Choice::Hyperlight);
        // Whatever runs here, auto starts on Monty.
        assert_eq!(select_with(Choice::Auto, ready, ready).unwrap(), Backend::Monty);
        assert_eq!(select_with(Choice::Auto, hyperlight(), missing(Choice::Wasm)).unwrap(), Backend::Monty);
        // CPython: the micro-VM where it starts, else the wasm guest where it is installed.
        assert_eq!(cpython_with(ready, ready).unwrap(), Backend::Hyperlight);
        assert_eq!(cpython_with(ready, missing(Choice::Wasm)).unwrap(), Backend::Hyperlight);
        assert_eq!(cpython_with(hyperlight(), ready).unwrap(), Backend::Wasm);
        let neither = cpython_with(hyperlight(), missing(Choice::Wasm)).unwrap_err();
        assert_eq!(neither.choice, Choice::Wasm, "the guest install is what to do");
        let asked = select_with(Choice::Hyperlight, hyperlight(), ready).unwrap_err();
        assert_eq!(asked.choice, Choice::Hyperlight);
        assert_eq!(select_with(Choice::Monty, hyperlight(), missing(Choice::Wasm)).unwrap(), Backend::Monty);
        assert_eq!(select_with(Choice::Wasm, ready, ready).unwrap(), Backend::Wasm);
    }
}
