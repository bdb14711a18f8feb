//! Configuration (SPEC §4): allow and deny lists, limits, precedence, and errors that name the
//! file and the key.

use pretty_assertions::assert_eq;

use crate::support::TestEnv;

#[test]
fn the_allow_list_from_the_environment_limits_the_tools() {
    let env = TestEnv::new().env("CODEACT_TOOLS", "view,glob");
    assert_eq!(
        env.error_of("bash(command='true')"),
        (
            "NameError".into(),
            "name 'bash' is not defined: the tool 'bash' is disabled by configuration (available tools: view, glob)"
                .into()
        )
    );
}

#[test]
fn the_deny_list_from_the_environment_removes_tools() {
    let env = TestEnv::new().env("CODEACT_DISABLE", "bash, sql");
    let (kind, message) = env.error_of("sql(query='select 1')");
    assert_eq!(kind, "NameError");
    assert!(message.ends_with("(available tools: view, create, edit, glob, grep, web_fetch)"), "{message}");
}

#[test]
fn config_files_enable_and_disable_tools() {
    let env = TestEnv::new().user_config(r#"{"disabled": ["bash"]}"#);
    assert_eq!(env.error_of("bash(command='true')").0, "NameError");
    let env = TestEnv::new().project_config(r#"{"enabled": ["view"]}"#);
    assert_eq!(env.error_of("glob(pattern='*')").0, "NameError");
}

#[test]
fn project_config_beats_user_config_and_the_environment_beats_both() {
    let env =
        TestEnv::new().user_config(r#"{"limits": {"timeout": 100}}"#).project_config(r#"{"limits": {"timeout": 0.5}}"#);
    assert_eq!(env.error_of("while True:\n    pass").1, "time limit of 0.5s exceeded (raise it with --timeout)");
    let env = env.env("CODEACT_TIMEOUT", "0.7");
    assert_eq!(env.error_of("while True:\n    pass").1, "time limit of 0.7s exceeded (raise it with --timeout)");
    let (_, value) = env.run_json("while True:\n    pass", &["--timeout", "0.3"]);
    assert_eq!(value["error"]["message"], "time limit of 0.3s exceeded (raise it with --timeout)");
}

#[test]
fn memory_limits_in_config_accept_sizes_as_text_or_bytes() {
    let bomb = "chunks = []\nwhile True:\n    chunks.append('x' * 1_000_000)";
    let env = TestEnv::new().project_config(r#"{"limits": {"max_memory": "48MiB"}}"#);
    assert_eq!(env.error_of(bomb).1, "memory limit of 48 MiB exceeded (raise it with --max-memory)");
    let env = TestEnv::new().project_config(r#"{"limits": {"max_memory": 50331648}}"#);
    assert_eq!(env.error_of(bomb).1, "memory limit of 48 MiB exceeded (raise it with --max-memory)");
}

#[test]
fn an_unknown_key_is_an_error_naming_the_file_and_the_key() {
    let env = TestEnv::new().project_config(r#"{"limits": {"timeot": 3}}"#);
    let out = env.run_code("print(1)").code(4);
    let path = env.workspace().join(".codeact/config.json");
    assert_eq!(
        out.stderr,
        format!(
            "error: invalid configuration in `{}`: key `limits.timeot`: unknown field `timeot`, expected one of \
             `timeout`, `max_memory`, `max_output`, `max_tool_calls` at line 1 column 20\n",
            path.display()
        )
    );
}

#[test]
fn a_wrong_type_is_an_error_naming_the_key() {
    let env = TestEnv::new().user_config(r#"{"enabled": "view"}"#);
    let out = env.run_code("print(1)").code(4);
    let path = env.user_config_dir().join("config.json");
    assert_eq!(
        out.stderr,
        format!(
            "error: invalid configuration in `{}`: key `enabled`: invalid type: string \"view\", expected a sequence at line 1 column 18\n",
            path.display()
        )
    );
}

#[test]
fn invalid_json_and_invalid_values_are_errors() {
    TestEnv::new().project_config("{not json").run_code("print(1)").code(4);
    TestEnv::new().project_config(r#"{"limits": {"timeout": -1}}"#).run_code("print(1)").code(4);
    TestEnv::new().project_config(r#"{"backend": "cpython"}"#).run_code("print(1)").code(4);
    TestEnv::new().project_config(r#"{"mode": "loud"}"#).run_code("print(1)").code(4);
}

#[test]
fn codeact_config_dir_overrides_the_user_config_location() {
    let env = TestEnv::new();
    let dir = env.root().join("custom-config");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.json"), r#"{"disabled": ["view"]}"#).unwrap();
    let env = env.env("CODEACT_CONFIG_DIR", dir.to_str().unwrap());
    assert_eq!(env.error_of("view(path='x')").0, "NameError");
}

#[test]
fn tool_dirs_must_be_a_list_of_folder_names() {
    let env = TestEnv::new().user_config(r#"{"tool_dirs": "tools"}"#);
    let out = env.run_code("print(1)").code(4);
    let path = env.user_config_dir().join("config.json");
    assert_eq!(
        out.stderr,
        format!(
            "error: invalid configuration in `{}`: key `tool_dirs`: invalid type: string \"tools\", expected a \
             sequence at line 1 column 21\n",
            path.display()
        )
    );
    let env = TestEnv::new().project_config(r#"{"tool_dirs": [1]}"#);
    let out = env.run_code("print(1)").code(4);
    assert!(out.stderr.contains("key `tool_dirs[0]`: invalid type: integer `1`, expected a string"), "{}", out.stderr);
}
