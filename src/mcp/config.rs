//! MCP server configuration, merged from the places editors and Copilot CLI keep it. Earlier
//! sources win on a name clash: `<workspace>/.mcp.json`, `<workspace>/.vscode/mcp.json`,
//! `<workspace>/.github/copilot/mcp.json`, then `$COPILOT_HOME/mcp-config.json`. Both the
//! `servers` and `mcpServers` spellings are read; `${env:NAME}`, `${NAME}` and `$NAME` are
//! expanded in `command`, `args`, `env`, `url` and `headers`. Keys other tools use are ignored
//! here: these files are shared with them.
//!
//! The workspace's files come with the repository: each is read only when the user trusts its
//! content (`codeact trust`), so an untrusted file is never parsed, expanded or started. No
//! message shows an expanded value: a server is shown as configured ([`Server::shown`]) and
//! every expanded value is taken out of quoted text ([`Server::redact`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};

use crate::bounded;
use crate::trust::Approved;

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
    /// Whether that is a workspace file (its HTTP URL obeys the network policy).
    pub(crate) from_workspace: bool,
    /// The command line or URL as configured, before expansion.
    pub(crate) shown: String,
    /// Each expanded variable's value, with the text that names it.
    expanded: Vec<(String, String)>,
}

impl Server {
    /// `text` with every expanded value replaced by the variable that names it.
    #[must_use]
    pub(crate) fn redact(&self, text: &str) -> String {
        let mut out = text.to_owned();
        let mut values: Vec<&(String, String)> = self.expanded.iter().filter(|(_, value)| value.len() >= 4).collect();
        // Longer values first, so a value that contains another is replaced whole.
        values.sort_by_key(|(_, value)| std::cmp::Reverse(value.len()));
        for (name, value) in values {
            out = out.replace(value.as_str(), name);
        }
        out
    }
}

/// What the config files hold.
#[derive(Debug, Default)]
pub(crate) struct Loaded {
    pub(crate) servers: Vec<Server>,
    pub(crate) problems: Vec<BadEntry>,
    /// The workspace files left unread because the user does not trust their content.
    pub(crate) untrusted: Vec<String>,
}

/// A server entry that could not be understood, reported instead of used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BadEntry {
    pub(crate) name: String,
    pub(crate) source: PathBuf,
    pub(crate) message: String,
}

/// The workspace's config files, relative to it, highest precedence first.
pub(crate) const WORKSPACE_FILES: [&str; 3] = [".mcp.json", ".vscode/mcp.json", ".github/copilot/mcp.json"];

