//! MCP servers as Python functions, against real servers from npm
//! (`@modelcontextprotocol/server-everything` and `server-filesystem`, pinned in
//! `tests/e2e/package.json`, installed by `.ci/run`). The tests that need them are `#[ignore]`d;
//! `.ci/run` installs them and runs every test.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::support::{TestEnv, npm_bin, process_alive};

fn server_bin(name: &str) -> PathBuf {
    npm_bin(name)
}

/// A workspace whose `.mcp.json` declares `servers`, trusted.
fn with_servers(servers: &Value) -> TestEnv {
    TestEnv::new().file(".mcp.json", json!({"mcpServers": servers}).to_string()).trusted()
}

/// The `everything` server over stdio, started through `sh` so the test can see each start.
fn everything(bin: &Path) -> Value {
    json!({"command": "sh", "args": ["-c", "echo $$ >> starts.log; echo server-noise >&2; exec \"$0\" stdio", bin]})
}

#[test]
#[ignore = "needs the npm packages of tests/e2e (npm ci --prefix tests/e2e)"]
fn stdio_tools_are_listed_called_and_return_structured_content() {
    let bin = server_bin("mcp-server-everything");
    let env = with_servers(&json!({"everything": everything(&bin)}));
    let program = "names = [t['name'] for t in mcp_tools('everything')]\n\
                   print('echo' in names, 'get-sum' in names)\n\
                   print(mcp_call('everything', 'echo', message='hi'))\n\
                   print(everything__get_sum(a=2, b=3))\n\
                   weather = everything__get_structured_content(location='Chicago')\n\
                   print(sorted(weather))";
    let out = env.run_code(program).code(0);
    assert_eq!(
        out.stdout,
        "True True\nEcho: hi\nThe sum of 2 and 3 is 5.\n['conditions', 'humidity', 'temperature']\n"
    );
    // The server's stderr stays out of the program's output and codeact's own.
    assert!(!out.stderr.contains("server-noise"), "{}", out.stderr);
}

#[test]
#[ignore = "needs the npm packages of tests/e2e (npm ci --prefix tests/e2e)"]
fn error_results_and_unknown_names_raise_listing_what_exists() {
    let bin = server_bin("mcp-server-everything");
    let env = with_servers(&json!({"everything": everything(&bin)}));
    let (kind, message) = env.error_of("everything__get_sum(a='x', b=1)");
    assert_eq!(kind, "RuntimeError");
    assert!(message.starts_with("MCP tool 'everything.get-sum' failed: "), "{message}");
    assert!(message.contains("expected number"), "{message}");
    let (kind, message) = env.error_of("mcp_call('nowhere', 'echo')");
    assert_eq!(
        (kind.as_str(), message.as_str()),
        ("ValueError", "no MCP server named 'nowhere' (configured: everything)")
    );
    let (kind, message) = env.error_of("mcp_call('everything', 'nothing')");
    assert_eq!(kind, "ValueError");
    assert!(message.starts_with("MCP server 'everything' has no tool 'nothing' (tools: echo, "), "{message}");
    let (kind, message) = env.error_of("everything__nothing()");
    assert_eq!(kind, "NameError");
    assert!(
        message.starts_with(
            "name 'everything__nothing' is not defined (MCP server 'everything' offers: everything__echo, "
        )
    );
}

#[test]
#[ignore = "needs the npm packages of tests/e2e (npm ci --prefix tests/e2e)"]
fn many_calls_in_one_run_reuse_one_server_process_which_is_reaped() {
    let bin = server_bin("mcp-server-everything");
    let env = with_servers(&json!({"everything": everything(&bin)}));
    let program = "total = 0\nfor i in range(50):\n    total += len(everything__echo(message=str(i)))\nprint(total)";
    env.run_code(program).code(0).stdout("390\n");
    let starts = std::fs::read_to_string(env.workspace().join("starts.log")).unwrap();
    assert_eq!(starts.lines().count(), 1, "{starts}");
    let pid = starts.trim();
    assert!(!process_alive(pid), "the server process {pid} outlived the run");
}

#[test]
#[ignore = "needs the npm packages of tests/e2e (npm ci --prefix tests/e2e)"]
fn a_slow_tool_past_its_per_call_timeout_raises_timeout_error() {
    let bin = server_bin("mcp-server-everything");
    let mut server = everything(&bin);
    server["timeout"] = json!(1);
    let env = with_servers(&json!({"everything": server}));
    let program = "try:\n    everything__trigger_long_running_operation(duration=10, steps=5)\nexcept TimeoutError as e:\n    \
                   print(e)\nprint(everything__echo(message='after'))";
    let started = Instant::now();
    env.run_code(program)
        .code(0)
        .stdout("MCP server 'everything' did not answer trigger-long-running-operation within 1s\nEcho: after\n");
    assert!(started.elapsed() < Duration::from_secs(8), "took {:?}", started.elapsed());
}

