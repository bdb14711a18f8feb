//! The Copilot CLI plugin folder: its manifests, the launcher, and the files generated from the
//! tool catalogue (regenerate them with `CODEACT_UPDATE_PLUGIN=1 cargo test --test it plugin`).
//! The PowerShell launcher's tests run it with `pwsh`; where there is none they say so on stderr
//! and skip, except that `CODEACT_REQUIRE_POWERSHELL=1` makes that a failure.

use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::support::{BIN, SKILLS, TestEnv};

fn plugin_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("plugin")
}

/// Every file below `plugin/skills` and `plugin/agents`, relative to `plugin/`.
fn shipped_texts() -> Vec<String> {
    let mut found = Vec::new();
    for top in ["skills", "agents"] {
        let mut stack = vec![plugin_dir().join(top)];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else {
                    found.push(path.strip_prefix(plugin_dir()).unwrap().display().to_string());
                }
            }
        }
    }
    found.sort();
    found
}

#[test]
fn every_plugin_text_is_rendered_by_codeact_and_none_is_stale() {
    let update = std::env::var_os("CODEACT_UPDATE_PLUGIN").is_some();
    let rendered = codeact::plugin_files().unwrap();
    if update {
        for dir in ["skills", "agents"] {
            let _ = std::fs::remove_dir_all(plugin_dir().join(dir));
        }
    }
    for (path, expected) in &rendered {
        let path = plugin_dir().join(path);
        if update {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, expected).unwrap();
            if path.extension().is_some_and(|e| e == "sh") {
                use std::os::unix::fs::PermissionsExt as _;
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
            }
        }
        let actual = std::fs::read_to_string(&path).unwrap_or_default();
        assert_eq!(
            &actual,
            expected,
            "{} is stale: run CODEACT_UPDATE_PLUGIN=1 cargo test --test it plugin",
            path.display()
        );
    }
    let mut names: Vec<String> = rendered.iter().map(|(path, _)| (*path).to_owned()).collect();
    names.sort();
    assert_eq!(shipped_texts(), names, "a file in the plugin folder that codeact does not render is never checked");
}

