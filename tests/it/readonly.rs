//! Read-only runs, for an agent that runs read-only: `--read-only`, `CODEACT_READ_ONLY` and
//! `mcp serve --read-only`. What may change something raises `PermissionError`; reading works.

use serde_json::{Value, json};

use crate::support::TestEnv;

/// A program that tries each tool that may change something, and reads.
const PROGRAM: &str = r#"for name, call in [
    ("create", lambda: create(path="new.txt", file_text="x")),
    ("edit", lambda: edit(path="a.txt", old_str="one", new_str="two")),
    ("bash", lambda: bash(command="echo hi > made.txt")),
    ("call_tool", lambda: call_tool("create", path="other.txt", file_text="x")),
]:
    try:
        call()
        print("ALLOWED", name)
    except PermissionError as e:
        print("refused", name, "read-only" in str(e))
print(view(path="a.txt"), end="")
print(glob(pattern="*.txt"), len(list(grep(pattern="one", paths="."))))
"#;

const REFUSED: &str =
    "refused create True\nrefused edit True\nrefused bash True\nrefused call_tool True\none\n['a.txt'] 1\n";

fn unchanged(env: &TestEnv) {
    let mut names: Vec<String> = std::fs::read_dir(env.workspace())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["a.txt"]);
    assert_eq!(std::fs::read_to_string(env.workspace().join("a.txt")).unwrap(), "one\n");
}

#[test]
fn a_read_only_run_refuses_what_may_change_something_and_reads() {
    let env = TestEnv::new().file("a.txt", "one\n");
    env.run(&["run", "--read-only"], PROGRAM).code(0).stdout(REFUSED);
    unchanged(&env);
    let env = TestEnv::new().file("a.txt", "one\n").env("CODEACT_READ_ONLY", "1");
    env.run(&["run"], PROGRAM).code(0).stdout(REFUSED);
    unchanged(&env);
    // Without it, the same program writes.
    let env = TestEnv::new().file("a.txt", "one\n");
    let out = env.run(&["run"], PROGRAM).code(0);
    assert!(out.stdout.contains("ALLOWED create"), "{}", out.stdout);
    // The reference says so, only when it holds.
    let said = TestEnv::new().run(&["instructions", "--read-only"], "");
    assert_ne!(said.code, 0, "instructions takes no --read-only: {}", said.stdout);
}

#[test]
fn mcp_serve_read_only_serves_runs_that_only_read_and_says_so() {
    let env = TestEnv::new().file("a.txt", "one\n");
    let requests = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}
        }}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "run", "arguments": {"code": PROGRAM}}}),
    ];
    let input = requests.iter().map(Value::to_string).collect::<Vec<_>>().join("\n") + "\n";
    let out = env.run(&["mcp", "serve", "--text-only", "--read-only"], &input).code(0);
    let messages: Vec<Value> = out.stdout.lines().filter_map(|line| serde_json::from_str(line).ok()).collect();
    let instructions = messages.iter().find(|m| m["id"] == 1).unwrap()["result"]["instructions"].as_str().unwrap();
    assert!(instructions.contains("Read-only here"), "{instructions}");
    let answer = messages.iter().find(|m| m["id"] == 2).expect("the run's answer");
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with(REFUSED), "{text}");
    unchanged(&env);
    // A server without the flag says nothing of it.
    let plain = TestEnv::new().run(&["mcp", "serve", "--text-only"], &(requests[0].to_string() + "\n")).code(0);
    assert!(!plain.stdout.contains("Read-only here"), "{}", plain.stdout);
}

/// Codex sends its sandbox state with each call to a server that asks for it: a call from a
/// read-only Codex runs read-only, one from a Codex that may write runs as usual.
#[test]
fn a_call_from_codex_in_its_read_only_sandbox_runs_read_only() {
    let read_root = json!({"path": {"type": "special", "value": {"kind": "root"}}, "access": "read"});
    let writes_workspace = json!({"path": {"type": "path", "path": "/work"}, "access": "write"});
    let state = |entries: Value| {
        json!({"permissionProfile": {"type": "managed", "file_system": {"type": "restricted", "entries": entries},
            "network": "restricted"}, "sandboxCwd": "file:///work"})
    };
    for (meta, read_only) in [
        (json!({"codex/sandbox-state": state(json!([read_root]))}), true),
        (json!({"codex/sandbox-state": state(json!([read_root, writes_workspace]))}), false),
        (json!({"x-codex-turn-metadata": {"sandbox_mode": "read-only", "sandbox": "seccomp"}}), true),
        (json!({"progressToken": 7}), false),
    ] {
        let env = TestEnv::new().file("a.txt", "one\n");
        let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "run", "arguments": {"code": "create(path=\"new.txt\", file_text=\"x\")\nprint(\"written\")"}, "_meta": meta}});
        let requests = [
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "codex-mcp-client", "version": "0.171.0"}
            }}),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            call,
        ];
        let input = requests.iter().map(Value::to_string).collect::<Vec<_>>().join("\n") + "\n";
        let out = env.run(&["mcp", "serve", "--text-only"], &input).code(0);
        let messages: Vec<Value> = out.stdout.lines().filter_map(|line| serde_json::from_str(line).ok()).collect();
        let info = &messages.iter().find(|m| m["id"] == 1).unwrap()["result"];
        assert!(info["capabilities"]["experimental"]["codex/sandbox-state"].is_object(), "{info}");
        let text = messages.iter().find(|m| m["id"] == 2).unwrap()["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_owned();
        assert_eq!(text.contains("PermissionError"), read_only, "{meta}: {text}");
        assert_eq!(env.workspace().join("new.txt").exists(), !read_only, "{meta}");
    }
}
