//! MCP servers as Python functions, against real servers: from npm
//! (`@modelcontextprotocol/server-everything` and `server-filesystem`, pinned in
//! `tests/e2e/package.json`), from PyPI (`mcp-server-time`, and the Python SDK `mcp` that runs
//! the project's test server `tests/mcp/server.py`; pinned in `tests/mcp/requirements.txt`), and
//! `tests/mcp/raw.py`, a raw JSON-RPC server for what a well-behaved SDK never does. The tests
//! that need them are `#[ignore]`d; `.ci/run` installs them and runs every test.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::support::{TestEnv, mcp_python, mcp_script, mcp_server_time, npm_bin, process_alive};

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
    assert_eq!(
        (kind.as_str(), message.as_str()),
        ("TypeError", "everything__get_sum() argument 'a': 'x' is not of type \"number\"")
    );
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
    let out = env.run_code(program).code(0).stdout;
    // The message quotes what the server last said on stderr.
    assert!(
        out.starts_with(
            "MCP server 'everything' did not answer trigger-long-running-operation within 1s\nserver stderr:\nserver-noise\n"
        ),
        "{out}"
    );
    assert!(out.ends_with("\nEcho: after\n"), "{out}");
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
    env.run_code(program).code(0).stdout("Echo: one\nMCP server 'everything': `echo` failed: \ndone\n");
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
    assert!(
        instructions.contains("- `everything`: echo(message), ") && !instructions.contains("ghost"),
        "{instructions}"
    );
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

/// `tests/mcp/raw.py MODE ARGS…` as a server entry.
fn raw(args: &[&str]) -> Value {
    let mut all = vec![mcp_script("raw.py").to_string_lossy().into_owned()];
    all.extend(args.iter().map(|a| (*a).to_owned()));
    json!({"command": mcp_python(), "args": all})
}

/// The SDK test server `tests/mcp/server.py` over stdio, with `extra` arguments.
fn sdk(extra: &[&str]) -> Value {
    let mut all = vec![mcp_script("server.py").to_string_lossy().into_owned()];
    all.extend(extra.iter().map(|a| (*a).to_owned()));
    json!({"command": mcp_python(), "args": all})
}

#[test]
#[ignore = "needs the Python MCP SDK and mcp-server-time in target/mcp-venv (.ci/run makes it)"]
fn python_sdk_results_come_back_as_the_server_meant_them() {
    let env = with_servers(&json!({"ev": sdk(&[])}));
    let program = r#"
print(repr(ev__shout(text="hi")), ev__add(a=2, b=3), ev__nothing())
stats = ev__stats(numbers=[1, 2.5, 3])
print(stats["count"], stats["max"], stats["detail"]["exact"])
[image] = ev__picture()
print(image["type"], image["mime_type"], image["data"][:4])
text, image = ev__captioned()
print(text, image["mime_type"])
[sound] = ev__sound()
print(sound["type"], sound["mime_type"], type(sound["data"]).__name__)
for block in ev__embedded():
    print(block["type"], block["uri"], block.get("text", "")[:13] or type(block.get("data")).__name__)
shout = [t for t in mcp_tools("ev") if t["name"] == "shout"][0]
print(sorted(shout), shout["function"], shout["output_schema"]["required"])
"#;
    let out = env.run_code(program).code(0).stdout;
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "'HI' 5 None");
    assert_eq!(lines[1], "3 3.0 9007199254740993");
    assert_eq!(lines[2], "image image/png b'\\x89PNG'");
    assert!(lines[3].ends_with(" image/png"), "{out}");
    assert_eq!(lines[4], "audio audio/wav bytes");
    assert_eq!(lines[5], "resource eval://doc/readme # eval server");
    assert!(lines[6].starts_with("resource ") && lines[6].ends_with(" bytes"), "{out}");
    assert!(lines[7].starts_with("resource_link "), "{out}");
    assert_eq!(
        lines[8],
        "['annotations', 'description', 'function', 'input_schema', 'name', 'output_schema', 'title'] ev__shout ['result']"
    );
}

