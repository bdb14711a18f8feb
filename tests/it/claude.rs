//! End-to-end tests with the real Claude Code CLI (`@anthropic-ai/claude-code` 2.1.332, installed
//! by `.ci/run` with `npm ci --prefix tests/e2e`) and `codeact mcp serve` as its MCP server, run
//! in print mode (`-p`) fully offline against [`MessagesServer`], each in a fresh `HOME` and
//! `CLAUDE_CONFIG_DIR`. They assert on what the CLI sends back to the model.
//!
//! They are `#[ignore]`d: `.ci/run` installs the CLI and runs them.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::anthropic::{MessagesServer, Step, request_text, tool_results};
use crate::model::text_of;
use crate::support::{BIN, TestEnv, npm_bin};

/// One CLI at a time: each run wants both cores.
static SERIAL: Mutex<()> = Mutex::new(());

/// The tool the CLI names codeact's `run` after, for a server configured as `codeact`.
const RUN: &str = "mcp__codeact__run";

/// The program every test runs: it reads a file of the workspace with `grep` and `view` and
/// prints what only that file holds.
const PROGRAM: &str = "hit = grep(pattern=\"launch code\", paths=\"notes\")[0]\n\
                       print(hit[\"text\"].split()[-1].rstrip(\".\"))\n\
                       print(view(path=hit[\"path\"]).splitlines()[0])";

/// What [`PROGRAM`] prints in [`workspace`].
const PRINTED: &str = "OSPREY-4417\nRelease notes\n";

/// The scripted model's answer once it has the program's output.
const ANSWER: &str = "The launch code is OSPREY-4417.";

/// A workspace whose only file holds the value [`PROGRAM`] prints.
fn workspace() -> TestEnv {
    TestEnv::new().file("notes/release.txt", "Release notes\nThe launch code is OSPREY-4417.\n")
}

/// The CLI's native binary. The `claude` link of `node_modules/.bin` runs it only once the
/// package's postinstall script has copied it over a stub, so the platform package that ships it
/// comes first: the tests then also work where npm runs no install scripts.
fn claude_bin() -> PathBuf {
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        other => other,
    };
    let package = format!("tests/e2e/node_modules/@anthropic-ai/claude-code-{}-{arch}/claude", std::env::consts::OS);
    let native = Path::new(env!("CARGO_MANIFEST_DIR")).join(package);
    if native.is_file() { native } else { npm_bin("claude") }
}

/// The real CLI in a test environment.
struct Claude<'a> {
    env: &'a TestEnv,
    vars: Vec<(&'static str, String)>,
}

impl<'a> Claude<'a> {
    /// The CLI in `env`, with the environment of [`Self::command`] only.
    fn new(env: &'a TestEnv) -> Self {
        Self { env, vars: Vec::new() }
    }

    /// One more environment variable for the CLI (and so for the MCP servers it starts).
    fn var(mut self, key: &'static str, value: &str) -> Self {
        self.vars.push((key, value.to_owned()));
        self
    }

