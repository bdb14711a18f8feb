//! `codeact mcp serve`, driven by the official Python MCP SDK (`tests/mcp/client.py`) over
//! stdio and streamable HTTP: the tools it lists, programs with tools on a test workspace,
//! errors, timeouts, cancellation, progress, concurrent clients, bounded output and confinement;
//! and, with plain HTTP requests, the Host, Origin and token checks.
//!
//! The SDK tests are `#[ignore]`d: they need `target/mcp-venv`, which `.ci/run` makes.

use std::fmt::Write as _;
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::support::{
    BIN, TestEnv, assert_none_left, marked, mcp_python, mcp_script, process_alive, python3, tokens, wait_for_file,
};

/// The workspace the programs work on.
fn workspace() -> TestEnv {
    TestEnv::new()
        .file("notes/todo.txt", "first line\nTODO: ship the server\n")
        .file("src/lib.rs", "// TODO: document\nfn main() {}\n")
}

/// How a test reaches the server.
enum Transport {
    Stdio,
    Http(Server),
}

/// A `codeact mcp serve --http` process, killed when dropped.
struct Server {
    child: Child,
    url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `codeact mcp serve --http 127.0.0.1:0` in `env` with `extra` arguments and reads the
/// URL it announces.
fn http_server(env: &TestEnv, extra: &[&str]) -> Server {
    let mut args = vec!["mcp", "serve", "--http", "127.0.0.1:0"];
    args.extend_from_slice(extra);
    let mut command = env.command(&args);
    command.stdin(Stdio::null());
    start_http(command)
}

/// Starts `command`, a `codeact mcp serve --http`, and reads the URL it announces.
fn start_http(mut command: Command) -> Server {
    let child = command.stderr(Stdio::piped()).spawn().expect("start the server");
    let mut server = Server { child, url: String::new() };
    let mut stderr = BufReader::new(server.child.stderr.take().expect("stderr"));
    let mut line = String::new();
    loop {
        line.clear();
        let read = stderr.read_line(&mut line).expect("read the server's stderr");
        assert!(read > 0, "the server ended before it listened");
        if let Some(url) = line.trim().strip_prefix("codeact: serving MCP at ") {
            url.clone_into(&mut server.url);
            // Keep draining its stderr so that it never blocks on a full pipe.
            std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
            return server;
        }
    }
}

/// Runs one scenario of `tests/mcp/client.py` and returns what it printed.
fn client(env: &TestEnv, transport: &Transport, scenario: Value) -> Value {
    let mut request = scenario;
    match transport {
        Transport::Stdio => {
            let command = env.command(&[]);
            let envs: serde_json::Map<String, Value> = command
                .get_envs()
                .filter_map(|(key, value)| Some((key.to_str()?.to_owned(), json!(value?.to_str()?))))
                .collect();
            request["transport"] = json!("stdio");
            request["command"] = json!(*BIN);
            request["args"] = json!(["mcp", "serve"]);
            request["env"] = Value::Object(envs);
            request["cwd"] = json!(env.workspace());
        }
        Transport::Http(server) => {
            request["transport"] = json!("http");
            request["url"] = json!(server.url);
        }
    }
    let python = mcp_python();
    assert!(python.is_file(), "the MCP test venv is missing: make it as `.ci/run` does (target/mcp-venv)");
    let mut child = Command::new(python)
        .arg(mcp_script("client.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the Python client");
    child.stdin.take().expect("stdin").write_all(request.to_string().as_bytes()).expect("write the request");
    let output = child.wait_with_output().expect("wait for the Python client");
    assert!(
        output.status.success(),
        "the client failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("the client prints JSON")
}

fn calls(env: &TestEnv, transport: &Transport, calls: &[Value]) -> Vec<Value> {
    let seen = client(env, transport, json!({"scenario": "calls", "calls": calls}));
    seen["results"].as_array().expect("results").clone()
}

fn run(code: &str) -> Value {
    json!({"tool": "run", "arguments": {"code": code}})
}

fn both(test: impl Fn(&TestEnv, &Transport)) {
    let env = workspace();
    test(&env, &Transport::Stdio);
    let server = http_server(&env, &[]);
    test(&env, &Transport::Http(server));
}

#[test]
#[ignore = "needs the Python MCP SDK in target/mcp-venv (.ci/run makes it)"]
fn lists_run_and_describe_with_schemas_and_the_reference_as_instructions() {
    both(|env, transport| {
        let seen = client(env, transport, json!({"scenario": "list"}));
        assert_eq!(seen["server"], "codeact");
        let instructions = seen["instructions"].as_str().expect("instructions");
        assert!(instructions.starts_with("# codeact: tools as Python functions"), "{instructions}");
        assert!(instructions.contains("`run` tool") && instructions.contains("- `grep(pattern"), "{instructions}");
        assert!(!instructions.contains("<<'PY'"), "no shell here-document over MCP: {instructions}");
        let names: Vec<&str> =
            seen["tools"].as_array().expect("tools").iter().filter_map(|t| t["name"].as_str()).collect();
        assert_eq!(names, ["run", "describe"]);
        let run = &seen["tools"][0];
        // `code`, or `wait` for a run still running: checked on the call, with a message.
        assert_eq!(run["input_schema"]["required"], Value::Null);
        assert_eq!(run["input_schema"]["properties"]["code"]["type"], "string");
        assert_eq!(run["output_schema"]["properties"]["success"]["type"], "boolean");
        // Short, since every client shows it on every request: the signatures are elsewhere.
        let description = run["description"].as_str().expect("description");
        assert!(description.contains("`describe`") && description.len() < 200, "{description}");
    });
}

#[test]
#[ignore = "needs the Python MCP SDK in target/mcp-venv (.ci/run makes it)"]
fn programs_call_tools_on_the_workspace_and_errors_come_back_as_tracebacks() {
    both(|env, transport| {
        let results = calls(
            env,
            transport,
            &[
                run(
                    "hits = grep(pattern='TODO')\nfor m in sorted(hits, key=lambda m: m['path']):\n    print(m['path'], m['line'])\nlen(view(path='notes/todo.txt').splitlines())",
                ),
                run("print('before')\n1/0"),
                json!({"tool": "describe", "arguments": {"names": ["grep"]}}),
                json!({"tool": "describe", "arguments": {"names": ["nope"]}}),
                json!({"tool": "run", "arguments": {"code": "1", "timeout": -1}}),
            ],
        );
        let found = &results[0];
        assert_eq!(found["is_error"], false, "{found}");
        assert_eq!(found["text"], "notes/todo.txt 2\nsrc/lib.rs 1\n2\n");
        assert_eq!(found["structured"]["success"], true);
        assert_eq!(found["structured"]["stdout"], "notes/todo.txt 2\nsrc/lib.rs 1\n");
        assert_eq!(found["structured"]["return_value"], 2);
        assert_eq!(found["structured"]["tool_calls"], 2);

        let failed = &results[1];
        assert_eq!(failed["is_error"], true);
        let text = failed["text"].as_str().expect("text");
        assert!(text.starts_with("before\nTraceback (most recent call last):\n"), "{text}");
        assert!(text.ends_with("ZeroDivisionError: division by zero\n"), "{text}");
        assert_eq!(failed["structured"]["error"]["type"], "ZeroDivisionError");

        let doc: Value = serde_json::from_str(results[2]["text"].as_str().expect("text")).expect("JSON docs");
        assert_eq!(doc[0]["name"], "grep");
        assert!(doc[0]["parameters"]["properties"]["pattern"].is_object(), "{doc}");
        assert_eq!(results[3]["is_error"], true);
        assert!(results[3]["text"].as_str().expect("text").contains("no tool `nope`; the tools are: view,"));
        let refused = results[4]["protocol_error"].as_str().expect("a protocol error");
        assert!(refused.contains("timeout must be between 0 and"), "{refused}");
    });
}

#[test]
#[ignore = "needs the Python MCP SDK in target/mcp-venv (.ci/run makes it)"]
fn a_timeout_ends_the_program_and_a_huge_print_is_cut() {
    both(|env, transport| {
        let results = calls(
            env,
            transport,
            &[
                json!({"tool": "run", "arguments": {"code": "print('start')\nwhile True:\n    pass", "timeout": 1}}),
                run("print('x' * 10_000_000)"),
            ],
        );
        let timed_out = &results[0];
        assert_eq!(timed_out["is_error"], true);
        assert!(timed_out["text"].as_str().expect("text").contains("TimeoutError"), "{timed_out}");
        assert!(timed_out["seconds"].as_f64().expect("seconds") < 10.0, "{timed_out}");
        let big = &results[1];
        assert_eq!(big["is_error"], false);
        assert_eq!(big["structured"]["truncated"], true);
        let text = big["text"].as_str().expect("text");
        assert!(text.len() < 25_000, "{} bytes came back", text.len());
        assert!(
            text.starts_with("xxxx") && text.contains("bytes of output elided"),
            "{}",
            &text[..200.min(text.len())]
        );
    });
}

#[test]
#[ignore = "needs the Python MCP SDK in target/mcp-venv (.ci/run makes it)"]
fn paths_outside_the_workspace_are_refused() {
    both(|env, transport| {
        let outside = env.outside().join("secret.txt");
        std::fs::write(&outside, "secret").expect("write outside");
        let results = calls(
            env,
            transport,
            &[
                run(&format!("view(path={:?})", outside.display().to_string())),
                run("view(path='../outside/secret.txt')"),
                run("create(path='../outside/planted.txt', file_text='x')"),
            ],
        );
        for result in &results {
            assert_eq!(result["is_error"], true, "{result}");
            assert!(!result["text"].as_str().expect("text").contains("secret\n"), "{result}");
            assert!(result["text"].as_str().expect("text").contains("PermissionError"), "{result}");
        }
        assert!(!env.outside().join("planted.txt").exists());
    });
}

#[test]
#[ignore = "needs the Python MCP SDK in target/mcp-venv (.ci/run makes it)"]
fn a_long_program_reports_progress() {
    both(|env, transport| {
        let seen = client(
            env,
            transport,
            json!({"scenario": "progress", "arguments": {"code": "bash(command='sleep 3')\nprint('done')", "timeout": 20}}),
        );
        assert_eq!(seen["result"]["text"], "done\n", "{seen}");
        let progress = seen["progress"].as_array().expect("progress");
        assert!(progress.len() >= 2, "{seen}");
        assert_eq!(progress[0]["total"], 20.0);
        assert!(progress[1]["progress"].as_f64() > progress[0]["progress"].as_f64(), "{seen}");
        assert!(progress[0]["message"].as_str().expect("message").starts_with("running for "), "{seen}");
    });
}

#[test]
#[ignore = "needs the Python MCP SDK in target/mcp-venv (.ci/run makes it)"]
fn a_cancelled_call_stops_its_program_and_the_server_goes_on() {
    both(|env, transport| {
        let pid_file = env.workspace().join("sleeper.pid");
        let _ = std::fs::remove_file(&pid_file);
        let code = "bash(command='echo $$ > sleeper.pid; exec sleep 60')\nprint('finished')";
        let seen = client(
            env,
            transport,
            json!({"scenario": "cancel", "after": 2, "pid_file": pid_file, "arguments": {"code": code, "timeout": 120}}),
        );
        assert_eq!(seen["abandoned"], true, "{seen}");
        // Looked at by the client while its session was still open: ending the session (or the
        // stdio server) would stop the program anyway.
        assert_eq!(seen["alive_after_cancel"], false, "the cancelled program's command still ran: {seen}");
        let pid = std::fs::read_to_string(&pid_file).expect("the program started its command");
        assert!(!process_alive(&pid), "the cancelled program's command {} is still running", pid.trim());
        assert_eq!(seen["after"]["text"], "after\n", "{seen}");
    });
}

#[test]
#[ignore = "needs the Python MCP SDK in target/mcp-venv (.ci/run makes it)"]
fn concurrent_clients_run_at_once() {
    let env = workspace();
    let sleep = json!({"code": "bash(command='sleep 2')\nprint('ok')", "timeout": 30});
    let server = http_server(&env, &[]);
    let seen =
        client(&env, &Transport::Http(server), json!({"scenario": "concurrent", "clients": 3, "arguments": sleep}));
    for result in seen["results"].as_array().expect("results") {
        assert_eq!(result["text"], "ok\n", "{seen}");
    }
    // One after another would take 6 s.
    assert!(seen["seconds"].as_f64().expect("seconds") < 5.0, "{seen}");

    // With one slot, the calls wait their turn.
    let server = http_server(&env, &["--max-concurrent", "1"]);
    let seen =
        client(&env, &Transport::Http(server), json!({"scenario": "concurrent", "clients": 2, "arguments": sleep}));
    assert!(seen["seconds"].as_f64().expect("seconds") >= 4.0, "{seen}");

    // Two calls at once in one session of one stdio server: the one that does not hold the
    // session's state runs with a copy of it, and says so.
    let seen = client(&env, &Transport::Stdio, json!({"scenario": "parallel", "calls": 2, "arguments": sleep}));
    let texts: Vec<&str> = seen["results"].as_array().expect("results").iter().map(text).collect();
    assert!(texts.iter().all(|text| text.starts_with("ok\n")), "{seen}");
    assert_eq!(texts.iter().filter(|text| text.contains("another call of this session was running")).count(), 1);
    assert!(seen["seconds"].as_f64().expect("seconds") < 4.0, "{seen}");
}

/// One raw HTTP/1.1 POST of an `initialize` request with `headers`; returns the status line.
fn post_initialize(url: &str, headers: &[(&str, &str)]) -> String {
    initialize_response(url, headers).lines().next().unwrap_or_default().to_owned()
}

/// One raw HTTP/1.1 POST of an `initialize` request with `headers`; returns the whole response.
fn initialize_response(url: &str, headers: &[(&str, &str)]) -> String {
    let authority = url.trim_start_matches("http://").trim_end_matches("/mcp");
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    })
    .to_string();
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    if !headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("host")) {
        let _ = write!(request, "Host: {authority}\r\n");
    }
    for (name, value) in headers {
        let _ = write!(request, "{name}: {value}\r\n");
    }
    request.push_str("\r\n");
    request.push_str(&body);
    let mut stream = TcpStream::connect(authority).expect("connect");
    stream.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
    stream.write_all(request.as_bytes()).expect("send");
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    response
}

