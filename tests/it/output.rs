//! The output contract (SPEC §2.1): text and JSON modes, the output budget, error reports.

use pretty_assertions::assert_eq;
use serde_json::json;

use crate::support::TestEnv;

#[test]
fn text_mode_prints_stdout_then_the_last_expression() {
    TestEnv::new().run_code("print('a')\n{'k': (1, 2)}").code(0).stdout("a\n{'k': (1, 2)}\n");
}

#[test]
fn a_last_expression_of_none_prints_nothing_more() {
    TestEnv::new().run_code("print('only')\nNone").code(0).stdout("only\n");
}

#[test]
fn a_failing_program_keeps_its_stdout_and_reports_on_stderr() {
    TestEnv::new()
        .run_code("print('before')\nx = {}\nx['missing']")
        .code(1)
        .stdout("before\n")
        .stderr("Traceback (most recent call last):\n  File \"<program>\", line 3, in <module>\n    x['missing']\n    ~~~~~~~~~~~~\nKeyError: missing\n");
}

#[test]
fn json_mode_is_one_object_with_every_field() {
    let (code, mut value) = TestEnv::new().run_json("print('hi')\n[1, 'two']", &[]);
    assert_eq!(code, 0);
    value["duration_ms"] = json!(0);
    assert_eq!(
        value,
        json!({"success": true, "stdout": "hi\n", "stderr": "", "return_value": [1, "two"], "error": null,
               "backend": "monty", "duration_ms": 0, "tool_calls": 0, "truncated": false})
    );
}

#[test]
fn json_mode_reports_the_error_with_its_line() {
    let (code, value) = TestEnv::new().run_json("x = 1\nraise ValueError('bad value')", &[]);
    assert_eq!(code, 1);
    assert_eq!(value["success"], json!(false));
    assert_eq!(value["return_value"], json!(null));
    assert_eq!(
        value["error"],
        json!({"type": "ValueError", "message": "bad value", "line": 2,
               "traceback": "Traceback (most recent call last):\n  File \"<program>\", line 2, in <module>\n    raise ValueError('bad value')\nValueError: bad value"})
    );
}

#[test]
fn values_convert_to_json_predictably() {
    let program = "{'tuple': (1, 2), 'set': {3}, 'bytes': b'hi', 'big': 10**30, 'nan': float('nan'), \
                   'inf': float('inf'), 'pairs': {1: 'one', (2, 3): 'two'}, 'nested': [None, True, 1.5]}";
    let (_, value) = TestEnv::new().run_json(program, &[]);
    assert_eq!(
        value["return_value"],
        json!({"tuple": [1, 2], "set": [3], "bytes": "hi", "big": "1000000000000000000000000000000", "nan": null,
               "inf": null, "pairs": [[1, "one"], [[2, 3], "two"]], "nested": [null, true, 1.5]})
    );
}

#[test]
fn a_fifty_megabyte_print_keeps_head_and_tail_within_the_budget() {
    let program = "print('HEAD')\nprint('x' * 50_000_000)\nprint('TAIL')";
    let out = TestEnv::new().run(&["run", "--max-output", "2000"], program).code(0);
    assert!(out.stdout.len() < 2000 + 200, "kept {} bytes", out.stdout.len());
    assert!(out.stdout.starts_with("HEAD\nxxx"), "{}", &out.stdout[..40]);
    assert!(out.stdout.ends_with("xxx\nTAIL\n"));
    let marker: Vec<&str> = out.stdout.lines().filter(|l| l.contains("bytes of output elided")).collect();
    assert_eq!(
        marker,
        [
            "[… 49998011 bytes of output elided (50000011 printed, budget 2000); print less: summarise, count or slice …]"
        ]
    );
}

#[test]
fn json_mode_flags_truncated_output() {
    let (_, value) = TestEnv::new().run_json("for i in range(10000):\n    print(i)", &["--max-output", "100"]);
    assert_eq!(value["truncated"], json!(true));
    let stdout = value["stdout"].as_str().unwrap();
    assert!(stdout.starts_with("0\n1\n2\n") && stdout.ends_with("9998\n9999\n"), "{stdout}");
}

