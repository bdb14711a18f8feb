//! What `detect` and `preflight` report: every backend's availability here, and the checks
//! that decide whether a chosen backend can run, each failure with its fix.

use super::choice::Choice;
use super::select::{Backend, hyperlight_ready, not_compiled_fix, select, wasm_ready};
use super::{hyperlight, monty, wasm};
use crate::guest;

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
            wasm::NOT_COMPILED.to_owned()
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
            format!("the hyperlight backend: {}", hyperlight::NOT_COMPILED_REASON)
        },
        fix: (!hyperlight::COMPILED_IN).then(|| hyperlight::BUILD_IT.to_owned()),
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
