//! The command line itself: how a program is given, exit codes, help, version, pipes.

use std::io::{BufRead, BufReader};
use std::process::Stdio;

use crate::support::TestEnv;

#[test]
fn version_names_codeact_and_monty() {
    TestEnv::new().run(&["--version"], "").code(0).stdout("codeact 0.1.0 (monty 1.4.0)\n");
}

#[test]
fn help_lists_every_codeact_variable() {
    let out = TestEnv::new().run(&["--help"], "").code(0);
    for name in codeact::env::ALL {
        assert!(out.stdout.contains(name), "--help does not mention {name}");
    }
}

#[test]
fn program_comes_from_code_flag_file_or_stdin() {
    let env = TestEnv::new().file("prog.py", "print('from file')");
    env.run(&["run", "--code", "print('from flag')"], "").code(0).stdout("from flag\n");
    env.run(&["run", "--file", "prog.py"], "").code(0).stdout("from file\n");
    env.run(&["run"], "print('from stdin')").code(0).stdout("from stdin\n");
    env.run(&["run", "-"], "print('dash')").code(0).stdout("dash\n");
}

#[test]
fn code_and_file_without_subcommand_are_shorthands_for_run() {
    let env = TestEnv::new().file("prog.py", "print(2 * 21)");
    env.run(&["--code", "print('short')"], "").code(0).stdout("short\n");
    env.run(&["--file", "prog.py"], "").code(0).stdout("42\n");
}

#[test]
fn code_and_file_together_are_a_usage_error() {
    let out = TestEnv::new().run(&["run", "--code", "1", "--file", "x.py"], "").code(2);
    assert!(out.stderr.contains("cannot be used with"), "{}", out.stderr);
}

#[test]
fn missing_program_file_is_a_usage_error() {
    TestEnv::new()
        .run(&["run", "--file", "nope.py"], "")
        .code(2)
        .stderr("error: failed to read program `nope.py`: No such file or directory (os error 2)\n");
}

#[test]
fn invalid_limit_flags_are_usage_errors() {
    let env = TestEnv::new();
    env.run(&["run", "--timeout", "0", "--code", "1"], "").code(2);
    env.run(&["run", "--max-memory", "lots", "--code", "1"], "").code(2);
}

#[test]
fn backends_that_cannot_run_here_exit_3_with_a_hint() {
    let env = TestEnv::new();
    let guest = env.home().join(".local/share/codeact/guest/python-3.14.0-guest-0.8.0");
    env.run(&["run", "--backend", "wasm", "--code", "1"], "").code(3).stderr(&format!(
        "error: the `wasm` backend is not available: the CPython guest is not installed (looked in `{}`)\n\
         hint: run `codeact guest install` (or use `--backend monty`)\n",
        guest.display()
    ));
    env.run(&["run", "--backend", "hyperlight", "--code", "1"], "").code(3).stderr(&format!(
        "error: the `hyperlight` backend is not available: the CPython guest is not installed (looked in `{}`)\n\
         hint: run `codeact guest install` (or use `--backend wasm` or `--backend monty`)\n",
        guest.display()
    ));
}

#[test]
fn backend_comes_from_the_environment_when_no_flag_is_given() {
    let env = TestEnv::new().env("CODEACT_BACKEND", "hyperlight");
    env.run(&["run", "--code", "1"], "").code(3);
    env.run(&["run", "--backend", "monty", "--code", "print(1)"], "").code(0).stdout("1\n");
}

#[test]
fn workspace_flag_sets_the_tool_root() {
    let env = TestEnv::new().file("sub/inner.txt", "inner");
    let sub = env.workspace().join("sub");
    env.run(&["run", "--workspace", sub.to_str().unwrap(), "--code", "print(glob(pattern='*'))"], "")
        .code(0)
        .stdout("['inner.txt']\n");
}

#[test]
fn a_closed_stdout_pipe_is_not_an_error() {
    let env = TestEnv::new();
    let mut child = env
        .command(&["run", "--max-output", "5000000", "--code", "for i in range(200000):\n    print('line', i)"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
    // The reader is dropped here: the pipe closes while codeact still writes.
    let output = child.wait_with_output().unwrap();
    assert_eq!(first, "line 0\n");
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&output.stderr), "");
}

#[test]
fn no_arguments_prints_help_and_exits_2() {
    let out = TestEnv::new().run(&[], "").code(2);
    assert!(out.stdout.starts_with("Run one Python program"), "{}", out.stdout);
}
