//! The `wasm` backend: the sandbox holds (no files, environment, sockets or processes of its
//! own), the limits stop what Monty's cannot see (a blocking sleep), a changed compiled-guest
//! cache is never loaded, and the commands know the backend. The shared corpus runs in
//! `corpus.rs`. The tests that need the guest wheels are `#[ignore]`d; `.ci/run` fetches the wheels and runs them.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{TestEnv, wasm_guest};

fn wasm_env() -> TestEnv {
    TestEnv::with_fixture_workspace().with_wasm()
}

/// Runs `code` on wasm with `--json` and returns the JSON.
fn run_json(env: &TestEnv, args: &[&str], code: &str) -> Value {
    let mut all = vec!["run", "--backend", "wasm", "--json"];
    all.extend_from_slice(args);
    let out = env.run(&all, code);
    serde_json::from_str(&out.stdout).unwrap_or_else(|_| panic!("not JSON:\n{}\n{}", out.stdout, out.stderr))
}

/// The program's stdout, asserting that it succeeded.
fn stdout_of(env: &TestEnv, code: &str) -> String {
    let json = run_json(env, &[], code);
    assert_eq!(json["success"], true, "{json}");
    assert_eq!(json["backend"], "wasm");
    json["stdout"].as_str().unwrap_or_default().to_owned()
}

#[test]
#[ignore = "needs the CPython guest wheels in target/guest-wheels (.ci/run fetches them)"]
fn open_cannot_read_host_files() {
    let env = wasm_env();
    let code = "for path in ['/etc/passwd', '/proc/self/environ', 'src/app.py', '/python/../../etc/passwd']:\n    try:\n        open(path).read()\n        print(path, 'READ')\n    except OSError as exc:\n        print(path, type(exc).__name__)\n";
    let out = stdout_of(&env, code);
    assert!(!out.contains("READ"), "{out}");
    assert_eq!(out.lines().count(), 4, "{out}");
}

#[test]
#[ignore = "needs the CPython guest wheels in target/guest-wheels (.ci/run fetches them)"]
fn the_standard_library_mount_is_read_only() {
    let env = wasm_env();
    let out = stdout_of(
        &env,
        "try:\n    open('/python/evil.py', 'w').write('x')\n    print('WROTE')\nexcept OSError as exc:\n    print(type(exc).__name__)\n",
    );
    assert!(!out.contains("WROTE"), "{out}");
}

#[test]
#[ignore = "needs the CPython guest wheels in target/guest-wheels (.ci/run fetches them)"]
fn the_environment_is_empty() {
    let env = wasm_env();
    let env = env.env("CODEACT_TEST_SECRET", "hunter2");
    let out =
        stdout_of(&env, "import os\nprint(dict(os.environ), os.getenv('HOME'), os.getenv('CODEACT_TEST_SECRET'))\n");
    assert_eq!(out, "{} None None\n");
}

#[test]
#[ignore = "needs the CPython guest wheels in target/guest-wheels (.ci/run fetches them)"]
fn sockets_and_http_are_refused() {
    let env = wasm_env();
    let code = r#"
import socket, urllib.request
results = []
for attempt in [
    lambda: socket.create_connection(("127.0.0.1", 80), timeout=2),
    lambda: socket.socket().connect(("1.1.1.1", 443)),
    lambda: socket.getaddrinfo("example.com", 80),
    lambda: urllib.request.urlopen("http://example.com", timeout=2),
]:
    try:
        attempt()
        results.append("CONNECTED")
    except Exception as exc:
        results.append(type(exc).__name__)
print(results)
"#;
    let out = stdout_of(&env, code);
    assert!(!out.contains("CONNECTED"), "{out}");
}

#[test]
#[ignore = "needs the CPython guest wheels in target/guest-wheels (.ci/run fetches them)"]
fn subprocesses_cannot_start() {
    let env = wasm_env();
    let code = "import os, subprocess\nout = []\nfor attempt in [lambda: subprocess.run(['ls']), lambda: os.system('ls'), lambda: os.fork()]:\n    try:\n        attempt()\n        out.append('RAN')\n    except Exception as exc:\n        out.append(type(exc).__name__)\nprint(out)\n";
    let out = stdout_of(&env, code);
    assert!(!out.contains("RAN"), "{out}");
}