    /// The CLI with only `args`, a throwaway home and config dir, no telemetry, update checks or
    /// other traffic of its own, and `server` as the Anthropic API.
    fn command(&self, server: &MessagesServer, args: &[&str]) -> Command {
        let home = self.env.home();
        let mut command = Command::new(claude_bin());
        command
            .args(args)
            .current_dir(self.env.workspace())
            .env_clear()
            .env("PATH", self.env.path())
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("XDG_CACHE_HOME", home.join(".cache"))
            .env("XDG_DATA_HOME", home.join(".local/share"))
            .env("CLAUDE_CONFIG_DIR", home.join(".claude"))
            .env("ANTHROPIC_BASE_URL", server.base_url())
            .env("ANTHROPIC_API_KEY", "sk-ant-codeact-test")
            .env("DISABLE_TELEMETRY", "1")
            .env("DISABLE_ERROR_REPORTING", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("CODEACT_BIN", *BIN)
            .env("NO_COLOR", "1")
            .stdin(Stdio::null());
        for (key, value) in &self.vars {
            command.env(key, value);
        }
        command
    }

    /// Runs one prompt in print mode with `extra` flags; returns the CLI's JSON result.
    fn prompt(&self, server: &MessagesServer, extra: &[&str]) -> Value {
        let mut args = vec!["-p", "Use the tools as scripted.", "--output-format", "json"];
        args.extend_from_slice(extra);
        let output = self.command(server, &args).output().unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "claude {args:?} failed:\n{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("the result is not JSON ({e}):\n{stdout}"))
    }

    /// [`Self::prompt`] with codeact, on this workspace, as the only MCP server and its `run`
    /// tool allowed without asking.
    fn prompt_with_codeact(&self, server: &MessagesServer) -> Value {
        let workspace = self.env.workspace().display().to_string();
        let servers =
            json!({"mcpServers": {"codeact": {"command": *BIN, "args": ["mcp", "serve", "--workspace", workspace]}}});
        let config = self.env.root().join("mcp.json");
        std::fs::write(&config, servers.to_string()).unwrap();
        let config = config.display().to_string();
        self.prompt(server, &["--mcp-config", &config, "--strict-mcp-config", "--allowedTools", RUN])
    }
}

/// The program's stdout as the model was shown it in a `run` result. A result with structured
/// content reaches the model as that content's JSON, in place of its text (the `--json` object,
/// which must then say the run succeeded); one with text only, as its text.
fn shown_stdout(result: &Value) -> String {
    let text = text_of(&result["content"]);
    match serde_json::from_str::<Value>(&text) {
        Ok(object) if object.is_object() => {
            assert_eq!(object["success"], true, "{object}");
            object["stdout"].as_str().unwrap().to_owned()
        }
        _ => text,
    }
}

/// The names of the tools a request declares in full.
fn tool_names(body: &Value) -> Vec<&str> {
    body["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect()
}

/// The checks every run shares: nothing was denied, and the CLI printed the scripted answer.
fn assert_answered(result: &Value) {
    assert_eq!(result["is_error"], false, "{result}");
    assert_eq!(result["permission_denials"], json!([]), "{result}");
    assert_eq!(result["result"], ANSWER, "{result}");
}

#[test]
#[ignore = "needs the npm packages of tests/e2e (npm ci --prefix tests/e2e)"]
fn a_program_run_through_the_mcp_run_tool_returns_its_real_output_to_the_model() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let env = workspace();
    assert_eq!(env.stdout_of(PROGRAM), PRINTED);
    // Every tool declared in full in the request, as without a tool-search step.
    let claude = Claude::new(&env).var("ENABLE_TOOL_SEARCH", "false");
    let server = MessagesServer::start(vec![Step::Tool(RUN, json!({"code": PROGRAM})), Step::Say(ANSWER)]);
    let result = claude.prompt_with_codeact(&server);
    let turns = server.turns();
    assert_eq!(turns.len(), 2, "{turns:#?}");
    let run = turns[0]["tools"].as_array().unwrap().iter().find(|t| t["name"] == RUN).expect("no run tool");
    // `code`, or `wait` for a run that yielded: checked on the call.
    assert_eq!(run["input_schema"]["properties"]["code"]["type"], "string", "{run}");
    assert_eq!(run["input_schema"]["properties"]["wait"]["type"], "integer", "{run}");
    let results = tool_results(&turns[1]);
    assert_eq!(results.len(), 1, "{results:#?}");
    assert_eq!(results[0]["tool_use_id"], "toolu_0");
    assert_eq!(results[0].get("is_error"), None, "{:#}", results[0]);
    assert_eq!(shown_stdout(&results[0]), PRINTED);
    assert_answered(&result);
    // Offline: the CLI asked the model server for nothing but the two turns.
    let paths: Vec<String> = server.requests().into_iter().map(|r| r.path).collect();
    assert_eq!(paths, ["/v1/messages?beta=true", "/v1/messages?beta=true"]);
}

#[test]
#[ignore = "needs the npm packages of tests/e2e (npm ci --prefix tests/e2e)"]
fn with_tool_search_on_the_run_tool_is_deferred_and_runs_once_loaded() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let env = workspace();
    let claude = Claude::new(&env);
    let server = MessagesServer::start(vec![
        Step::Tool("ToolSearch", json!({"query": format!("select:{RUN}")})),
        Step::Tool(RUN, json!({"code": PROGRAM})),
        Step::Say(ANSWER),
    ]);
    let result = claude.prompt_with_codeact(&server);
    let turns = server.turns();
    assert_eq!(turns.len(), 3, "{turns:#?}");
    // Named only, in the list of deferred tools, until the model loads it.
    assert!(!tool_names(&turns[0]).contains(&RUN), "{:?}", tool_names(&turns[0]));
    let listed = request_text(&turns[0]);
    assert!(listed.lines().any(|line| line == RUN), "{listed}");
    assert!(tool_names(&turns[1]).contains(&RUN), "{:?}", tool_names(&turns[1]));
    let results = tool_results(&turns[2]);
    assert_eq!(results.len(), 2, "{results:#?}");
    assert_eq!(results[1]["tool_use_id"], "toolu_1");
    assert_eq!(shown_stdout(&results[1]), PRINTED);
    assert_answered(&result);
}

