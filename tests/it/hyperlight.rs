//! The `hyperlight` backend: the CPython guest in a micro-VM, with the same tools, confinement,
//! limits and output as `wasm`. Each test needs a hypervisor on which a Hyperlight guest
//! starts; where `codeact preflight --backend hyperlight` finds none (a kvm-pvm host, say) it
//! says so on stderr and skips, except that `CODEACT_REQUIRE_HYPERLIGHT=1` — which
//! `tests/vm/hyperlight.sh` sets inside its VM, where one does start — makes that a failure.
//! The tests that need none (the fallback where no micro-VM starts) run everywhere.

use std::path::PathBuf;
use std::sync::OnceLock;

use serde_json::Value;

use crate::support::{TestEnv, wasm_guest};

/// The shared guest and a cache for this boot's snapshot: (guest dir, cache dir), or why no
/// micro-VM starts here.
fn shared() -> &'static Result<(PathBuf, PathBuf), String> {
    static SHARED: OnceLock<Result<(PathBuf, PathBuf), String>> = OnceLock::new();
    SHARED.get_or_init(|| {
        let in_vm = std::env::var_os("CODEACT_REQUIRE_HYPERLIGHT").is_some();
        let (guest, cache) = if in_vm {
            // The guest was installed on the host, which sees the same `target/`; the snapshot
            // is made here, where a micro-VM starts.
            let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/it-guest");
            (root.join("guest"), std::env::temp_dir().join("codeact-it-hyperlight-cache"))
        } else {
            wasm_guest().clone()
        };
        let env = TestEnv::new()
            .env("CODEACT_GUEST_DIR", &guest.to_string_lossy())
            .env("CODEACT_CACHE_DIR", &cache.to_string_lossy());
        let out = env.run(&["preflight", "--backend", "hyperlight"], "");
        if out.code != 0 {
            let why = format!("no Hyperlight micro-VM here:\n{}{}", out.stdout, out.stderr);
            assert!(!in_vm, "CODEACT_REQUIRE_HYPERLIGHT is set, but {why}");
            return Err(why);
        }
        // Make the snapshot now, once, rather than in many tests at the same time.
        let out = env.run(&["run", "--backend", "hyperlight", "--code", "print(1)"], "");
        assert_eq!(out.stdout, "1\n", "{}", out.stderr);
        Ok((guest, cache))
    })
}

/// A test environment with the fixture workspace on the shared guest, or `None` (after saying
/// why on stderr) where no micro-VM starts.
fn hyperlight_env() -> Option<TestEnv> {
    match shared() {
        Ok((guest, cache)) => Some(
            TestEnv::with_fixture_workspace()
                .env("CODEACT_GUEST_DIR", &guest.to_string_lossy())
                .env("CODEACT_CACHE_DIR", &cache.to_string_lossy()),
        ),
        Err(why) => {
            #[expect(clippy::print_stderr, reason = "a skipped test says why")]
            {
                eprintln!("skipped: {why}");
            }
            None
        }
    }
}

fn run_json(env: &TestEnv, args: &[&str], code: &str) -> Value {
    let mut all = vec!["run", "--backend", "hyperlight", "--json"];
    all.extend_from_slice(args);
    let out = env.run(&all, code);
    serde_json::from_str(&out.stdout)
        .unwrap_or_else(|_| panic!("not JSON (exit {}):\n{}\n{}", out.code, out.stdout, out.stderr))
}

fn stdout_of(env: &TestEnv, code: &str) -> String {
    let json = run_json(env, &[], code);
    assert_eq!(json["success"], true, "{json}");
    assert_eq!(json["backend"], "hyperlight");
    json["stdout"].as_str().unwrap_or_default().to_owned()
}

fn error_of(env: &TestEnv, args: &[&str], code: &str) -> (String, String) {
    let json = run_json(env, args, code);
    assert_eq!(json["success"], false, "{json}");
    assert_eq!(json["backend"], "hyperlight");
    (json["error"]["type"].as_str().unwrap_or_default().to_owned(), json["error"]["message"].to_string())
}