#[test]
fn syntax_errors_show_line_column_and_caret() {
    TestEnv::new()
        .run_code("x = 1\nif x ==:\n    pass")
        .code(1)
        .stdout("")
        .stderr("  File \"<program>\", line 2\n    if x ==:\n           ^\nSyntaxError: Expected an expression\n");
}

#[test]
fn unsupported_syntax_says_what_to_write_instead() {
    let (kind, message) = TestEnv::new().error_of("class NotFound(Exception):\n    pass");
    assert_eq!(kind, "NotImplementedError");
    assert_eq!(
        message,
        "The monty syntax parser does not yet support class inheritance and metaclasses; use a plain class without a \
         base class, and raise built-in exceptions (ValueError, RuntimeError, …) instead of defining exception classes"
    );
    let (_, message) = TestEnv::new().error_of("def g():\n    yield 1");
    assert!(message.ends_with("; build and return a list instead of writing a generator"), "{message}");
}

#[test]
fn tool_warnings_go_to_the_programs_stderr() {
    let mut env = TestEnv::new();
    for i in 0..3 {
        env = env.file(&format!("f{i}.txt"), "TODO\n");
    }
    let (_, value) = env.run_json("len(grep(pattern='TODO', max_results=2))", &[]);
    assert_eq!(value["return_value"], json!(2));
    assert_eq!(
        value["stderr"],
        json!("grep(\"TODO\"): stopped at max_results=2; narrow the pattern or paths, or raise max_results\n")
    );
}

#[test]
fn tool_calls_are_counted() {
    let (_, value) = TestEnv::new().file("a.txt", "x").run_json("for _ in range(3):\n    view(path='a.txt')", &[]);
    assert_eq!(value["tool_calls"], json!(3));
}

#[test]
fn unknown_names_raise_name_error_listing_the_tools() {
    let (kind, message) = TestEnv::new().error_of("read_file(path='a')");
    assert_eq!(kind, "NameError");
    assert_eq!(
        message,
        "name 'read_file' is not defined (available tools: view, create, edit, glob, grep, bash, sql, web_fetch)"
    );
}

#[test]
fn tool_argument_errors_list_accepted_names() {
    let env = TestEnv::new();
    assert_eq!(
        env.error_of("glob(pattern='*', recursive=True)"),
        (
            "TypeError".into(),
            "glob() got an unexpected keyword argument 'recursive' (accepted: pattern, paths, exclude_dirs)".into()
        )
    );
    assert_eq!(env.error_of("view()"), ("TypeError".into(), "view() missing required argument 'path'".into()));
    // Every missing argument is named, as Python and the MCP tools name them.
    assert_eq!(
        env.error_of("edit(path='a.txt')"),
        ("TypeError".into(), "edit() missing 2 required arguments: 'old_str' and 'new_str'".into())
    );
    assert_eq!(
        env.error_of("edit(new_str=3)"),
        ("TypeError".into(), "edit() missing 2 required arguments: 'path' and 'old_str'".into())
    );
    assert_eq!(
        env.error_of("view(path=3)"),
        ("TypeError".into(), "view() argument 'path' must be str, not int".into())
    );
    assert_eq!(
        env.error_of("view('a', path='b')"),
        ("TypeError".into(), "view() got multiple values for argument 'path'".into())
    );
}

#[test]
fn a_huge_return_value_is_cut_like_stdout_in_json_mode() {
    let (_, value) = TestEnv::new().run_json("list(range(100000))", &["--max-output", "200"]);
    assert_eq!(value["truncated"], json!(true));
    let shown = value["return_value"].as_str().unwrap();
    assert!(shown.starts_with("[0, 1, 2, ") && shown.ends_with(", 99998, 99999]"), "{shown}");
    assert!(shown.len() < 400, "{shown}");
}

#[test]
fn values_without_a_json_form_keep_their_python_repr() {
    TestEnv::new().run_code("[range(3), len]").code(0).stdout("[range(0, 3), <built-in function len>]\n");
    let (_, value) = TestEnv::new().run_json("range(3)", &[]);
    assert_eq!(value["return_value"], json!("range(0, 3)"));
}