/// Every SSE event the HTTP server sends carries a JSON message: a client that parses each
/// event's data as JSON (the TypeScript SDK in Gemini CLI) reads no empty one, on the answer to
/// a POST or on the stream a GET opens.
#[test]
fn http_events_all_carry_a_message() {
    let env = workspace();
    let server = http_server(&env, &[]);
    let response = initialize_response(&server.url, &[]);
    let (head, body) = response.split_once("\r\n\r\n").expect("a response");
    assert!(head.to_ascii_lowercase().contains("content-type: text/event-stream"), "{head}");
    let data: Vec<&str> = body.lines().filter_map(|line| line.strip_prefix("data:")).collect();
    assert_eq!(data.len(), 1, "one event, the answer: {body}");
    let answer: Value = serde_json::from_str(data[0].trim()).expect("the event's data is JSON");
    assert_eq!(answer["id"], 1, "{answer}");
    assert!(!body.lines().any(|line| line.starts_with("retry:")), "no priming event: {body}");

    // The stream a GET opens, in the session the answer named.
    let session = head
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id").then(|| value.trim().to_owned())
        })
        .expect("a session id");
    let authority = server.url.trim_start_matches("http://").trim_end_matches("/mcp").to_owned();
    let send = |request: String| {
        let mut stream = TcpStream::connect(&authority).expect("connect");
        stream.set_read_timeout(Some(Duration::from_secs(2))).expect("timeout");
        stream.write_all(request.as_bytes()).expect("send");
        let mut response = Vec::new();
        let _ = stream.read_to_end(&mut response);
        String::from_utf8_lossy(&response).into_owned()
    };
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    let posted = send(format!(
        "POST /mcp HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\nAccept: application/json, \
         text/event-stream\r\nMcp-Session-Id: {session}\r\nMcp-Protocol-Version: 2025-06-18\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{initialized}",
        initialized.len()
    ));
    assert!(posted.starts_with("HTTP/1.1 202"), "{posted}");
    // Read until the server has nothing more to say for two seconds.
    let stream = send(format!(
        "GET /mcp HTTP/1.1\r\nHost: {authority}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {session}\r\n\
         Mcp-Protocol-Version: 2025-06-18\r\n\r\n"
    ));
    assert!(stream.starts_with("HTTP/1.1 200"), "{stream}");
    for line in stream.lines().filter_map(|line| line.strip_prefix("data:")) {
        assert!(serde_json::from_str::<Value>(line.trim()).is_ok(), "an event without a message: {stream}");
    }
    assert!(!stream.lines().any(|line| line.starts_with("retry:")), "no priming event: {stream}");
}

#[test]
fn http_refuses_other_hosts_and_origins_against_dns_rebinding() {
    let env = workspace();
    let server = http_server(&env, &[]);
    let port = server.url.rsplit(':').next().expect("port").trim_end_matches("/mcp").to_owned();
    assert!(post_initialize(&server.url, &[]).contains(" 200 "));
    assert!(post_initialize(&server.url, &[("Host", &format!("localhost:{port}"))]).contains(" 200 "));
    assert!(post_initialize(&server.url, &[("Origin", &format!("http://localhost:{port}"))]).contains(" 200 "));
    for headers in [
        vec![("Host", format!("evil.example:{port}"))],
        vec![("Host", format!("attacker.localhost.example:{port}"))],
        vec![("Origin", "http://evil.example".to_owned())],
        vec![("Origin", "null".to_owned())],
    ] {
        let headers: Vec<(&str, &str)> = headers.iter().map(|(name, value)| (*name, value.as_str())).collect();
        let status = post_initialize(&server.url, &headers);
        assert!(status.contains(" 403 "), "{headers:?}: {status}");
    }
}

#[test]
fn a_token_is_required_when_set_and_a_remote_address_needs_one() {
    let env = workspace().env("CODEACT_MCP_TOKEN", "0123456789abcdef0123456789abcdef");
    let server = http_server(&env, &[]);
    assert!(post_initialize(&server.url, &[]).contains(" 401 "));
    assert!(post_initialize(&server.url, &[("Authorization", "Bearer wrong")]).contains(" 401 "));
    let good = post_initialize(&server.url, &[("Authorization", "Bearer 0123456789abcdef0123456789abcdef")]);
    assert!(good.contains(" 200 "), "{good}");

    let out = workspace().run(&["mcp", "serve", "--http", "0.0.0.0:0"], "");
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("is not a loopback address"), "{}", out.stderr);
    let out = workspace().run(&["mcp", "serve", "--http", "0.0.0.0:0", "--allow-remote"], "");
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("CODEACT_MCP_TOKEN set to a secret of at least 32"), "{}", out.stderr);
    let out = workspace()
        .env("CODEACT_MCP_TOKEN", "short")
        .run(&["mcp", "serve", "--http", "0.0.0.0:0", "--allow-remote"], "");
    assert_eq!(out.code, 2, "{}", out.stderr);
}