#[test]
#[ignore = "needs the guest wheels and a hypervisor that runs Hyperlight guests (tests/vm/hyperlight.sh)"]
fn full_cpython_runs_with_its_standard_library() {
    let Some(env) = hyperlight_env() else { return };
    let code = "import sys, json, re, pathlib, dataclasses, collections, itertools, decimal, fractions, textwrap\n\
                @dataclasses.dataclass\nclass P:\n    x: int\n\
                print(sys.version_info[:2], json.dumps({'a': [1, 2]}), re.sub('a+', 'b', 'caaat'))\n\
                print(P(3), collections.Counter('abca').most_common(1), list(itertools.islice(itertools.count(), 3)))\n\
                print(decimal.Decimal('1.1') + decimal.Decimal('2.2'), fractions.Fraction(1, 3) * 3)\n\
                print(pathlib.PurePosixPath('a/b.txt').suffix)\n\
                {'answer': 6 * 7}\n";
    let json = run_json(&env, &[], code);
    assert_eq!(json["success"], true, "{json}");
    assert_eq!(json["stdout"], "(3, 14) {\"a\": [1, 2]} cbt\nP(x=3) [('a', 2)] [0, 1, 2]\n3.3 1\n.txt\n", "{json}");
    assert_eq!(json["return_value"], serde_json::json!({"answer": 42}));
    assert_eq!(json["backend"], "hyperlight");
}

#[test]
#[ignore = "needs the guest wheels and a hypervisor that runs Hyperlight guests (tests/vm/hyperlight.sh)"]
fn tools_are_functions_and_their_errors_are_exceptions() {
    let Some(env) = hyperlight_env() else { return };
    let code = "files = glob(pattern='src/*.py')\n\
                print(sorted(files))\n\
                print(view(path='README.md').splitlines()[0])\n\
                print(len(call_tool('grep', pattern='def ', paths='src')) > 0)\n\
                for attempt in [lambda: view(path='missing.txt'), lambda: view(nope=1), lambda: no_such_tool()]:\n    \
                    try:\n        attempt()\n    except Exception as exc:\n        print(type(exc).__name__)\n";
    let json = run_json(&env, &[], code);
    assert_eq!(json["success"], true, "{json}");
    let out = json["stdout"].as_str().unwrap_or_default();
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].contains("src/app.py"), "{out}");
    assert_eq!(lines[2], "True", "{out}");
    assert_eq!(&lines[3..], ["FileNotFoundError", "TypeError", "NameError"], "{out}");
    assert!(json["tool_calls"].as_u64().unwrap_or(0) >= 3, "{json}");
}

#[test]
#[ignore = "needs the guest wheels and a hypervisor that runs Hyperlight guests (tests/vm/hyperlight.sh)"]
fn the_tools_and_open_cannot_leave_the_workspace() {
    let Some(env) = hyperlight_env() else { return };
    let env = env.outside_file("secret.txt", "OUTSIDE-SECRET");
    let outside = env.outside().join("secret.txt");
    let code = format!(
        "for attempt in [lambda: view(path='../outside/secret.txt'), lambda: view(path={outside:?}),\n\
         lambda: open({outside:?}).read(), lambda: open('/etc/passwd').read(), lambda: open('src/app.py').read(),\n\
         lambda: open('/python/../../etc/passwd').read(), lambda: open('/python/evil.py', 'w')]:\n    \
             try:\n        print('READ', attempt()[:20])\n    except Exception as exc:\n        print(type(exc).__name__)\n",
        outside = outside.display().to_string()
    );
    let out = stdout_of(&env, &code);
    assert!(!out.contains("READ") && !out.contains("OUTSIDE-SECRET"), "{out}");
    assert_eq!(out.lines().count(), 7, "{out}");
}

#[test]
#[ignore = "needs the guest wheels and a hypervisor that runs Hyperlight guests (tests/vm/hyperlight.sh)"]
fn the_guest_has_no_environment_sockets_or_processes() {
    let Some(env) = hyperlight_env() else { return };
    let env = env.env("CODEACT_TEST_SECRET", "hunter2");
    let code = "import os, socket, subprocess\nresults = [dict(os.environ), os.getenv('CODEACT_TEST_SECRET')]\n\
                for attempt in [lambda: socket.create_connection(('127.0.0.1', 80), timeout=2),\n\
                                lambda: socket.getaddrinfo('example.com', 80), lambda: subprocess.run(['true'])]:\n    \
                    try:\n        attempt()\n        results.append('REACHED')\n    except Exception as exc:\n        results.append('refused')\n\
                print(results)\n";
    assert_eq!(stdout_of(&env, code), "[{}, None, 'refused', 'refused', 'refused']\n");
}