#[test]
#[ignore = "needs the npm packages of tests/e2e (npm ci --prefix tests/e2e)"]
fn a_server_that_exits_mid_run_raises_and_the_run_goes_on() {
    let bin = server_bin("mcp-server-everything");
    let env = with_servers(&json!({"everything": everything(&bin)}));
    let program = "print(everything__echo(message='one'))\n\
                   bash(command='kill $(cat starts.log)')\n\
                   try:\n    everything__echo(message='two')\nexcept RuntimeError as e:\n    print(str(e).splitlines()[0][:40])\n\
                   print('done')";
    env.run_code(program).code(0).stdout("Echo: one\nMCP server 'everything': calling 'echo' \ndone\n");
}

#[test]
#[ignore = "needs the npm packages of tests/e2e (npm ci --prefix tests/e2e)"]
fn a_server_command_that_does_not_exist_is_reported_and_never_advertised() {
    let bin = server_bin("mcp-server-everything");
    let env = with_servers(&json!({"everything": everything(&bin), "ghost": {"command": "/nonexistent/mcp-server"}}));
    let (kind, message) = env.error_of("ghost__anything()");
    assert_eq!(kind, "RuntimeError");
    assert_eq!(
        message,
        "MCP server 'ghost': could not start `/nonexistent/mcp-server`: No such file or directory (os error 2)"
    );
    let out = env.run(&["discover"], "").code(0);
    let manifest: Value = serde_json::from_str(&out.stdout).unwrap();
    let servers: Vec<&str> =
        manifest["mcp_servers"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(servers, ["everything"]);
    assert_eq!(
        out.stderr,
        "warning: MCP server `ghost` left out: MCP server 'ghost': could not start `/nonexistent/mcp-server`: No such file or directory (os error 2)\n"
    );
    let instructions = env.run(&["instructions"], "").code(0).stdout;
    assert!(instructions.contains("- `everything`: echo, ") && !instructions.contains("ghost"), "{instructions}");
}

#[test]
#[ignore = "needs the npm packages of tests/e2e (npm ci --prefix tests/e2e)"]
fn stdio_servers_get_a_minimal_environment_plus_their_own_expanded_env() {
    let bin = server_bin("mcp-server-everything");
    let mut server = everything(&bin);
    server["env"] = json!({"GREETING": "hello ${env:CODEACT_TEST_NAME}"});
    let env = with_servers(&json!({"everything": server}))
        .env("CODEACT_TEST_NAME", "world")
        .env("GITHUB_TOKEN", "ghp_never_passed");
    let out = env.stdout_of(
        "import json\nenv = json.loads(everything__get_env())\nprint(env['GREETING'], 'GITHUB_TOKEN' in env)",
    );
    assert_eq!(out, "hello world False\n");
}

#[test]
#[ignore = "needs the npm packages of tests/e2e (npm ci --prefix tests/e2e)"]
fn two_servers_work_side_by_side_in_one_program() {
    let (everything_bin, fs_bin) = (server_bin("mcp-server-everything"), server_bin("mcp-server-filesystem"));
    let env = TestEnv::new().file("notes.txt", "from the filesystem server\n");
    let servers =
        json!({"everything": everything(&everything_bin), "files": {"command": fs_bin, "args": [env.workspace()]}});
    std::fs::write(env.workspace().join(".mcp.json"), json!({"mcpServers": servers}).to_string()).unwrap();
    env.trust();
    let notes = env.workspace().join("notes.txt");
    let program = format!(
        "print(files__read_text_file(path={notes:?})['content'], end='')\nprint(everything__echo(message='both'))"
    );
    env.run_code(&program).code(0).stdout("from the filesystem server\nEcho: both\n");
}

/// A streamable-HTTP `everything` server on a free loopback port; killed on drop.
struct HttpServer(std::process::Child, u16);

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn http_server(bin: &Path) -> HttpServer {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let child = std::process::Command::new(bin)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(started.elapsed() < Duration::from_secs(20), "the HTTP server did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    HttpServer(child, port)
}

#[test]
#[ignore = "needs the npm packages of tests/e2e (npm ci --prefix tests/e2e)"]
fn streamable_http_servers_work_with_configured_headers() {
    let bin = server_bin("mcp-server-everything");
    let server = http_server(&bin);
    let url = format!("http://127.0.0.1:{}/mcp", server.1);
    // A workspace's server on loopback needs the user's own network allowance.
    let env = with_servers(
        &json!({"remote": {"type": "http", "url": url, "headers": {"X-Codeact-Test": "${env:CODEACT_TEST_HEADER}"}}}),
    )
    .user_config(r#"{"network": {"allowed_hosts": ["127.0.0.1"]}}"#)
    .env("CODEACT_TEST_HEADER", "yes");
    let program = "print(len(mcp_tools('remote')) > 5)\nprint(remote__get_sum(a=40, b=2))\nprint(mcp_call('remote', 'echo', message='http'))";
    env.run_code(program).code(0).stdout("True\nThe sum of 40 and 2 is 42.\nEcho: http\n");
}