#[test]
#[ignore = "needs the Python MCP SDK in target/mcp-venv (.ci/run makes it)"]
fn the_limit_variables_hold_for_every_call_as_for_codeact_run() {
    let env = workspace().env("CODEACT_MAX_OUTPUT", "1000").env("CODEACT_TIMEOUT", "1");
    let results = calls(
        &env,
        &Transport::Stdio,
        &[run("print('x' * 5000)"), run("kept = 1\nwhile True:\n    pass"), run("print(kept)\nwhile True:\n    pass")],
    );
    assert_eq!(results[0]["structured"]["truncated"], true, "{}", results[0]);
    assert!(results[0]["text"].as_str().expect("text").len() < 1200, "{}", results[0]);
    assert!(results[1]["text"].as_str().expect("text").contains("TimeoutError"), "{}", results[1]);
    assert!(results[1]["seconds"].as_f64().expect("seconds") < 10.0, "{}", results[1]);
    // In a session too, each call has the limits whole.
    let next = results[2]["text"].as_str().expect("text");
    assert!(next.starts_with("1\n") && next.contains("TimeoutError"), "{next}");
    assert!(results[2]["seconds"].as_f64().expect("seconds") >= 0.9, "{}", results[2]);
}

#[test]
#[ignore = "needs the Python MCP SDK in target/mcp-venv (.ci/run makes it)"]
fn malformed_arguments_are_refused_and_a_large_program_runs() {
    let env = workspace();
    // A program of 2 MB, more than a pipe holds: it is written while the run reads it.
    let large = format!("{}print(total)", "total = 1\n".repeat(200_000));
    let results = calls(
        &env,
        &Transport::Stdio,
        &[
            json!({"tool": "run", "arguments": {"code": "1", "shell": "rm -rf /"}}),
            json!({"tool": "run", "arguments": {"code": ["print(1)"]}}),
            json!({"tool": "run", "arguments": {"code": "1", "timeout": "10"}}),
            json!({"tool": "run", "arguments": {"code": "1", "timeout": 1e300}}),
            json!({"tool": "describe", "arguments": {"names": "grep"}}),
            json!({"tool": "nope", "arguments": {}}),
            run(&large),
        ],
    );
    let refusals = [
        "`run` takes `code`, `timeout`, `yield_after`, `wait` and `stop`, not `shell`",
        "`run` needs `code`",
        "`timeout` is a number of seconds",
        "timeout must be between 0 and",
        "`names` is a list of tool names",
        "no tool `nope`",
    ];
    for (result, expected) in results.iter().zip(refusals) {
        let said = result["protocol_error"].as_str().unwrap_or_default();
        assert!(said.contains(expected), "{expected}: {result}");
    }
    assert_eq!(results[6]["text"], "1\n", "{}", results[6]);
}

/// An `initialize` request, as JSON-RPC.
fn initialize() -> Value {
    json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    })
}

/// A `tools/call` request with `id`.
pub(crate) fn tool_call(id: u64, tool: &str, arguments: Value) -> Value {
    let mut call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool}});
    call["params"]["arguments"] = arguments;
    call
}

/// A `codeact mcp serve` over stdio, as a test talks to it.
struct StdioServer {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    lines: std::io::Lines<BufReader<std::process::ChildStdout>>,
}

impl StdioServer {
    /// Starts `command` (a `codeact mcp serve`) and sends `initialize`.
    fn start(mut command: Command, stderr: Stdio) -> Self {
        let mut child =
            command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(stderr).spawn().expect("start the server");
        let stdin = child.stdin.take().expect("stdin");
        let lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        let mut server = Self { child, stdin, lines };
        server.send(&initialize());
        server
    }

    fn send(&mut self, message: &Value) {
        self.stdin.write_all(format!("{message}\n").as_bytes()).expect("write to the server");
    }

    /// The next answer to a request, `None` once the server's stdout ends.
    fn answer(&mut self) -> Option<Value> {
        loop {
            let Some(Ok(line)) = self.lines.next() else { return None };
            let answer: Value = serde_json::from_str(&line).expect("the server writes JSON-RPC");
            if answer.get("id").is_some() {
                return Some(answer);
            }
        }
    }
}

/// One stdio session of `command` (a `codeact mcp serve`): `initialize`, then each of `calls`;
/// returns the answers by id (the `initialize` result first) and, once stdin is closed, the
/// exit status and stderr.
fn stdio_session(command: Command, calls: &[Value]) -> (Vec<Value>, Option<i32>, String) {
    let mut server = StdioServer::start(command, Stdio::piped());
    server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    for call in calls {
        server.send(call);
    }
    let mut answers = Vec::new();
    while answers.len() < calls.len() + 1 {
        let Some(answer) = server.answer() else { break };
        answers.push(answer);
    }
    let StdioServer { child, stdin, .. } = server;
    drop(stdin);
    let output = child.wait_with_output().expect("wait for the server");
    answers.sort_by_key(|answer| answer["id"].as_u64());
    (answers, output.status.code(), String::from_utf8_lossy(&output.stderr).into_owned())
}

/// One stdio session of `command` (a `codeact mcp serve`): `initialize`, then each of `calls`
/// once the one before it is answered; returns the answers (the `initialize` result first).
pub(crate) fn stdio_calls_in_turn(command: Command, calls: &[Value]) -> Vec<Value> {
    let mut server = StdioServer::start(command, Stdio::null());
    let mut answers = vec![server.answer().expect("an answer to initialize")];
    server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    for call in calls {
        server.send(call);
        answers.push(server.answer().expect("an answer"));
    }
    let StdioServer { mut child, stdin, .. } = server;
    drop(stdin);
    let _ = child.wait();
    answers
}

/// The text of a `tools/call` result.
pub(crate) fn result_text(answer: &Value) -> &str {
    answer["result"]["content"][0]["text"].as_str().unwrap_or_default()
}

#[test]
fn describe_answers_each_tool_once_and_refuses_more_names_than_there_are_tools() {
    let env = workspace();
    let many: Vec<&str> = std::iter::repeat_n("view", 10_000).collect();
    let long = "x".repeat(100_000);
    let (answers, _, _) = stdio_session(
        env.command(&["mcp", "serve"]),
        &[
            tool_call(1, "describe", json!({"names": ["view", "grep", "view", "grep", "view"]})),
            tool_call(2, "describe", json!({"names": many})),
            tool_call(3, "describe", json!({"names": [long]})),
            tool_call(4, "describe", json!({"names": ["view", 7]})),
            tool_call(5, &long, json!({})),
        ],
    );
    let docs: Value = serde_json::from_str(result_text(&answers[1])).expect("JSON docs");
    let names: Vec<&str> = docs.as_array().expect("a list").iter().filter_map(|doc| doc["name"].as_str()).collect();
    assert_eq!(names, ["view", "grep"]);

    let refused = answers[2]["error"]["message"].as_str().expect("an error");
    assert!(refused.contains("`names` lists 10000 names, and there are ") && refused.contains(" tools"), "{refused}");
    // An unknown name is not echoed whole: the answer stays small whatever was asked.
    let unknown = result_text(&answers[3]);
    assert!(unknown.starts_with("no tool `xxxx") && unknown.len() < 2_000, "{} bytes", unknown.len());
    let mixed = answers[4]["error"]["message"].as_str().expect("an error");
    assert!(mixed.contains("`names` is a list of tool names"), "{mixed}");
    let other = answers[5]["error"]["message"].as_str().expect("an error");
    assert!(other.starts_with("no tool `xxxx") && other.len() < 2_000, "{} bytes", other.len());
}

/// Every way of naming the home directory, or a folder above it, or the root, that a client or a
/// plugin might pass: each is refused with the same error, over stdio and over HTTP.
#[test]
fn the_root_and_home_are_refused_however_they_are_named() {
    let env = workspace().symlink("../home", "homelink");
    let home = env.home();
    let link = env.workspace().join("homelink");
    let home_text = home.display().to_string();
    let up = format!("{}/..", home.display());
    let named: [(&std::path::Path, &[&str]); 7] = [
        (&home, &["--workspace", "."]),
        (&home, &["--workspace", &home_text]),
        (&env.workspace(), &["--workspace", "homelink"]),
        (&env.workspace(), &["--workspace", "homelink/"]),
        (&home, &["--workspace", &up]),
        (std::path::Path::new("/"), &["--workspace", "//"]),
        (std::path::Path::new("/tmp"), &["--workspace", ".."]),
    ];
    let refused = |command: &mut Command, what: &str| {
        let out = command.stdin(Stdio::null()).output().expect("run");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{what}: {stderr}");
        assert!(
            stderr.contains("every program would reach all of it") && stderr.contains("--allow-broad-workspace"),
            "{what}: {stderr}"
        );
    };
    for (cwd, flags) in named {
        for http in [false, true] {
            let mut args = vec!["mcp", "serve"];
            args.extend_from_slice(flags);
            if http {
                args.extend(["--http", "127.0.0.1:0"]);
            }
            refused(env.command(&args).current_dir(cwd), &format!("{args:?} in {}", cwd.display()));
        }
    }
    // A `HOME` given through a symlink is still the home directory, named or not.
    refused(env.command(&["mcp", "serve"]).env("HOME", &link).current_dir(&home), "HOME through a link");
    refused(
        env.command(&["mcp", "serve", "--workspace", "."]).env("HOME", &link).current_dir(&home),
        "HOME through a link, named `.`",
    );
}