#[test]
#[ignore = "needs the guest wheels and a hypervisor that runs Hyperlight guests (tests/vm/hyperlight.sh)"]
fn a_cpu_loop_and_a_long_sleep_stop_at_the_time_limit() {
    let Some(env) = hyperlight_env() else { return };
    // The guest runtime keeps time itself; on an emulated CPU its clock can run many times
    // faster than the host's, so the sleep is long enough to outlast the limit however fast.
    for code in ["while True:\n    pass\n", "import time\ntime.sleep(3600)\nprint('woke')\n"] {
        let started = std::time::Instant::now();
        let (kind, message) = error_of(&env, &["--timeout", "2"], code);
        assert_eq!(kind, "TimeoutError", "{message}");
        // Emulated micro-VMs are slow to start; the program itself got its 2 seconds.
        assert!(started.elapsed() < std::time::Duration::from_mins(1), "{:?}", started.elapsed());
    }
}

#[test]
#[ignore = "needs the guest wheels and a hypervisor that runs Hyperlight guests (tests/vm/hyperlight.sh)"]
fn a_sleep_waits_its_time_and_one_past_the_limit_ends_the_run() {
    let Some(env) = hyperlight_env() else { return };
    // A sleep waits its time (on the wall clock, which the guest reads from the host): a short
    // one ends and the program goes on; one past the limit ends the run there, with the error
    // the `wasm` backend gives.
    let code = "import time\nstart = time.time()\ntime.sleep(0.5)\nprint(time.time() - start >= 0.5)\n";
    assert_eq!(stdout_of(&env, code), "True\n");
    let json = run_json(&env, &["--timeout", "2"], "import time\ntime.sleep(60)\nprint('woke')\n");
    assert_eq!(json["success"], false, "{json}");
    assert_eq!(json["stdout"], "", "{json}");
    assert_eq!(
        json["error"],
        serde_json::json!({
            "type": "TimeoutError",
            "message": "time limit of 2s exceeded (raise it with --timeout)",
            "line": null,
            "traceback": "TimeoutError: time limit of 2s exceeded (raise it with --timeout)",
        })
    );
}

#[test]
#[ignore = "needs the guest wheels and a hypervisor that runs Hyperlight guests (tests/vm/hyperlight.sh)"]
fn a_memory_bomb_is_a_memory_error() {
    let Some(env) = hyperlight_env() else { return };
    let (kind, message) = error_of(&env, &[], "chunks = []\nwhile True:\n    chunks.append(bytearray(64 << 20))\n");
    assert_eq!(kind, "MemoryError", "{message}");
}

#[test]
#[ignore = "needs the guest wheels and a hypervisor that runs Hyperlight guests (tests/vm/hyperlight.sh)"]
fn runs_share_no_state() {
    let Some(env) = hyperlight_env() else { return };
    // Only the snapshot's initialisation is served the prelude, and its entry point has left the
    // builtins before the program starts.
    let code = "import builtins, sys\nfrom wit_world.imports import tools\ntry:\n    print(leftover)\nexcept NameError:\n    print('fresh')\n\
                try:\n    tools.dispatch('__codeact_prelude', '')\n    print('answered')\nexcept Exception:\n    print('refused')\n\
                print(hasattr(builtins, '__codeact_main'))\n\
                builtins.leftover = 1\nsys.modules['json'] = None\nbuiltins.len = None\n";
    assert_eq!(stdout_of(&env, code), "fresh\nrefused\nFalse\n");
    assert_eq!(stdout_of(&env, code), "fresh\nrefused\nFalse\n");
    // In text mode, the last expression's value is printed after the output.
    let out = env.run(&["run", "--backend", "hyperlight"], "import json\nprint('ok')\nlen(json.dumps([1]))\n");
    assert_eq!(out.stdout, "ok\n3\n", "{}", out.stderr);
}

