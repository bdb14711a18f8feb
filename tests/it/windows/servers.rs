//! Child processes on Windows: an MCP server's tools called from a program, the server's whole
//! process tree ended with the run (a Job object) and at a timeout; `codeact mcp serve` over stdio,
//! its runs in a child of their own, a session's worker keeping state; the hooks classifying
//! PowerShell. The servers and children are `codeact-test-helper` (tests/windows/helper.rs), which
//! `cargo test` builds.

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use windows_sys::Win32::Foundation::{CloseHandle, STILL_ACTIVE};
use windows_sys::Win32::System::Threading::{GetExitCodeProcess, OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION};

use super::{Env, text, with_stdin};

/// The helper, an example of this package, beside the test binary's folder (`deps`).
fn helper() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let path = exe.parent().and_then(Path::parent).unwrap().join("examples").join("codeact-test-helper.exe");
    assert!(
        path.is_file(),
        "{} is missing: `cargo test` builds it with the tests; `cargo test --test it` alone does not \
         (build it with `cargo build --example codeact-test-helper`)",
        path.display()
    );
    path
}

/// Whether the process `pid` is still running.
#[expect(unsafe_code, reason = "asks Windows about a process by its pid")]
fn alive(pid: u32) -> bool {
    // SAFETY: plain calls on a handle this function opens and closes.
    unsafe {
        let process = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid);
        if process.is_null() {
            return false;
        }
        let mut code = 0_u32;
        let read = GetExitCodeProcess(process, &raw mut code);
        CloseHandle(process);
        read != 0 && code == STILL_ACTIVE.cast_unsigned()
    }
}

/// The two pids `tree` wrote into `marker`: the server's and its child's.
fn tree_pids(marker: &Path) -> Vec<u32> {
    let pids = std::fs::read_to_string(marker).unwrap();
    pids.split_whitespace().map(|pid| pid.parse().unwrap()).collect()
}