#[test]
fn a_refused_workspace_still_serves_a_client_every_call_answering_why() {
    let env = workspace();
    let mut command = env.command(&["mcp", "serve", "--workspace", ".", "--text-only"]);
    command.current_dir(env.home());
    let (answers, code, stderr) = stdio_session(
        command,
        &[tool_call(1, "run", json!({"code": "print(1)"})), tool_call(2, "describe", json!({}))],
    );
    let instructions = answers[0]["result"]["instructions"].as_str().expect("instructions");
    assert!(instructions.starts_with("codeact cannot serve here: the workspace would be"), "{instructions}");
    for answer in &answers[1..] {
        assert_eq!(answer["result"]["isError"], true, "{answer}");
        let text = result_text(answer);
        assert!(text.contains("every program would reach all of it\nhint: start the session in a project"), "{text}");
    }
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.starts_with("error: the workspace would be"), "{stderr}");
}

#[test]
fn allow_broad_workspace_serves_the_root_or_home_when_meant() {
    let env = workspace();
    for (cwd, workspace) in [(env.workspace(), "/"), (env.home(), ".")] {
        let out = env
            .command(&["mcp", "serve", "--workspace", workspace, "--allow-broad-workspace"])
            .current_dir(cwd)
            .stdin(Stdio::null())
            .output()
            .expect("run");
        let stderr = String::from_utf8_lossy(&out.stderr);
        // The server starts, and waits for a client that, here, closes its stdin at once.
        assert!(stderr.contains("the MCP client did not initialize") && !stderr.contains("would reach"), "{stderr}");
    }
}

/// The host and port of a server's URL.
fn authority(url: &str) -> &str {
    url.trim_start_matches("http://").trim_end_matches("/mcp")
}

/// One HTTP/1.0 POST of `body` to `/mcp` with `headers` (so the answer ends with the
/// connection, even an event stream); returns the status line, the session the answer names,
/// and each JSON-RPC message of the answer.
fn post(url: &str, headers: &[(&str, &str)], body: &Value) -> (String, Option<String>, Vec<Value>) {
    let mut stream = send_post(url, headers, body);
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    let status = head.lines().next().unwrap_or_default().to_owned();
    let session = head.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.eq_ignore_ascii_case("mcp-session-id").then(|| value.trim().to_owned())
    });
    let messages = body
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str(data.trim()).ok())
        .chain(serde_json::from_str(body.trim()).ok())
        .collect();
    (status, session, messages)
}

/// Sends a POST of `body` to `/mcp` and returns the connection, its answer unread.
fn send_post(url: &str, headers: &[(&str, &str)], body: &Value) -> TcpStream {
    let authority = authority(url);
    let body = body.to_string();
    let mut request = format!(
        "POST /mcp HTTP/1.0\r\nHost: {authority}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-06-18\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        let _ = write!(request, "{name}: {value}\r\n");
    }
    request.push_str("\r\n");
    request.push_str(&body);
    let mut stream = TcpStream::connect(authority).expect("connect");
    stream.set_read_timeout(Some(Duration::from_secs(60))).expect("timeout");
    stream.write_all(request.as_bytes()).expect("send");
    stream
}

/// Opens an MCP session on the server at `url` (`headers` on every request) and returns its id.
fn open_session(url: &str, headers: &[(&str, &str)]) -> String {
    let (status, session, _) = post(url, headers, &initialize());
    assert!(status.contains(" 200 "), "{status}");
    let session = session.expect("a session id");
    let mut with_session = headers.to_vec();
    with_session.push(("Mcp-Session-Id", &session));
    let (status, _, _) = post(url, &with_session, &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    assert!(status.contains(" 202 "), "{status}");
    session
}

/// A session ended with `DELETE /mcp` is answered 200, which clients take for done (the
/// Python SDK warns of anything but 200 and 204), and is gone.
#[test]
fn an_http_session_ends_with_delete_answered_ok() {
    let env = workspace();
    let server = http_server(&env, &[]);
    let session = open_session(&server.url, &[]);
    let delete = |session: &str| {
        let mut stream = TcpStream::connect(authority(&server.url)).expect("connect");
        stream.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
        let request = format!(
            "DELETE /mcp HTTP/1.1\r\nHost: {}\r\nMcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-06-18\r\nConnection: close\r\n\r\n",
            authority(&server.url)
        );
        stream.write_all(request.as_bytes()).expect("send");
        let mut response = String::new();
        let _ = stream.read_to_string(&mut response);
        response.lines().next().unwrap_or_default().to_owned()
    };
    let ended = delete(&session);
    assert!(ended.contains(" 200 "), "{ended}");
    let with_session = [("Mcp-Session-Id", session.as_str())];
    let (status, _, _) = post(&server.url, &with_session, &tool_call(1, "run", json!({"code": "1"})));
    assert!(status.contains(" 404 "), "the ended session still answers: {status}");
}

/// Runs `code` with `timeout` in a new session of the server at `url`; returns its result.
#[cfg_attr(not(target_os = "linux"), expect(dead_code, reason = "the token tests that use it are Linux's"))]
fn http_run(url: &str, headers: &[(&str, &str)], code: &str) -> Value {
    let session = open_session(url, headers);
    let mut with_session = headers.to_vec();
    with_session.push(("Mcp-Session-Id", &session));
    let (status, _, messages) = post(url, &with_session, &tool_call(1, "run", json!({"code": code, "timeout": 30})));
    assert!(status.contains(" 200 "), "{status}");
    messages.into_iter().find(|message| message["id"] == 1).expect("the call's answer")
}

/// On a machine where the tests run as root, who may read every process, runs `command` as
/// another user (and lets that user into the test's folders), so that what the user's own
/// processes may read of it is what is tested.
#[cfg_attr(not(target_os = "linux"), expect(dead_code, reason = "the token tests that use it are Linux's"))]
fn as_a_user(env: &TestEnv, command: &mut Command) {
    use std::os::unix::fs::PermissionsExt as _;
    use std::os::unix::process::CommandExt as _;
    if !rustix::process::geteuid().is_root() {
        return;
    }
    let mut dirs = vec![env.root()];
    while let Some(dir) = dirs.pop() {
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).expect("open the folder");
        for entry in std::fs::read_dir(&dir).expect("read the folder").flatten() {
            if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                dirs.push(entry.path());
            }
        }
    }
    command.uid(65534).gid(65534);
}

/// The review's attack: a program's `bash` reads the server's environment through `/proc`,
/// and its memory and open files, whether the token came from the environment or, through a
/// pipe (as `--token-file <(…)` gives it), from `--token-file`.
#[cfg(target_os = "linux")]
#[test]
fn a_programs_bash_cannot_read_the_servers_token() {
    const TOKEN: &str = "tok-0123456789abcdef0123456789abcdef-SECRET";
    let env = workspace();
    for from_file in [false, true] {
        let mut command = env.command(&["mcp", "serve", "--http", "127.0.0.1:0"]);
        command.stdin(Stdio::null());
        let pipe = env.outside().join("token.pipe");
        if from_file {
            nix::unistd::mkfifo(&pipe, nix::sys::stat::Mode::from_bits_truncate(0o666)).expect("mkfifo");
            command.arg("--token-file").arg(&pipe);
        } else {
            command.env("CODEACT_MCP_TOKEN", TOKEN);
        }
        as_a_user(&env, &mut command);
        let mut child = command.stderr(Stdio::piped()).spawn().expect("start the server");
        if from_file {
            // Opening the pipe waits for the server to open it too.
            std::fs::write(&pipe, format!("{TOKEN}\n")).expect("write the token");
        }
        let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
        let server = Server { child, url: String::new() };
        let mut line = String::new();
        stderr.read_line(&mut line).expect("the server's URL");
        let url = line.trim().strip_prefix("codeact: serving MCP at ").unwrap_or_else(|| panic!("{line}")).to_owned();
        let pid = server.child.id();
        let code = format!(
            "r = bash(command='for f in /proc/{pid}/environ /proc/{pid}/mem /proc/{pid}/fd/0 /proc/$PPID/environ; do \
             tr \"\\\\0\" \"\\\\n\" < $f; done; env')\nprint(r['stdout'], r['stderr'])"
        );
        let bearer = format!("Bearer {TOKEN}");
        let result = http_run(&url, &[("Authorization", &bearer)], &code);
        let text = result_text(&result);
        assert!(text.contains(&format!("/proc/{pid}/environ: Permission denied")), "{text}");
        assert!(!text.contains("tok-0123") && !text.contains("CODEACT_MCP_TOKEN"), "from a file: {from_file}: {text}");
    }
}

