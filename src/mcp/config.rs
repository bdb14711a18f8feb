//! MCP server configuration, merged from the places editors and Copilot CLI keep it. Earlier
//! sources win on a name clash: `<workspace>/.mcp.json`, `<workspace>/.vscode/mcp.json`,
//! `<workspace>/.github/copilot/mcp.json`, then `$COPILOT_HOME/mcp-config.json`. Both the
//! `servers` and `mcpServers` spellings are read; `${env:NAME}`, `${NAME}` and `$NAME` are
//! expanded in `env`, `headers` and `args`. Keys other tools use are ignored here: these files
//! are shared with them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};

/// Per-call timeout when a server does not set `timeout`.
pub(crate) const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_mins(1);

/// How to reach one server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Transport {
    /// A child process speaking MCP on stdin/stdout.
    Stdio { command: String, args: Vec<String>, env: BTreeMap<String, String>, cwd: Option<PathBuf> },
    /// Streamable HTTP.
    Http { url: String, headers: BTreeMap<String, String> },
}

/// One configured server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Server {
    pub(crate) name: String,
    pub(crate) transport: Transport,
    /// Longest one call may take (it is also cut to the run's remaining time).
    pub(crate) timeout: Duration,
    /// Where it was configured.
    pub(crate) source: PathBuf,
}

/// A server entry that could not be understood, reported instead of used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BadEntry {
    pub(crate) name: String,
    pub(crate) source: PathBuf,
    pub(crate) message: String,
}

/// The config files, highest precedence first.
#[must_use]
pub(crate) fn sources(workspace: &Path, copilot_home: Option<&Path>) -> Vec<PathBuf> {
    let mut paths = vec![
        workspace.join(".mcp.json"),
        workspace.join(".vscode").join("mcp.json"),
        workspace.join(".github").join("copilot").join("mcp.json"),
    ];
    if let Some(home) = copilot_home {
        paths.push(home.join("mcp-config.json"));
    }
    paths
}

/// Reads every source; `lookup` resolves environment variables.
pub(crate) fn load(
    workspace: &Path,
    copilot_home: Option<&Path>,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> (Vec<Server>, Vec<BadEntry>) {
    let mut servers: Vec<Server> = Vec::new();
    let mut problems = Vec::new();
    for path in sources(workspace, copilot_home) {
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        let parsed: Value = match serde_json::from_str(&text) {
            Ok(value) => value,
            Err(err) => {
                problems.push(BadEntry {
                    name: String::new(),
                    source: path.clone(),
                    message: format!("invalid JSON: {err}"),
                });
                continue;
            }
        };
        let entries = parsed.get("mcpServers").or_else(|| parsed.get("servers")).and_then(Value::as_object);
        for (name, entry) in entries.into_iter().flatten() {
            if servers.iter().any(|s| &s.name == name) {
                continue;
            }
            match server(name, entry, &path, workspace, lookup) {
                Ok(server) => servers.push(server),
                Err(message) => problems.push(BadEntry { name: name.clone(), source: path.clone(), message }),
            }
        }
    }
    (servers, problems)
}

fn server(
    name: &str,
    entry: &Value,
    source: &Path,
    workspace: &Path,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<Server, String> {
    let entry = entry.as_object().ok_or("the entry is not an object")?;
    let strings = |key: &str| -> Result<Vec<String>, String> {
        match entry.get(key) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| v.as_str().map(|s| expand(s, lookup)).ok_or(format!("`{key}` must be a list of strings"))?)
                .collect(),
            Some(_) => Err(format!("`{key}` must be a list of strings")),
        }
    };
    let table = |key: &str| -> Result<BTreeMap<String, String>, String> {
        match entry.get(key) {
            None | Some(Value::Null) => Ok(BTreeMap::new()),
            Some(Value::Object(map)) => map_strings(map, key, lookup),
            Some(_) => Err(format!("`{key}` must be an object of strings")),
        }
    };
    let kind = entry.get("type").and_then(Value::as_str).unwrap_or("");
    let timeout = match entry.get("timeout") {
        None | Some(Value::Null) => DEFAULT_CALL_TIMEOUT,
        Some(value) => value
            .as_f64()
            .filter(|s| *s > 0.0 && *s <= 86_400.0)
            .map(Duration::from_secs_f64)
            .ok_or("`timeout` must be a number of seconds")?,
    };
    let transport = match (kind, entry.get("command"), entry.get("url")) {
        ("" | "stdio" | "local", Some(Value::String(command)), _) => Transport::Stdio {
            command: expand(command, lookup)?,
            args: strings("args")?,
            env: table("env")?,
            cwd: entry.get("cwd").and_then(Value::as_str).map(|cwd| workspace.join(cwd)),
        },
        ("" | "http" | "streamable-http", _, Some(Value::String(url))) => {
            Transport::Http { url: expand(url, lookup)?, headers: table("headers")? }
        }
        ("sse", _, _) => return Err("the legacy SSE transport is not supported; use streamable HTTP".into()),
        _ => return Err("needs `command` (stdio) or `url` (http)".into()),
    };
    Ok(Server { name: name.to_owned(), transport, timeout, source: source.to_path_buf() })
}

