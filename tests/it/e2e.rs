//! End-to-end tests with the real Copilot CLI (`@github/copilot` 1.0.102, installed by `.ci/run`
//! with `npm ci --prefix tests/e2e`), driven offline against [`ModelServer`], each in a fresh
//! `COPILOT_HOME`. They assert on what the CLI sends back to the model.
//!
//! They are `#[ignore]`d: `.ci/run` installs the CLI and runs them.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::model::{ModelServer, Step};
use crate::support::{BIN, SKILLS, TestEnv, npm_bin};

/// One CLI at a time: each run starts a Node.js process that wants both cores.
static SERIAL: Mutex<()> = Mutex::new(());

const REFERENCE_TITLE: &str = "# codeact: one Python program instead of many tool calls";

fn copilot_bin() -> PathBuf {
    npm_bin("copilot")
}

fn plugin_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("plugin")
}

/// The real CLI in a test environment.
struct Copilot<'a> {
    env: &'a TestEnv,
    bin: PathBuf,
    vars: Vec<(&'static str, String)>,
}

impl<'a> Copilot<'a> {
    fn new(env: &'a TestEnv) -> Self {
        Self { env, bin: copilot_bin(), vars: Vec::new() }
    }

    fn var(mut self, key: &'static str, value: &str) -> Self {
        self.vars.push((key, value.to_owned()));
        self
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(&self.bin);
        // The unpacked CLI (~90 MB) is shared by every test; COPILOT_HOME is not.
        let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join("copilot-cache");
        command
            .args(args)
            .current_dir(self.env.workspace())
            .env_clear()
            .env("PATH", self.env.path())
            .env("HOME", self.env.home())
            .env("XDG_CACHE_HOME", cache)
            .env("COPILOT_HOME", self.env.home().join(".copilot"))
            .env("COPILOT_OFFLINE", "true")
            .env("COPILOT_AUTO_UPDATE", "false")
            .env("CODEACT_BIN", BIN)
            .stdin(Stdio::null());
        for (key, value) in &self.vars {
            command.env(key, value);
        }
        command
    }

    /// Runs a CLI subcommand that must succeed; returns its stdout.
    fn ok(&self, args: &[&str]) -> String {
        let output = self.command(args).output().unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        assert!(
            output.status.success(),
            "copilot {args:?} failed:\n{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        stdout
    }

    fn install_plugin(&self) {
        let out = self.ok(&["plugin", "install", plugin_dir().to_str().unwrap()]);
        assert!(out.contains("installed successfully"), "{out}");
    }

    /// Runs one non-interactive prompt against `server`; returns the JSON event stream.
    fn prompt(&self, server: &ModelServer, extra: &[&str]) -> Vec<Value> {
        let mut args = vec![
            "-p",
            "Use the tools as scripted.",
            "--output-format",
            "json",
            "--allow-all-tools",
            "--allow-all-paths",
        ];
        args.extend_from_slice(extra);
        let mut command = self.command(&args);
        command.env("COPILOT_PROVIDER_BASE_URL", server.base_url());
        if !self.vars.iter().any(|(k, _)| *k == "COPILOT_MODEL") {
            command.env("COPILOT_MODEL", "gpt-4.1");
        }
        let output = command.output().unwrap();
        String::from_utf8_lossy(&output.stdout).lines().filter_map(|line| serde_json::from_str(line).ok()).collect()
    }
}

/// What the CLI returned for each tool call, from the last model request (chat completions).
fn tool_results(server: &ModelServer) -> Vec<String> {
    let turns = server.turns();
    let last = turns.last().expect("the model was never asked");
    if let Some(messages) = last["messages"].as_array() {
        messages.iter().filter(|m| m["role"] == "tool").map(|m| text_of(&m["content"])).collect()
    } else {
        let items = last["input"].as_array().unwrap();
        items.iter().filter(|i| i["type"] == "function_call_output").map(|i| text_of(&i["output"])).collect()
    }
}

/// A message content as text, whether a string or a list of parts.
fn text_of(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join(""),
        _ => String::new(),
    }
}