#[test]
#[ignore = "needs the Python MCP SDK and mcp-server-time in target/mcp-venv (.ci/run makes it)"]
fn structured_content_that_breaks_its_output_schema_is_reported() {
    let env = with_servers(&json!({"bad": raw(&["bad-structured"])}));
    env.run_code("print(bad__good())").code(0).stdout("{'n': 3}\n");
    let (kind, message) = env.error_of("bad__bad()");
    assert_eq!(kind, "RuntimeError");
    assert_eq!(
        message,
        "MCP tool 'bad.bad' returned structured content that does not match its output schema: /n: 'not an int' is not of type \"integer\""
    );
}

#[test]
#[ignore = "needs the Python MCP SDK and mcp-server-time in target/mcp-venv (.ci/run makes it)"]
fn resources_templates_and_prompts_are_reachable_from_a_program() {
    let env = with_servers(&json!({"ev": sdk(&[])}));
    let program = r#"
listed = mcp_resources("ev")
print([r.get("uri") or r["uri_template"] for r in listed])
[doc] = mcp_read_resource("ev", "eval://doc/readme")
print(doc["mime_type"], doc["text"].splitlines()[0])
[logo] = mcp_read_resource("ev", "eval://logo.png")
print(logo["mime_type"], logo["data"][:4])
print(mcp_read_resource("ev", "eval://users/42")[0]["text"])
print([(p["name"], [a["name"] for a in p["arguments"]]) for p in mcp_prompts("ev")])
prompt = mcp_get_prompt("ev", "review", code="x = 1", style="long")
print(prompt["messages"][0]["role"], "x = 1" in prompt["messages"][0]["content"])
"#;
    let out = env.run_code(program).code(0).stdout;
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "['eval://doc/readme', 'eval://logo.png', 'eval://users/{id}']", "{out}");
    assert_eq!(lines[1], "text/markdown # eval server");
    assert_eq!(lines[2], "image/png b'\\x89PNG'");
    assert!(lines[3].contains("42"), "{out}");
    assert_eq!(lines[4], "[('review', ['code', 'style'])]");
    assert_eq!(lines[5], "user True");
}

#[test]
#[ignore = "needs the Python MCP SDK and mcp-server-time in target/mcp-venv (.ci/run makes it)"]
fn a_reply_over_the_memory_limit_fails_at_once_naming_its_size_and_the_server_starts_again() {
    let env = with_servers(&json!({"huge": raw(&["huge", "20"]), "small": raw(&["huge", "1"])}));
    let program = "try:\n    huge__echo(text='x')\nexcept RuntimeError as e:\n    print(e)\n\
                   print(len(small__echo(text='x')))";
    let started = Instant::now();
    let out = env.run(&["run", "--max-memory", "16m", "--timeout", "60"], program).code(0).stdout;
    assert!(started.elapsed() < Duration::from_secs(20), "took {:?}", started.elapsed());
    assert_eq!(
        out,
        "MCP server 'huge': `echo` failed: its reply of 20.0 MiB is over the limit of 16 MiB for one message (the run's memory limit; raise it with --max-memory)\n1048576\n"
    );
}