fn json_file(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn the_manifest_names_the_plugin_and_its_parts() {
    let manifest = json_file(&plugin_dir().join("plugin.json"));
    assert_eq!(manifest["name"], json!("codeact"));
    assert_eq!(
        (&manifest["skills"], &manifest["agents"], &manifest["hooks"]),
        (&json!("skills"), &json!("agents"), &json!("hooks.json"))
    );
    let marketplace = json_file(&plugin_dir().join("../.github/plugin/marketplace.json"));
    assert_eq!(marketplace["plugins"][0]["name"], json!("codeact"));
    assert_eq!(marketplace["plugins"][0]["source"], json!("./plugin"));
}

#[test]
fn hooks_run_the_launcher_for_every_event_in_bash_and_powershell() {
    let hooks = json_file(&plugin_dir().join("hooks.json"));
    assert_eq!(hooks["version"], json!(1));
    for (event, argument) in
        [("preToolUse", "pre-tool-use"), ("postToolUse", "post-tool-use"), ("sessionStart", "session-start")]
    {
        let entries = hooks["hooks"][event].as_array().unwrap();
        assert_eq!(entries.len(), 1, "{event}");
        let entry = &entries[0];
        assert_eq!(entry["type"], json!("command"));
        assert_eq!(entry["timeoutSec"], json!(5));
        // Without an absolute plugin root the hook does nothing: a relative one would run a file
        // of the project. `/bin/sh`, not the `sh` a PATH finds. The command line names the host,
        // whose form the answer takes whatever the payload holds.
        assert_eq!(
            entry["bash"],
            json!(format!(
                "case \"${{COPILOT_PLUGIN_ROOT:-}}\" in /*) exec /bin/sh \"$COPILOT_PLUGIN_ROOT/bin/codeact\" hook \
                 {argument} --host copilot ;; esac"
            ))
        );
        // On Windows the same: the plugin's PowerShell launcher, only under a plugin root that
        // is absolute (a drive's path or a share); where PowerShell will not run it (its
        // execution policy allows no script), the hook fails open.
        assert_eq!(
            entry["powershell"],
            json!(format!(
                r#"if ($env:COPILOT_PLUGIN_ROOT -match '^([A-Za-z]:[\\/]|\\\\)') {{ try {{ & "$env:COPILOT_PLUGIN_ROOT\bin\codeact.ps1" hook {argument} --host copilot; exit $LASTEXITCODE }} catch {{ [Console]::Error.WriteLine("codeact: $_"); exit 0 }} }}"#
            ))
        );
        assert!(entry.get("cwd").is_none(), "a cwd would deny every tool when missing");
    }
}

/// Each plugin's pre-tool-use command, run as its host runs it (`/bin/sh -c`, with the plugin
/// root it gives), answers a payload over 1 MiB in that host's own form: the command line says
/// who runs it, whatever the payload's bytes hold.
#[test]
fn each_plugins_hook_command_names_its_host_even_for_a_payload_too_large_to_read() {
    let copilot = json_file(&plugin_dir().join("hooks.json"));
    let claude = json_file(&plugin_dir().join("../claude-plugin/hooks/hooks.json"));
    for event in ["PreToolUse", "PostToolUse"] {
        let command = claude["hooks"][event][0]["hooks"][0]["command"].as_str().unwrap();
        assert!(command.ends_with(" --host claude"), "{command}");
    }
    let env = TestEnv::new().env("CODEACT_MODE", "exclusive").env("CODEACT_BIN", *BIN);
    // A Copilot payload that carries Claude Code's field name in a tool argument, and a Claude
    // one: each over 1 MiB.
    let padding = "x".repeat(1024 * 1024 + 10);
    let copilot_payload = json!({"sessionId": "s", "cwd": env.workspace(), "toolName": "create",
        "toolArgs": {"path": "a\"hook_event_name", "file_text": padding}});
    let claude_payload = json!({"session_id": "s", "hook_event_name": "PreToolUse", "cwd": env.workspace(),
        "tool_name": "Write", "tool_input": {"file_path": "a", "content": padding}});
    for (command, root_variable, root, payload, claude_form) in [
        (&copilot["hooks"]["preToolUse"][0]["bash"], "COPILOT_PLUGIN_ROOT", "plugin", copilot_payload, false),
        (
            &claude["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
            "CLAUDE_PLUGIN_ROOT",
            "claude-plugin",
            claude_payload,
            true,
        ),
    ] {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(root);
        // The test's clean environment, and the plugin root the host gives its hooks.
        let mut child = std::process::Command::new("/bin/sh")
            .arg("-c")
            .arg(command.as_str().unwrap())
            .env_clear()
            .envs(env.command(&[]).get_envs().filter_map(|(name, value)| Some((name, value?))))
            .env(root_variable, &root)
            .current_dir(env.workspace())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        // The hook stops reading past 1 MiB: the rest of the payload may meet a closed pipe.
        let writer =
            std::thread::spawn(move || drop(std::io::Write::write_all(&mut stdin, payload.to_string().as_bytes())));
        let out = child.wait_with_output().unwrap();
        writer.join().unwrap();
        let reply: Value = serde_json::from_slice(&out.stdout).unwrap();
        let decision =
            if claude_form { &reply["hookSpecificOutput"]["permissionDecision"] } else { &reply["permissionDecision"] };
        assert_eq!((decision, reply.get("hookSpecificOutput").is_some()), (&json!("deny"), claude_form), "{reply}");
    }
}

/// Both plugins carry the same PowerShell launcher as they carry the same `sh` one: Claude
/// Code's folder links to the Copilot plugin's.
#[test]
fn both_plugins_carry_the_same_launchers() {
    let claude = plugin_dir().join("../claude-plugin/bin");
    for name in ["codeact", "codeact.ps1"] {
        let link = std::fs::read_link(claude.join(name)).unwrap();
        assert_eq!(link, Path::new("../../plugin/bin").join(name), "{name}");
        assert!(plugin_dir().join("bin").join(name).is_file(), "{name}");
    }
}

/// `pwsh` on PATH, or `None` (after saying so on stderr) where there is none; where
/// `CODEACT_REQUIRE_POWERSHELL` is set (a Windows job), none is a failure.
fn pwsh() -> Option<PathBuf> {
    let name = if cfg!(windows) { "pwsh.exe" } else { "pwsh" };
    let found = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .map(|dir| dir.join(name))
        .find(|file| file.is_file());
    if found.is_none() {
        assert!(std::env::var_os("CODEACT_REQUIRE_POWERSHELL").is_none(), "no `{name}` on PATH");
        #[expect(clippy::print_stderr, reason = "a skipped test says why")]
        {
            eprintln!("skipped: no `{name}` on PATH to run the PowerShell launcher");
        }
    }
    found
}

/// `pwsh` run on the plugin's PowerShell launcher, with the test's clean environment and HOME,
/// and nothing on PATH but `pwsh`'s own folder.
fn powershell_launcher(pwsh: &Path, env: &TestEnv, args: &[&str]) -> std::process::Command {
    let mut command = std::process::Command::new(pwsh);
    command
        .args(["-NoProfile", "-NonInteractive", "-File"])
        .arg(plugin_dir().join("bin/codeact.ps1"))
        .args(args)
        .env_clear()
        .envs(env.command(&[]).get_envs().filter_map(|(name, value)| Some((name, value?))))
        .env("PATH", pwsh.parent().unwrap())
        .env("HOME", env.home())
        .env("USERPROFILE", env.home())
        .current_dir(env.workspace())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    // What Windows itself needs to start a program, and what the launcher reads of the machine.
    for name in ["SystemRoot", "windir", "TEMP", "TMP", "PATHEXT", "PROCESSOR_ARCHITECTURE"] {
        if let Some(value) = std::env::var_os(name) {
            command.env(name, value);
        }
    }
    command
}

/// Runs `command` with `stdin` written to it: its exit code, stdout and stderr.
fn run_with_stdin(command: &mut std::process::Command, stdin: &str) -> (i32, String, String) {
    let mut child = command.spawn().unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), stdin.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Without a binary, the PowerShell launcher does what the `sh` one does: hooks let every call
/// through and print nothing, the session-start hook says how to install codeact, and any other
/// command says it on stderr and fails.
#[test]
fn the_powershell_launcher_without_a_binary_lets_hooks_through_and_says_how_to_install() {
    let Some(pwsh) = pwsh() else { return };
    let env = TestEnv::new();
    let launcher = |args: &[&str]| powershell_launcher(&pwsh, &env, args);
    let hook = run_with_stdin(&mut launcher(&["hook", "pre-tool-use", "--host", "copilot"]), "{}");
    assert_eq!((hook.0, hook.1.as_str()), (0, ""), "{}", hook.2);
    let (code, stdout, _) = run_with_stdin(&mut launcher(&["hook", "session-start"]), "{}");
    assert_eq!(code, 0);
    let reply: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        reply,
        json!({"additionalContext": "codeact is not installed on this machine, so its tools are unavailable in this \
               session. It installs with `pip install codeact`."})
    );
    let (code, stdout, stderr) = run_with_stdin(&mut launcher(&["--version"]), "");
    assert_eq!((code, stdout.as_str()), (127, ""));
    assert!(stderr.contains("install it with `pip install codeact`"), "{stderr}");
}

/// `CODEACT_BIN` is the binary the PowerShell launcher runs, with its arguments, and the hook
/// payload on stdin reaches it as it is.
#[test]
fn the_powershell_launcher_runs_codeact_bin_with_the_payload_on_stdin() {
    let Some(pwsh) = pwsh() else { return };
    let env = TestEnv::new().env("CODEACT_MODE", "exclusive");
    let mut launcher = powershell_launcher(&pwsh, &env, &["--version"]);
    let (code, stdout, stderr) = run_with_stdin(launcher.env("CODEACT_BIN", *BIN), "");
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.starts_with(&format!("codeact {} ", env!("CARGO_PKG_VERSION"))), "{stdout}");
    let payload = json!({"sessionId": "s", "cwd": env.workspace(), "toolName": "powershell",
        "toolArgs": {"command": "Remove-Item -Recurse src"}});
    let mut launcher = powershell_launcher(&pwsh, &env, &["hook", "pre-tool-use", "--host", "copilot"]);
    let (code, stdout, stderr) = run_with_stdin(launcher.env("CODEACT_BIN", *BIN), &payload.to_string());
    assert_eq!(code, 0, "{stderr}");
    let reply: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(reply["permissionDecision"], json!("deny"), "{reply}");
}

#[test]
fn every_skill_has_a_name_and_a_one_line_description() {
    let expected = SKILLS;
    let mut names: Vec<String> = std::fs::read_dir(plugin_dir().join("skills"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, expected);
    for name in expected {
        let text = std::fs::read_to_string(plugin_dir().join("skills").join(name).join("SKILL.md")).unwrap();
        assert!(text.starts_with(&format!("---\nname: {name}\ndescription: ")), "{name}");
        let description = text.split("---").nth(1).unwrap().lines().find_map(|l| l.strip_prefix("description: "));
        // Every skill's description is read on every request of every session: one short line.
        assert!(description.is_some_and(|d| (20..=100).contains(&d.len())), "{name}: {description:?}");
    }
}
