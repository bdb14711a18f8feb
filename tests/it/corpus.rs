//! The Python corpus: every `tests/fixtures/python/*.py` runs through `codeact run` in a fresh
//! copy of the fixture workspace. A program passes when it exits 0 (its own asserts hold) and,
//! if a `NAME.out` file sits beside it, prints exactly that.
//!
//! Header comments adjust a case:
//! - `# args: --timeout 1` extra flags for `codeact run`;
//! - `# expect-error: TimeoutError` the run must fail with this exception type (exit 1);
//! - `# backends: wasm` runs it on these backends only (programs that need full CPython, or
//!   that check what only Monty refuses). Every other program runs on every backend.

use std::path::Path;

use crate::support::{TestEnv, fixtures};

/// One corpus program and what it expects.
pub(crate) struct Case {
    pub(crate) name: String,
    code: String,
    args: Vec<String>,
    expect_error: Option<String>,
    expect_stdout: Option<String>,
    pub(crate) backends: Option<Vec<String>>,
}

fn load(path: &Path) -> Case {
    let code = std::fs::read_to_string(path).expect("read corpus file");
    let mut args = Vec::new();
    let mut expect_error = None;
    let mut backends = None;
    for line in code.lines().take_while(|l| l.starts_with('#')) {
        if let Some(rest) = line.strip_prefix("# args:") {
            args.extend(rest.split_whitespace().map(str::to_owned));
        } else if let Some(rest) = line.strip_prefix("# expect-error:") {
            expect_error = Some(rest.trim().to_owned());
        } else if let Some(rest) = line.strip_prefix("# backends:") {
            backends = Some(rest.split(',').map(|b| b.trim().to_owned()).collect());
        }
    }
    let expect_stdout = std::fs::read_to_string(path.with_extension("out")).ok();
    let name = path.file_stem().unwrap().to_string_lossy().into_owned();
    Case { name, code, args, expect_error, expect_stdout, backends }
}

impl Case {
    /// Whether a `NAME.out` file says what the program prints.
    pub(crate) fn expects_stdout(&self) -> bool {
        self.expect_stdout.is_some()
    }
}

/// Runs one case; returns a description of what went wrong, if anything.
fn check(case: &Case, backend: &str) -> Option<String> {
    let mut env = TestEnv::with_fixture_workspace();
    if backend == "wasm" {
        env = env.with_wasm();
    }
    check_in(&env, case, backend)
}

/// Runs one case in `env` (a copy of the fixture workspace).
pub(crate) fn check_in(env: &TestEnv, case: &Case, backend: &str) -> Option<String> {
    let mut args: Vec<&str> = vec!["run", "--json", "--backend", backend];
    args.extend(case.args.iter().map(String::as_str));
    let out = env.run(&args, &case.code);
    let Ok(json) = serde_json::from_str::<serde_json::Value>(&out.stdout) else {
        return Some(format!("{}: stdout is not JSON:\n{}\n{}", case.name, out.stdout, out.stderr));
    };
    let error_type = json["error"]["type"].as_str().map(str::to_owned);
    match (&case.expect_error, &error_type) {
        (None, None) if out.code == 0 => {}
        (Some(want), Some(got)) if want == got && out.code == 1 => {}
        _ => {
            return Some(format!(
                "{}: expected {}, got exit {} with {}",
                case.name,
                case.expect_error.as_deref().map_or("success".to_owned(), |e| format!("error {e}")),
                out.code,
                json["error"]
            ));
        }
    }
    if let Some(want) = &case.expect_stdout {
        let got = json["stdout"].as_str().unwrap_or_default();
        if got != want {
            return Some(format!("{}: stdout differs\n--- expected\n{want}\n--- got\n{got}", case.name));
        }
    }
    None
}

/// Every corpus program, sorted by name.
pub(crate) fn all_cases() -> Vec<Case> {
    cases_in(&fixtures().join("python"))
}

/// Every program (`*.py`) in `dir`, sorted by name.
pub(crate) fn cases_in(dir: &Path) -> Vec<Case> {
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .expect("corpus dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "py"))
        .collect();
    paths.sort();
    paths.iter().map(|p| load(p)).collect()
}

/// Runs every corpus program meant for `backend`; fails listing every program that failed.
fn corpus_passes_on(backend: &str) {
    let cases: Vec<Case> = all_cases()
        .into_iter()
        .filter(|case| case.backends.as_ref().is_none_or(|list| list.iter().any(|b| b == backend)))
        .collect();
    assert!(cases.len() >= 40, "the corpus should hold at least 40 programs for {backend}, found {}", cases.len());
    let failures: Vec<String> = cases.iter().filter_map(|case| check(case, backend)).collect();
    assert!(
        failures.is_empty(),
        "{} of {} corpus programs failed on {backend}:\n\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
}

#[test]
fn python_corpus_passes_on_monty() {
    corpus_passes_on("monty");
}

#[test]
#[ignore = "needs the CPython guest wheels in target/guest-wheels (.ci/run fetches them)"]
fn python_corpus_passes_on_wasm() {
    corpus_passes_on("wasm");
}