/// All the text of the first model request.
fn first_request_text(server: &ModelServer) -> String {
    let turns = server.turns();
    let first = turns.first().expect("the model was never asked");
    let items = first["messages"].as_array().or_else(|| first["input"].as_array()).cloned().unwrap_or_default();
    let mut text = first["instructions"].as_str().unwrap_or_default().to_owned();
    for item in items {
        text.push_str(&text_of(&item["content"]));
        text.push('\n');
    }
    text
}

fn bin() -> String {
    PathBuf::from(BIN).canonicalize().unwrap().display().to_string()
}

/// The scripted `bash` call that runs a codeact program.
fn codeact_call(program: &str) -> Step {
    Step::Tool(
        "bash",
        json!({"command": format!("{} run <<'PY'\n{program}\nPY", bin()), "description": "run a codeact program"}),
    )
}

const TODO_PROGRAM: &str = "todos = grep(pattern='TODO', paths='src')\nprint(len(todos), 'TODOs in', len({m['path'] for m in todos}), 'files')";

#[test]
#[ignore = "needs the npm packages of tests/e2e (npm ci --prefix tests/e2e)"]
fn plugin_install_registers_every_skill() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let env = TestEnv::new();
    let copilot = Copilot::new(&env);
    copilot.install_plugin();
    let skills: Value = serde_json::from_str(&copilot.ok(&["skill", "list", "--json"])).unwrap();
    let mut names: Vec<&str> = skills
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["source"] == "plugin")
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(names, SKILLS);
}

#[test]
#[ignore = "needs the npm packages of tests/e2e (npm ci --prefix tests/e2e)"]
fn installed_instructions_are_loaded_and_reach_the_first_model_request() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let env = TestEnv::new();
    let copilot = Copilot::new(&env);
    env.run(&["install"], "").code(0);
    env.run(&["install", "--global"], "").code(0);
    let listed: Value = serde_json::from_str(&copilot.ok(&["instruction", "list", "--json"])).unwrap();
    let mut found: Vec<(String, String)> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|i| (i["location"].as_str().unwrap().to_owned(), i["sourcePath"].as_str().unwrap().to_owned()))
        .collect();
    found.sort();
    let global = env.home().join(".copilot/instructions/codeact.instructions.md");
    assert_eq!(
        found,
        [
            ("user".to_owned(), global.display().to_string()),
            ("working-directory".to_owned(), ".github/instructions/codeact.instructions.md".to_owned())
        ]
    );
    let server = ModelServer::start(vec![Step::Say("done")]);
    copilot.prompt(&server, &[]);
    let sent = first_request_text(&server);
    assert!(sent.contains(REFERENCE_TITLE), "{sent}");
    assert!(sent.contains(&format!("{} run --backend monty <<'PY'", bin())));
}

#[test]
#[ignore = "needs the npm packages of tests/e2e (npm ci --prefix tests/e2e)"]
fn a_codeact_program_run_through_bash_returns_its_real_output_to_the_model() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let env = TestEnv::with_fixture_workspace();
    let copilot = Copilot::new(&env);
    let expected = env.stdout_of(TODO_PROGRAM);
    assert_eq!(expected, "3 TODOs in 2 files\n");
    let server = ModelServer::start(vec![codeact_call(TODO_PROGRAM), Step::Say("done")]);
    copilot.prompt(&server, &[]);
    let results = tool_results(&server);
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(results[0].starts_with(&expected), "{:?}", results[0]);
}

#[test]
#[ignore = "needs the npm packages of tests/e2e (npm ci --prefix tests/e2e)"]
fn the_responses_wire_api_gets_the_same_program_output() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let env = TestEnv::with_fixture_workspace();
    let copilot = Copilot::new(&env);
    let copilot = copilot.var("COPILOT_PROVIDER_WIRE_API", "responses").var("COPILOT_MODEL", "gpt-5.4");
    let server = ModelServer::start(vec![codeact_call(TODO_PROGRAM), Step::Say("done")]);
    copilot.prompt(&server, &[]);
    let tools: Vec<String> = server.turns()[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect();
    assert!(tools.iter().any(|t| t == "apply_patch") && tools.iter().any(|t| t == "rg"), "{tools:?}");
    let results = tool_results(&server);
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(results[0].starts_with("3 TODOs in 2 files\n"), "{:?}", results[0]);
}