#[test]
#[ignore = "needs the CPython guest wheels in target/guest-wheels (.ci/run fetches them)"]
fn a_blocking_sleep_stops_at_the_timeout() {
    let env = wasm_env();
    let started = Instant::now();
    let json = run_json(&env, &["--timeout", "1"], "import time\nprint('before')\ntime.sleep(60)\nprint('after')\n");
    assert!(started.elapsed() < Duration::from_secs(10), "took {:?}", started.elapsed());
    assert_eq!(json["error"]["type"], "TimeoutError", "{json}");
    assert_eq!(json["stdout"], "before\n");
}

#[test]
#[ignore = "needs the CPython guest wheels in target/guest-wheels (.ci/run fetches them)"]
fn an_infinite_loop_stops_at_the_timeout() {
    let env = wasm_env();
    let started = Instant::now();
    let json = run_json(&env, &["--timeout", "1"], "while True:\n    pass\n");
    assert!(started.elapsed() < Duration::from_secs(10), "took {:?}", started.elapsed());
    assert_eq!(json["error"]["type"], "TimeoutError", "{json}");
    assert!(json["error"]["message"].as_str().unwrap_or_default().contains("--timeout"), "{json}");
}

#[test]
#[ignore = "needs the CPython guest wheels in target/guest-wheels (.ci/run fetches them)"]
fn a_memory_bomb_is_a_memory_error() {
    let env = wasm_env();
    let json = run_json(&env, &["--max-memory", "64MiB"], "x = 'a' * (200 * 1024 * 1024)\n");
    assert_eq!(json["error"]["type"], "MemoryError", "{json}");
    assert!(json["error"]["message"].as_str().unwrap_or_default().contains("64 MiB"), "{json}");
    let caught = stdout_of(&env, "try:\n    x = [0] * (10**9)\nexcept MemoryError:\n    print('caught')\n");
    assert_eq!(caught, "caught\n");
}

#[test]
#[ignore = "needs the CPython guest wheels in target/guest-wheels (.ci/run fetches them)"]
fn tools_work_as_plain_calls_and_through_call_tool() {
    let env = wasm_env();
    let out = stdout_of(
        &env,
        "a = view(path='src/app.py')\nb = call_tool('view', path='src/app.py')\nc = view('src/app.py')\nprint(a == b == c, len(glob(pattern='**/*.py')) > 0)\n",
    );
    assert_eq!(out, "True True\n");
}

#[test]
#[ignore = "needs the CPython guest wheels in target/guest-wheels (.ci/run fetches them)"]
fn agentschema_names_and_optional_inputs_work_as_on_monty() {
    let tool = "---\ntype: custom\nname: read-file\ndescription: Echo the input.\n---\n## Input Schema\n\
                | Name | Type | Description | Required |\n|---|---|---|---|\n| `filePath` | `string` | p | `true` |\n\
                | `max-lines` | `integer` | n | `false` |\n## Code\n```sh\ncat\n```\n";
    let env = wasm_env().file(".codeact/tools/read-file.md", tool).trusted();
    let out = stdout_of(
        &env,
        "print(call_tool('read-file', filePath='a', **{'max-lines': 3}))\nprint(call_tool('read-file', 'b', **{'max-lines': None}))\n",
    );
    assert_eq!(out, "{'filePath': 'a', 'max-lines': 3}\n{'filePath': 'b'}\n");
}

#[test]
#[ignore = "needs the CPython guest wheels in target/guest-wheels (.ci/run fetches them)"]
fn tool_errors_arrive_as_their_python_types_with_the_line() {
    let env = wasm_env();
    let out = stdout_of(
        &env,
        "kinds = []\nfor call in [lambda: view(path='../outside'), lambda: view(path='nope.py'), lambda: view(paht='x'), lambda: edit(path='src/app.py', old_str='', new_str='x')]:\n    try:\n        call()\n    except Exception as exc:\n        kinds.append(type(exc).__name__)\nprint(kinds)\n",
    );
    assert_eq!(out, "['PermissionError', 'FileNotFoundError', 'TypeError', 'ValueError']\n");
    let json = run_json(&env, &[], "x = 1\n\nview(path='/etc/passwd')\n");
    assert_eq!(json["error"]["type"], "PermissionError");
    assert_eq!(json["error"]["line"], 3);
    let traceback = json["error"]["traceback"].as_str().unwrap_or_default();
    assert!(traceback.contains("line 3") && !traceback.contains("prelude"), "{traceback}");
}