#[test]
#[ignore = "needs the Python MCP SDK and mcp-server-time in target/mcp-venv (.ci/run makes it)"]
fn a_hanging_server_leaves_the_others_listed_and_a_run_time_to_recover() {
    let env = with_servers(&json!({"a_hang": raw(&["hang-init"]), "b_ok": raw(&["plain"])}));
    let started = Instant::now();
    let out = env.run(&["discover"], "").code(0);
    assert!(started.elapsed() < Duration::from_secs(16), "took {:?}", started.elapsed());
    let manifest: Value = serde_json::from_str(&out.stdout).unwrap();
    let servers: Vec<&str> =
        manifest["mcp_servers"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(servers, ["b_ok"]);
    assert_eq!(
        out.stderr,
        "warning: MCP server `a_hang` left out: MCP server 'a_hang' did not answer initialize within 10s\nserver stderr:\nwaiting for credentials…\n"
    );
    // In a run, a call never takes the whole run: the program's fallback gets to go on.
    let program = "print(b_ok__echo(text='first'))\ntry:\n    a_hang__echo(text='x')\nexcept TimeoutError as e:\n    \
                   print(str(e).splitlines()[0])\nprint('continues', b_ok__echo(text='ok'))";
    let out = env.run(&["run", "--timeout", "8"], program).code(0).stdout;
    assert_eq!(out, "first\nMCP server 'a_hang' did not answer initialize within 7s\ncontinues ok\n");
}

#[test]
#[ignore = "needs the Python MCP SDK and mcp-server-time in target/mcp-venv (.ci/run makes it)"]
fn servers_are_closed_gently_and_their_whole_process_group_ends() {
    let env = TestEnv::new();
    let saved = env.workspace().join("saved");
    let raw_py = mcp_script("raw.py");
    let python = mcp_python();
    let wrapped = format!("{python:?} {raw_py:?} plain; sleep 120 & echo $! > sleep.pid; wait");
    let servers = json!({
        "slowexit": raw(&["slowexit", "1", saved.to_str().unwrap()]),
        "wrapped": {"command": "sh", "args": ["-c", wrapped]},
    });
    std::fs::write(env.workspace().join(".mcp.json"), json!({"mcpServers": servers}).to_string()).unwrap();
    env.trust();
    env.run_code("print(slowexit__echo(text='a'), wrapped__echo(text='b'))").code(0).stdout("a b\n");
    // A server that saves its state after stdin closes gets to.
    assert_eq!(std::fs::read_to_string(&saved).unwrap(), "saved\n");
    // The wrapper's own child is gone with it.
    let pid = std::fs::read_to_string(env.workspace().join("sleep.pid")).unwrap();
    assert!(!process_alive(&pid), "the wrapped server's child {pid} outlived the run");
}

#[test]
#[ignore = "needs the Python MCP SDK and mcp-server-time in target/mcp-venv (.ci/run makes it)"]
fn sigterm_and_sigint_to_codeact_end_every_server_first() {
    for signal in [rustix::process::Signal::TERM, rustix::process::Signal::INT] {
        let env = TestEnv::new();
        let stubborn = format!("echo $$ > server.pid; exec {:?} {:?} ignore-term", mcp_python(), mcp_script("raw.py"));
        let servers = json!({"stubborn": {"command": "sh", "args": ["-c", stubborn]}});
        std::fs::write(env.workspace().join(".mcp.json"), json!({"mcpServers": servers}).to_string()).unwrap();
        env.trust();
        let mut child = env
            .command(&["run", "--code", "stubborn__echo(text='x')\nbash(command='sleep 60')"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let pid_file = env.workspace().join("server.pid");
        let started = Instant::now();
        while std::fs::read_to_string(&pid_file).map_or(true, |pid| pid.trim().is_empty()) {
            assert!(started.elapsed() < Duration::from_secs(20), "the server did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        std::thread::sleep(Duration::from_secs(1));
        let codeact = rustix::process::Pid::from_raw(i32::try_from(child.id()).unwrap()).unwrap();
        rustix::process::kill_process(codeact, signal).unwrap();
        let status = child.wait().unwrap();
        assert!(!status.success());
        let pid = std::fs::read_to_string(&pid_file).unwrap();
        let until = Instant::now() + Duration::from_secs(3);
        while process_alive(&pid) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(!process_alive(&pid), "the server {pid} outlived codeact after {signal:?}");
    }
}

#[test]
#[ignore = "needs the Python MCP SDK and mcp-server-time in target/mcp-venv (.ci/run makes it)"]
fn a_tool_the_server_adds_during_the_run_can_be_called() {
    let env = with_servers(&json!({"ev": sdk(&[])}));
    let program = "print(ev__grow())\nprint(mcp_call('ev', 'late_tool'))\nprint(ev__late_tool())\n\
                   print('late_tool' in [t['name'] for t in mcp_tools('ev')])";
    env.run_code(program).code(0).stdout("added late_tool\nI was added late\nI was added late\nTrue\n");
}

#[test]
#[ignore = "needs the Python MCP SDK and mcp-server-time in target/mcp-venv (.ci/run makes it)"]
fn codeact_introduces_itself_negotiates_the_protocol_and_offers_the_workspace_as_root() {
    let env = TestEnv::new();
    let log = env.workspace().join("init.json");
    let mut plain = raw(&["plain"]);
    plain["env"] = json!({"RAW_INIT_LOG": log});
    let servers = json!({"raw": plain, "ev": sdk(&[])});
    std::fs::write(env.workspace().join(".mcp.json"), json!({"mcpServers": servers}).to_string()).unwrap();
    env.trust();
    let out = env.run_code("print(raw__echo(text='x'))\nprint(ev__roots())").code(0).stdout;
    let root = url::Url::from_directory_path(env.workspace().canonicalize().unwrap()).unwrap();
    assert_eq!(out, format!("x\n['{root}']\n"));
    let init: Value = serde_json::from_str(&std::fs::read_to_string(&log).unwrap()).unwrap();
    assert_eq!(init["clientInfo"]["name"], "codeact");
    assert_eq!(init["clientInfo"]["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(init["protocolVersion"], "2025-11-25");
    assert!(init["capabilities"]["roots"].is_object(), "{init}");
}

#[test]
#[ignore = "needs the Python MCP SDK and mcp-server-time in target/mcp-venv (.ci/run makes it)"]
fn colliding_names_are_said_and_every_tool_and_server_stays_reachable() {
    let env =
        with_servers(&json!({"names": raw(&["names"]), "a": raw(&["plain"]), "a__b": raw(&["plain"]), "ev": sdk(&[])}));
    let program = "print(names__get_sum(), mcp_call('names', 'get-sum'))\n\
                   print(mcp_call('names', 'args', server='s', tool='t'))\n\
                   print(a__echo(text='a'), a__b__echo(text='a__b'))\n\
                   f = ev__shout\nprint([f(text=t) for t in ['x', 'y']])\nby_name = {'up': ev__shout}\nprint(by_name['up'](text='z'))";
    let out = env.run_code(program).code(0);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines[0], "underscore dash");
    assert!(lines[1].contains("\"server\": \"s\"") && lines[1].contains("\"tool\": \"t\""), "{}", out.stdout);
    assert_eq!(lines[2..], ["a a__b", "['X', 'Y']", "Z"]);
    assert!(
        out.stderr.contains(
            "MCP server `names`: tools `get_sum` and `get-sum` would both be `names__get_sum`; `get-sum` is reached through mcp_call('names', 'get-sum', …)"
        ),
        "{}",
        out.stderr
    );
}

#[test]
#[ignore = "needs the Python MCP SDK and mcp-server-time in target/mcp-venv (.ci/run makes it)"]
fn arguments_are_checked_against_the_input_schema_before_the_call() {
    let env = with_servers(&json!({"time": {"command": mcp_server_time()}, "ev": sdk(&[])}));
    let cases = [
        ("time__get_current_time()", "time__get_current_time() missing required argument 'timezone'"),
        (
            "time__get_current_time(timezone='UTC', extra=1)",
            "time__get_current_time() got an unexpected keyword argument 'extra' (accepted: timezone)",
        ),
        ("ev__stats(numbers='x')", "ev__stats() argument 'numbers': 'x' is not of type \"array\""),
        (
            "ev__echo(value=2**70)",
            "ev__echo() argument 'value': 1180591620717411303424 does not fit in 64 bits; pass it as a str or a float",
        ),
    ];
    for (call, expected) in cases {
        let (kind, message) = env.error_of(call);
        assert_eq!((kind.as_str(), message.as_str()), ("TypeError", expected), "{call}");
    }
    // A server from PyPI, called for real.
    let program = "now = time__get_current_time(timezone='Europe/Warsaw')\nprint(now['timezone'])\n\
                   print(sorted(time__convert_time(source_timezone='UTC', time='12:00', target_timezone='Asia/Tokyo')))";
    env.run_code(program).code(0).stdout("Europe/Warsaw\n['source', 'target', 'time_difference']\n");
}

#[test]
#[ignore = "needs the Python MCP SDK and mcp-server-time in target/mcp-venv (.ci/run makes it)"]
fn failures_say_what_happened_in_plain_words() {
    let env = with_servers(&json!({
        "slow": raw(&["hang-init"]),
        "garbage": raw(&["garbage-only"]),
        "dies": raw(&["exit", "7"]),
        "lax": raw(&["no-schema"]),
        "down": {"type": "http", "url": "http://127.0.0.1:9/mcp"},
    }))
    .user_config(r#"{"network": {"allowed_hosts": ["127.0.0.1"]}}"#);
    // A server that never starts gets at most the run's time less a margin (here 6 s less 0.6).
    let error = |program: &str| {
        let out = env.run(&["run", "--timeout", "6"], program).code(1);
        let last = out.stderr.lines().rev().find(|l| l.contains("Error: ")).unwrap_or_default().to_owned();
        (last, out.stderr)
    };
    let (last, stderr) = error("slow__echo(text='x')");
    assert_eq!(last, "TimeoutError: MCP server 'slow' did not answer initialize within 5s");
    assert!(stderr.ends_with("within 5s\nserver stderr:\nwaiting for credentials…\n"), "{stderr}");
    let (_, stderr) = error("garbage__echo(text='x')");
    assert!(stderr.contains(" line(s) that are not MCP messages, the first: \"Starting server...\""), "{stderr}");
    // The same failure raises the same error type on every call.
    let (last, _) = error("try:\n    slow__echo(text='x')\nexcept TimeoutError:\n    pass\nslow__echo(text='y')");
    assert!(last.starts_with("TimeoutError: "), "{last}");
    let (_, message) = env.error_of("dies__echo(text='x')");
    assert!(message.contains("the server exited with status 7"), "{message}");
    assert!(message.ends_with("fatal: missing API key"), "{message}");
    env.run_code("print([t['name'] for t in mcp_tools('lax')], lax__echo(text='ok'))")
        .code(0)
        .stdout("['bare', 'echo'] ok\n");
    let (kind, message) = env.error_of("down__echo(text='x')");
    assert_eq!(kind, "RuntimeError");
    assert!(!message.contains("rmcp::") && !message.contains("reqwest"), "{message}");
    assert!(message.contains("error sending request for url (http://127.0.0.1:9/mcp)"), "{message}");
}

#[test]
#[ignore = "needs the Python MCP SDK and mcp-server-time in target/mcp-venv (.ci/run makes it)"]
fn every_unusable_entry_is_said_once_and_mcp_call_names_why() {
    let env = with_servers(&json!({"old": {"type": "sse", "url": "http://127.0.0.1:1/sse"}}));
    let out = env.run_code("mcp_call('old', 'x')").code(1);
    assert!(out.stderr.contains("ValueError: `.mcp.json`: MCP server `old` cannot be used: "), "{}", out.stderr);
    assert!(out.stderr.contains("the legacy SSE transport (`\"type\": \"sse\"`) is not supported"), "{}", out.stderr);
    let said = out.stderr.matches("legacy SSE").count();
    assert_eq!(said, 2, "once as a warning, once in the error: {}", out.stderr);
}

#[test]
#[ignore = "needs the Python MCP SDK and mcp-server-time in target/mcp-venv (.ci/run makes it)"]
fn the_python_sdk_server_works_over_streamable_http() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let child = std::process::Command::new(mcp_python())
        .args([mcp_script("server.py").to_str().unwrap(), "http", &port.to_string()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let _server = HttpServer(child, port);
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(started.elapsed() < Duration::from_secs(20), "the HTTP server did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    let url = format!("http://127.0.0.1:{port}/mcp");
    let env = with_servers(&json!({"hs": {"type": "http", "url": url}}))
        .user_config(r#"{"network": {"allowed_hosts": ["127.0.0.1"]}}"#);
    let program = "print(hs__shout(text='hi'), hs__stats(numbers=[1, 2])['count'])\n\
                   print(hs__picture()[0]['mime_type'])";
    env.run_code(program).code(0).stdout("HI 2\nimage/png\n");
}
