//! The fidelity corpus: realistic programs of the kind a model writes to batch its tool calls
//! (`tests/fixtures/fidelity/programs/`), run in a fresh copy of a small project
//! (`tests/fixtures/fidelity/workspace/`). Beside each program, `NAME.out` is what CPython
//! prints for it: the `wasm` test holds every program to it. On Monty, a Python subset, the test
//! counts the programs that print exactly the same, prints the rate, and fails when it falls
//! below the floor, so what Monty runs is a number that only goes up. With the default backend
//! and CPython installed, every program prints what CPython prints: Monty runs what it can, and
//! the rest runs again on CPython.

use crate::corpus::{Case, cases_in, check_in};
use crate::support::{TestEnv, copy_dir, fixtures};

/// The programs Monty runs as CPython does, at least: raise it when Monty runs more.
const MONTY_FLOOR: usize = 34;

fn programs() -> Vec<Case> {
    let cases = cases_in(&fixtures().join("fidelity/programs"));
    assert!(cases.len() >= 50, "the fidelity corpus should hold at least 50 programs, found {}", cases.len());
    for case in &cases {
        assert!(case.expects_stdout(), "{} has no .out file beside it", case.name);
    }
    cases
}

/// A fresh copy of the corpus's project.
fn project() -> TestEnv {
    let env = TestEnv::new();
    copy_dir(&fixtures().join("fidelity/workspace"), &env.workspace());
    env
}

/// Each program's failure on `backend`, or `None` where it printed what CPython prints.
fn failures_on(backend: &str) -> Vec<(String, Option<String>)> {
    programs()
        .iter()
        .map(|case| {
            let env = if backend == "monty" { project() } else { project().with_wasm() };
            (case.name.clone(), check_in(&env, case, backend))
        })
        .collect()
}

#[test]
#[expect(clippy::print_stderr, reason = "the rate is reported with --nocapture")]
fn the_share_of_realistic_programs_monty_runs_as_cpython_does_does_not_fall() {
    let results = failures_on("monty");
    let passed: Vec<&str> =
        results.iter().filter(|(_, failed)| failed.is_none()).map(|(name, _)| name.as_str()).collect();
    eprintln!(
        "fidelity on Monty: {} of {} programs print what CPython prints ({}%)",
        passed.len(),
        results.len(),
        passed.len() * 100 / results.len()
    );
    assert!(
        passed.len() >= MONTY_FLOOR,
        "Monty ran {} of {} programs as CPython does, fewer than the {MONTY_FLOOR} it did; it passed: {passed:?}",
        passed.len(),
        results.len()
    );
}

#[test]
#[ignore = "needs the CPython guest wheels in target/guest-wheels (.ci/run fetches them)"]
fn every_realistic_program_prints_on_cpython_what_its_out_file_says() {
    let failed: Vec<String> = failures_on("wasm").into_iter().filter_map(|(_, failed)| failed).collect();
    assert!(failed.is_empty(), "{} programs differ on CPython:\n\n{}", failed.len(), failed.join("\n\n"));
}

#[test]
#[ignore = "needs the CPython guest wheels in target/guest-wheels (.ci/run fetches them)"]
#[expect(clippy::print_stderr, reason = "the rate is reported with --nocapture")]
fn with_the_default_backend_every_realistic_program_prints_what_cpython_prints() {
    let results = failures_on("auto");
    let failed: Vec<&String> = results.iter().filter_map(|(_, failed)| failed.as_ref()).collect();
    eprintln!(
        "fidelity on auto (Monty, then CPython where Monty cannot): {} of {} programs print what CPython prints",
        results.len() - failed.len(),
        results.len()
    );
    let shown: Vec<&str> = failed.iter().map(|f| f.as_str()).collect();
    assert!(failed.is_empty(), "{} programs differ on auto:\n\n{}", failed.len(), shown.join("\n\n"));
}
