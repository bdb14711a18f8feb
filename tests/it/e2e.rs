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

use crate::model::{ModelServer, Step, request_text, text_of};
use crate::support::{BIN, SKILLS, TestEnv, npm_bin};

/// One CLI at a time: each run starts a Node.js process that wants both cores.
static SERIAL: Mutex<()> = Mutex::new(());

const REFERENCE_TITLE: &str = "# codeact: tools as Python functions";

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
            .env("HOME", self.env.home())
            .env("XDG_CACHE_HOME", cache)
            .env("COPILOT_HOME", self.env.home().join(".copilot"))
            .env("COPILOT_OFFLINE", "true")
            .env("COPILOT_AUTO_UPDATE", "false")
            .stdin(Stdio::null());
        // The plugin finds codeact as a user's machine has it: installed by a package into the
        // folder `CODEACT_TEST_INSTALLED` names (npm's, a virtual environment's `bin`), first on
        // `PATH`; else the binary under test, through `CODEACT_BIN`.
        match std::env::var("CODEACT_TEST_INSTALLED") {
            Ok(installed) if !installed.is_empty() => command.env("PATH", format!("{installed}:{}", self.env.path())),
            _ => command.env("PATH", self.env.path()).env("CODEACT_BIN", *BIN),
        };
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

    /// Installs the plugin the way docs/agents.md says: this repository as a marketplace, then
    /// `codeact@codeact` from it (a direct install of a local path is deprecated).
    fn install_plugin(&self) {
        let out = self.ok(&["plugin", "marketplace", "add", env!("CARGO_MANIFEST_DIR")]);
        assert!(out.contains("added successfully"), "{out}");
        let out = self.ok(&["plugin", "install", "codeact@codeact"]);
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

/// All the text of the first model request.
fn first_request_text(server: &ModelServer) -> String {
    let turns = server.turns();
    request_text(turns.first().expect("the model was never asked"))
}

fn bin() -> String {
    PathBuf::from(*BIN).canonicalize().unwrap().display().to_string()
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

/// The plugin's launcher, as the plugin's hooks name it in their suggestions.
fn launcher() -> String {
    plugin_dir().join("bin/codeact").canonicalize().unwrap().display().to_string()
}

/// What a postToolUse hook's advice adds to a tool result.
const ADVICE: &str = "Additional guidance from postToolUse hooks:\ncodeact: 3 rounds of read-only calls in a row.";

/// Where the bash route is the one tested: the plugin's hooks and install default to the MCP
/// server it bundles.
const BASH_ROUTE: (&str, &str) = ("CODEACT_ROUTE", "bash");

#[test]
#[ignore = "needs the npm packages of tests/e2e (npm ci --prefix tests/e2e)"]
fn nudge_advises_after_three_rounds_then_denies_with_a_program_that_keeps_every_argument() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let env = TestEnv::with_fixture_workspace();
    let copilot = Copilot::new(&env).var("CODEACT_MODE", "nudge");
    copilot.install_plugin();
    let view = |path: &str| Step::Tool("view", json!({"path": env.workspace().join(path)}));
    let grep = json!({"pattern": "TODO", "paths": "src", "glob": "*.py", "output_mode": "content", "-n": true});
    let server = ModelServer::start(vec![
        view("README.md"),
        view("src"),
        view("src/app.py"),
        Step::Tool("grep", grep),
        Step::Follow,
        Step::Say("done"),
    ]);
    copilot.prompt(&server, &[]);
    let results = tool_results(&server);
    assert_eq!(results.len(), 5, "{results:?}");
    assert!(!results[..2].iter().any(|r| r.contains("postToolUse") || r.starts_with("Denied")), "{results:?}");
    // The gentle step: the third round runs, with the advice after its result.
    assert!(results[2].contains(ADVICE), "{:?}", results[2]);
    // The model goes on reading: denied, with the program that does exactly what it asked.
    let program = "for m in grep(pattern=\"TODO\", paths=\"src\", glob=\"*.py\"):\n    \
                   print(f\"{m['path']}:{m['line']}:{m['text']}\")";
    // Under the plugin, which bundles codeact's MCP server, the program is for its `run` tool.
    assert_eq!(
        results[3],
        format!(
            "Denied by preToolUse hook: codeact: 4 rounds of read-only calls in a row. Do this and the rest of the \
             exploration in one program (tools are Python functions; print only what you need):\n\n\
             Pass this as `code` to codeact's `run` tool:\n```python\n{program}\n```"
        )
    );
    // Followed to the letter, it gives the real answer: the fixture's TODOs in src/*.py only.
    let expected = env.stdout_of(program);
    assert_eq!(expected.lines().count(), 3, "{expected}");
    assert!(results[4].starts_with(&expected), "{:?}", results[4]);
}

#[test]
#[ignore = "needs the npm packages of tests/e2e (npm ci --prefix tests/e2e)"]
fn nudge_counts_a_parallel_batch_once_and_never_splits_it() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let env = TestEnv::with_fixture_workspace();
    let copilot = Copilot::new(&env).var("CODEACT_MODE", "nudge");
    copilot.install_plugin();
    let view = |path: &str| ("view", json!({"path": env.workspace().join(path)}));
    let server = ModelServer::start(vec![
        Step::Tool("glob", json!({"pattern": "**/*"})),
        Step::Tool(view("README.md").0, view("README.md").1),
        Step::Batch(vec![view("src/app.py"), view("src/util.py"), view("README.md")]),
        Step::Say("done"),
    ]);
    copilot.prompt(&server, &[]);
    let results = tool_results(&server);
    assert_eq!(results.len(), 5, "{results:?}");
    assert!(!results.iter().any(|r| r.starts_with("Denied")), "a batch in flight was split: {results:?}");
    assert_eq!(results.iter().filter(|r| r.contains(ADVICE)).count(), 1, "{results:?}");
}