fn map_strings(
    map: &Map<String, Value>,
    key: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<BTreeMap<String, String>, String> {
    map.iter()
        .map(|(k, v)| match v {
            Value::String(s) => Ok((k.clone(), expand(s, lookup)?)),
            _ => Err(format!("`{key}.{k}` must be a string")),
        })
        .collect()
}

/// Expands `${env:NAME}`, `${NAME}` and `$NAME`. An unset `${env:NAME}` is an error naming it
/// (never a value: no secret is echoed); an unset `$NAME` or `${NAME}` stays as written, so
/// shell text such as `sh -c 'echo $$'` passes through.
pub(crate) fn expand(text: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (name, consumed, required) = if let Some(inner) = after.strip_prefix('{') {
            let end = inner.find('}').ok_or_else(|| format!("unclosed `${{` in {text:?}"))?;
            let name = &inner[..end];
            match name.strip_prefix("env:") {
                Some(name) => (name, end + 2, true),
                None => (name, end + 2, false),
            }
        } else {
            let end = after.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(after.len());
            (&after[..end], end, false)
        };
        match lookup(name).filter(|_| !name.is_empty()) {
            Some(value) => out.push_str(&value),
            None if required => return Err(format!("environment variable `{name}` is not set")),
            None => out.push_str(&rest[at..=at + consumed]),
        }
        rest = &after[consumed..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "TOKEN" => Some("t0k".into()),
            "HOME" => Some("/home/u".into()),
            _ => None,
        }
    }

    #[test]
    fn every_variable_spelling_expands() {
        assert_eq!(expand("Bearer ${env:TOKEN}", &env), Ok("Bearer t0k".into()));
        assert_eq!(expand("${HOME}/x:$HOME", &env), Ok("/home/u/x:/home/u".into()));
        assert_eq!(expand("echo $$ $0 ${MISSING} $", &env), Ok("echo $$ $0 ${MISSING} $".into()));
        assert_eq!(expand("a $ b", &env), Ok("a $ b".into()));
        assert_eq!(expand("${env:MISSING}", &env), Err("environment variable `MISSING` is not set".into()));
    }

    #[test]
    fn earlier_sources_win_and_both_spellings_are_read() {
        let temp = tempfile::tempdir().unwrap();
        let ws = temp.path();
        std::fs::write(
            ws.join(".mcp.json"),
            r#"{"mcpServers": {"a": {"command": "one", "args": ["--token", "${env:TOKEN}"]}}}"#,
        )
        .unwrap();
        std::fs::create_dir_all(ws.join(".vscode")).unwrap();
        std::fs::write(
            ws.join(".vscode/mcp.json"),
            r#"{"servers": {"a": {"command": "two"}, "b": {"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer $TOKEN"}}, "c": {"type": "sse", "url": "x"}}}"#,
        )
        .unwrap();
        let (servers, problems) = load(ws, None, &env);
        let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert!(
            matches!(&servers[0].transport, Transport::Stdio { command, args, .. } if command == "one" && args[1] == "t0k")
        );
        assert!(
            matches!(&servers[1].transport, Transport::Http { headers, .. } if headers["Authorization"] == "Bearer t0k")
        );
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].name, "c");
    }
}
