//! The Copilot CLI plugin folder: its manifests, the launcher, and the files generated from the
//! tool catalogue (regenerate them with `CODEACT_UPDATE_PLUGIN=1 cargo test --test it plugin`).

use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::support::{BIN, SKILLS, TestEnv};

fn plugin_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("plugin")
}

/// How a usage skill tells the model to run codeact: through the plugin's launcher.
const SKILL_LAUNCHER: &str = "sh \"<skill base directory>/../../bin/codeact\"";

const MONTY_SKILL_HEAD: &str = "---
name: monty-codeact
description: Chain many tool calls into one Python program with codeact (Monty backend) — for each file, batch reads, find all matches across files, search then summarise, multi-file edits, MCP chains. Use instead of a run of view, grep and glob calls.
---
Run codeact through this plugin's launcher; `<skill base directory>` is the directory shown below.

";

/// The plugin files generated from the built-in tools, and what they must contain.
fn generated() -> Vec<(PathBuf, String)> {
    let (agent, skill) =
        codeact::plugin_files("CODEACT_UPDATE_PLUGIN=1 cargo test --test it plugin", SKILL_LAUNCHER).unwrap();
    vec![
        (plugin_dir().join("agents/codeact.agent.md"), agent),
        (plugin_dir().join("skills/monty-codeact/SKILL.md"), format!("{MONTY_SKILL_HEAD}{skill}")),
    ]
}

#[test]
fn plugin_files_are_generated_from_the_tool_catalogue() {
    let update = std::env::var_os("CODEACT_UPDATE_PLUGIN").is_some();
    for (path, expected) in generated() {
        if update {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &expected).unwrap();
        }
        let actual = std::fs::read_to_string(&path).unwrap_or_default();
        assert_eq!(
            actual,
            expected,
            "{} is stale: run CODEACT_UPDATE_PLUGIN=1 cargo test --test it plugin",
            path.display()
        );
    }
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
fn hooks_run_the_launcher_for_both_events_in_bash_and_powershell() {
    let hooks = json_file(&plugin_dir().join("hooks.json"));
    assert_eq!(hooks["version"], json!(1));
    for (event, argument) in [("preToolUse", "pre-tool-use"), ("sessionStart", "session-start")] {
        let entries = hooks["hooks"][event].as_array().unwrap();
        assert_eq!(entries.len(), 1, "{event}");
        let entry = &entries[0];
        assert_eq!(entry["type"], json!("command"));
        assert_eq!(entry["timeoutSec"], json!(5));
        assert_eq!(entry["bash"], json!(format!("sh \"${{COPILOT_PLUGIN_ROOT:-.}}/bin/codeact\" hook {argument}")));
        assert!(entry["powershell"].as_str().unwrap().contains(&format!("codeact hook {argument}")));
        assert!(entry.get("cwd").is_none(), "a cwd would deny every tool when missing");
    }
}

#[test]
fn every_skill_has_a_name_and_a_description_and_install_skills_have_run_scripts() {
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
        assert!(
            text.split("---").nth(1).unwrap().lines().any(|l| l.starts_with("description: ") && l.len() > 80),
            "{name}"
        );
        if name.starts_with("codeact-install") {
            assert!(plugin_dir().join("skills").join(name).join("run.sh").is_file(), "{name}");
        }
    }
}

/// Runs the launcher with the test's `PATH`, which has no codeact on it.
fn launcher(env: &TestEnv, args: &[&str], codeact_bin: Option<&str>) -> crate::support::Output {
    let mut command = std::process::Command::new("sh");
    command
        .arg(plugin_dir().join("bin/codeact"))
        .args(args)
        .env_clear()
        .env("PATH", env.path())
        .env("HOME", env.home());
    if let Some(bin) = codeact_bin {
        command.env("CODEACT_BIN", bin);
    }
    let output = command.stdin(std::process::Stdio::null()).output().unwrap();
    crate::support::Output {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

#[test]
fn the_launcher_execs_codeact_bin() {
    let env = TestEnv::new();
    launcher(&env, &["--version"], Some(BIN)).code(0).stdout("codeact 0.1.0 (monty 0.0.23)\n");
}

#[test]
fn the_launcher_finds_cargo_installs() {
    let env = TestEnv::new();
    let cargo_bin = env.home().join(".cargo/bin");
    std::fs::create_dir_all(&cargo_bin).unwrap();
    std::os::unix::fs::symlink(BIN, cargo_bin.join("codeact")).unwrap();
    launcher(&env, &["--version"], None).code(0).stdout("codeact 0.1.0 (monty 0.0.23)\n");
}

#[test]
fn without_a_binary_hooks_fail_open_and_commands_say_how_to_install() {
    let env = TestEnv::new();
    launcher(&env, &["hook", "pre-tool-use"], None)
        .code(0)
        .stdout("")
        .stderr("codeact: the codeact binary was not found; hook skipped (set CODEACT_BIN or put codeact on PATH)\n");
    let out = launcher(&env, &["install"], None).code(127).stdout("");
    assert!(out.stderr.contains("cargo install --path ."), "{}", out.stderr);
}