#[test]
#[ignore = "needs the npm packages of tests/e2e (npm ci --prefix tests/e2e)"]
fn a_failing_program_is_an_error_result_that_shows_the_model_its_traceback() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let env = workspace();
    let claude = Claude::new(&env).var("ENABLE_TOOL_SEARCH", "false");
    let program = "hit = grep(pattern=\"no such words\", paths=\"notes\")[0]";
    let server = MessagesServer::start(vec![Step::Tool(RUN, json!({"code": program})), Step::Say(ANSWER)]);
    let result = claude.prompt_with_codeact(&server);
    let turns = server.turns();
    let results = tool_results(turns.last().unwrap());
    assert_eq!(results.len(), 1, "{results:#?}");
    assert_eq!(results[0]["is_error"], true, "{:#}", results[0]);
    let shown = text_of(&results[0]["content"]);
    assert!(shown.starts_with("Traceback (most recent call last):\n"), "{shown}");
    assert!(shown.contains(&format!("    {program}\n")), "{shown}");
    assert!(shown.contains("IndexError: list index out of range"), "{shown}");
    assert_answered(&result);
}

#[test]
#[ignore = "needs the npm packages of tests/e2e (npm ci --prefix tests/e2e)"]
fn describe_shows_the_model_a_tool_signature() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let env = workspace();
    let claude = Claude::new(&env).var("ENABLE_TOOL_SEARCH", "false");
    let describe = "mcp__codeact__describe";
    let server = MessagesServer::start(vec![Step::Tool(describe, json!({"names": ["grep"]})), Step::Say(ANSWER)]);
    let servers = json!({"mcpServers": {"codeact": {"command": *BIN, "args": ["mcp", "serve"]}}}).to_string();
    let result = claude.prompt(&server, &["--mcp-config", &servers, "--strict-mcp-config", "--allowedTools", describe]);
    let results = tool_results(server.turns().last().unwrap());
    assert_eq!(results.len(), 1, "{results:#?}");
    let shown = text_of(&results[0]["content"]);
    assert!(shown.contains("grep(pattern: str, paths: str | list[str] = "), "{shown}");
    assert_answered(&result);
}

/// The instructions in the server's answer to `initialize`.
fn server_instructions(env: &TestEnv) -> String {
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}});
    let out = env.run(&["mcp", "serve"], &format!("{initialize}\n")).code(0);
    let reply: Value = serde_json::from_str(out.stdout.lines().next().unwrap()).unwrap();
    reply["result"]["instructions"].as_str().expect("no instructions").to_owned()
}

#[test]
#[ignore = "needs the npm packages of tests/e2e (npm ci --prefix tests/e2e)"]
fn the_server_instructions_reach_the_model_whole_in_a_system_message() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let env = workspace();
    let instructions = server_instructions(&env);
    assert!(instructions.starts_with("# codeact: tools as Python functions\n"), "{instructions}");
    let claude = Claude::new(&env);
    let server = MessagesServer::start(vec![Step::Say(ANSWER)]);
    assert_answered(&claude.prompt_with_codeact(&server));
    let turns = server.turns();
    let section = format!(
        "# MCP Server Instructions\n\nThe following MCP servers have provided instructions for how to use their \
         tools and resources:\n\n## codeact\n{instructions}"
    );
    // Not in the system prompt itself: in a system-role message of the conversation.
    assert!(!text_of(&turns[0]["system"]).contains("## codeact"), "{:#}", turns[0]["system"]);
    let messages = turns[0]["messages"].as_array().unwrap();
    let carriers: Vec<&Value> =
        messages.iter().filter(|m| text_of(&m["content"]).contains(&section)).map(|m| &m["role"]).collect();
    assert_eq!(carriers, [&json!("system")], "{}", request_text(&turns[0]));
}

/// The Claude Code plugin folder: `.claude-plugin/plugin.json`, and `.mcp.json` whose server runs
/// `${CLAUDE_PLUGIN_ROOT}/bin/codeact mcp serve`.
fn claude_plugin() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("claude-plugin");
    assert!(dir.join(".claude-plugin/plugin.json").is_file(), "no Claude Code plugin at {}", dir.display());
    dir
}