#[test]
#[ignore = "needs the guest wheels and a hypervisor that runs Hyperlight guests (tests/vm/hyperlight.sh)"]
fn a_changed_snapshot_is_made_again_not_loaded() {
    let Some(env) = hyperlight_env() else { return };
    // A cache and a heap of this test's own (the heap is part of the snapshot's key), so that
    // the other tests keep loading the shared snapshot while this one changes its own.
    let cache = env.root().join("cache");
    let env = env.env("CODEACT_CACHE_DIR", &cache.to_string_lossy());
    let args = ["--max-memory", "256M"];
    assert_eq!(run_json(&env, &args, "print(1)")["guest_cache"], "compiled");
    assert_eq!(run_json(&env, &args, "print(2)")["guest_cache"], "hit");
    let blobs = std::fs::read_dir(cache.join("hyperlight"))
        .expect("snapshot cache")
        .map(|entry| entry.expect("entry").path())
        .find(|path| path.is_dir())
        .expect("a snapshot directory")
        .join("blobs/sha256");
    let largest = std::fs::read_dir(&blobs)
        .expect("blobs")
        .map(|entry| entry.expect("entry").path())
        .max_by_key(|path| std::fs::metadata(path).map_or(0, |m| m.len()))
        .expect("a blob");
    // Flip a page in the middle of the guest's memory, in place, keeping the size.
    {
        use std::io::{Read as _, Seek as _, SeekFrom, Write as _};
        let mut file = std::fs::OpenOptions::new().read(true).write(true).open(&largest).expect("open blob");
        let middle = file.metadata().expect("metadata").len() / 2;
        let mut page = vec![0_u8; 4096];
        file.seek(SeekFrom::Start(middle)).expect("seek");
        file.read_exact(&mut page).expect("read");
        for byte in &mut page {
            *byte ^= 0xFF;
        }
        file.seek(SeekFrom::Start(middle)).expect("seek");
        file.write_all(&page).expect("tamper");
    }
    let json = run_json(&env, &args, "print(3)");
    assert_eq!(json["success"], true, "{json}");
    assert_eq!(json["stdout"], "3\n");
    assert_eq!(json["guest_cache"], "recompiled", "{json}");
    assert_eq!(run_json(&env, &args, "print(4)")["guest_cache"], "hit");
}

#[test]
#[ignore = "needs the guest wheels and a hypervisor that runs Hyperlight guests (tests/vm/hyperlight.sh)"]
fn the_corpus_programs_that_need_full_cpython_pass() {
    let Some(env) = hyperlight_env() else { return };
    let cases: Vec<_> = crate::corpus::all_cases()
        .into_iter()
        .filter(|case| case.backends.as_ref().is_some_and(|list| list.iter().any(|b| b == "wasm")))
        .collect();
    assert!(cases.len() >= 5, "{} corpus programs for full CPython", cases.len());
    let failures: Vec<String> =
        cases.iter().filter_map(|case| crate::corpus::check_in(&env, case, "hyperlight")).collect();
    assert!(failures.is_empty(), "{} of {} failed:\n\n{}", failures.len(), cases.len(), failures.join("\n\n"));
}

#[test]
#[ignore = "needs the guest wheels and a hypervisor that runs Hyperlight guests (tests/vm/hyperlight.sh)"]
fn commands_know_the_hyperlight_backend() {
    let Some(env) = hyperlight_env() else { return };
    let out = env.run(&["preflight", "--backend", "hyperlight"], "");
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let out = env.run(&["detect"], "");
    assert!(out.stdout.starts_with("auto runs monty, and hyperlight where Monty cannot"), "{}", out.stdout);
    let out = env.run(&["instructions", "--backend", "hyperlight"], "");
    assert!(out.stdout.contains("full CPython 3.14 (Hyperlight micro-VM)"), "{}", out.stdout);
    assert!(out.stdout.contains("run --backend hyperlight"), "{}", out.stdout);
    let json = run_json(&env, &[], "print(1)");
    assert_eq!(json["backend"], "hyperlight");
    assert_eq!(json["guest_cache"], "hit", "{json}");
    // `auto` runs Monty first, and what Monty cannot run in the micro-VM.
    let auto = env.run(&["run", "--json", "--code", "print(1)"], "");
    assert!(auto.stdout.contains("\"backend\": \"monty\""), "{}", auto.stdout);
    let auto = env.run(&["run", "--json", "--code", BEYOND_MONTY], "");
    assert!(auto.stdout.contains("\"backend\": \"hyperlight\""), "{}", auto.stdout);
}

/// Where no micro-VM starts, the probe says why, `preflight` exits 3 with it, and `auto` falls
/// back to `wasm` without waiting.
#[test]
#[ignore = "needs the CPython guest wheels in target/guest-wheels (.ci/run fetches them)"]
fn where_no_micro_vm_starts_preflight_says_why_and_auto_falls_back() {
    let Err(_) = shared() else {
        #[expect(clippy::print_stderr, reason = "a skipped test says why")]
        {
            eprintln!("skipped: a Hyperlight micro-VM starts here");
        }
        return;
    };
    let (guest, cache) = wasm_guest();
    let env =
        TestEnv::new().env("CODEACT_GUEST_DIR", &guest.to_string_lossy()).env("CODEACT_CACHE_DIR", &env_cache(cache));
    let out = env.run(&["preflight", "--backend", "hyperlight"], "");
    assert_eq!(out.code, 3, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("FAIL  micro-VM: no Hyperlight micro-VM starts here: "), "{}", out.stdout);
    assert!(out.stdout.contains("fix: Hyperlight needs KVM"), "{}", out.stdout);
    let out = env.run(&["run", "--backend", "hyperlight", "--code", "print(1)"], "");
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(out.stderr.contains("no Hyperlight micro-VM starts here"), "{}", out.stderr);
    let out = env.run(&["run", "--json", "--code", BEYOND_MONTY], "");
    assert!(out.stdout.contains("\"backend\": \"wasm\""), "{}", out.stdout);
    // The probe's answer is kept for this boot, so `auto` does not start a micro-VM each run.
    let kept = std::fs::read_to_string(std::path::Path::new(&env_cache(cache)).join("hyperlight/probe.json"))
        .expect("the probe's answer is kept");
    let kept: Value = serde_json::from_str(&kept).expect("JSON");
    assert!(kept["failure"].as_str().is_some_and(|why| !why.is_empty()), "{kept}");
}

