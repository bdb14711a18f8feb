//! `codeact check` for MCP config files: every problem of one file, each with a stable rule id
//! and the line of the server's name, found as the loader would find it ([`super::config`]) but
//! without starting, contacting or trusting anything.
//!
//! What may differ where codeact runs is a warning, not an error: an unset `${env:NAME}` and a
//! missing `envFile` (a `.env` that is not committed, say). This module must not name the
//! `usertools` layer: it returns its own [`Finding`]s and the command maps them.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::config::{self, Fault, Purpose, ServerEntry, Vars, WORKSPACE_FILES};

/// How bad a finding is: errors fail `codeact check`, warnings do not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Severity {
    Error,
    Warning,
}

/// One problem of an MCP config file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Finding {
    /// 1-based; the line of the server's name when it is about one.
    pub(crate) line: usize,
    pub(crate) severity: Severity,
    /// A stable id, such as `mcp-entry-invalid`.
    pub(crate) rule: &'static str,
    pub(crate) message: String,
}

impl Finding {
    fn new(line: usize, severity: Severity, fault: Fault) -> Self {
        Self { line, severity, rule: fault.rule, message: fault.message }
    }
}

/// The workspace a config file at `path` belongs to, when it is one of
/// [`WORKSPACE_FILES`] (`<workspace>/.vscode/mcp.json`, say): what `${workspaceFolder}` and a
/// relative `envFile` mean for it.
#[must_use]
pub(crate) fn workspace_of(path: &Path) -> Option<PathBuf> {
    WORKSPACE_FILES.iter().find_map(|rel| {
        let mut dir = path;
        for part in Path::new(rel).components().rev() {
            if dir.file_name()? != part.as_os_str() {
                return None;
            }
            dir = dir.parent()?;
        }
        Some(if dir.as_os_str().is_empty() { PathBuf::from(".") } else { dir.to_path_buf() })
    })
}

