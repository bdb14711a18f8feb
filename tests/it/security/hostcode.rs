//! Nothing the repository brings or the program writes runs in the processes codeact starts
//! for the user's own tools: no interpreter, `site-packages` or `.pth` of a workspace
//! virtualenv, no program found through a relative `PATH` entry or one inside the workspace.

use std::os::unix::fs::{PermissionsExt as _, symlink};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

use crate::support::TestEnv;

/// The Python the tests link into their `PATH`: the interpreter itself.
fn real_python(env: &TestEnv) -> PathBuf {
    std::fs::read_link(env.root().join("bin/python3")).expect("the tests' PATH has python3")
}

/// `major.minor` of `python`.
fn python_version(python: &Path) -> String {
    let out = Command::new(python)
        .args(["-I", "-c", "import sys; print(f'{sys.version_info[0]}.{sys.version_info[1]}')"])
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// An executable script at `path` that records `$0 $*` in `marker` and then does nothing.
fn planted(path: &Path, marker: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, format!("#!/bin/sh\necho \"$0 $*\" >> '{}'\n", marker.display())).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A virtualenv at `ws/.venv` as `python -m venv` makes one (its `bin/python3` a link to the
/// interpreter, a `pyvenv.cfg`, a `site-packages`), with a `.pth` the repository committed that
/// writes `marker` when any interpreter of that environment starts.
fn venv_with_pth(env: &TestEnv, marker: &Path) -> PathBuf {
    let python = real_python(env);
    let venv = env.workspace().join(".venv");
    let site = venv.join(format!("lib/python{}/site-packages", python_version(&python)));
    std::fs::create_dir_all(&site).unwrap();
    std::fs::create_dir_all(venv.join("bin")).unwrap();
    symlink(&python, venv.join("bin/python3")).unwrap();
    let home = python.parent().unwrap().display().to_string();
    std::fs::write(venv.join("pyvenv.cfg"), format!("home = {home}\ninclude-system-site-packages = false\n")).unwrap();
    std::fs::write(
        site.join("zz_planted.pth"),
        format!("import os; open({:?}, 'a').write('pth ran\\n')\n", marker.display().to_string()),
    )
    .unwrap();
    // The environment is real: its interpreter runs the `.pth` when started by its own path.
    let started = Command::new(venv.join("bin/python3")).args(["-c", "pass"]).status().unwrap();
    assert!(started.success());
    assert!(std::fs::read_to_string(marker).unwrap().contains("pth ran"), "the fixture's .pth must run");
    std::fs::remove_file(marker).unwrap();
    venv
}

/// A user drop-in `greet` in the user's own tools folder.
fn with_user_dropin(env: TestEnv) -> TestEnv {
    env.user_file("tools/greet.py", "def run(name):\n    \"\"\"Greet.\"\"\"\n    return 'hello ' + name\n")
}

#[test]
fn the_users_dropin_never_starts_a_workspace_virtualenvs_python() {
    // An activated venv (absolute), the same folder named through a link outside the workspace,
    // and one relative to the workspace (codeact itself runs in it).
    for entry in ["WS/.venv/bin", "ROOT/venv-bin", ".venv/bin"] {
        let env = with_user_dropin(TestEnv::new());
        let marker = env.outside().join("pth-ran");
        venv_with_pth(&env, &marker);
        symlink(env.workspace().join(".venv/bin"), env.root().join("venv-bin")).unwrap();
        let entry = entry
            .replace("WS", &env.workspace().display().to_string())
            .replace("ROOT", &env.root().display().to_string());
        let path = format!("{entry}:{}", env.path());
        let env = env.env("PATH", &path);
        env.run_code("print(greet(name='world'))").code(0).stdout("hello world\n");
        assert!(!marker.exists(), "PATH starts with {entry}: the workspace's .pth ran in the drop-in worker");
    }
}

#[test]
fn a_dropin_with_only_a_workspace_python_says_why_it_cannot_start() {
    let env = with_user_dropin(TestEnv::new());
    let marker = env.outside().join("pth-ran");
    let venv = venv_with_pth(&env, &marker);
    // No other python3 on PATH: the workspace's is the only one.
    let only = env.root().join("only-bin");
    std::fs::create_dir_all(&only).unwrap();
    symlink(env.root().join("bin/sh"), only.join("sh")).unwrap();
    let path = format!("{}:{}", venv.join("bin").display(), only.display());
    let env = env.env("PATH", &path);
    let (kind, message) = env.error_of("greet(name='x')");
    assert_eq!(kind, "OSError", "{message}");
    assert!(message.contains("`python3` was found only in the workspace"), "{message}");
    assert!(message.contains(&venv.join("bin/python3").display().to_string()), "{message}");
    assert!(!marker.exists(), "the workspace's .pth ran");
}

#[test]
fn the_users_python_mcp_server_never_starts_a_workspace_virtualenvs_python() {
    let servers = json!({"mcpServers": {"py": {"command": "python3", "args": ["-c", "import sys; sys.exit(3)"]}}});
    for entry in ["WS/.venv/bin", ".venv/bin"] {
        let env = TestEnv::new();
        let marker = env.outside().join("pth-ran");
        venv_with_pth(&env, &marker);
        std::fs::write(env.home().join(".copilot/mcp-config.json"), servers.to_string()).unwrap();
        let entry = entry.replace("WS", &env.workspace().display().to_string());
        let path = format!("{entry}:{}", env.path());
        let env = env.env("PATH", &path);
        // Listing the tools starts every server.
        let out = env.run(&["discover"], "");
        assert!(
            !marker.exists(),
            "PATH starts with {entry}: the workspace's .pth ran in the MCP server\n{}",
            out.stderr
        );
        assert!(out.stderr.contains("py"), "the server was started and failed: {}", out.stderr);
    }
}

#[test]
fn the_users_shell_tool_runs_no_sh_or_command_of_the_repository() {
    let tool = "---\ntype: custom\nname: today\ndescription: Echo.\n---\n## Code\n```sh\necho shell-ok; date >/dev/null\n```\n";
    for entry in ["./node_modules/.bin", "node_modules/.bin", "", "WS/node_modules/.bin"] {
        let env = TestEnv::new().user_file("tools/today.md", tool);
        let marker = env.outside().join("repo-ran");
        for name in ["sh", "date", "python3", "node", "codeact"] {
            planted(&env.workspace().join("node_modules/.bin").join(name), &marker);
        }
        // An empty entry is the current directory: plant there too.
        planted(&env.workspace().join("sh"), &marker);
        planted(&env.workspace().join("date"), &marker);
        let entry = entry.replace("WS", &env.workspace().display().to_string());
        let path = format!("{entry}:{}", env.path());
        let env = env.env("PATH", &path);
        env.run_code("print(today())").code(0).stdout("shell-ok\n");
        assert!(!marker.exists(), "PATH starts with {entry:?}: {}", std::fs::read_to_string(&marker).unwrap());
    }
}

#[test]
fn bash_runs_the_systems_sh_not_the_repositorys() {
    for entry in [".", "WS"] {
        let env = TestEnv::new();
        let marker = env.outside().join("repo-ran");
        planted(&env.workspace().join("sh"), &marker);
        let entry = entry.replace("WS", &env.workspace().display().to_string());
        let path = format!("{entry}:{}", env.path());
        let env = env.env("PATH", &path);
        env.run_code("print(bash(command='echo hi')['stdout'])").code(0).stdout("hi\n\n");
        assert!(!marker.exists(), "PATH starts with {entry:?}");
    }
}

#[test]
#[ignore = "needs node (the CI machine has it)"]
fn the_users_javascript_tool_runs_no_node_of_the_repository() {
    let tool = "---\ntype: custom\nname: js\ndescription: Answer.\n---\n## Code\n```javascript\nmodule.exports = () => 'js-ok';\n```\n";
    for entry in ["./node_modules/.bin", "WS/node_modules/.bin"] {
        let env = TestEnv::new().user_file("tools/js.md", tool);
        let marker = env.outside().join("repo-ran");
        planted(&env.workspace().join("node_modules/.bin/node"), &marker);
        let entry = entry.replace("WS", &env.workspace().display().to_string());
        let path = format!("{entry}:{}", env.path());
        let env = env.env("PATH", &path);
        env.run_code("print(js())").code(0).stdout("js-ok\n");
        assert!(!marker.exists(), "PATH starts with {entry:?}");
    }
}

#[test]
fn a_dropins_answer_larger_than_the_memory_limit_is_a_memory_error() {
    let env = TestEnv::new().user_file(
        "tools/big.py",
        "def run(n):\n    \"\"\"A long answer.\"\"\"\n    return 'x' * n\n\ndef _unused():\n    pass\n",
    );
    let code = "try:\n    big(n=120_000_000)\nexcept MemoryError as e:\n    print('MemoryError', e)\nprint(big(n=3))";
    let out = env.run(&["run", "--max-memory", "32MiB", "--code", code], "").code(0);
    assert_eq!(out.stdout, "MemoryError big(): the answer is larger than the run's memory limit (32 MiB)\nxxx\n");
    // Without a handler it is the normal report, not a crash.
    let (status, report) = env.run_json("big(n=120_000_000)", &["--max-memory", "32MiB"]);
    assert_eq!(status, 1, "{report}");
    assert_eq!(report["error"]["type"], "MemoryError", "{report}");
}

#[test]
fn a_dropins_answer_that_would_take_more_memory_than_its_bytes_is_a_memory_error() {
    // Two bytes a value in JSON, far more in memory: 5 million zeros in 10 MB of text.
    let env = TestEnv::new().user_file("tools/zeros.py", "def run(n):\n    \"\"\"Zeros.\"\"\"\n    return [0] * n\n");
    let code = "try:\n    zeros(n=5_000_000)\nexcept MemoryError as e:\n    print('MemoryError', e)\nprint(len(zeros(n=1000)))";
    let out = env.run(&["run", "--max-memory", "32MiB", "--code", code], "").code(0);
    assert_eq!(out.stdout, "MemoryError zeros(): the answer is larger than the run's memory limit (32 MiB)\n1000\n");
}

#[test]
#[ignore = "needs node (the CI machine has it)"]
fn check_parses_javascript_with_no_node_of_the_repository() {
    let tool = "---\ntype: custom\nname: js\ndescription: Answer.\n---\n## Code\n```javascript\nmodule.exports = () => 1;\n```\n";
    // direnv's `PATH_add bin` writes an absolute entry of the project; check may run below it.
    for (entry, from) in [("WS/bin", ""), ("WS/bin", "sub"), ("./bin", "")] {
        let env = TestEnv::new().file(".codeact/tools/js.md", tool).file(".git/HEAD", "").file("sub/x", "");
        let marker = env.outside().join("repo-ran");
        planted(&env.workspace().join("bin/node"), &marker);
        let entry = entry.replace("WS", &env.workspace().display().to_string());
        let path = format!("{entry}:{}", env.path());
        let out = env
            .command(&["check", "--workspace", &env.workspace().join(from).display().to_string()])
            .env("PATH", &path)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert!(!marker.exists(), "PATH starts with {entry}, check run from ./{from}");
    }
}

#[test]
fn the_users_shell_tool_imports_nothing_from_the_workspace_through_pythonpath() {
    let tool = "---\ntype: custom\nname: py\ndescription: Python.\n---\n## Code\n```sh\npython3 -c 'import json; print(json.dumps(1))'\n```\n";
    // A leftover empty entry (`export PYTHONPATH=$PYTHONPATH:/opt/lib`), `.`, a relative and an
    // absolute entry of the workspace.
    for value in [":/opt/lib", ".", "lib", "WS/lib"] {
        let env = TestEnv::new().user_file("tools/py.md", tool);
        let marker = env.outside().join("planted-ran");
        let planted = format!("open({:?}, 'w').write('ran')\n", marker.display().to_string());
        let env = env.file("json.py", &planted).file("lib/json.py", &planted);
        let value = value.replace("WS", &env.workspace().display().to_string());
        let env = env.env("PYTHONPATH", &value);
        env.run_code("print(py())").code(0).stdout("1\n");
        assert!(!marker.exists(), "PYTHONPATH={value:?}: the workspace's json.py ran");
    }
}
