//! What `detect` and `preflight` report: every backend's availability here, and the checks
//! that decide whether a chosen backend can run, each failure with its fix.

use super::choice::Choice;
use super::select::{Backend, hyperlight_ready, not_compiled_fix, select, wasm_ready};
use super::{hyperlight, monty, wasm};
use crate::guest;

/// Why a backend this build does not carry cannot run.
pub(crate) const NOT_COMPILED_REASON: &str = "it is not compiled into this build of codeact";

/// What a build without `backend` says when asked for it.
pub(crate) fn not_compiled(backend: Choice) -> String {
    let reason =
        if backend == Choice::Hyperlight { hyperlight::missing_reason() } else { NOT_COMPILED_REASON.to_owned() };
    format!("the `{}` backend is not available: {reason}", backend.name())
}

/// One backend's availability here, for `detect`.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct Status {
    pub(crate) backend: Choice,
    pub(crate) available: bool,
    pub(crate) reason: String,
}

/// One preflight check.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct Check {
    pub(crate) name: &'static str,
    pub(crate) ok: bool,
    pub(crate) detail: String,
    /// What to do when the check fails, as one line.
    pub(crate) fix: Option<String>,
}

/// Every backend in the order `auto` tries them, with whether it can run here and why.
#[must_use]
pub(crate) fn statuses() -> Vec<Status> {
    let wasm = match wasm_ready() {
        Ok(()) => Status {
            backend: Choice::Wasm,
            available: true,
            reason: format!("CPython {} guest installed, wasmtime {}", guest::PYTHON_VERSION, wasm::WASMTIME_VERSION),
        },
        Err(unavailable) => Status { backend: Choice::Wasm, available: false, reason: unavailable.reason },
    };
    let hyperlight = match hyperlight_ready() {
        Ok(()) => Status {
            backend: Choice::Hyperlight,
            available: true,
            reason: format!(
                "CPython {} guest installed, a Hyperlight {} micro-VM starts here",
                guest::PYTHON_VERSION,
                hyperlight::HYPERLIGHT_VERSION
            ),
        },
        Err(unavailable) => Status { backend: Choice::Hyperlight, available: false, reason: unavailable.reason },
    };
    vec![
        hyperlight,
        wasm,
        Status {
            backend: Choice::Monty,
            available: true,
            reason: format!("Monty {} is embedded in the binary (always available)", monty::VERSION),
        },
    ]
}

/// The checks that decide whether `choice` can run here. `auto` is checked as what it picks.
#[must_use]
pub(crate) fn preflight(choice: Choice) -> (Choice, Vec<Check>) {
    match select(choice) {
        Ok(Backend::Monty) => (
            Choice::Monty,
            vec![Check {
                name: "interpreter",
                ok: true,
                detail: format!("Monty {} is embedded in this binary", monty::VERSION),
                fix: None,
            }],
        ),
        Ok(Backend::Wasm) => (Choice::Wasm, wasm_checks()),
        Err(unavailable) if unavailable.choice == Choice::Wasm => (Choice::Wasm, wasm_checks()),
        Ok(Backend::Hyperlight) => (Choice::Hyperlight, hyperlight_checks()),
        Err(unavailable) if unavailable.choice == Choice::Hyperlight => (Choice::Hyperlight, hyperlight_checks()),
        Err(unavailable) => (
            unavailable.choice,
            vec![Check { name: "compiled in", ok: false, detail: unavailable.reason, fix: Some(unavailable.hint.0) }],
        ),
    }
}

fn wasm_checks() -> Vec<Check> {
    let mut checks = vec![Check {
        name: "compiled in",
        ok: wasm::COMPILED_IN,
        detail: if wasm::COMPILED_IN {
            format!("wasmtime {} is compiled into this binary", wasm::WASMTIME_VERSION)
        } else {
            not_compiled(Choice::Wasm)
        },
        fix: (!wasm::COMPILED_IN).then(not_compiled_fix),
    }];
    checks.push(match guest::installed() {
        Ok(installed) => Check {
            name: "guest",
            ok: true,
            detail: format!("CPython {} guest in `{}`", installed.manifest.python, installed.dir.display()),
            fix: None,
        },
        Err(missing) => {
            Check { name: "guest", ok: false, detail: missing.to_string(), fix: Some(guest::INSTALL_HINT.to_owned()) }
        }
    });
    checks
}

fn hyperlight_checks() -> Vec<Check> {
    let mut checks = vec![Check {
        name: "compiled in",
        ok: hyperlight::COMPILED_IN,
        detail: if hyperlight::COMPILED_IN {
            format!("hyperlight-host {} is compiled into this binary", hyperlight::HYPERLIGHT_VERSION)
        } else {
            not_compiled(Choice::Hyperlight)
        },
        fix: (!hyperlight::COMPILED_IN).then(hyperlight::missing_fix),
    }];
    if !hyperlight::COMPILED_IN {
        return checks;
    }
    let installed = match hyperlight::installed() {
        Ok(installed) => installed,
        Err(missing) => {
            checks.push(Check {
                name: "guest",
                ok: false,
                detail: crate::hint::split(&missing).0,
                fix: Some(guest::INSTALL_HINT.to_owned()),
            });
            return checks;
        }
    };
    checks.push(Check {
        name: "guest",
        ok: true,
        detail: format!(
            "CPython {} guest and the Hyperlight runtime in `{}`",
            installed.manifest.python,
            installed.dir.display()
        ),
        fix: None,
    });
    checks.push(match hyperlight::probe(&installed) {
        Ok(()) => Check { name: "micro-VM", ok: true, detail: "a Hyperlight micro-VM starts here".into(), fix: None },
        Err(why) => Check {
            name: "micro-VM",
            ok: false,
            detail: format!("no Hyperlight micro-VM starts here: {why}"),
            fix: Some(hyperlight::NO_MICRO_VM_FIX.to_owned()),
        },
    });
    checks
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The version `Cargo.lock` resolved for the package `name`.
    fn locked(name: &str) -> String {
        let lock = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.lock"));
        let entry = format!("name = \"{name}\"\nversion = \"");
        let at = lock.find(&entry).unwrap_or_else(|| panic!("`{name}` is not in Cargo.lock")) + entry.len();
        lock[at..].split('"').next().unwrap().to_owned()
    }

    #[test]
    fn the_runtime_versions_shown_are_the_ones_built_with() {
        let wasmtime = if wasm::COMPILED_IN { locked("wasmtime") } else { "none".to_owned() };
        assert_eq!(wasm::WASMTIME_VERSION, wasmtime);
        let hyperlight = if hyperlight::COMPILED_IN { locked("hyperlight-host") } else { "none".to_owned() };
        assert_eq!(hyperlight::HYPERLIGHT_VERSION, hyperlight);
    }

    #[test]
    fn a_backend_not_compiled_in_says_so_in_one_phrasing() {
        assert_eq!(
            not_compiled(Choice::Wasm),
            "the `wasm` backend is not available: it is not compiled into this build of codeact"
        );
        assert_eq!(
            not_compiled(Choice::Hyperlight),
            format!("the `hyperlight` backend is not available: {}", hyperlight::missing_reason())
        );
        if !wasm::COMPILED_IN {
            let check = wasm_checks().remove(0);
            assert_eq!((check.ok, check.detail), (false, not_compiled(Choice::Wasm)));
        }
        if !hyperlight::COMPILED_IN {
            let check = hyperlight_checks().remove(0);
            assert_eq!((check.ok, check.detail), (false, not_compiled(Choice::Hyperlight)));
        }
    }
}
