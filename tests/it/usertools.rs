//! Markdown user tools (`tests/fixtures/tools/good/`) loaded from a project's `.codeact/tools/`
//! and run end to end: Python inside the sandbox, shell and JavaScript on the host.

use pretty_assertions::assert_eq;
use serde_json::Value;

use crate::support::{TestEnv, assert_none_left, copy_dir, fixtures, process_alive, processes_with_env, wait_for_file};

/// The fixture workspace with the good tool files installed as project tools, trusted.
fn env() -> TestEnv {
    untrusted().trusted()
}

/// [`env`] before `codeact trust`: tests that add files trust them after.
fn untrusted() -> TestEnv {
    let env = TestEnv::with_fixture_workspace();
    copy_dir(&fixtures().join("tools/good"), &env.workspace().join(".codeact/tools"));
    env
}

#[test]
fn a_python_tool_runs_inside_the_sandbox_and_calls_other_tools() {
    let out = env().stdout_of("print(count_todos(paths=['src/app.py', 'src/util.py', 'src/pkg/core.py']))");
    assert_eq!(out, "{'src/app.py': 2, 'src/util.py': 0, 'src/pkg/core.py': 1}\n");
}

#[test]
fn a_python_tool_is_as_confined_as_the_program() {
    let env = env().outside_file("secret.txt", "TODO outside");
    let (kind, message) = env.error_of("count_todos(paths=['../outside/secret.txt'])");
    assert_eq!(
        (kind.as_str(), message.as_str()),
        ("PermissionError", "count_todos(): '../outside/secret.txt' is outside the workspace")
    );
}

#[test]
fn a_shell_tool_gets_its_input_as_json_on_stdin() {
    assert_eq!(env().stdout_of("print(shout(text='quiet please'))"), "QUIET PLEASE\n");
}

#[test]
#[ignore = "needs node (the CI machine has it)"]
fn a_javascript_tool_runs_under_node() {
    assert_eq!(env().stdout_of("print(word_count(text='a b a c'), word_count(text='a b a c', unique=True))"), "4 3\n");
}

#[test]
fn arguments_are_checked_against_the_input_table() {
    let env = env();
    assert_eq!(
        env.error_of("count_todos(paths='src/app.py')"),
        ("TypeError".into(), "count_todos() argument 'paths' must be string[], not str".into())
    );
    assert_eq!(env.error_of("shout()"), ("TypeError".into(), "shout() missing required argument 'text'".into()));
    assert_eq!(
        env.error_of("shout(text='x', volume=11)"),
        ("TypeError".into(), "shout() got an unexpected keyword argument 'volume' (accepted: text)".into())
    );
}

#[test]
fn exceptions_from_a_python_tool_keep_their_type() {
    let env = untrusted()
        .file(
            ".codeact/tools/fail.md",
            "---\ntype: custom\nname: fail\ndescription: Always fails.\n---\n## Code\n```python\ndef run():\n    raise ValueError('nope')\n```\n",
        )
        .trusted();
    assert_eq!(env.error_of("fail()"), ("ValueError".into(), "fail(): nope".into()));
}

#[test]
fn broken_or_shadowing_tool_files_are_left_out_with_a_warning() {
    let env = untrusted()
        .file(
            ".codeact/tools/view.md",
            "---\ntype: custom\nname: view\ndescription: Shadow.\n---\n## Code\n```sh\necho shadow\n```\n",
        )
        .file(".codeact/tools/broken.md", "no frontmatter\n")
        .trusted();
    let out = env.run_code("print(view(path='README.md').splitlines()[0])").code(0).stdout("# sample\n");
    let mut warnings: Vec<&str> = out.stderr.lines().collect();
    warnings.sort_unstable();
    let tools = env.workspace().join(".codeact/tools");
    assert_eq!(
        warnings,
        [
            format!("warning: tool file `{}` has 1 problem(s); run `codeact check`", tools.join("broken.md").display()),
            format!("warning: tool file `{}` has 1 problem(s); run `codeact check`", tools.join("view.md").display()),
        ]
    );
}

#[test]
fn the_deny_list_applies_to_user_tools() {
    let env = env().env("CODEACT_DISABLE", "shout");
    let (kind, message) = env.error_of("shout(text='x')");
    assert_eq!(kind, "NameError");
    assert!(
        message.starts_with("name 'shout' is not defined: the tool 'shout' is disabled by configuration"),
        "{message}"
    );
}

#[test]
fn discover_and_instructions_list_user_tools() {
    let env = env();
    let manifest: Value = serde_json::from_str(&env.run(&["discover"], "").code(0).stdout).unwrap();
    let count_todos = manifest["tools"].as_array().unwrap().iter().find(|t| t["name"] == "count_todos").unwrap();
    assert_eq!(count_todos["signature"], "count_todos(paths) -> Any");
    assert_eq!(count_todos["parameters"]["properties"]["paths"]["items"]["type"], "string");
    let instructions = env.run(&["instructions"], "").code(0).stdout;
    assert!(
        instructions.contains("- `count_todos(paths) -> Any`: Count TODO comments in the given files.\n"),
        "{instructions}"
    );
    assert!(
        instructions
            .contains("- `word_count(text, unique=None) -> Any`: Count the words of a text on the host with node.\n")
    );
}

