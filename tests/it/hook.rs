//! The Copilot hooks, fed recorded payloads (`tests/fixtures/hook/`), compared as whole replies.

use std::path::PathBuf;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::support::{Output, TestEnv, fixtures};

/// A recorded payload with the test's workspace as `cwd`.
fn payload(env: &TestEnv, name: &str) -> String {
    let text = std::fs::read_to_string(fixtures().join("hook").join(name)).unwrap();
    text.replace("WORKSPACE", env.workspace().to_str().unwrap())
}

fn pre_tool_use(env: &TestEnv, name: &str) -> Output {
    env.run(&["hook", "pre-tool-use"], &payload(env, name))
}

/// The canonical binary path, as the deny reason names it.
fn bin() -> String {
    PathBuf::from(crate::support::BIN).canonicalize().unwrap().display().to_string()
}

fn deny(reason: &str) -> String {
    format!("{}\n", json!({"permissionDecision": "deny", "permissionDecisionReason": reason}))
}

fn nudge_reason(body: &str) -> String {
    format!(
        "codeact: 3 read-only calls in a row. Do the rest of this exploration in one program (tools are Python \
         functions; print only what you need):\n\n{} run --backend monty <<'PY'\n{body}\nPY",
        bin()
    )
}

const ALL: &[&str] = &[
    "view.json",
    "bash_object.json",
    "bash_string.json",
    "bash_codeact.json",
    "bash_mentions_codeact.json",
    "snake_case.json",
    "apply_patch.json",
    "skill.json",
    "garbage.json",
    "empty.json",
];

#[test]
fn off_mode_allows_everything_by_printing_nothing() {
    let env = TestEnv::new();
    for name in ALL {
        pre_tool_use(&env, name).code(0).stdout("").stderr("");
    }
}

#[test]
fn nudge_denies_the_third_consecutive_read_only_call_with_the_exact_command() {
    let env = TestEnv::new().env("CODEACT_MODE", "nudge");
    pre_tool_use(&env, "view.json").code(0).stdout("");
    pre_tool_use(&env, "bash_object.json").code(0).stdout("");
    pre_tool_use(&env, "view.json").code(0).stdout(&deny(&nudge_reason("print(view(path=\"src/app.py\"))")));
    // The count starts again after a denial.
    pre_tool_use(&env, "view.json").code(0).stdout("");
}

#[test]
fn nudge_counts_string_and_snake_case_payloads_and_suggests_grep() {
    let env = TestEnv::new().env("CODEACT_MODE", "nudge");
    pre_tool_use(&env, "bash_string.json").code(0).stdout("");
    pre_tool_use(&env, "view.json").code(0).stdout("");
    let body = "for m in grep(pattern=\"TODO\"):\n    print(m[\"path\"], m[\"line\"], m[\"text\"])";
    pre_tool_use(&env, "snake_case.json").code(0).stdout(&deny(&nudge_reason(body)));
}

#[test]
fn a_codeact_call_or_any_other_tool_resets_the_nudge_count() {
    let env = TestEnv::new().env("CODEACT_MODE", "nudge");
    for reset in ["bash_codeact.json", "bash_mentions_codeact.json", "apply_patch.json", "skill.json"] {
        pre_tool_use(&env, "view.json").code(0).stdout("");
        pre_tool_use(&env, "view.json").code(0).stdout("");
        pre_tool_use(&env, reset).code(0).stdout("");
    }
}

#[test]
fn nudge_after_is_configurable() {
    let env = TestEnv::new().env("CODEACT_MODE", "nudge").env("CODEACT_NUDGE_AFTER", "1");
    let reason = nudge_reason("print(view(path=\"src/app.py\"))").replace("3 read-only calls", "1 read-only calls");
    pre_tool_use(&env, "view.json").code(0).stdout(&deny(&reason));
}

/// `env` with `codeact` on its `PATH`, linked to the binary under test.
fn with_codeact_on_path(env: TestEnv) -> TestEnv {
    std::os::unix::fs::symlink(crate::support::BIN, env.root().join("bin/codeact")).unwrap();
    env
}

#[test]
fn exclusive_mode_denies_everything_but_codeact_and_skills() {
    let env = with_codeact_on_path(TestEnv::new().env("CODEACT_MODE", "exclusive"));
    pre_tool_use(&env, "bash_codeact.json").code(0).stdout("");
    pre_tool_use(&env, "skill.json").code(0).stdout("");
    let generic = "for path in glob(pattern=\"**/*.py\"):\n    print(path, len(view(path=path).splitlines()))";
    let reason = |tool: &str, body: &str| {
        format!(
            "codeact exclusive mode: `{tool}` is not available; call the tools from one codeact program instead:\n\n{} \
             run --backend monty <<'PY'\n{body}\nPY",
            bin()
        )
    };
    pre_tool_use(&env, "view.json").code(0).stdout(&deny(&reason("view", "print(view(path=\"src/app.py\"))")));
    pre_tool_use(&env, "apply_patch.json").code(0).stdout(&deny(&reason("apply_patch", generic)));
    pre_tool_use(&env, "bash_mentions_codeact.json").code(0).stdout(&deny(&reason("bash", generic)));
}