#[test]
#[ignore = "needs the CPython guest wheels in target/guest-wheels (.ci/run fetches them)"]
fn unknown_names_list_the_tools() {
    let env = wasm_env();
    let json = run_json(&env, &[], "veiw(path='a')\n");
    assert_eq!(json["error"]["type"], "NameError");
    let message = json["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("name 'veiw' is not defined (available tools: view, create, edit, glob, grep"),
        "{message}"
    );
}

#[test]
#[ignore = "needs the CPython guest wheels in target/guest-wheels (.ci/run fetches them)"]
fn a_changed_compiled_guest_is_compiled_again_not_loaded() {
    let (guest, _) = wasm_guest();
    // A private cache, so that the shared one stays intact for the other tests.
    let env = TestEnv::with_fixture_workspace();
    let cache = env.root().join("cache");
    let env = env.env("CODEACT_GUEST_DIR", &guest.to_string_lossy()).env("CODEACT_CACHE_DIR", &cache.to_string_lossy());
    // Compiling takes seconds, and none of them count against the program's time.
    let out = env.run(&["run", "--backend", "wasm", "--timeout", "1", "--code", "print(1)"], "");
    assert_eq!(out.stdout, "1\n", "{}", out.stderr);
    let compiled = the_file_ending_in(&cache.join("wasm"), "cwasm");
    // Flip bytes in the middle of the compiled code, keeping the size.
    let mut bytes = std::fs::read(&compiled).expect("read cache");
    let middle = bytes.len() / 2;
    for byte in &mut bytes[middle..middle + 4096] {
        *byte ^= 0xFF;
    }
    std::fs::write(&compiled, &bytes).expect("tamper");
    let out = env.run(&["run", "--backend", "wasm", "--timeout", "1", "--code", "print(2)"], "");
    assert_eq!(out.stdout, "2\n", "{}", out.stderr);
    assert!(out.stderr.contains("changed since codeact wrote it"), "{}", out.stderr);
    let rebuilt = std::fs::read(&compiled).expect("read cache");
    assert_ne!(rebuilt, bytes, "the tampered file is still there");
}

/// The one file in `dir` whose name ends in `.extension`.
fn the_file_ending_in(dir: &std::path::Path, extension: &str) -> std::path::PathBuf {
    let files: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|err| panic!("{}: {err}", dir.display()))
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == extension))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files[0].clone()
}

#[test]
#[ignore = "needs the CPython guest wheels in target/guest-wheels (.ci/run fetches them)"]
fn runs_start_with_the_prelude_loaded_and_cannot_reach_it_or_later_runs() {
    let env = wasm_env();
    let code = "import builtins\nfrom wit_world.imports import tools\ntry:\n    tools.dispatch('__codeact_prelude', '')\n    print('answered')\nexcept Exception as exc:\n    print('refused')\nprint(hasattr(builtins, '__codeact_main'))\nbuiltins.print = None\nbuiltins.len = None\n";
    assert_eq!(stdout_of(&env, code), "refused\nFalse\n");
    // Every run starts from the snapshot, not from what the last one left.
    assert_eq!(stdout_of(&env, "print(len('abc'))"), "3\n");
}

#[test]
#[ignore = "needs the CPython guest wheels in target/guest-wheels (.ci/run fetches them)"]
fn commands_know_the_wasm_backend() {
    let env = wasm_env();
    let out = env.run(&["preflight", "--backend", "wasm"], "");
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let out = env.run(&["detect"], "");
    assert!(out.stdout.starts_with("auto runs monty, and wasm where Monty cannot"), "{}", out.stdout);
    let out = env.run(&["instructions", "--backend", "wasm"], "");
    assert!(out.stdout.contains("full CPython 3.14"), "{}", out.stdout);
    assert!(out.stdout.contains("run --backend wasm"), "{}", out.stdout);
    let out = env.run(&["discover", "--backend", "wasm"], "");
    assert_eq!(out.code, 0, "{}", out.stderr);
}

