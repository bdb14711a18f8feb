//! The programs the integration tests start where no POSIX shell is (Windows, under Wine or
//! not): one small binary that plays each part. Built with the tests (`cargo test` builds the
//! examples); the tests find it beside their own binary.
//!
//!     codeact-test-helper mcp-server      a stdio MCP server (newline-delimited JSON-RPC) with
//!                                         the tools `echo`, `fail` and `tree`
//!     codeact-test-helper sleep SECONDS   sleeps, then exits 0
//!     codeact-test-helper echo ARG...     prints its arguments, one per line, then its stdin
//!
//! `tree` starts a child (`sleep`) and writes the two pids, `SERVER CHILD`, to the file it is given,
//! then answers, or with `hang` never answers: what a test needs to see that codeact ends a
//! server's whole process tree.

#![expect(clippy::print_stdout, clippy::print_stderr, reason = "a test helper talks on its standard streams")]

use std::io::{BufRead as _, Read as _, Write as _};
use std::process::ExitCode;
use std::time::Duration;

use serde_json::{Value, json};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.split_first() {
        Some((part, [])) if part == "mcp-server" => mcp_server(),
        Some((part, [seconds])) if part == "sleep" => {
            std::thread::sleep(Duration::from_secs(seconds.parse().unwrap_or(300)));
            ExitCode::SUCCESS
        }
        Some((part, rest)) if part == "echo" => {
            for arg in rest {
                println!("{arg}");
            }
            let mut input = String::new();
            let _ = std::io::stdin().read_to_string(&mut input);
            print!("{input}");
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!("usage: codeact-test-helper mcp-server | sleep SECONDS | echo ARG...");
            ExitCode::from(2)
        }
    }
}

/// Answers MCP requests read from stdin, one JSON-RPC message per line, until stdin ends.
fn mcp_server() -> ExitCode {
    eprintln!("helper server: started");
    let stdin = std::io::stdin();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let Ok(message) = serde_json::from_str::<Value>(&line) else { continue };
        // Notifications (no id) get no answer.
        let Some(id) = message.get("id").cloned() else { continue };
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        let answer = match message["method"].as_str().unwrap_or_default() {
            "initialize" => Ok(json!({
                "protocolVersion": params["protocolVersion"].as_str().unwrap_or("2025-06-18"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "codeact-test-helper", "version": "1.0.0"},
            })),
            "ping" => Ok(json!({})),
            "tools/list" => Ok(json!({"tools": tools()})),
            "tools/call" => Ok(call(params["name"].as_str().unwrap_or_default(), &params["arguments"])),
            method => Err(json!({"code": -32601, "message": format!("no method {method}")})),
        };
        let reply = match answer {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err(error) => json!({"jsonrpc": "2.0", "id": id, "error": error}),
        };
        let mut stdout = std::io::stdout().lock();
        if writeln!(stdout, "{reply}").and_then(|()| stdout.flush()).is_err() {
            break;
        }
    }
    ExitCode::SUCCESS
}

fn tools() -> Value {
    let string = json!({"type": "string"});
    json!([
        {
            "name": "echo",
            "description": "Returns its text.",
            "inputSchema": {"type": "object", "properties": {"text": string}, "required": ["text"]},
            "annotations": {"readOnlyHint": true},
        },
        {
            "name": "fail",
            "description": "Answers with an error result carrying its message.",
            "inputSchema": {"type": "object", "properties": {"message": string}, "required": ["message"]},
        },
        {
            "name": "tree",
            "description": "Starts a child process, writes both pids to `marker`; with `hang`, never answers.",
            "inputSchema": {
                "type": "object",
                "properties": {"marker": string, "hang": {"type": "boolean"}},
                "required": ["marker"],
            },
        },
    ])
}

fn text_result(text: &str, is_error: bool) -> Value {
    json!({"content": [{"type": "text", "text": text}], "isError": is_error})
}

fn call(name: &str, arguments: &Value) -> Value {
    match name {
        "echo" => text_result(arguments["text"].as_str().unwrap_or_default(), false),
        "fail" => text_result(arguments["message"].as_str().unwrap_or_default(), true),
        "tree" => tree(arguments["marker"].as_str().unwrap_or_default(), arguments["hang"].as_bool() == Some(true)),
        other => text_result(&format!("no tool {other}"), true),
    }
}

fn tree(marker: &str, hang: bool) -> Value {
    let child = std::env::current_exe().and_then(|exe| std::process::Command::new(exe).args(["sleep", "300"]).spawn());
    let child = match child {
        Ok(child) => child,
        Err(err) => return text_result(&format!("cannot start the child: {err}"), true),
    };
    let pids = format!("{} {}", std::process::id(), child.id());
    if let Err(err) = std::fs::write(marker, &pids) {
        return text_result(&format!("cannot write {marker}: {err}"), true);
    }
    if hang {
        std::thread::sleep(Duration::from_secs(300));
    }
    text_result(&pids, false)
}