#[test]
fn the_token_may_come_from_a_file_named_by_flag_or_variable() {
    let env = workspace()
        .outside_file("token", "0123456789abcdef0123456789abcdef\nsecond line\n")
        .outside_file("empty", "\n");
    let file = env.outside().join("token").display().to_string();
    let by_variable = workspace().env("CODEACT_MCP_TOKEN_FILE", &file);
    for server in [http_server(&env, &["--token-file", &file]), http_server(&by_variable, &[])] {
        assert!(post_initialize(&server.url, &[]).contains(" 401 "));
        assert!(post_initialize(&server.url, &[("Authorization", "Bearer second line")]).contains(" 401 "));
        let good = post_initialize(&server.url, &[("Authorization", "Bearer 0123456789abcdef0123456789abcdef")]);
        assert!(good.contains(" 200 "), "{good}");
    }
    let empty = env.outside().join("empty").display().to_string();
    let out = env.run(&["mcp", "serve", "--http", "127.0.0.1:0", "--token-file", &empty], "");
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("holds no token on its first line"), "{}", out.stderr);
    let out = env.run(&["mcp", "serve", "--http", "127.0.0.1:0", "--token-file", "missing"], "");
    assert!(out.stderr.contains("failed to read the token file `missing`"), "{}", out.stderr);
}

/// Connections that never finish their headers, and connections left idle after a request, are
/// closed oldest first past the bound, so a client that sends its request is served at once.
#[test]
fn connections_that_wait_for_a_request_are_bounded_and_a_client_is_still_served() {
    let env = workspace();
    let server = http_server(&env, &["--max-waiting-connections", "8"]);
    let authority = authority(&server.url).to_owned();
    let open = |request: &[u8]| {
        let mut stream = TcpStream::connect(&authority).expect("connect");
        stream.write_all(request).expect("send");
        stream
    };
    // Idle after one answer (keep-alive), then unfinished headers: 24 in all, against a bound of 8.
    let mut held: Vec<TcpStream> = (0..8)
        .map(|_| {
            let mut stream = open(format!("GET /other HTTP/1.1\r\nHost: {authority}\r\n\r\n").as_bytes());
            let mut answer = [0_u8; 64];
            let read = stream.read(&mut answer).expect("an answer");
            assert!(String::from_utf8_lossy(&answer[..read]).starts_with("HTTP/1.1 404"));
            stream
        })
        .collect();
    held.extend((0..16).map(|_| open(format!("POST /mcp HTTP/1.1\r\nHost: {authority}\r\nX-a: b\r\n").as_bytes())));
    let status = post_initialize(&server.url, &[]);
    assert!(status.contains(" 200 "), "{status}");
    // The server closed the 17 that waited longest (the client's own connection pushed out
    // one more): reading them ends, or fails, at once. The 7 that waited least are still open,
    // well within the header timeout.
    for (at, stream) in held.iter_mut().enumerate() {
        let read = if at < 17 {
            stream.set_read_timeout(Some(Duration::from_secs(30))).expect("timeout");
            stream.read_to_end(&mut Vec::new())
        } else {
            stream.set_nonblocking(true).expect("non-blocking");
            stream.read(&mut [0_u8; 16])
        };
        let closed = match read {
            Ok(_) => true,
            Err(err) => err.kind() != std::io::ErrorKind::WouldBlock,
        };
        assert_eq!(closed, at < 17, "connection {at} of 24");
    }
}

/// A client that drops its connection mid-call does not keep its program (or a slot) until the
/// call's own timeout: the program is stopped a few seconds later, as on `DELETE /mcp`.
#[test]
fn a_dropped_http_clients_program_is_stopped() {
    let env = workspace();
    let server = http_server(&env, &[]);
    let pid_file = env.workspace().join("sleeper.pid");
    let session = open_session(&server.url, &[]);
    let code = "bash(command='echo $$ > sleeper.pid; exec sleep 120', timeout=300)\nprint('finished')";
    let call = tool_call(1, "run", json!({"code": code, "timeout": 600}));
    let stream = send_post(&server.url, &[("Mcp-Session-Id", &session)], &call);
    let started = std::time::Instant::now();
    let pid = loop {
        match std::fs::read_to_string(&pid_file) {
            Ok(pid) if pid.ends_with('\n') => break pid,
            _ if started.elapsed() > Duration::from_secs(60) => panic!("the program never started its command"),
            _ => std::thread::sleep(Duration::from_millis(100)),
        }
    };
    assert!(process_alive(&pid));
    drop(stream);
    let dropped = std::time::Instant::now();
    while process_alive(&pid) {
        assert!(dropped.elapsed() < Duration::from_secs(60), "the program's command {} still runs", pid.trim());
        std::thread::sleep(Duration::from_millis(200));
    }
    // The server goes on.
    assert!(post_initialize(&server.url, &[]).contains(" 200 "));
}