/// A workspace with Python drop-ins in `.codeact/tools/`.
fn with_dropins() -> TestEnv {
    TestEnv::new()
        .file(".codeact/tools/pid.py", "\"\"\"Return the worker's process id.\"\"\"\nimport os\n\n\ndef run():\n    print('noise on stdout')\n    return os.getpid()\n")
        .file(".codeact/tools/boom.py", "TOOL = {'description': 'Raises.', 'function': 'go'}\n\n\ndef go(x):\n    raise ValueError(f'bad {x}')\n")
        .file(".codeact/tools/opaque.py", "def run():\n    return object()\n")
        .file(
            ".codeact/tools/hang.py",
            "import os, time\n\n\ndef run():\n    pid = os.path.join(os.environ['CODEACT_WORKSPACE'], 'worker.pid')\n    open(pid, 'w').write(str(os.getpid()))\n    time.sleep(60)\n",
        )
        .file(".codeact/tools/_private.py", "def run():\n    return 1\n")
        .trusted()
}

#[test]
fn a_thousand_calls_to_a_python_tool_use_one_worker_and_its_prints_stay_out() {
    let out = with_dropins().run_code("print(len({pid() for _ in range(1000)}))").code(0);
    assert_eq!(out.stdout, "1\n");
    assert!(!out.stderr.contains("noise"), "{}", out.stderr);
}

#[test]
fn python_tool_failures_are_clear_python_exceptions() {
    let env = with_dropins();
    assert_eq!(env.error_of("boom(x=3)"), ("ValueError".into(), "boom(): bad 3 (boom.py, line 5)".into()));
    let (kind, message) = env.error_of("opaque()");
    assert_eq!(kind, "TypeError");
    assert!(message.starts_with("opaque(): the result is not JSON-serialisable"), "{message}");
    assert_eq!(env.error_of("_private()").0, "NameError");
    assert_eq!(env.error_of("pid(1)"), ("TypeError".into(), "pid() takes keyword arguments only".into()));
}

#[test]
fn a_python_tool_that_hangs_past_the_deadline_is_stopped_and_its_worker_reaped() {
    let env = with_dropins();
    let started = std::time::Instant::now();
    let (status, value) = env.run_json("hang()", &["--timeout", "2"]);
    assert_eq!(status, 1);
    assert_eq!(value["error"]["type"], "TimeoutError");
    let bound = std::time::Duration::from_secs(2) + crate::limits::SLACK;
    assert!(started.elapsed() < bound, "took {:?}", started.elapsed());
    // On a busy machine the deadline may strike before the worker has written its pid, so the
    // workers are found by their environment, whether or not they got that far.
    assert_eq!(workers_of(&env.workspace()), Vec::<String>::new(), "workers outlived the run");
    if let Ok(pid) = std::fs::read_to_string(env.workspace().join("worker.pid")) {
        assert!(!process_alive(&pid), "the worker {pid} outlived the run");
    }
}

#[test]
fn a_python_tools_worker_ends_with_a_run_stopped_by_a_signal() {
    for signal in ["TERM", "INT", "HUP"] {
        let env = with_dropins();
        let mut run = env
            .command(&["run", "--code", "hang()"])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        wait_for_file(&env.workspace().join("worker.pid"), "the worker did not start");
        std::process::Command::new("kill").args([&format!("-{signal}"), &run.id().to_string()]).status().unwrap();
        run.wait().unwrap();
        assert_none_left(|| workers_of(&env.workspace()), &format!("the worker outlived a run stopped by SIG{signal}"));
    }
}

/// The live processes whose `CODEACT_WORKSPACE` is `workspace`: the drop-in workers of runs there.
fn workers_of(workspace: &std::path::Path) -> Vec<String> {
    let mut names = vec![workspace.to_path_buf()];
    names.extend(workspace.canonicalize().ok());
    processes_with_env(&names.iter().map(|name| format!("CODEACT_WORKSPACE={}", name.display())).collect::<Vec<_>>())
}

#[test]
fn python_tools_are_listed_with_their_descriptions() {
    let instructions = with_dropins().run(&["instructions"], "").code(0).stdout;
    assert!(instructions.contains("- `boom(**arguments) -> Any`: Raises.\n"), "{instructions}");
    assert!(instructions.contains("- `pid(**arguments) -> Any`: Return the worker's process id.\n"));
    assert!(!instructions.contains("_private"));
}