/// A program Monty does not compile (a class with a base), which `auto` runs on CPython.
const BEYOND_MONTY: &str = "class Failed(Exception):\n    pass\nprint(1)";

/// A cache of this test's own, beside the shared one (the probe's answer is kept in it).
fn env_cache(shared: &std::path::Path) -> String {
    shared.with_file_name("cache-no-micro-vm").to_string_lossy().into_owned()
}

/// The hooks must answer at once: they never start a micro-VM to find out whether one starts,
/// and use only what a probe on this boot found.
#[test]
#[ignore = "needs the CPython guest wheels in target/guest-wheels (.ci/run fetches them)"]
fn the_hooks_never_start_a_micro_vm() {
    let (guest, _) = wasm_guest();
    let env = TestEnv::new().env("CODEACT_GUEST_DIR", &guest.to_string_lossy());
    let cache = env.root().join("cache");
    let env = env.env("CODEACT_CACHE_DIR", &cache.to_string_lossy());
    let start = serde_json::json!({"sessionId": "s", "cwd": env.workspace(), "source": "new"}).to_string();
    let out = env.run(&["hook", "session-start"], &start);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let tool = serde_json::json!({"sessionId": "s", "cwd": env.workspace(), "toolName": "view", "toolArgs": "{}"});
    let out = env.run(&["hook", "pre-tool-use"], &tool.to_string());
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!cache.join("hyperlight/probe.json").exists(), "a hook probed for a micro-VM");
    // A command that selects the backend does probe, and keeps the answer.
    let out = env.run(&["detect"], "");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(cache.join("hyperlight/probe.json").exists(), "detect did not keep the probe's answer");
}

#[test]
#[ignore = "needs the guest wheels and a hypervisor that runs Hyperlight guests (tests/vm/hyperlight.sh)"]
fn a_served_session_keeps_its_micro_vm_from_one_call_to_the_next() {
    use crate::serve::{result_text, stdio_calls_in_turn, tool_call};

    let Some(env) = hyperlight_env() else { return };
    // Each call waits for its program: a micro-VM nested in an emulated CPU is slow to start.
    let run = |id: u64, code: &str| tool_call(id, "run", serde_json::json!({"code": code, "yield_after": 0}));
    let answers = stdio_calls_in_turn(
        env.command(&["mcp", "serve", "--backend", "hyperlight"]),
        &[
            run(1, "import json\ncount = 41\ndef bump(n):\n    return n + 1\nclass Box:\n    size = 2"),
            run(2, "print(bump(count), Box.size, json.dumps([count]))"),
            // What a program set before it raised stays, as in a REPL.
            run(3, "count = 1\nraise ValueError('no')"),
            run(4, "print(count)"),
            // A run past its deadline ends the micro-VM, and says so.
            tool_call(5, "run", serde_json::json!({"code": "while True:\n    pass", "timeout": 3, "yield_after": 0})),
            run(6, "print(count)"),
        ],
    );
    let texts: Vec<&str> = answers[1..].iter().map(result_text).collect();
    assert_eq!(texts[1], "42 2 [41]\n", "{answers:?}");
    assert!(texts[2].contains("ValueError: no"), "{answers:?}");
    assert_eq!(texts[3], "1\n", "{answers:?}");
    assert!(texts[4].contains("TimeoutError"), "{answers:?}");
    assert!(texts[4].contains("ended the session's interpreter"), "{answers:?}");
    assert!(texts[5].contains("NameError"), "{answers:?}");
    for answer in &answers[1..] {
        assert_eq!(answer["result"]["structuredContent"]["backend"], "hyperlight", "{answer}");
    }
}
