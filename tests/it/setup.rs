//! `codeact setup AGENT`: the entry it writes starts a working MCP server, a user's file keeps
//! every other byte and comes back whole with `--undo`, and a dry run writes nothing.

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::support::{BIN, TestEnv, python3};

/// Each agent, the file its default setup writes (the user's for Codex, Copilot CLI and Qwen Code,
/// beneath the test's home), and where the server entry is in it.
const AGENTS: [(&str, &str, &[&str]); 8] = [
    ("claude", "ws/.mcp.json", &["mcpServers", "codeact"]),
    ("codex", "home/.codex/config.toml", &["mcp_servers", "codeact"]),
    ("copilot", "home/.copilot/mcp-config.json", &["mcpServers", "codeact"]),
    ("cursor", "ws/.cursor/mcp.json", &["mcpServers", "codeact"]),
    ("gemini", "ws/.gemini/settings.json", &["mcpServers", "codeact"]),
    ("opencode", "ws/opencode.json", &["mcp", "codeact"]),
    ("qwen", "home/.qwen/settings.json", &["mcpServers", "codeact"]),
    ("vscode", "ws/.vscode/mcp.json", &["servers", "codeact"]),
];

/// The entry at `key` of the config file at `path` (JSON, or TOML for Codex).
fn entry(path: &Path, key: &[&str]) -> Value {
    let text = std::fs::read_to_string(path).unwrap();
    let mut value: Value = if path.extension().is_some_and(|e| e == "toml") {
        toml_value(&text)
    } else {
        serde_json::from_str(&text).unwrap()
    };
    for part in key {
        value = value[part].take();
    }
    value
}

/// The few TOML lines setup writes for Codex, read as JSON: `key = "s"`, `key = [..]`.
fn toml_value(text: &str) -> Value {
    let mut table = serde_json::Map::new();
    for line in text.lines().filter(|line| line.contains(" = ")) {
        let (key, value) = line.split_once(" = ").unwrap();
        table.insert(key.to_owned(), serde_json::from_str(value).unwrap());
    }
    json!({"mcp_servers": {"codeact": table}})
}

/// The program and arguments an entry starts, `${workspaceFolder}` as VS Code and Cursor
/// expand it.
fn started(entry: &Value, workspace: &Path) -> (PathBuf, Vec<String>) {
    let strings = |value: &Value| -> Vec<String> {
        value
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().replace("${workspaceFolder}", &workspace.display().to_string()))
            .collect()
    };
    match &entry["command"] {
        Value::Array(_) => {
            let mut words = strings(&entry["command"]);
            let program = words.remove(0);
            (PathBuf::from(program), words)
        }
        command => (PathBuf::from(command.as_str().unwrap()), strings(&entry["args"])),
    }
}

/// The names of the tools the MCP server `program args` lists, started in `dir`.
fn listed_tools(program: &Path, args: &[String], dir: &Path, home: &Path) -> Vec<String> {
    let mut child = Command::new(program)
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("HOME", home)
        .env("CODEACT_GUEST_INSTALL", "never")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    ] {
        writeln!(stdin, "{message}").unwrap();
    }
    let mut line = String::new();
    let tools = loop {
        line.clear();
        assert_ne!(stdout.read_line(&mut line).unwrap(), 0, "the server ended before listing its tools");
        let message: Value = serde_json::from_str(&line).unwrap_or_default();
        if message["id"] == 2 {
            break message["result"]["tools"].clone();
        }
    };
    drop(stdin);
    let _ = child.wait();
    tools.as_array().unwrap().iter().map(|tool| tool["name"].as_str().unwrap().to_owned()).collect()
}

#[test]
fn each_agents_entry_starts_codeacts_server_in_the_project() {
    for (agent, file, key) in AGENTS {
        let env = TestEnv::new();
        let out = env.run(&["setup", agent], "").code(0);
        let path = env.root().join(file);
        assert!(out.stdout.contains(": added "), "{agent}: {}", out.stdout);
        assert!(out.stdout.contains(&path.display().to_string()), "{agent}: {}", out.stdout);
        let entry = entry(&path, key);
        let (program, args) = started(&entry, &env.workspace());
        // `codeact` is not on the test's PATH: the entry names this binary.
        assert_eq!(program, Path::new(*BIN).canonicalize().unwrap(), "{agent}: {entry}");
        assert!(args.starts_with(&["mcp".to_owned(), "serve".to_owned()]), "{agent}: {entry}");
        let tools = listed_tools(&program, &args, &env.workspace(), &env.home());
        assert!(tools.contains(&"run".to_owned()), "{agent}: {tools:?}");
        // Set up again: nothing changes.
        let before = std::fs::read(&path).unwrap();
        let again = env.run(&["setup", agent], "").code(0);
        assert!(again.stdout.contains("already set up"), "{agent}: {}", again.stdout);
        assert_eq!(std::fs::read(&path).unwrap(), before, "{agent}");
    }
}

#[test]
fn a_users_file_keeps_its_comments_and_comes_back_whole() {
    let env = TestEnv::new();
    let original = "{\n  // my settings\n  \"theme\": \"dark\",\n  \"mcpServers\": {\n    \"mine\": {\"command\": \"my-server\"}, // keep me\n  },\n}\n";
    let path = env.workspace().join(".gemini/settings.json");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, original).unwrap();
    env.run(&["setup", "gemini"], "").code(0);
    let written = std::fs::read_to_string(&path).unwrap();
    assert!(written.contains("// my settings") && written.contains("// keep me"), "{written}");
    assert_eq!(entry_of_jsonc(&written)["trust"], true, "{written}");
    let out = env.run(&["setup", "gemini", "--undo"], "").code(0);
    assert!(out.stdout.contains("removed mcpServers.codeact"), "{}", out.stdout);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), original);

    // A Codex config of the user's, in TOML.
    let codex = env.home().join(".codex/config.toml");
    let toml = "# mine\nmodel = \"o3\"\n\n[mcp_servers.other]\ncommand = \"x\"\n";
    std::fs::create_dir_all(codex.parent().unwrap()).unwrap();
    std::fs::write(&codex, toml).unwrap();
    env.run(&["setup", "codex"], "").code(0);
    let written = std::fs::read_to_string(&codex).unwrap();
    assert!(written.starts_with(toml) && written.contains("default_tools_approval_mode = \"approve\""), "{written}");
    env.run(&["setup", "codex", "--undo"], "").code(0);
    assert_eq!(std::fs::read_to_string(&codex).unwrap(), toml);
}