/// Waits (up to 20 s: Wine is slow to start and end processes under load) until none of
/// `pids` runs.
fn assert_all_end(pids: &[u32]) {
    let start = Instant::now();
    while pids.iter().any(|&pid| alive(pid)) {
        assert!(start.elapsed() < Duration::from_secs(20), "still running: {pids:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A workspace whose `.mcp.json` declares the helper as the server `helper`, trusted.
fn with_helper_server() -> Env {
    let env = Env::new();
    let servers = json!({"mcpServers": {"helper": {"command": helper(), "args": ["mcp-server"]}}});
    env.file(".mcp.json", &servers.to_string());
    let out = env.command(&["trust"]).output().unwrap();
    assert!(out.status.success(), "codeact trust: {}", text(&out.stderr));
    env
}

#[test]
fn an_mcp_servers_tools_are_called_and_its_errors_raise() {
    let env = with_helper_server();
    let out = env.run(
        "print(helper__echo(text=\"hi from the server\"))\n\
         print(mcp_call(\"helper\", \"echo\", text=\"by name\"))\n\
         try:\n\
         \x20   helper__fail(message=\"it broke\")\n\
         except RuntimeError as e:\n\
         \x20   print(\"RuntimeError\", e)\n",
    );
    assert_eq!(
        text(&out.stdout),
        "hi from the server\nby name\nRuntimeError MCP tool 'helper.fail' failed: it broke\n",
        "stderr: {}",
        text(&out.stderr)
    );
    // The server's own stderr stays out of what the program and codeact say.
    assert!(!text(&out.stderr).contains("helper server"), "{}", text(&out.stderr));
}

#[test]
fn a_servers_process_tree_ends_with_the_run() {
    let env = with_helper_server();
    let marker = env.workspace().join("pids.txt");
    let program = format!("print(helper__tree(marker={:?}) != \"\")\n", marker.display().to_string());
    let out = env.run(&program);
    assert_eq!(text(&out.stdout), "True\n", "stderr: {}", text(&out.stderr));
    let pids = tree_pids(&marker);
    assert_eq!(pids.len(), 2);
    assert_all_end(&pids);
}

#[test]
fn a_timeout_ends_the_program_and_the_servers_process_tree() {
    let env = with_helper_server();
    let marker = env.workspace().join("pids.txt");
    let program =
        format!("helper__tree(marker={:?}, hang=True)\nprint(\"not reached\")\n", marker.display().to_string());
    let started = Instant::now();
    let out = env.run_with(&["--timeout", "5"], &program);
    assert!(started.elapsed() < Duration::from_secs(120), "the timeout did not end the run");
    assert!(!out.status.success());
    assert!(!text(&out.stdout).contains("not reached"));
    assert!(text(&out.stderr).contains("TimeoutError"), "{}", text(&out.stderr));
    let pids = tree_pids(&marker);
    assert_eq!(pids.len(), 2);
    assert_all_end(&pids);
}

/// A `codeact mcp serve` over stdio, spoken to one request at a time.
struct Served {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
}

impl Served {
    fn start(env: &Env) -> Self {
        let mut child = env
            .command(&["mcp", "serve", "--text-only"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let (stdin, stdout) = (child.stdin.take().unwrap(), BufReader::new(child.stdout.take().unwrap()));
        let mut served = Self { child, stdin, stdout };
        let initialize = served.request(
            1,
            "initialize",
            &json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        );
        assert_eq!(initialize["result"]["serverInfo"]["name"], "codeact", "{initialize}");
        served.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        served
    }

    fn send(&mut self, message: &Value) {
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Sends a request and reads messages until its answer.
    fn request(&mut self, id: u64, method: &str, params: &Value) -> Value {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            assert_ne!(self.stdout.read_line(&mut line).unwrap(), 0, "the server ended before answering {method}");
            if let Ok(message) = serde_json::from_str::<Value>(&line)
                && message["id"] == id
            {
                return message;
            }
        }
    }

    /// The text of a `run` call's answer, and whether it is an error.
    fn run(&mut self, id: u64, code: &str) -> (String, bool) {
        let answer = self.request(id, "tools/call", &json!({"name": "run", "arguments": {"code": code}}));
        let result = &answer["result"];
        let texts: Vec<&str> =
            result["content"].as_array().unwrap().iter().filter_map(|c| c["text"].as_str()).collect();
        (texts.join("\n"), result["isError"] == true)
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn mcp_serve_over_stdio_runs_programs_and_reports_their_errors() {
    let env = Env::new();
    env.file("notes.txt", "one\ntwo\n");
    let mut served = Served::start(&env);
    let listed = served.request(2, "tools/list", &json!({}));
    let names: Vec<&str> =
        listed["result"]["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(names.contains(&"run"), "{listed}");
    let (output, error) = served.run(3, "print(len(view(path=\"notes.txt\").splitlines()), 6 * 7)");
    assert_eq!((output.trim_end(), error), ("2 42", false));
    let (output, error) = served.run(4, "def f():\n    return 1 / 0\nf()");
    assert!(error, "{output}");
    assert!(output.contains("ZeroDivisionError"), "{output}");
    assert!(output.contains("line 2"), "the traceback names the line: {output}");
    // A path out of the workspace is refused through the server as it is on the command line.
    let (output, error) = served.run(5, "view(path=\"..\\\\outside\\\\x.txt\")");
    assert!(error && output.contains("PermissionError"), "{output}");
    // The connection's session keeps what a program defines for the next, in its worker.
    let (_, error) = served.run(6, "kept = 41\ndef bump(n):\n    return n + 1");
    assert!(!error);
    let (output, error) = served.run(7, "print(bump(kept))");
    assert_eq!((output.trim_end(), error), ("42", false));
}

/// A `PATH` of only the folder of the `codeact.exe` under test, so that the hooks find it by
/// PowerShell's lookup; exclusive mode.
fn with_codeact_on_path(command: &mut std::process::Command) {
    // The path cargo gives is the build machine's (a Unix path under Wine): made whole here.
    let exe = dunce::canonicalize(env!("CARGO_BIN_EXE_codeact")).unwrap();
    let bin = exe.parent().unwrap().to_path_buf();
    command.env("PATH", bin).env("CODEACT_MODE", "exclusive");
}

fn pre_tool_use(env: &Env, command: &str) -> Value {
    let payload = json!({"sessionId": "s", "cwd": env.workspace(), "toolName": "powershell",
        "toolArgs": {"command": command}});
    let mut hook = env.command(&["hook", "pre-tool-use", "--host", "copilot"]);
    with_codeact_on_path(&mut hook);
    let out = with_stdin(&mut hook, &payload.to_string());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    if stdout.trim().is_empty() {
        json!({"permissionDecision": "allow"})
    } else {
        serde_json::from_str(&stdout).unwrap()
    }
}

#[test]
fn the_hooks_read_powershell_commands() {
    let env = Env::new();
    // codeact itself, as the instructions show it in PowerShell: a here-string piped into it.
    let run = "@'\nprint(glob(pattern=\"**/*.rs\"))\n'@ | codeact run";
    let reply = pre_tool_use(&env, run);
    assert_eq!(reply["permissionDecision"], "allow", "{reply}");
    // Anything else is turned into a program, in the here-string form.
    for command in ["Remove-Item -Recurse src", "Get-Content notes.txt; Set-Content x.txt y", "iex (gc a.ps1)"] {
        let reply = pre_tool_use(&env, command);
        assert_eq!(reply["permissionDecision"], "deny", "{command}: {reply}");
        let reason = reply["permissionDecisionReason"].as_str().unwrap();
        assert!(reason.contains("@'\n") && reason.contains("\n'@ | "), "{command}: {reason}");
    }
}