/// Reads every source: the workspace's files the user trusts, then Copilot CLI's;
/// `lookup` resolves environment variables.
pub(crate) fn load(
    workspace: &Path,
    copilot_home: Option<&Path>,
    trust: &Approved,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Loaded {
    let mut loaded = Loaded::default();
    let mut sources: Vec<(PathBuf, Option<&str>)> =
        WORKSPACE_FILES.iter().map(|rel| (workspace.join(rel), Some(*rel))).collect();
    if let Some(home) = copilot_home {
        sources.push((home.join("mcp-config.json"), None));
    }
    for (path, rel) in sources {
        let content = match bounded::read(&path, bounded::MAX_FILE_BYTES) {
            Ok(Some(content)) => content,
            Ok(None) => continue,
            Err(err) => {
                loaded.problems.push(BadEntry {
                    name: String::new(),
                    source: path,
                    message: format!("cannot read: {err}"),
                });
                continue;
            }
        };
        if let Some(rel) = rel
            && !trust.trusts(rel, &content)
        {
            loaded.untrusted.push(rel.to_owned());
            continue;
        }
        let entries = match entries(&content) {
            Ok(entries) => entries,
            Err(message) => {
                loaded.problems.push(BadEntry { name: String::new(), source: path, message });
                continue;
            }
        };
        for (name, entry) in entries {
            if loaded.servers.iter().any(|s| s.name == name) {
                continue;
            }
            match server(&name, &entry, &path, workspace, lookup) {
                Ok(server) => loaded.servers.push(Server { from_workspace: rel.is_some(), ..server }),
                Err(message) => loaded.problems.push(BadEntry { name, source: path.clone(), message }),
            }
        }
    }
    loaded
}

/// One server as `codeact trust` shows it: its name, and its command line or URL as configured
/// (or why it cannot be used).
pub(crate) type Preview = (String, Result<String, String>);

/// Each server in a config file, shown as configured (nothing expanded), or why it cannot be
/// used: what `codeact trust` asks the user to approve.
pub(crate) fn preview(content: &[u8], workspace: &Path) -> Result<Vec<Preview>, String> {
    // Every variable "expands" to nothing: only the configured text is shown.
    let unexpanded = |_: &str| Some(String::new());
    Ok(entries(content)?
        .into_iter()
        .map(|(name, entry)| {
            let shown = server(&name, &entry, Path::new(""), workspace, &unexpanded).map(|server| server.shown);
            (name, shown)
        })
        .collect())
}

/// The server entries of a config file, by name, in file order.
fn entries(content: &[u8]) -> Result<Vec<(String, Value)>, String> {
    let parsed: Value = serde_json::from_slice(content).map_err(|err| format!("invalid JSON: {err}"))?;
    let entries = parsed.get("mcpServers").or_else(|| parsed.get("servers")).and_then(Value::as_object);
    Ok(entries.into_iter().flatten().map(|(name, entry)| (name.clone(), entry.clone())).collect())
}

fn server(
    name: &str,
    entry: &Value,
    source: &Path,
    workspace: &Path,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<Server, String> {
    let entry = entry.as_object().ok_or("the entry is not an object")?;
    let expanded = std::cell::RefCell::new(Vec::new());
    let expand = |text: &str| expand_into(text, lookup, &mut expanded.borrow_mut());
    let raw_strings = |key: &str| -> Result<Vec<&str>, String> {
        match entry.get(key) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(items)) => {
                items.iter().map(|v| v.as_str().ok_or(format!("`{key}` must be a list of strings"))).collect()
            }
            Some(_) => Err(format!("`{key}` must be a list of strings")),
        }
    };
    let table = |key: &str| -> Result<BTreeMap<String, String>, String> {
        match entry.get(key) {
            None | Some(Value::Null) => Ok(BTreeMap::new()),
            Some(Value::Object(map)) => map_strings(map, key, &expand),
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
    let (transport, shown) = match (kind, entry.get("command"), entry.get("url")) {
        ("" | "stdio" | "local", Some(Value::String(command)), _) => {
            let args = raw_strings("args")?;
            let shown = std::iter::once(command.as_str()).chain(args.iter().copied()).map(quoted).collect::<Vec<_>>();
            let transport = Transport::Stdio {
                command: expand(command)?,
                args: args.into_iter().map(&expand).collect::<Result<_, _>>()?,
                env: table("env")?,
                cwd: entry.get("cwd").and_then(Value::as_str).map(|cwd| workspace.join(cwd)),
            };
            (transport, shown.join(" "))
        }
        ("" | "http" | "streamable-http", _, Some(Value::String(url))) => {
            (Transport::Http { url: expand(url)?, headers: table("headers")? }, url.clone())
        }
        ("sse", _, _) => return Err("the legacy SSE transport is not supported; use streamable HTTP".into()),
        _ => return Err("needs `command` (stdio) or `url` (http)".into()),
    };
    Ok(Server {
        name: name.to_owned(),
        transport,
        timeout,
        source: source.to_path_buf(),
        from_workspace: false,
        shown,
        expanded: expanded.into_inner(),
    })
}

/// A word of a command line as a shell would need it written.
fn quoted(word: &str) -> String {
    let plain = !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:=@%+,${}".contains(c));
    if plain { word.to_owned() } else { format!("'{}'", word.replace('\'', "'\\''")) }
}

fn map_strings(
    map: &Map<String, Value>,
    key: &str,
    expand: &dyn Fn(&str) -> Result<String, String>,
) -> Result<BTreeMap<String, String>, String> {
    map.iter()
        .map(|(k, v)| match v {
            Value::String(s) => Ok((k.clone(), expand(s)?)),
            _ => Err(format!("`{key}.{k}` must be a string")),
        })
        .collect()
}

/// Expands `${env:NAME}`, `${NAME}` and `$NAME`. An unset `${env:NAME}` is an error naming it
/// (never a value: no secret is echoed); an unset `$NAME` or `${NAME}` stays as written, so
/// shell text such as `sh -c 'echo $$'` passes through.
#[cfg(test)]
pub(crate) fn expand(text: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    expand_into(text, lookup, &mut Vec::new())
}

/// [`expand`], noting in `expanded` each value put in, with the text that named it.
fn expand_into(
    text: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
    expanded: &mut Vec<(String, String)>,
) -> Result<String, String> {
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
            Some(value) => {
                out.push_str(&value);
                expanded.push((rest[at..=at + consumed].to_owned(), value));
            }
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

    /// Approves every workspace config file as it is now.
    fn trusting(ws: &Path) -> Approved {
        let mut approved = Approved::default();
        for rel in WORKSPACE_FILES {
            if let Ok(content) = std::fs::read(ws.join(rel)) {
                approved.approve(rel, &content);
            }
        }
        approved
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
        let trust = trusting(ws);
        let Loaded { servers, problems, .. } = load(ws, None, &trust, &env);
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