#[test]
#[ignore = "needs the npm packages of tests/e2e (npm ci --prefix tests/e2e)"]
fn exclusive_mode_allows_a_single_read_and_its_suggestion_followed_literally_answers() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let env = TestEnv::with_fixture_workspace();
    // The shell route, under the plugin: programs run through its launcher.
    let copilot = Copilot::new(&env).var("CODEACT_MODE", "exclusive").var(BASH_ROUTE.0, BASH_ROUTE.1);
    copilot.install_plugin();
    let view =
        |path: &str, range: Value| Step::Tool("view", json!({"path": env.workspace().join(path), "view_range": range}));
    let server = ModelServer::start(vec![
        Step::Codeact(TODO_PROGRAM),
        view("README.md", json!([1, -1])),
        view("src/app.py", json!([1, 2])),
        Step::Follow,
        Step::Say("done"),
    ]);
    copilot.prompt(&server, &[]);
    let results = tool_results(&server);
    assert_eq!(results.len(), 4, "{results:?}");
    assert!(results[0].starts_with("3 TODOs in 2 files\n"), "{results:?}");
    // The instructions say a single read is a direct call, and exclusive mode agrees.
    assert!(!results[1].starts_with("Denied"), "{results:?}");
    assert!(
        results[2].starts_with("Denied by preToolUse hook: codeact exclusive mode: a second direct call in a row"),
        "{results:?}"
    );
    assert!(results[2].contains(&format!("sh {} run --backend monty <<'PY'", launcher())), "{results:?}");
    let path = serde_json::to_string(&env.workspace().join("src/app.py")).unwrap();
    let expected = env.stdout_of(&format!("print(view(path={path}, view_range=[1, 2]))"));
    // The CLI drops the trailing blank lines of a command's output.
    assert!(results[3].starts_with(expected.trim_end()), "{:?} is not {expected:?}", results[3]);
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
fn the_codeact_agent_gets_only_codeacts_run_tool_and_its_own_text_and_no_second_reference() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let env = TestEnv::new();
    let copilot = Copilot::new(&env);
    copilot.install_plugin();
    let server = ModelServer::start(vec![Step::Say("done")]);
    copilot.prompt(&server, &["--agent", "codeact:codeact"]);
    let turns = server.turns();
    let tools: Vec<&str> =
        turns[0]["tools"].as_array().unwrap().iter().filter_map(|t| t["function"]["name"].as_str()).collect();
    // No file tools and no shell: the CLI adds only skills and its own session database.
    assert_eq!(tools, ["codeact-run", "skill", "sql"]);
    let sent = first_request_text(&server);
    assert!(sent.contains("Your only tool is codeact's `run`."), "{sent}");
    assert_eq!(sent.matches(REFERENCE_TITLE).count(), 1, "{sent}");
    assert!(sent.contains("to codeact's `run` tool") && !sent.contains("<<'PY'"), "{sent}");
}

#[test]
#[ignore = "needs the npm packages of tests/e2e (npm ci --prefix tests/e2e)"]
fn the_plugin_agent_runs_codeact_with_the_binary_reachable_only_through_codeact_bin() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let env = TestEnv::with_fixture_workspace();
    let copilot = Copilot::new(&env);
    copilot.install_plugin();
    assert!(env.path().split(':').all(|dir| !Path::new(dir).join("codeact").exists()), "codeact is on PATH");
    let server = ModelServer::start(vec![Step::Tool("codeact-run", json!({"code": TODO_PROGRAM})), Step::Say("done")]);
    copilot.prompt(&server, &["--agent", "codeact:codeact"]);
    let results = tool_results(&server);
    assert_eq!(results, ["3 TODOs in 2 files\n"]);
}

#[test]
#[ignore = "needs the npm packages of tests/e2e (npm ci --prefix tests/e2e)"]
fn the_plugins_mcp_server_runs_programs_in_the_project_and_their_output_reaches_the_model() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let env = TestEnv::with_fixture_workspace();
    let copilot = Copilot::new(&env);
    copilot.install_plugin();
    let failing = "print(len(glob(pattern='src/*.py')))\nview(path='../outside.txt')";
    let server = ModelServer::start(vec![
        Step::Tool("codeact-run", json!({"code": TODO_PROGRAM})),
        Step::Tool("codeact-run", json!({"code": failing})),
        Step::Say("done"),
    ]);
    copilot.prompt(&server, &[]);
    let turns = server.turns();
    let tools: Vec<&str> =
        turns[0]["tools"].as_array().unwrap().iter().filter_map(|t| t["function"]["name"].as_str()).collect();
    // Only `run`: the reference the session-start hook brings makes `describe` a cost on every
    // request for nothing.
    assert!(tools.contains(&"codeact-run") && !tools.contains(&"codeact-describe"), "{tools:?}");
    // The session-start hook brings the reference for the MCP route, once.
    let sent = first_request_text(&server);
    assert_eq!(sent.matches(REFERENCE_TITLE).count(), 1, "{sent}");
    assert!(sent.contains("to codeact's `run` tool") && !sent.contains("<<'PY'"), "{sent}");
    let results = tool_results(&server);
    // The program ran in the project (not the plugin's folder, where the CLI starts the server),
    // and the model reads its output alone: `--text-only` keeps the JSON copy out.
    assert_eq!(results[0], "3 TODOs in 2 files\n");
    // An error result: the CLI names the server before the program's output and traceback.
    assert!(
        results[1].starts_with("MCP server 'codeact': 2\nTraceback (most recent call last):\n"),
        "{:?}",
        results[1]
    );
    assert!(results[1].contains("PermissionError: '../outside.txt' is outside the workspace"), "{:?}", results[1]);
}