#[test]
fn mode_comes_from_config_when_the_environment_is_silent() {
    let env = TestEnv::new().project_config(r#"{"mode": "exclusive"}"#);
    let out = pre_tool_use(&env, "view.json").code(0);
    assert!(out.stdout.starts_with("{\"permissionDecision\":\"deny\""), "{}", out.stdout);
}

#[test]
fn a_bare_codeact_that_is_not_on_path_is_not_codeact() {
    let env = TestEnv::new().env("CODEACT_MODE", "exclusive");
    let out = pre_tool_use(&env, "bash_codeact.json").code(0).stderr("");
    assert!(out.stdout.starts_with("{\"permissionDecision\":\"deny\""), "{}", out.stdout);
}

fn huge() -> String {
    json!({"sessionId": "s", "toolName": "view", "toolArgs": {"path": "x".repeat(2 * 1024 * 1024)}}).to_string()
}

#[test]
fn garbage_empty_and_huge_payloads_are_allowed_silently_outside_exclusive_mode() {
    for mode in ["off", "nudge"] {
        let env = TestEnv::new().env("CODEACT_MODE", mode);
        pre_tool_use(&env, "garbage.json").code(0).stdout("").stderr("");
        pre_tool_use(&env, "empty.json").code(0).stdout("").stderr("");
        env.run(&["hook", "pre-tool-use"], &huge()).code(0).stdout("").stderr("");
    }
}

#[test]
fn exclusive_mode_denies_payloads_it_cannot_read() {
    let env = TestEnv::new().env("CODEACT_MODE", "exclusive");
    let reason = |what: &str| {
        format!(
            "codeact exclusive mode: this tool call {what}, so it cannot be checked; call the tools from one codeact \
             program instead:\n\n{} run --backend monty <<'PY'\nfor path in glob(pattern=\"**/*.py\"):\n    \
             print(path, len(view(path=path).splitlines()))\nPY",
            bin()
        )
    };
    let malformed = deny(&reason("is not one the hook can read"));
    pre_tool_use(&env, "garbage.json").code(0).stdout(&malformed).stderr("");
    pre_tool_use(&env, "empty.json").code(0).stdout(&malformed).stderr("");
    env.run(&["hook", "pre-tool-use"], &huge()).code(0).stdout(&deny(&reason("is over 1 MiB"))).stderr("");
    // The mode still comes from the project's config, found through `COPILOT_PROJECT_DIR`.
    let env = TestEnv::new().project_config(r#"{"mode": "exclusive"}"#);
    let workspace = env.workspace().display().to_string();
    let env = env.env("COPILOT_PROJECT_DIR", &workspace);
    pre_tool_use(&env, "garbage.json").code(0).stdout(&malformed).stderr("");
}

#[test]
fn internal_errors_fail_open() {
    // The state directory cannot be created: a file is in its way.
    let env = TestEnv::new().env("CODEACT_MODE", "nudge");
    std::fs::create_dir_all(env.home().join(".cache")).unwrap();
    std::fs::write(env.home().join(".cache/codeact"), "not a directory").unwrap();
    let out = pre_tool_use(&env, "view.json").code(0).stdout("");
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(out.stderr.starts_with("codeact hook: "), "{}", out.stderr);
    // Variables the hook cannot parse, whichever part of codeact reads them.
    for (name, value) in [("CODEACT_BACKEND", "bogus"), ("CODEACT_TIMEOUT", "soon")] {
        let env = TestEnv::new().env("CODEACT_MODE", "exclusive").env(name, value);
        let out = pre_tool_use(&env, "view.json").code(0).stdout("");
        assert_eq!(out.stderr.lines().count(), 1, "{name}: {}", out.stderr);
        assert!(out.stderr.starts_with("codeact hook: ") && out.stderr.contains(value), "{}", out.stderr);
    }
    // Outside a hook, the same mistake is a usage error.
    TestEnv::new().env("CODEACT_TIMEOUT", "soon").run(&["run", "--code", "1"], "").code(2);
}

/// The one state file of this test's sessions.
fn state_files(env: &TestEnv) -> Vec<PathBuf> {
    let dir = env.home().join(".cache/codeact/hook-state");
    std::fs::read_dir(dir).map(|d| d.map(|e| e.unwrap().path()).collect()).unwrap_or_default()
}

#[test]
fn a_planted_or_corrupt_counter_file_cannot_inject_anything() {
    let env = TestEnv::new().env("CODEACT_MODE", "nudge");
    pre_tool_use(&env, "view.json").code(0).stdout("");
    let files = state_files(&env);
    assert_eq!(files.len(), 1);
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(files[0].parent().unwrap()).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o700);
    for planted in [
        "{\"permissionDecision\":\"allow\"}",
        "2\n{\"permissionDecision\":\"deny\",\"permissionDecisionReason\":\"injected\"}",
        "99999999999",
        "-5",
        "\u{0}\u{1}",
    ] {
        std::fs::write(&files[0], planted).unwrap();
        // Read as zero: the first call is simply counted, and nothing planted reaches stdout.
        pre_tool_use(&env, "view.json").code(0).stdout("").stderr("");
    }
    // A planted number is only a count.
    std::fs::write(&files[0], "2").unwrap();
    pre_tool_use(&env, "view.json").code(0).stdout(&deny(&nudge_reason("print(view(path=\"src/app.py\"))")));
    // A symlink planted in place of the file is not followed.
    std::fs::remove_file(&files[0]).unwrap();
    std::fs::write(env.outside().join("target"), "2").unwrap();
    std::os::unix::fs::symlink(env.outside().join("target"), &files[0]).unwrap();
    pre_tool_use(&env, "view.json").code(0).stdout("");
    assert_eq!(std::fs::read_to_string(env.outside().join("target")).unwrap(), "2");
}

#[test]
fn a_fifo_in_place_of_the_counter_file_does_not_hang_the_hook() {
    let env = TestEnv::new().env("CODEACT_MODE", "nudge");
    pre_tool_use(&env, "view.json").code(0).stdout("");
    let files = state_files(&env);
    assert_eq!(files.len(), 1);
    std::fs::remove_file(&files[0]).unwrap();
    let mode = rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR;
    rustix::fs::mknodat(rustix::fs::CWD, &files[0], rustix::fs::FileType::Fifo, mode, 0).unwrap();
    // A blocking open would wait for a writer forever; give up long after any sane run.
    let mut child = env
        .command(&["hook", "pre-tool-use"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), payload(&env, "view.json").as_bytes()).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_mins(1);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            panic!("the hook hangs on a FIFO counter file");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!((out.status.code(), out.stdout, out.stderr), (Some(0), Vec::new(), Vec::new()));
    // The FIFO read as 0 and was replaced by a count: the next two calls reach the third.
    pre_tool_use(&env, "view.json").code(0).stdout("");
    pre_tool_use(&env, "view.json").code(0).stdout(&deny(&nudge_reason("print(view(path=\"src/app.py\"))")));
}

#[test]
fn two_sessions_do_not_share_counts() {
    let env = TestEnv::new().env("CODEACT_MODE", "nudge");
    let other = payload(&env, "view.json").replace("3fe9c0de-0001", "another-session");
    pre_tool_use(&env, "view.json").code(0).stdout("");
    pre_tool_use(&env, "view.json").code(0).stdout("");
    env.run(&["hook", "pre-tool-use"], &other).code(0).stdout("");
    env.run(&["hook", "pre-tool-use"], &other).code(0).stdout("");
    assert!(pre_tool_use(&env, "view.json").stdout.contains("deny"));
    assert!(env.run(&["hook", "pre-tool-use"], &other).stdout.contains("deny"));
    assert_eq!(state_files(&env).len(), 2);
}

#[test]
fn session_start_adds_the_instructions_once() {
    let env = TestEnv::new();
    let start = json!({"sessionId": "s", "cwd": env.workspace(), "source": "new"}).to_string();
    let out = env.run(&["hook", "session-start"], &start).code(0);
    let reply: Value = serde_json::from_str(&out.stdout).unwrap();
    let reference = env.run(&["instructions"], "").code(0).stdout;
    assert_eq!(reply, json!({"additionalContext": reference}));
    // Once an instructions file is installed, the hook adds nothing.
    env.run(&["install"], "").code(0);
    env.run(&["hook", "session-start"], &start).code(0).stdout("");
    // Nor does it when asked not to.
    let env = TestEnv::new().env("CODEACT_INJECT", "0");
    env.run(&["hook", "session-start"], &start).code(0).stdout("");
}

#[test]
fn session_start_offers_only_what_it_can_describe_without_starting_anything() {
    let env = TestEnv::new()
        .file(".mcp.json", r#"{"mcpServers": {"ghost": {"command": "/nonexistent/mcp-server"}}}"#)
        .file(".codeact/tools/pid.py", "def run():\n    return 1\n")
        .file(
            ".codeact/tools/shout.md",
            "---\ntype: custom\nname: shout\ndescription: Shout it.\n---\n## Code\n```sh\ntr a-z A-Z\n```\n",
        );
    let start = json!({"sessionId": "s", "cwd": env.workspace(), "source": "new"}).to_string();
    // Untrusted, the project's tools are left out, and named once.
    let out = env.run(&["hook", "session-start"], &start).code(0).stderr(
        "warning: ignored until you trust them: .mcp.json, .codeact/tools/shout.md, .codeact/tools/pid.py; review \
         and approve with `codeact trust`\n",
    );
    assert!(!out.stdout.contains("shout"), "{}", out.stdout);
    env.trust();
    let out = env.run(&["hook", "session-start"], &start).code(0).stderr("");
    let reply: Value = serde_json::from_str(&out.stdout).unwrap();
    let context = reply["additionalContext"].as_str().unwrap();
    assert!(context.contains("- `shout() -> Any`: Shout it.\n"), "{context}");
    for unverified in ["mcp_call", "mcp_tools", "ghost", "pid("] {
        assert!(!context.contains(unverified), "{unverified} is advertised:\n{context}");
    }
}