#[test]
fn of_two_python_tools_with_one_name_the_users_runs_and_is_the_one_listed() {
    let env = TestEnv::new()
        .file(".codeact/tools/dup.py", "def run():\n    return 'project'\n")
        .user_file("tools/dup.py", "def run():\n    return 'user'\n")
        .trusted();
    let user_tool = env.user_config_dir().join("tools/dup.py");
    let out = env.run_code("print(dup())").code(0).stdout("user\n");
    let project_tool = env.workspace().join(".codeact/tools/dup.py");
    assert_eq!(
        out.stderr,
        format!("warning: tool `dup` in `{}` is defined twice; the first one is used\n", project_tool.display())
    );
    let manifest: Value = serde_json::from_str(&env.run(&["discover"], "").code(0).stdout).unwrap();
    let dup = manifest["tools"].as_array().unwrap().iter().find(|t| t["name"] == "dup").unwrap();
    assert_eq!(dup["source"], user_tool.display().to_string());
}

#[test]
fn a_python_tool_named_like_a_markdown_tool_or_a_built_in_is_left_out_with_a_warning() {
    let env = untrusted()
        .file(".codeact/tools/shout.py", "def run(text):\n    return 'from python'\n")
        .file(".codeact/tools/view.py", "def run(path):\n    return 'shadow'\n")
        .trusted();
    let out = env.run_code("print(shout(text='hey'), view(path='README.md').splitlines()[0])").code(0);
    assert_eq!(out.stdout, "HEY # sample\n");
    let tools = env.workspace().join(".codeact/tools");
    let mut warnings: Vec<&str> = out.stderr.lines().collect();
    warnings.sort_unstable();
    assert_eq!(
        warnings,
        [
            format!(
                "warning: tool `shout` in `{}` is defined twice; the first one is used",
                tools.join("shout.py").display()
            ),
            format!("warning: tool `view` in `{}` would shadow a built-in; rename it", tools.join("view.py").display()),
        ]
    );
}

/// A shell tool `name` whose input table is `rows` and which answers with its input JSON.
fn echo_tool(name: &str, rows: &str) -> String {
    format!(
        "---\ntype: custom\nname: {name}\ndescription: Echo the input.\n---\n## Input Schema\n| Name | Type | Description | Required |\n|---|---|---|---|\n{rows}\n## Code\n```sh\ncat\n```\n"
    )
}

#[test]
fn names_agentschema_allows_are_reachable_through_call_tool_and_keyword_dicts() {
    let rows = "| `filePath` | `string` | camelCase | `true` |\n| `max-lines` | `integer` | kebab-case | `false` |";
    let env = TestEnv::new()
        .file(".codeact/tools/read-file.md", echo_tool("read-file", rows))
        .file(".codeact/tools/ReadFile.md", echo_tool("ReadFile", rows))
        .trusted();
    let out = env.run_code(
        "print(call_tool('read-file', filePath='a', **{'max-lines': 3}))\nprint(ReadFile(filePath='b'))\nf = call_tool\nprint(f('ReadFile', 'c'))\n",
    );
    assert_eq!(out.code(0).stdout, "{'filePath': 'a', 'max-lines': 3}\n{'filePath': 'b'}\n{'filePath': 'c'}\n");
    assert_eq!(
        env.error_of("call_tool(3)"),
        ("TypeError".into(), "call_tool() takes the tool's name as a str first, then its arguments".into())
    );
    let instructions = env.run(&["instructions"], "").code(0).stdout;
    assert!(
        instructions.contains(r#"- `call_tool("read-file", filePath, **{"max-lines"=None}) -> Any`: Echo the input."#),
        "{instructions}"
    );
}

#[test]
fn an_optional_input_left_out_or_given_as_none_is_not_sent() {
    let rows = "| `text` | `string` | t | `true` |\n| `sep` | `string` | s | `false` |";
    let env = TestEnv::new().file(".codeact/tools/join.md", echo_tool("join", rows)).trusted();
    let out = env.run_code("print(join(text='x'), join(text='x', sep=None), join('x', '+'))");
    assert_eq!(out.code(0).stdout, "{'text': 'x'} {'text': 'x'} {'text': 'x', 'sep': '+'}\n");
}

#[test]
fn pre_built_tool_files_stand_for_codeacts_own_tools_and_the_others_are_named_once() {
    let mut env = TestEnv::new();
    for name in ["bash", "edit", "glob", "grep", "read", "web_fetch", "web_search", "write"] {
        env = env.file(&format!(".codeact/tools/built-in/{name}.md"), "---\ntype: agent_toolset_20260401\n---\n");
    }
    let env = env.trusted();
    let out = env.run_code("print(len(glob(pattern='**/*.md')))").code(0);
    assert_eq!(out.stdout, "8\n");
    let web_search = env.workspace().join(".codeact/tools/built-in/web_search.md");
    assert_eq!(
        out.stderr,
        format!(
            "warning: pre-built tools that codeact does not have, left out: `web_search` ({})\n",
            web_search.display()
        )
    );
}