/// Every problem of the MCP config file `path`, whose bytes are `content`, for `workspace`;
/// `lookup` resolves environment variables. Disabled servers are not checked, as they are not
/// loaded.
#[must_use]
pub(crate) fn check(
    path: &Path,
    content: &[u8],
    workspace: &Path,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Vec<Finding> {
    let parsed: Value = match serde_json::from_slice(content) {
        Ok(parsed) => parsed,
        Err(err) => {
            let fault = Fault { rule: "mcp-json-invalid", message: format!("invalid JSON: {err}") };
            return vec![Finding::new(err.line(), Severity::Error, fault)];
        }
    };
    let text = String::from_utf8_lossy(content);
    let keys = key_lines(&text);
    let line_of = |top: &str, key: Option<&str>| {
        keys.iter().find(|(t, k, _)| t == top && k.as_deref() == key).map_or(1, |(_, _, line)| *line)
    };
    let (key, entries) = match config::servers_of(&parsed) {
        Ok(Some(found)) => found,
        Ok(None) => {
            let fault = Fault {
                rule: "mcp-servers-missing",
                message: "neither `mcpServers` nor `servers` is here: this file configures no MCP server".into(),
            };
            return vec![Finding::new(1, Severity::Warning, fault)];
        }
        Err(fault) => {
            let line = if fault.rule == "mcp-servers-invalid" {
                line_of("mcpServers", None).max(line_of("servers", None))
            } else {
                1
            };
            return vec![Finding::new(line, Severity::Error, fault)];
        }
    };
    let mut findings = Vec::new();
    if key == "mcpServers" && parsed.get("servers").is_some() {
        let fault = Fault {
            rule: "mcp-servers-ignored",
            message: "`servers` is ignored: `mcpServers` is read instead; keep the servers under one of them".into(),
        };
        findings.push(Finding::new(line_of("servers", None), Severity::Warning, fault));
    }
    let vars = Vars::new(workspace, lookup, Purpose::Check);
    for (name, value) in entries {
        let line = line_of(key, Some(&name));
        let about = |fault: Fault| Fault { message: format!("MCP server `{name}`: {}", fault.message), ..fault };
        match config::entry(&name, &value, path, &vars) {
            Ok(ServerEntry::Server(_) | ServerEntry::Disabled) => {}
            Err(fault) => findings.push(Finding::new(line, Severity::Error, about(fault))),
        }
        for note in vars.take_notes() {
            let note = Fault { message: format!("{}, unless it is there where codeact runs", note.message), ..note };
            findings.push(Finding::new(line, Severity::Warning, about(note)));
        }
    }
    findings
}

/// Each key of the top-level object of a JSON text, and each key of the objects it holds, with
/// its 1-based line: `(top-level key, None, line)` and `(top-level key, Some(key), line)`.
/// Only meaningful for valid JSON.
fn key_lines(text: &str) -> Vec<(String, Option<String>, usize)> {
    let bytes = text.as_bytes();
    let mut keys = Vec::new();
    let (mut depth, mut line, mut top) = (0usize, 1usize, String::new());
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'\n' => line += 1,
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            b'"' => {
                let (start, start_line) = (at, line);
                at += 1;
                while at < bytes.len() && bytes[at] != b'"' {
                    match bytes[at] {
                        b'\\' => at += 1,
                        b'\n' => line += 1,
                        _ => {}
                    }
                    at += 1;
                }
                let is_key =
                    bytes.get(at + 1..).and_then(|rest| rest.iter().find(|b| !b.is_ascii_whitespace())) == Some(&b':');
                let key = text.get(start..=at).and_then(|raw| serde_json::from_str::<String>(raw).ok());
                match (is_key, key, depth) {
                    (true, Some(key), 1) => {
                        keys.push((key.clone(), None, start_line));
                        top = key;
                    }
                    (true, Some(key), 2) => keys.push((top.clone(), Some(key), start_line)),
                    _ => {}
                }
            }
            _ => {}
        }
        at += 1;
    }
    keys
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn env(name: &str) -> Option<String> {
        (name == "TOKEN").then(|| "t0k".to_owned())
    }

    /// The findings of `text` as `(line, severity, rule)`.
    fn found(text: &str) -> Vec<(usize, Severity, &'static str)> {
        check(Path::new("/ws/.mcp.json"), text.as_bytes(), Path::new("/ws"), &env)
            .into_iter()
            .map(|f| (f.line, f.severity, f.rule))
            .collect()
    }

    #[test]
    fn a_valid_file_has_no_findings() {
        let text = r#"{"servers": {"a": {"command": "x", "args": ["${env:TOKEN}"]}, "off": {"disabled": true}}}"#;
        assert_eq!(found(text), []);
    }

    #[test]
    fn each_entry_problem_is_found_at_the_line_of_its_name() {
        let text = r#"{
  "inputs": [{"id": "tok", "type": "promptString"}],
  "mcpServers": {
    "good": {"command": "x"},
    "input": {"command": "x", "env": {"T": "${input:tok}"}},
    "sse": {"type": "sse", "url": "http://x/sse"},
    "odd": {"type": "websocket", "url": "ws://x"},
    "empty": {},
    "unset": {"command": "x", "args": ["${env:UNSET}"]},
    "dotenv": {"command": "x", "envFile": "/nowhere/.env"},
    "also": {"command": "${input:x}", "args": ["${env:UNSET2}"]}
  }
}"#;
        assert_eq!(
            found(text),
            [
                (5, Severity::Error, "mcp-input-variable"),
                (6, Severity::Error, "mcp-transport-unsupported"),
                (7, Severity::Error, "mcp-type-unknown"),
                (8, Severity::Error, "mcp-entry-invalid"),
                (9, Severity::Warning, "mcp-env-unset"),
                (10, Severity::Warning, "mcp-env-file"),
                (11, Severity::Error, "mcp-input-variable"),
            ]
        );
        let messages: Vec<String> = check(Path::new("/ws/.mcp.json"), text.as_bytes(), Path::new("/ws"), &env)
            .into_iter()
            .map(|f| f.message)
            .collect();
        assert_eq!(
            messages[4],
            "MCP server `unset`: environment variable `UNSET` is not set, unless it is there where codeact runs"
        );
        assert_eq!(messages[3], "MCP server `empty`: needs `command` (stdio) or `url` (http)");
    }

    #[test]
    fn problems_of_the_whole_file_are_found_too() {
        assert_eq!(found("{\n  \"mcpServers\": {,}\n}"), [(2, Severity::Error, "mcp-json-invalid")]);
        assert_eq!(found("[1]"), [(1, Severity::Error, "mcp-not-object")]);
        assert_eq!(found("{\n\n\"servers\": [\n]}"), [(3, Severity::Error, "mcp-servers-invalid")]);
        assert_eq!(found("{\"inputs\": []}"), [(1, Severity::Warning, "mcp-servers-missing")]);
        assert_eq!(
            found("{\"mcpServers\": {},\n \"servers\": {\"a\": {}}}"),
            [(2, Severity::Warning, "mcp-servers-ignored")]
        );
    }

    #[test]
    fn a_name_is_found_as_a_key_of_the_servers_not_inside_an_entry() {
        let text = "{\"servers\": {\n\"a\": {\"command\": \"x\", \"type\": \"x\"},\n\"command\": {\"type\": \"y\"}}}";
        assert_eq!(found(text), [(2, Severity::Error, "mcp-type-unknown"), (3, Severity::Error, "mcp-type-unknown")]);
        let escaped = "{\"servers\": {\n\"a\\\"b\": {\"url\": 1}}}";
        assert_eq!(found(escaped), [(2, Severity::Error, "mcp-entry-invalid")]);
    }

    #[test]
    fn a_workspace_file_knows_its_workspace() {
        assert_eq!(workspace_of(Path::new("/ws/.vscode/mcp.json")), Some(PathBuf::from("/ws")));
        assert_eq!(workspace_of(Path::new("/ws/.github/copilot/mcp.json")), Some(PathBuf::from("/ws")));
        assert_eq!(workspace_of(Path::new("/ws/.mcp.json")), Some(PathBuf::from("/ws")));
        assert_eq!(workspace_of(Path::new(".mcp.json")), Some(PathBuf::from(".")));
        assert_eq!(workspace_of(Path::new("/home/u/.copilot/mcp-config.json")), None);
        assert_eq!(workspace_of(Path::new("/ws/other/mcp.json")), None);
    }
}