/// The `codeact` entry of a settings file with comments and trailing commas.
fn entry_of_jsonc(text: &str) -> Value {
    let value: Value = jsonc_parser::parse_to_serde_value(text, &jsonc_parser::ParseOptions::default()).unwrap();
    value["mcpServers"]["codeact"].clone()
}

#[test]
fn a_dry_run_writes_nothing_and_bad_input_changes_nothing() {
    let env = TestEnv::new();
    let out = env.run(&["setup", "qwen", "--dry-run"], "").code(0);
    assert!(out.stdout.contains("would have added mcpServers.codeact"), "{}", out.stdout);
    assert!(out.stdout.contains("\"alwaysLoadTools\": true"), "{}", out.stdout);
    assert!(!env.workspace().join(".qwen").exists());
    assert!(!env.home().join(".local/state/codeact/setup.json").exists());

    let broken = env.workspace().join("opencode.json");
    std::fs::write(&broken, "{ \"mcp\": ").unwrap();
    let out = env.run(&["setup", "opencode"], "");
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.contains("cannot be read as JSON"), "{}", out.stderr);
    assert_eq!(std::fs::read_to_string(&broken).unwrap(), "{ \"mcp\": ");

    let out = env.run(&["setup", "codex", "--scope", "project"], "");
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.contains("use `--scope user`"), "{}", out.stderr);

    // A project folder that is a link out of the project is not written through.
    std::os::unix::fs::symlink(env.outside(), env.workspace().join(".cursor")).unwrap();
    let out = env.run(&["setup", "cursor"], "");
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.contains("leads out of the project"), "{}", out.stderr);
    assert_eq!(std::fs::read_dir(env.outside()).unwrap().count(), 0);
}

#[test]
fn the_gateway_moves_the_agents_servers_behind_codeact_where_programs_call_them() {
    let env = TestEnv::new();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/raw.py");
    let config = env.home().join(".codex/config.toml");
    let original = format!(
        "# mine\nmodel = \"o3\"\n\n[mcp_servers.tools]\ncommand = {}\nargs = [{}, \"plain\"]\n",
        json!(python3()),
        json!(script.display().to_string())
    );
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(&config, &original).unwrap();
    // Before: Codex offers the server itself, and codeact reads it too.
    assert_eq!(env.stdout_of("print(tools__echo(text='direct'))"), "direct\n");

    let out = env.run(&["setup", "codex", "--gateway"], "").code(0);
    assert!(out.stdout.contains("moved 1 server to") && out.stdout.contains(": tools"), "{}", out.stdout);
    let now = std::fs::read_to_string(&config).unwrap();
    assert!(now.contains("# mine") && now.contains("[mcp_servers.codeact]"), "{now}");
    assert!(!now.contains("[mcp_servers.tools]"), "the agent keeps only codeact:\n{now}");
    let moved = env.home().join(".config/codeact/mcp/codex.toml");
    assert!(std::fs::read_to_string(&moved).unwrap().contains("[mcp_servers.tools]"));
    // A program still calls it, and the reference still lists it.
    assert_eq!(env.stdout_of("print(tools__echo(text='behind codeact'))"), "behind codeact\n");
    let reference = env.run(&["instructions"], "").code(0).stdout;
    assert!(reference.contains("- `tools`: echo(text), env()"), "{reference}");

    let out = env.run(&["setup", "codex", "--undo"], "").code(0);
    assert!(out.stdout.contains("moved 1 server back"), "{}", out.stdout);
    assert!(!moved.exists(), "codeact's file, which setup made, is gone");
    let back = std::fs::read_to_string(&config).unwrap();
    assert!(back.contains("# mine") && back.contains("[mcp_servers.tools]") && !back.contains("codeact"), "{back}");
}

#[test]
#[cfg(unix)]
fn undo_never_writes_through_a_link_out_of_the_project() {
    let env = TestEnv::new();
    let ws = env.workspace();
    std::fs::create_dir_all(ws.join(".gemini")).unwrap();
    std::fs::write(ws.join(".gemini/settings.json"), r#"{"mcpServers": {"other": {"command": "x"}}}"#).unwrap();
    env.run(&["setup", "gemini", "--gateway"], "").code(0);
    let moved = ws.join(".codeact/mcp/gemini.json");
    assert!(moved.is_file());
    // The folder becomes a link to one outside the project, holding a file of the same name.
    let victim = env.home().join("victim");
    std::fs::create_dir_all(&victim).unwrap();
    std::fs::copy(&moved, victim.join("gemini.json")).unwrap();
    std::fs::remove_dir_all(ws.join(".codeact/mcp")).unwrap();
    std::os::unix::fs::symlink(&victim, ws.join(".codeact/mcp")).unwrap();
    let out = env.run(&["setup", "gemini", "--undo"], "");
    assert_ne!(out.code, 0, "{}", out.stdout);
    assert!(out.stderr.contains("leads out of the project"), "{}", out.stderr);
    assert!(victim.join("gemini.json").is_file(), "the file outside is untouched");
}
