//! Limits (SPEC §2.2): every one stops a runaway program with a message naming the limit, its
//! value and the flag that raises it, and the process survives to report it. How fast a limit
//! strikes is a benchmark's question; these tests bound it loosely (the limit plus
//! [`SLACK`]), enough to catch a limit that slips by seconds or never strikes, not so tight
//! that a busy machine fails them.

use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::json;

use crate::support::TestEnv;

/// How late a limit may strike on a busy machine.
pub(crate) const SLACK: Duration = Duration::from_secs(4);

/// The longest a run with `--timeout 1` may take.
const ONE_SECOND_RUN: Duration = Duration::from_secs(1).saturating_add(SLACK);

/// Runs `code` with `flags`, returning the error (type, message) and how long the run took.
fn failing(env: &TestEnv, code: &str, flags: &[&str]) -> ((String, String), Duration) {
    let started = Instant::now();
    let (status, value) = env.run_json(code, flags);
    let elapsed = started.elapsed();
    assert_eq!(status, 1, "{value}");
    let error = &value["error"];
    ((error["type"].as_str().unwrap().to_owned(), error["message"].as_str().unwrap().to_owned()), elapsed)
}

#[test]
fn an_infinite_loop_stops_at_the_timeout() {
    let (error, elapsed) = failing(&TestEnv::new(), "while True:\n    pass", &["--timeout", "1"]);
    assert_eq!(error, ("TimeoutError".into(), "time limit of 1s exceeded (raise it with --timeout)".into()));
    assert!(elapsed < ONE_SECOND_RUN, "took {elapsed:?}");
}

#[test]
fn a_loop_of_tool_calls_stops_at_the_deadline() {
    let env = TestEnv::new().file("a.txt", "x");
    let (error, elapsed) =
        failing(&env, "while True:\n    view(path='a.txt')", &["--timeout", "1", "--max-tool-calls", "100000000"]);
    assert_eq!(error.0, "TimeoutError");
    assert!(elapsed < ONE_SECOND_RUN, "took {elapsed:?}");
}

#[test]
fn interpreter_and_tool_time_add_up_to_one_wall_clock_limit() {
    // 6 s in a tool, then a busy loop: the loop gets only what is left of 7 s, so the run
    // ends near 7 s, far from the 6 s + 7 s of two separate limits.
    let code = "bash(command='sleep 6')\nwhile True:\n    pass";
    let (error, elapsed) = failing(&TestEnv::new(), code, &["--timeout", "7"]);
    assert_eq!(error.0, "TimeoutError");
    assert!(elapsed < Duration::from_secs(7).saturating_add(SLACK), "took {elapsed:?}");
}

#[test]
fn a_tool_started_near_the_deadline_gets_only_the_remaining_time() {
    let env = TestEnv::new();
    let code = "bash(command='echo $$ > shell.pid; exec sleep 60', timeout=60)";
    // Time for a busy machine to start the shell before the deadline strikes.
    let (error, elapsed) = failing(&env, code, &["--timeout", "3"]);
    assert_eq!(error, ("TimeoutError".into(), "time limit of 3s exceeded (raise it with --timeout)".into()));
    assert!(elapsed < Duration::from_secs(3).saturating_add(SLACK), "took {elapsed:?}");
    let pid = std::fs::read_to_string(env.workspace().join("shell.pid")).unwrap();
    assert!(!crate::support::process_alive(&pid), "the command {pid} outlived its run");
}

#[test]
fn a_memory_bomb_raises_memory_error_and_the_process_survives() {
    let code = "chunks = []\nwhile True:\n    chunks.append('x' * 1_000_000)";
    let (error, _) = failing(&TestEnv::new(), code, &["--max-memory", "64MiB"]);
    assert_eq!(error, ("MemoryError".into(), "memory limit of 64 MiB exceeded (raise it with --max-memory)".into()));
}

#[test]
fn one_huge_allocation_raises_memory_error() {
    let (error, _) = failing(&TestEnv::new(), "s = 'x' * (10 ** 10)", &["--max-memory", "64MiB"]);
    assert_eq!(error.0, "MemoryError");
}

#[test]
fn a_tool_result_larger_than_the_memory_left_is_refused() {
    let env = TestEnv::new().file("big.txt", "y".repeat(9 * 1024 * 1024));
    let code =
        "keep = 'x' * (50 * 1024 * 1024)\nparts = []\nfor i in range(20):\n    parts.append(view(path='big.txt'))";
    let (error, _) = failing(&env, code, &["--max-memory", "64MiB"]);
    assert_eq!(error.0, "MemoryError");
}

#[test]
fn deep_recursion_raises_recursion_error() {
    let (error, _) = failing(&TestEnv::new(), "def f(n):\n    return f(n + 1)\nf(0)", &[]);
    assert_eq!(error, ("RecursionError".into(), "maximum recursion depth exceeded".into()));
}

#[test]
fn recursion_error_is_catchable() {
    let code = "def f(n):\n    return f(n + 1)\ntry:\n    f(0)\nexcept RecursionError:\n    print('caught')";
    TestEnv::new().run_code(code).code(0).stdout("caught\n");
}

#[test]
fn the_tool_call_budget_stops_the_run_uncatchably() {
    let env = TestEnv::new().file("a.txt", "x");
    let code = "try:\n    for _ in range(10):\n        view(path='a.txt')\nexcept Exception:\n    print('caught')";
    let (status, value) = env.run_json(code, &["--max-tool-calls", "3"]);
    assert_eq!(status, 1);
    assert_eq!(value["stdout"], json!(""));
    assert_eq!(value["error"]["message"], json!("tool-call limit of 3 reached (raise it with --max-tool-calls)"));
    assert_eq!(value["error"]["type"], json!("RuntimeError"));
    assert_eq!(value["tool_calls"], json!(3));
}

#[test]
fn limits_come_from_the_environment() {
    let env = TestEnv::new().env("CODEACT_TIMEOUT", "0.5");
    let (error, _) = failing(&env, "while True:\n    pass", &[]);
    assert_eq!(error.1, "time limit of 0.5s exceeded (raise it with --timeout)");
}

#[test]
fn a_call_whose_arguments_do_not_bind_is_not_counted() {
    let env = TestEnv::new().file("a.txt", "x");
    let code = "try:\n    view()\nexcept TypeError:\n    pass\nprint(view(path='a.txt'))";
    let (status, value) = env.run_json(code, &["--max-tool-calls", "1"]);
    assert_eq!((status, &value["stdout"], &value["tool_calls"]), (0, &json!("x\n"), &json!(1)), "{value}");
}