/// A stdio server, marked (`IT_MARK`), in the middle of a `run` call whose program's command,
/// `command`, has written the file `started`: (the test's folders, the mark, the server, its
/// stdin).
fn serving_a_command(command: &str) -> (TestEnv, String, Child, std::process::ChildStdin) {
    let env = workspace();
    let mark = env.workspace().display().to_string();
    let env = env.env("IT_MARK", &mark);
    let mut child = env
        .command(&["mcp", "serve"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the server");
    let mut stdin = child.stdin.take().expect("stdin");
    let code = format!("bash(command={command:?})");
    for message in [
        initialize(),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        tool_call(1, "run", json!({"code": code})),
    ] {
        stdin.write_all(format!("{message}\n").as_bytes()).expect("write to the server");
    }
    wait_for_file(&env.workspace().join("started"), "the command did not start");
    (env, mark, child, stdin)
}

#[test]
fn a_client_that_leaves_mid_call_leaves_none_of_the_calls_commands_running() {
    // A command that ignores SIGTERM: the served run must get to kill it before it is killed.
    let (_env, mark, mut child, stdin) = serving_a_command("echo > started; trap '' TERM; sleep 60");
    drop(stdin);
    child.wait().expect("wait for the server");
    assert_none_left(|| marked(&mark), "processes outlived the server");
}

#[test]
fn a_run_whose_server_is_killed_outright_ends_with_its_commands() {
    let (_env, mark, mut child, _stdin) = serving_a_command("echo > started; sleep 60");
    // SIGKILL: the server ends nothing itself.
    child.kill().expect("kill the server");
    child.wait().expect("wait for the server");
    assert_none_left(|| marked(&mark), "the run or its command outlived the server");
}

/// The server's end of a run's stdin closing is what ends the run on every system (the
/// parent-death signal is Linux's only): here the test holds that end, and lives on.
#[test]
fn a_served_run_ends_with_its_commands_when_the_server_end_of_its_stdin_closes() {
    let env = workspace();
    let mark = env.workspace().display().to_string();
    let env = env.env("IT_MARK", &mark);
    let mut run = env
        .command(&["run", "--mcp-result", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the run");
    let mut stdin = run.stdin.take().expect("stdin");
    let code = "bash(command='echo > started; sleep 60')";
    stdin.write_all(format!("{}\n{code}", code.len()).as_bytes()).expect("hand over the program");
    wait_for_file(&env.workspace().join("started"), "the command did not start");
    assert!(run.try_wait().expect("the run's status").is_none(), "the run ended while its stdin was open");
    drop(stdin);
    let until = std::time::Instant::now() + Duration::from_secs(10);
    while run.try_wait().expect("the run's status").is_none() {
        assert!(std::time::Instant::now() < until, "the run did not end when its stdin closed");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_none_left(|| marked(&mark), "the run's command outlived it");
}

#[test]
fn a_served_run_refuses_a_program_handed_over_without_its_length() {
    let env = workspace();
    let mut run = env
        .command(&["run", "--mcp-result", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the run");
    run.stdin.take().expect("stdin").write_all(b"print('ran')").expect("write");
    let out = run.wait_with_output().expect("wait for the run");
    assert!(!out.status.success());
    assert!(!String::from_utf8_lossy(&out.stdout).contains("ran"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("the program's length is missing"), "{out:?}");
}

/// Where the server cannot keep its environment from the user's other processes (macOS), a
/// token taken from it is warned about, with the way that keeps it out.
#[cfg(not(target_os = "linux"))]
#[test]
fn a_token_from_the_environment_is_warned_about_where_processes_of_the_user_can_read_it() {
    let env = workspace();
    let mut command = env.command(&["mcp", "serve", "--http", "127.0.0.1:0"]);
    command.env("CODEACT_MCP_TOKEN", "tok-0123456789abcdef0123456789abcdef");
    let mut child = command.stdin(Stdio::null()).stderr(Stdio::piped()).spawn().expect("start the server");
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
    let mut said = String::new();
    while !said.contains("serving MCP at") {
        assert!(stderr.read_line(&mut said).expect("the server's stderr") > 0, "{said}");
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(said.contains("pass the token with `--token-file` instead"), "{said}");
}

#[test]
fn describe_finds_functions_by_the_words_of_a_query_and_caps_the_answer() {
    let server = json!({"command": python3(), "args": [mcp_script("raw.py"), "many", "300"]});
    let env = workspace().file(".mcp.json", json!({"mcpServers": {"big": server}}).to_string()).trusted();
    let (answers, _, stderr) = stdio_session(
        env.command(&["mcp", "serve"]),
        &[
            tool_call(1, "describe", json!({"query": "LOOKUP 0299"})),
            tool_call(2, "describe", json!({"query": "lookup"})),
            tool_call(3, "describe", json!({"query": "no such words"})),
            tool_call(4, "describe", json!({"query": ["lookup"]})),
        ],
    );
    let docs: Value =
        serde_json::from_str(result_text(&answers[1])).unwrap_or_else(|e| panic!("{e}: {}\n{stderr}", answers[1]));
    let names: Vec<&str> = docs.as_array().expect("a list").iter().filter_map(|doc| doc["name"].as_str()).collect();
    assert_eq!(names, ["big__lookup_0299"]);
    let capped = result_text(&answers[2]);
    assert!(capped.ends_with("\n(280 more: give more words)"), "{capped}");
    assert_eq!(answers[3]["result"]["isError"], true, "{}", answers[3]);
    assert!(result_text(&answers[3]).contains("no function's name or description"), "{}", answers[3]);
    let wrong = answers[4]["error"]["message"].as_str().expect("an error");
    assert!(wrong.contains("`query` is a string"), "{wrong}");
}

/// The `sessions` scenario: `clients` sessions open at once, and `steps` of (session, code,
/// pause before it in seconds), in turn.
fn sessions(env: &TestEnv, transport: &Transport, clients: usize, steps: &[(usize, &str, f64)]) -> Vec<Value> {
    let calls: Vec<Value> = steps
        .iter()
        .map(|(client, code, pause)| json!({"client": client, "tool": "run", "arguments": {"code": code}, "pause": pause}))
        .collect();
    let seen = client(env, transport, json!({"scenario": "sessions", "clients": clients, "calls": calls}));
    seen["results"].as_array().expect("results").clone()
}

fn text(result: &Value) -> &str {
    result["text"].as_str().unwrap_or_else(|| panic!("no text: {result}"))
}

#[test]
#[ignore = "needs the Python MCP SDK in target/mcp-venv (.ci/run makes it)"]
fn what_a_program_defines_stays_for_the_next_call_of_its_session_only() {
    let env = workspace();
    // One client, over stdio: variables, functions, imports and a tool bound to a name.
    let results = calls(
        &env,
        &Transport::Stdio,
        &[
            run("import json\ncount = 41\ndef bump(n):\n    return n + 1\nv = view"),
            run("print(bump(count), json.dumps(len(v(path='notes/todo.txt').splitlines())))"),
            // Deep recursion in a session's worker is an exception, as in a run of its own.
            run("def deep(n):\n    return deep(n + 1)\ndeep(0)"),
            run("print(bump(count))"),
        ],
    );
    assert_eq!(text(&results[1]), "42 2\n", "{results:?}");
    assert!(text(&results[2]).contains("RecursionError"), "{results:?}");
    assert_eq!(text(&results[3]), "42\n", "{results:?}");
    // A new client of the same server starts afresh.
    let results = calls(&env, &Transport::Stdio, &[run("print(count)")]);
    assert!(text(&results[0]).contains("NameError"), "{results:?}");

    // Two HTTP clients at once, of one server: each has its own.
    let server = http_server(&env, &[]);
    let results = sessions(
        &env,
        &Transport::Http(server),
        2,
        &[(0, "mine = 'zero'", 0.0), (1, "mine = 'one'", 0.0), (0, "print(mine)", 0.0), (1, "print(mine)", 0.0)],
    );
    assert_eq!((text(&results[2]), text(&results[3])), ("zero\n", "one\n"), "{results:?}");
}

#[test]
#[ignore = "needs the Python MCP SDK in target/mcp-venv (.ci/run makes it)"]
fn a_run_that_crashes_or_runs_past_its_limits_ends_that_run_only() {
    let env = workspace();
    let server = http_server(&env, &[]);
    // A big-integer power runs past its timeout inside one operation, where only the run's
    // watchdog ends it: its process is ended, as a crash would be.
    let bomb = "import sys\nstate = 'before'\nx = 7 ** (10 ** 8)";
    let results = calls(
        &env,
        &Transport::Http(server),
        &[
            run("state = 'kept'\nother = 1"),
            json!({"tool": "run", "arguments": {"code": bomb, "timeout": 1}}),
            run("print(state, other)"),
            json!({"tool": "run", "arguments": {"code": "blob = 'x' * (600 * 1024 * 1024)"}}),
            run("print(state, other)"),
        ],
    );
    assert!(text(&results[1]).contains("TimeoutError"), "{results:?}");
    // The watchdog's run saved nothing: the session is as the last run that ended left it.
    assert_eq!(text(&results[2]), "kept 1\n", "{results:?}");
    assert!(text(&results[3]).contains("MemoryError"), "{results:?}");
    assert_eq!(text(&results[4]), "kept 1\n", "{results:?}");

    // A crash in one session leaves another, open at the same time, as it was.
    let server = http_server(&env, &[]);
    let results = sessions(
        &env,
        &Transport::Http(server),
        2,
        &[(1, "mine = 'safe'", 0.0), (0, "x = 7 ** (10 ** 8)", 0.0), (1, "print(mine)", 0.0)],
    );
    assert_eq!(text(&results[2]), "safe\n", "{results:?}");
}

#[test]
#[ignore = "needs the Python MCP SDK in target/mcp-venv and the guest wheels in target/guest-wheels (.ci/run makes both)"]
fn on_wasm_a_session_keeps_its_cpython_guest_from_one_call_to_the_next() {
    let env = workspace().with_wasm().env("CODEACT_BACKEND", "wasm").env("CODEACT_MAX_MEMORY", "200MiB");
    let results = calls(
        &env,
        &Transport::Stdio,
        &[
            run("import json, sys\ncount = 41\ndef bump(n):\n    return n + 1\nclass Box:\n    size = 2\nv = view"),
            run(
                "print(bump(count), Box.size, json.dumps(len(v(path='notes/todo.txt').splitlines())), sys.version_info[0])",
            ),
            // What a program set before it raised stays, as in a REPL.
            run("count = 1\nraise ValueError('no')"),
            run("print(count)"),
            // What the guest holds counts against each call's memory limit.
            run("a = bytearray(120 * 1024 * 1024)"),
            run("b = bytearray(120 * 1024 * 1024)"),
            run("a = None\nb = bytearray(120 * 1024 * 1024)\nprint(len(b), count)"),
            // A run past its deadline ends the guest, and says so.
            json!({"tool": "run", "arguments": {"code": "while True:\n    pass", "timeout": 2}}),
            run("print(count)"),
            // So does a program whose report a program before it broke: the next starts afresh.
            run("count = 5\nimport json\njson.dumps = lambda *args, **kwargs: 'not json'"),
            run("print(count)"),
            run("print(count)"),
        ],
    );
    assert_eq!(text(&results[1]), "42 2 2 3\n", "{results:?}");
    assert!(text(&results[2]).contains("ValueError: no"), "{results:?}");
    assert_eq!(text(&results[3]), "1\n", "{results:?}");
    assert_eq!(results[4]["is_error"], false, "{results:?}");
    assert!(text(&results[5]).contains("MemoryError"), "{results:?}");
    assert_eq!(text(&results[6]), "125829120 1\n", "{results:?}");
    assert!(text(&results[7]).contains("TimeoutError"), "{results:?}");
    assert!(text(&results[7]).contains("ended the session's interpreter"), "{results:?}");
    assert!(text(&results[8]).contains("NameError"), "{results:?}");
    assert_eq!(results[9]["is_error"], false, "{results:?}");
    assert!(text(&results[10]).starts_with("5\n"), "{results:?}");
    assert!(text(&results[10]).contains("ended the session's interpreter"), "{results:?}");
    assert!(text(&results[11]).contains("NameError"), "{results:?}");
    for result in &results {
        assert_eq!(result["structured"]["backend"], "wasm", "{result}");
    }

    // Two HTTP clients at once, of one server: each has its own guest; a worker that ends
    // takes its state with it, which the next call says.
    let server = http_server(&env, &[]);
    let results = sessions(
        &env,
        &Transport::Http(server),
        2,
        &[
            (0, "mine = 'zero'", 0.0),
            (1, "mine = 'one'", 0.0),
            (0, "print(mine)", 0.0),
            (1, "print(mine)", 0.0),
            (1, "bash(command='kill -9 $PPID')", 0.0),
            (1, "print(mine)", 0.0),
            (0, "print(mine)", 0.0),
        ],
    );
    assert_eq!((text(&results[2]), text(&results[3])), ("zero\n", "one\n"), "{results:?}");
    assert!(text(&results[5]).contains("NameError"), "{results:?}");
    assert!(text(&results[5]).contains("interpreter had ended"), "{results:?}");
    assert_eq!(text(&results[6]), "zero\n", "{results:?}");
}

/// The pid of the process a program runs in: the parent of the shell its `bash` starts.
const RUNS_IN: &str = "bash(command='echo $PPID')['stdout'].strip()";

#[test]
#[ignore = "needs the Python MCP SDK in target/mcp-venv (.ci/run makes it)"]
fn a_session_is_kept_in_one_worker_that_a_crash_restarts_and_idle_time_or_a_leaving_client_ends() {
    let env = workspace().env("CODEACT_TIMEOUT", "20");
    let transport = Transport::Http(http_server(&env, &["--session-idle", "2"]));
    let gone =
        "print(bash(command='kill -0 $(cat worker.pid) 2>/dev/null && echo alive || echo gone')['stdout'].strip())";
    let results = sessions(
        &env,
        &transport,
        2,
        &[
            (0, &format!("x = 1\nfirst = {RUNS_IN}"), 0.0),
            (0, &format!("print(x, {RUNS_IN} == first)"), 0.0),
            // The worker is killed in the middle of a run, as a crash would end it.
            (0, "x = 2\n_ = bash(command='kill -9 $PPID')", 0.0),
            (0, &format!("print(x, {RUNS_IN} == first)\n_ = bash(command='echo $PPID > worker.pid')"), 0.0),
            // Another client looks once the first session has been idle past its time.
            (1, gone, 3.5),
            (0, "print(x)", 0.0),
            (0, "_ = bash(command='echo $PPID > worker.pid')", 0.0),
        ],
    );
    assert_eq!(text(&results[1]), "1 True\n", "the second call ran in another process: {results:?}");
    assert!(text(&results[2]).contains("without a report"), "{results:?}");
    // What the killed run set was never saved; the next call ran in a new worker.
    assert_eq!(text(&results[3]), "1 False\n", "{results:?}");
    assert_eq!(text(&results[4]), "gone\n", "an idle session's worker was left running: {results:?}");
    assert!(text(&results[5]).contains("NameError"), "{results:?}");
    // The clients have gone; the server still runs, and their workers end with them.
    let pid = std::fs::read_to_string(env.workspace().join("worker.pid")).expect("the pid file");
    let until = std::time::Instant::now() + Duration::from_secs(10);
    while process_alive(&pid) {
        assert!(std::time::Instant::now() < until, "the worker of a client that left still runs");
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(transport);
}

#[test]
#[ignore = "needs the Python MCP SDK in target/mcp-venv (.ci/run makes it)"]
fn past_four_workers_a_slot_the_least_recent_idle_one_ends_and_its_session_goes_on_from_its_save() {
    let env = workspace();
    let transport = Transport::Http(http_server(&env, &["--max-concurrent", "1"]));
    let start = |client: usize| format!("x = {client}\nfirst = {RUNS_IN}");
    let again = format!("print(x, {RUNS_IN} == first)");
    let starts: Vec<String> = (0..5).map(start).collect();
    let mut steps: Vec<(usize, &str, f64)> =
        starts.iter().enumerate().map(|(client, code)| (client, code.as_str(), 0.0)).collect();
    steps.extend([(4, again.as_str(), 0.0), (1, again.as_str(), 0.0), (0, again.as_str(), 0.0)]);
    let results = sessions(&env, &transport, 5, &steps);
    // The fifth session's worker ended the first's, the least recent; the others kept theirs.
    assert_eq!(text(&results[5]), "4 True\n", "{results:?}");
    assert_eq!(text(&results[6]), "1 True\n", "{results:?}");
    assert_eq!(text(&results[7]), "0 False\n", "{results:?}");
}

#[test]
#[ignore = "needs the Python MCP SDK in target/mcp-venv (.ci/run makes it)"]
fn stopping_a_call_never_undoes_what_the_call_before_it_kept() {
    let env = workspace();
    // A state that takes a while to save, so that a stop that came while it was saved would
    // lose it.
    let results = calls(
        &env,
        &Transport::Stdio,
        &[
            run("big = [str(i) for i in range(1_000_000)]\nmarker = 'one'"),
            run("marker = 'two'"),
            json!({"tool": "run", "arguments": {"code": "import time\ntime.sleep(60)", "yield_after": 0.1}}),
            json!({"tool": "run", "arguments": {"wait": 3, "stop": true}}),
            run("print(marker, len(big))"),
        ],
    );
    assert!(text(&results[2]).contains("still running"), "{results:?}");
    assert_eq!(text(&results[4]), "two 1000000\n", "{results:?}");
}

#[test]
#[ignore = "needs the Python MCP SDK in target/mcp-venv (.ci/run makes it)"]
fn calls_made_as_soon_as_a_call_is_answered_have_its_state_while_it_is_still_being_saved() {
    let env = workspace();
    // A state that takes a while to save: the calls come while it is saved.
    let first = json!({"code": "big = [str(i) for i in range(1_000_000)]\nmarker = 'kept'"});
    let arguments = json!({"code": "print(marker, len(big))"});
    let seen = client(
        &env,
        &Transport::Stdio,
        json!({"scenario": "parallel", "first": first, "calls": 3, "arguments": arguments}),
    );
    assert_eq!(seen["first"]["is_error"], false, "{seen}");
    for result in seen["results"].as_array().expect("results") {
        assert!(text(result).starts_with("kept 1000000\n"), "{seen}");
    }
}

#[test]
#[ignore = "needs the Python MCP SDK in target/mcp-venv (.ci/run makes it)"]
fn of_two_calls_that_wait_for_one_run_at_once_one_gets_its_result_and_the_other_is_refused() {
    let env = workspace();
    let first = json!({"code": "import time\nprint('start')\ntime.sleep(3)\nprint('end')\n'done'", "yield_after": 0.5});
    let seen = client(
        &env,
        &Transport::Stdio,
        json!({"scenario": "parallel", "first": first, "wait_for_first": true, "calls": 2, "arguments": {"yield_after": 0}}),
    );
    assert!(text(&seen["first"]).contains("still running"), "{seen}");
    let results = seen["results"].as_array().expect("results");
    let given = results.iter().filter(|result| result["text"].as_str().is_some_and(|text| text == "end\n'done'\n"));
    assert_eq!(given.count(), 1, "{seen}");
    let refused = results.iter().filter(|result| {
        result["protocol_error"].as_str().is_some_and(|error| error.contains("another call is waiting for run"))
    });
    assert_eq!(refused.count(), 1, "{seen}");
}

#[test]
#[ignore = "needs the Python MCP SDK in target/mcp-venv (.ci/run makes it)"]
fn what_a_session_holds_counts_against_each_of_its_runs_memory_limit() {
    let env = workspace().env("CODEACT_MAX_MEMORY", "64MiB");
    let results = calls(
        &env,
        &Transport::Stdio,
        &[
            run("a = 'x' * (40 * 1024 * 1024)"),
            run("b = 'y' * (40 * 1024 * 1024)"),
            run("a = None\nb = 'y' * (40 * 1024 * 1024)\nprint(len(b))"),
        ],
    );
    assert_eq!(results[0]["is_error"], false, "{results:?}");
    assert!(text(&results[1]).contains("MemoryError"), "{results:?}");
    assert_eq!(text(&results[2]), "41943040\n", "{results:?}");
}

#[test]
#[ignore = "needs the Python MCP SDK in target/mcp-venv (.ci/run makes it)"]
fn an_idle_session_is_ended_and_its_next_call_says_so() {
    let env = workspace().env("CODEACT_TIMEOUT", "20");
    let server = http_server(&env, &["--session-idle", "1"]);
    let results = sessions(
        &env,
        &Transport::Http(server),
        1,
        &[(0, "x = 1", 0.0), (0, "print(x)", 0.2), (0, "print(x)", 3.0), (0, "x = 2", 0.0), (0, "print(x)", 0.0)],
    );
    assert_eq!(text(&results[1]), "1\n", "{results:?}");
    let ended = text(&results[2]);
    assert!(ended.contains("NameError") && ended.contains("had no call for over 1s"), "{ended}");
    assert_eq!(text(&results[4]), "2\n", "{results:?}");

    // With no idle time at all, nothing is kept, and the reference does not say it is.
    let server = http_server(&env, &["--session-idle", "0"]);
    let results = sessions(&env, &Transport::Http(server), 1, &[(0, "x = 1", 0.0), (0, "print(x)", 0.0)]);
    assert!(text(&results[1]).contains("NameError"), "{results:?}");
    let server = http_server(&env, &["--session-idle", "0"]);
    let seen = client(&env, &Transport::Http(server), json!({"scenario": "list"}));
    assert!(!seen["instructions"].as_str().expect("instructions").contains("persist across"), "{seen}");
}

#[test]
#[ignore = "needs the Python MCP SDK in target/mcp-venv (.ci/run makes it)"]
#[expect(clippy::print_stderr, reason = "the counts are reported with --nocapture")]
fn sessions_and_yields_add_at_most_sixty_tokens_to_what_the_model_reads() {
    let env = workspace();
    // What every request carries: the instructions and the tools' definitions.
    let server = http_server(&env, &[]);
    let seen = client(&env, &Transport::Http(server), json!({"scenario": "list"}));
    let instructions = seen["instructions"].as_str().expect("instructions");
    let now = tokens(instructions) + tokens(&seen["tools"].to_string());
    // The same without sessions and yields: neither line in the instructions, and `run` as it
    // was defined before them.
    let server = http_server(&env, &["--session-idle", "0", "--yield-after", "0"]);
    let mut seen = client(&env, &Transport::Http(server), json!({"scenario": "list"}));
    let instructions = seen["instructions"].as_str().expect("instructions").to_owned();
    assert!(!instructions.contains("persist across") && !instructions.contains("wait=id"), "{instructions}");
    assert!(instructions.lines().all(|line| !line.trim().is_empty() || line.is_empty()), "{instructions}");
    let run = &mut seen["tools"][0];
    for added in ["yield_after", "wait", "stop"] {
        run["input_schema"]["properties"].as_object_mut().expect("properties").remove(added).expect("added");
    }
    run["input_schema"]["required"] = json!(["code"]);
    run["output_schema"]["properties"].as_object_mut().expect("properties").remove("running").expect("added");
    let before = tokens(&instructions) + tokens(&seen["tools"].to_string());
    eprintln!("instructions and tools: {now} o200k_base tokens, {before} without sessions and yields");
    assert!(now - before <= 60, "sessions and yields add {} tokens", now - before);
}

/// The text of `results`, one answer after another, without the lines that say a run still
/// runs: what the model read of the program's output.
fn read_in_all(results: &[Value]) -> String {
    results
        .iter()
        .map(text)
        .flat_map(|text| text.split_inclusive('\n'))
        .filter(|line| !line.starts_with("[still running after"))
        .collect()
}

#[test]
#[ignore = "needs the Python MCP SDK in target/mcp-venv (.ci/run makes it)"]
fn a_run_past_its_yield_time_answers_with_its_output_so_far_and_wait_gives_the_rest_once() {
    let env = workspace();
    let program = "import time\nfor i in range(8):\n    print('tick', i)\n    time.sleep(0.4)\nprint('done')\n'last'";
    let wait = |extra: Value| {
        let mut arguments = json!({"wait": 1, "yield_after": 1});
        arguments.as_object_mut().expect("object").extend(extra.as_object().expect("object").clone());
        json!({"tool": "run", "arguments": arguments})
    };
    for transport in [Transport::Stdio, Transport::Http(http_server(&env, &[]))] {
        let results = calls(
            &env,
            &transport,
            &[
                json!({"tool": "run", "arguments": {"code": program, "yield_after": 1}}),
                wait(json!({})),
                wait(json!({"yield_after": 0})),
                wait(json!({})),
            ],
        );
        let first = text(&results[0]);
        assert!(first.starts_with("tick 0\n"), "{first}");
        assert!(first.contains("[still running after 1s: run(wait=1) waits for more"), "{first}");
        assert_eq!(results[0]["structured"]["running"], 1, "{}", results[0]);
        assert!(results[1]["seconds"].as_f64().expect("seconds") >= 0.9, "{}", results[1]);
        // Every line once, in order, with the last expression and nothing else.
        let read = read_in_all(&results[..3]);
        let expected = "tick 0\ntick 1\ntick 2\ntick 3\ntick 4\ntick 5\ntick 6\ntick 7\ndone\n'last'\n";
        assert_eq!(read, expected, "{results:?}");
        assert_eq!(results[2]["is_error"], false);
        assert_eq!(results[2]["structured"]["return_value"], "last");
        let gone = results[3]["protocol_error"].as_str().expect("a refusal");
        assert!(gone.contains("no run 1 is waiting"), "{gone}");
    }
}

#[test]
#[ignore = "needs the Python MCP SDK in target/mcp-venv (.ci/run makes it)"]
fn stop_ends_a_yielded_run_with_its_commands_and_each_answer_keeps_to_the_output_budget() {
    let env = workspace().env("CODEACT_MAX_OUTPUT", "1000");
    let pid_file = env.workspace().join("sleeper.pid");
    let code = "print('x' * 5000)\nbash(command='echo $$ > sleeper.pid; exec sleep 120', timeout=300)\nprint('never')";
    let results = calls(
        &env,
        &Transport::Stdio,
        &[
            json!({"tool": "run", "arguments": {"code": code, "yield_after": 1.5}}),
            json!({"tool": "run", "arguments": {"wait": 1, "stop": true}}),
        ],
    );
    let first = text(&results[0]);
    assert!(first.len() < 1300 && first.contains("elided"), "{first}");
    let stopped = text(&results[1]);
    assert!(stopped.contains("run 1 was stopped") && !stopped.contains("never"), "{stopped}");
    assert_eq!(results[1]["is_error"], true);
    let pid = std::fs::read_to_string(&pid_file).expect("the command started");
    assert!(!process_alive(&pid), "the command the run started was left running");
}

#[test]
#[ignore = "needs the Python MCP SDK in target/mcp-venv (.ci/run makes it)"]
fn a_client_waits_only_for_its_own_runs_and_a_client_that_leaves_stops_them() {
    let env = workspace();
    let pid_file = env.workspace().join("sleeper.pid");
    let code = "bash(command='echo $$ > sleeper.pid; exec sleep 120', timeout=300)";
    let server = http_server(&env, &[]);
    let calls = [
        json!({"client": 0, "tool": "run", "arguments": {"code": code, "yield_after": 1}}),
        json!({"client": 1, "tool": "run", "arguments": {"wait": 1}}),
        json!({"client": 1, "tool": "run", "arguments": {"code": "print('mine')"}}),
    ];
    let seen = client(&env, &Transport::Http(server), json!({"scenario": "sessions", "clients": 2, "calls": calls}));
    let results = seen["results"].as_array().expect("results");
    assert!(text(&results[0]).contains("[still running"), "{seen}");
    let refused = results[1]["protocol_error"].as_str().expect("a refusal");
    assert!(refused.contains("not this client's"), "{refused}");
    assert_eq!(text(&results[2]), "mine\n");
    // The clients have gone: their runs are stopped.
    let pid = std::fs::read_to_string(&pid_file).expect("the command started");
    let mut left = 50;
    while process_alive(&pid) && left > 0 {
        std::thread::sleep(Duration::from_millis(200));
        left -= 1;
    }
    assert!(!process_alive(&pid), "a run of a client that left was left running");
}

#[test]
#[ignore = "needs the Python MCP SDK in target/mcp-venv (.ci/run makes it)"]
fn the_servers_sessions_are_kept_in_a_private_folder_that_goes_with_it_even_on_a_signal() {
    use std::os::unix::fs::PermissionsExt as _;
    let env = workspace();
    let served = env.home().join(".local/state/codeact/sessions/served");
    let folders = || -> Vec<std::path::PathBuf> {
        std::fs::read_dir(&served)
            .map(|entries| entries.flatten().map(|entry| entry.path()).collect())
            .unwrap_or_default()
    };
    for signal in [nix::sys::signal::Signal::SIGTERM, nix::sys::signal::Signal::SIGINT] {
        let transport = Transport::Http(http_server(&env, &[]));
        let results = calls(&env, &transport, &[run("kept = 1")]);
        assert_eq!(results[0]["is_error"], false, "{results:?}");
        let Transport::Http(mut server) = transport else { unreachable!("an HTTP server") };
        let [folder] = folders().try_into().unwrap_or_else(|all| panic!("one folder: {all:?}"));
        let mode = std::fs::metadata(&folder).expect("folder").permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "{}", folder.display());
        assert!(folder.join("key").is_file(), "{}", folder.display());
        let pid = nix::unistd::Pid::from_raw(i32::try_from(server.child.id()).expect("pid"));
        nix::sys::signal::kill(pid, signal).expect("signal the server");
        server.child.wait().expect("the server ends");
        assert!(folders().is_empty(), "{signal}: {:?}", folders());
    }

    // A workspace that holds the state folder keeps nothing between calls, and says why.
    let env = workspace();
    let state = env.workspace().join(".state");
    let env = env.env("XDG_STATE_HOME", state.to_str().expect("path"));
    let results = calls(&env, &Transport::Stdio, &[run("kept = 1"), run("print(kept)")]);
    assert!(text(&results[1]).contains("NameError"), "{results:?}");
}

#[test]
#[ignore = "needs the Python MCP SDK in target/mcp-venv (.ci/run makes it)"]
fn after_a_yield_output_past_the_budget_is_not_shown_again_and_a_stop_after_the_end_gives_the_result() {
    let env = workspace();
    // 3 000 short lines: within the output budget, and past it once escaped as JSON.
    let many = "import time\nfor i in range(3000):\n    print('line', i)\ntime.sleep(2)\nprint('tail')";
    let ended = "import time\nprint('important')\ntime.sleep(1)\nraise ValueError('late')";
    let results = calls(
        &env,
        &Transport::Stdio,
        &[
            json!({"tool": "run", "arguments": {"code": many, "yield_after": 1}}),
            json!({"tool": "run", "arguments": {"wait": 1}}),
            json!({"tool": "run", "arguments": {"code": ended, "yield_after": 0.3}}),
            json!({"tool": "run", "arguments": {"wait": 2, "stop": true}, "pause": 2}),
        ],
    );
    assert!(text(&results[0]).starts_with("line 0\n"), "{}", results[0]);
    assert_eq!(text(&results[1]), "tail\n", "{}", results[1]);
    assert_eq!(results[1]["structured"]["stdout"], "tail\n", "{}", results[1]);
    // Run 2 ended (with its error) before `stop` came: its result, not "stopped".
    assert!(text(&results[3]).contains("ValueError: late"), "{}", results[3]);
}

#[test]
#[ignore = "needs the Python MCP SDK in target/mcp-venv (.ci/run makes it)"]
fn a_client_whose_own_runs_hold_every_slot_is_told_which_they_are_at_once() {
    let env = workspace();
    let server = http_server(&env, &["--max-concurrent", "1"]);
    let results = calls(
        &env,
        &Transport::Http(server),
        &[
            json!({"tool": "run", "arguments": {"code": "while True:\n    pass", "timeout": 300, "yield_after": 0.5}}),
            run("print('next')"),
            json!({"tool": "run", "arguments": {"wait": 1, "stop": true}}),
            run("print('next')"),
        ],
    );
    let refused = results[1]["protocol_error"].as_str().expect("a refusal");
    assert!(refused.contains("every slot is taken, your runs 1 among them"), "{refused}");
    assert!(results[1]["seconds"].as_f64().expect("seconds") < 5.0, "{}", results[1]);
    assert!(text(&results[2]).contains("run 1 was stopped"), "{}", results[2]);
    assert_eq!(text(&results[3]), "next\n");
}