#[test]
#[ignore = "needs the npm packages of tests/e2e (npm ci --prefix tests/e2e)"]
fn nudge_mode_denies_the_third_read_only_call_with_the_codeact_command() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let env = TestEnv::with_fixture_workspace();
    let copilot = Copilot::new(&env);
    let copilot = copilot.var("CODEACT_MODE", "nudge");
    copilot.install_plugin();
    let view = |path: &str| Step::Tool("view", json!({"path": env.workspace().join(path)}));
    let server =
        ModelServer::start(vec![view("README.md"), view("src/app.py"), view("src/util.py"), Step::Say("done")]);
    copilot.prompt(&server, &[]);
    let results = tool_results(&server);
    assert_eq!(results.len(), 3, "{results:?}");
    assert!(!results[0].starts_with("Denied") && !results[1].starts_with("Denied"), "{results:?}");
    let path = env.workspace().join("src/util.py");
    assert_eq!(
        results[2],
        format!(
            "Denied by preToolUse hook: codeact: 3 read-only calls in a row. Do the rest of this exploration in one \
             program (tools are Python functions; print only what you need):\n\n{} run --backend monty <<'PY'\n\
             print(view(path={}))\nPY",
            bin(),
            serde_json::to_string(&path).unwrap()
        )
    );
}

#[test]
#[ignore = "needs the npm packages of tests/e2e (npm ci --prefix tests/e2e)"]
fn exclusive_mode_denies_view_and_lets_codeact_run() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let env = TestEnv::with_fixture_workspace();
    let copilot = Copilot::new(&env);
    let copilot = copilot.var("CODEACT_MODE", "exclusive");
    copilot.install_plugin();
    let view = Step::Tool("view", json!({"path": env.workspace().join("README.md")}));
    let server = ModelServer::start(vec![view, codeact_call(TODO_PROGRAM), Step::Say("done")]);
    copilot.prompt(&server, &[]);
    let results = tool_results(&server);
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(
        results[0].starts_with("Denied by preToolUse hook: codeact exclusive mode: `view` is not available"),
        "{results:?}"
    );
    assert!(results[1].starts_with("3 TODOs in 2 files\n"), "{results:?}");
}

#[test]
#[ignore = "needs the npm packages of tests/e2e (npm ci --prefix tests/e2e)"]
fn session_start_brings_the_instructions_once() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let env = TestEnv::new();
    let copilot = Copilot::new(&env);
    copilot.install_plugin();
    let server = ModelServer::start(vec![Step::Say("done")]);
    copilot.prompt(&server, &[]);
    assert_eq!(first_request_text(&server).matches(REFERENCE_TITLE).count(), 1);
    env.run(&["install"], "").code(0);
    let server = ModelServer::start(vec![Step::Say("done")]);
    copilot.prompt(&server, &[]);
    assert_eq!(first_request_text(&server).matches(REFERENCE_TITLE).count(), 1);
}

#[test]
#[ignore = "needs the npm packages of tests/e2e (npm ci --prefix tests/e2e)"]
fn the_codeact_agent_gets_only_bash_and_its_own_text() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let env = TestEnv::new();
    let copilot = Copilot::new(&env);
    copilot.install_plugin();
    let server = ModelServer::start(vec![Step::Say("done")]);
    copilot.prompt(&server, &["--agent", "codeact:codeact"]);
    let turns = server.turns();
    let tools: Vec<&str> =
        turns[0]["tools"].as_array().unwrap().iter().filter_map(|t| t["function"]["name"].as_str()).collect();
    // No file tools: the CLI adds only its helpers for bash sessions, skills and its own session database.
    assert_eq!(tools, ["bash", "read_bash", "stop_bash", "list_bash", "skill", "sql"]);
    assert!(first_request_text(&server).contains("You work through codeact. Your only tool is bash"));
}