#[test]
#[ignore = "needs the claude plugin folder (claude-plugin/) and the npm packages of tests/e2e"]
fn the_claude_plugin_serves_codeact_with_the_binary_reachable_only_through_codeact_bin() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let env = workspace();
    assert!(env.path().split(':').all(|dir| !Path::new(dir).join("codeact").exists()), "codeact is on PATH");
    let claude = Claude::new(&env).var("ENABLE_TOOL_SEARCH", "false");
    // A plugin's server is named `plugin:<plugin>:<server>`, and its tools after that.
    let run = "mcp__plugin_codeact_codeact__run";
    let server = MessagesServer::start(vec![Step::Tool(run, json!({"code": PROGRAM})), Step::Say(ANSWER)]);
    let plugin = claude_plugin().display().to_string();
    // No `--strict-mcp-config`: it would leave out the plugin's servers too.
    let result = claude.prompt(&server, &["--plugin-dir", &plugin, "--allowedTools", run]);
    let turns = server.turns();
    assert!(tool_names(&turns[0]).contains(&run), "{:?}", tool_names(&turns[0]));
    let results = tool_results(turns.last().unwrap());
    assert_eq!(results.len(), 1, "{results:#?}");
    // The plugin serves `--text-only`: the model reads the program's output itself, not the
    // `--json` object Claude Code would show in its place.
    assert_eq!(text_of(&results[0]["content"]), PRINTED);
    assert_answered(&result);
}

#[test]
#[ignore = "needs the claude plugin folder (claude-plugin/) and the npm packages of tests/e2e"]
fn the_claude_plugins_hooks_deny_in_claudes_form_with_a_program_for_the_run_tool() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let env = workspace().file("README.md", "# Demo\n");
    let claude = Claude::new(&env).var("ENABLE_TOOL_SEARCH", "false").var("CODEACT_MODE", "exclusive");
    let read = |path: &str| Step::Tool("Read", json!({"file_path": env.workspace().join(path)}));
    // Exclusive mode allows one direct read between programs, then denies the next with the
    // program that does the same.
    let server = MessagesServer::start(vec![read("README.md"), read("notes/release.txt"), Step::Say(ANSWER)]);
    let plugin = claude_plugin().display().to_string();
    claude.prompt(&server, &["--plugin-dir", &plugin, "--allowedTools", "Read"]);
    let turns = server.turns();
    let results = tool_results(turns.last().unwrap());
    assert_eq!(results.len(), 2, "{results:#?}");
    assert!(text_of(&results[0]["content"]).contains("# Demo"), "{:#?}", results[0]);
    let denied = text_of(&results[1]["content"]);
    assert_eq!(results[1]["is_error"], true, "{:#?}", results[1]);
    assert!(denied.contains("codeact exclusive mode: a second direct call in a row is not allowed"), "{denied}");
    let path = serde_json::to_string(&env.workspace().join("notes/release.txt")).unwrap();
    assert!(
        denied.contains(&format!(
            "Pass this as `code` to codeact's `run` tool:\n```python\nprint(view(path={path}))\n```"
        )),
        "{denied}"
    );
}

#[test]
#[ignore = "needs the claude plugin folder (claude-plugin/) and the npm packages of tests/e2e"]
fn exclusive_mode_lets_the_model_load_and_run_the_plugins_run_tool_with_tool_search_on() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let env = workspace();
    // Tool search on (the CLI's default): the run tool is deferred, and `ToolSearch` loads it.
    let claude = Claude::new(&env).var("CODEACT_MODE", "exclusive");
    let run = "mcp__plugin_codeact_codeact__run";
    let server = MessagesServer::start(vec![
        Step::Tool("ToolSearch", json!({"query": format!("select:{run}")})),
        Step::Tool(run, json!({"code": PROGRAM})),
        Step::Say(ANSWER),
    ]);
    let plugin = claude_plugin().display().to_string();
    let result = claude.prompt(&server, &["--plugin-dir", &plugin, "--allowedTools", run]);
    let turns = server.turns();
    let results = tool_results(turns.last().unwrap());
    assert_eq!(results.len(), 2, "{results:#?}");
    assert_ne!(results[0]["is_error"], true, "ToolSearch was refused: {:#?}", results[0]);
    assert_eq!(text_of(&results[1]["content"]), PRINTED);
    assert_answered(&result);
}