#[test]
fn preflight_without_the_guest_names_the_command_that_fixes_it() {
    let env = TestEnv::new().env("CODEACT_GUEST_DIR", "/nonexistent/codeact-guest");
    let out = env.run(&["preflight", "--backend", "wasm"], "");
    assert_eq!(out.code, 3, "{}{}", out.stdout, out.stderr);
    assert!(format!("{}{}", out.stdout, out.stderr).contains("codeact guest install"), "{}{}", out.stdout, out.stderr);
    let out = env.run(&["run", "--backend", "wasm", "--code", "print(1)"], "");
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(out.stderr.contains("codeact guest install"), "{}", out.stderr);
}

#[test]
fn guest_install_refuses_a_wheel_with_the_wrong_digest() {
    let env = TestEnv::new();
    let wheels = env.root().join("wheels");
    std::fs::create_dir_all(&wheels).expect("mkdir");
    std::fs::write(wheels.join("hyperlight_sandbox_python_guest-0.8.0-py3-none-any.whl"), b"not a wheel")
        .expect("write");
    let guest = env.root().join("guest");
    let env = env.env("CODEACT_GUEST_DIR", &guest.to_string_lossy());
    let out = env.run(&["guest", "install", "--from", &wheels.to_string_lossy()], "");
    assert_ne!(out.code, 0);
    assert!(out.stderr.contains("not the pinned"), "{}", out.stderr);
    assert!(!guest.exists(), "a failed install left {}", guest.display());
}

#[test]
#[ignore = "needs the CPython guest wheels in target/guest-wheels (.ci/run fetches them)"]
fn the_tool_confinement_holds_on_wasm() {
    const SECRET: &str = "OUTSIDE-SECRET";
    let env = TestEnv::new()
        .outside_file("secret.txt", SECRET)
        .file("inside.txt", "inside\n")
        .symlink("../outside/secret.txt", "link.txt")
        .symlink("../outside", "linkdir")
        .symlink("/dev/zero", "zero")
        .with_wasm();
    let status = std::process::Command::new("mkfifo").arg(env.workspace().join("pipe")).status().expect("mkfifo");
    assert!(status.success());
    let secret = env.outside().join("secret.txt");
    let stolen = env.outside().join("stolen.db");
    let started = Instant::now();
    for code in [
        "view(path='../outside/secret.txt')".to_owned(),
        "view(path='sub/../../outside/secret.txt')".to_owned(),
        "create(path='../outside/new.txt', file_text='x')".to_owned(),
        "edit(path='../outside/secret.txt', old_str='OUTSIDE', new_str='x')".to_owned(),
        "glob(pattern='*', paths='..')".to_owned(),
        "grep(pattern='SECRET', paths='../outside')".to_owned(),
        "sql(query='select 1', db_path='../outside/x.db')".to_owned(),
        format!("view(path={:?})", secret.to_string_lossy()),
        "view(path='/etc/passwd')".to_owned(),
        "view(path='link.txt')".to_owned(),
        "edit(path='link.txt', old_str='OUTSIDE', new_str='x')".to_owned(),
        "view(path='linkdir/secret.txt')".to_owned(),
        "create(path='linkdir/new.txt', file_text='x')".to_owned(),
        "view(path='/dev/zero')".to_owned(),
        "view(path='zero')".to_owned(),
        "view(path='pipe')".to_owned(),
    ] {
        let json = run_json(&env, &[], &code);
        assert_eq!(json["error"]["type"], "PermissionError", "{code}: {json}");
        assert!(!json.to_string().contains(SECRET), "{code}: {json}");
    }
    let json = run_json(&env, &[], &format!("sql(query=\"attach database '{}' as x\")", stolen.display()));
    assert_eq!(json["error"]["type"], "RuntimeError", "{json}");
    assert!(!stolen.exists());
    assert!(!env.outside().join("new.txt").exists());
    assert!(started.elapsed() < Duration::from_mins(2), "took {:?}", started.elapsed());
    assert_eq!(stdout_of(&env, "print([h['path'] for h in grep(pattern='inside')])"), "['inside.txt']\n");
    assert_eq!(stdout_of(&env, "print(grep(pattern='-e', paths='inside.txt'))"), "[]\n");
}

#[test]
#[ignore = "needs the CPython guest wheels in target/guest-wheels (.ci/run fetches them)"]
fn a_symlink_swapped_in_during_a_run_never_leaks_outside_content_on_wasm() {
    let env = crate::security::env().with_wasm();
    crate::security::symlink_swap_race(env, "wasm");
}
