//! The files every agent keeps its MCP servers in, and each one's way of writing them
//! ([`Dialect`]), read into the editors' form (`{"mcpServers": {NAME: ENTRY}}`) that the rest of
//! the loader, `codeact trust` and its approvals work on. Only the keys that reach a server are
//! carried over, so an agent's own settings beside them (a theme, a model) neither reach codeact
//! nor ask for trust again when they change.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::entry::Fault;
use super::expand::Syntax;
use crate::dirs::AgentMcp;
use crate::trust::quote::quote;

/// How one agent writes its MCP servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// `mcpServers` or `servers`, in JSON: Claude Code's `.mcp.json`, VS Code, Copilot CLI,
    /// Cursor. Read as it is.
    Editor,
    /// Claude Code's `~/.claude.json`: `mcpServers` for every project, and
    /// `projects[PATH].mcpServers` for the one at `PATH`, which wins.
    ClaudeUser,
    /// Gemini CLI's and Qwen Code's `settings.json`, with comments: `httpUrl` for streamable
    /// HTTP (a bare `url` is SSE unless `"type": "http"`), `includeTools`, `excludeTools`,
    /// `timeout` in milliseconds, and the top-level `mcp.allowed` and `mcp.excluded` lists.
    Gemini,
    /// Codex CLI's `config.toml`: `[mcp_servers.NAME]` with `enabled`, `env_vars`,
    /// `bearer_token_env_var`, `http_headers`, `env_http_headers`, `enabled_tools`,
    /// `disabled_tools`, `tool_timeout_sec`. Codex expands no variables in them.
    Codex,
    /// OpenCode's `opencode.json(c)`: `mcp` with `{"type": "local", "command": [...],
    /// "environment"}` or `{"type": "remote", "url", "headers"}`, `enabled`, `timeout` in
    /// milliseconds, and `{env:NAME}` in its strings.
    OpenCode,
}

/// One file that may configure MCP servers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Source {
    pub(crate) path: PathBuf,
    /// Relative to the workspace for a workspace file, which needs the user's trust.
    pub(crate) rel: Option<&'static str>,
    pub(crate) dialect: Dialect,
}

/// The workspace's config files, relative to it, highest precedence first.
pub(crate) const WORKSPACE_SOURCES: [(&str, Dialect); 9] = [
    (".mcp.json", Dialect::Editor),
    (".vscode/mcp.json", Dialect::Editor),
    (".github/copilot/mcp.json", Dialect::Editor),
    (".cursor/mcp.json", Dialect::Editor),
    (".gemini/settings.json", Dialect::Gemini),
    (".qwen/settings.json", Dialect::Gemini),
    (".codex/config.toml", Dialect::Codex),
    ("opencode.json", Dialect::OpenCode),
    ("opencode.jsonc", Dialect::OpenCode),
];

/// The files `codeact setup AGENT --gateway` moves an agent's own servers into, by agent, each
/// in its agent's form: relative to a project for a project's servers, and beneath codeact's
/// config folder (without `.codeact/`) for the user's. Read before the agents' files.
pub(crate) const GATEWAY_FILES: [(&str, &str, Dialect); 8] = [
    ("copilot", ".codeact/mcp/copilot.json", Dialect::Editor),
    ("claude", ".codeact/mcp/claude.json", Dialect::Editor),
    ("codex", ".codeact/mcp/codex.toml", Dialect::Codex),
    ("gemini", ".codeact/mcp/gemini.json", Dialect::Gemini),
    ("qwen", ".codeact/mcp/qwen.json", Dialect::Gemini),
    ("opencode", ".codeact/mcp/opencode.json", Dialect::OpenCode),
    ("cursor", ".codeact/mcp/cursor.json", Dialect::Editor),
    ("vscode", ".codeact/mcp/vscode.json", Dialect::Editor),
];

/// The gateway file of the agent `id` ([`GATEWAY_FILES`]): relative to a project, and relative
/// to codeact's config folder.
#[must_use]
pub(crate) fn gateway_file(id: &str) -> Option<(&'static str, &'static str)> {
    let (_, rel, _) = GATEWAY_FILES.iter().find(|(agent, _, _)| *agent == id)?;
    Some((rel, rel.strip_prefix(".codeact/").unwrap_or(rel)))
}

/// The workspace's files in the editors' own form, which `codeact check` checks.
pub(crate) const WORKSPACE_FILES: [&str; 4] =
    [".mcp.json", ".vscode/mcp.json", ".github/copilot/mcp.json", ".cursor/mcp.json"];

impl Source {
    /// Each of the workspace's files: the gateway files, then the agents' own.
    #[must_use]
    pub(crate) fn workspace(workspace: &Path) -> Vec<Self> {
        let gateway = GATEWAY_FILES.iter().map(|(_, rel, dialect)| (rel, dialect));
        gateway
            .chain(WORKSPACE_SOURCES.iter().map(|(rel, dialect)| (rel, dialect)))
            .map(|(rel, dialect)| Self { path: workspace.join(rel), rel: Some(rel), dialect: *dialect })
            .collect()
    }

    /// The user's own files: the gateway files beneath codeact's config folder `codeact`, then
    /// each agent's, in this order: Copilot CLI (`$COPILOT_HOME`, else
    /// `~/.copilot`), Claude Code, Codex CLI (`$CODEX_HOME`, else `~/.codex`), Gemini CLI
    /// (`$GEMINI_CLI_HOME`, else the home folder), Qwen Code (`$QWEN_HOME`, else `~/.qwen`),
    /// Cursor, OpenCode (under `$XDG_CONFIG_HOME`, else `~/.config`, on every system as
    /// OpenCode has it). `lookup` reads the environment; with no home folder, only what a
    /// variable names is read.
    #[must_use]
    pub(crate) fn user(lookup: &dyn Fn(&str) -> Option<String>, codeact: Option<&Path>) -> Vec<Self> {
        let gateway = GATEWAY_FILES.iter().filter_map(|(id, _, dialect)| {
            Some(Self { path: codeact?.join(gateway_file(id)?.1), rel: None, dialect: *dialect })
        });
        let agents = crate::dirs::agent_mcp_files(lookup).into_iter().map(|(agent, path)| {
            let dialect = match agent {
                AgentMcp::Copilot | AgentMcp::Cursor => Dialect::Editor,
                AgentMcp::Claude => Dialect::ClaudeUser,
                AgentMcp::Codex => Dialect::Codex,
                AgentMcp::Gemini | AgentMcp::Qwen => Dialect::Gemini,
                AgentMcp::OpenCode => Dialect::OpenCode,
            };
            Self { path, rel: None, dialect }
        });
        gateway.chain(agents).collect()
    }
}

impl Dialect {
    /// The largest file of this form that is read: Claude Code keeps its history beside its
    /// servers in `~/.claude.json`.
    #[must_use]
    pub(crate) fn max_bytes(self) -> u64 {
        match self {
            Self::ClaudeUser => 64 * 1024 * 1024,
            _ => crate::bounded::MAX_FILE_BYTES,
        }
    }

    /// How the values of its entries name variables.
    #[must_use]
    pub(crate) fn syntax(self) -> Syntax {
        match self {
            Self::Editor | Self::ClaudeUser | Self::Gemini => Syntax::Editor,
            // Codex expands nothing, and OpenCode's `{env:NAME}` became `${env:NAME:-}`: only
            // what the conversion wrote is expanded.
            Self::Codex | Self::OpenCode => Syntax::EnvOnly,
        }
    }

    /// The file's servers as an editor writes them, for the project at `workspace` (which
    /// picks Claude Code's entries for it). An editor's file is given back as it is; a file of
    /// another agent that names no server gives `None`. What comes out depends on the file
    /// alone, never on the environment, so that an approval of it holds while the file does.
    pub(crate) fn canonical(self, content: &[u8], workspace: &Path) -> Result<Option<Vec<u8>>, Fault> {
        let servers = match self {
            Self::Editor => return Ok(Some(content.to_vec())),
            Self::ClaudeUser => claude_user(&json_file(content, false)?, workspace)?,
            Self::Gemini => gemini(&json_file(content, true)?)?,
            Self::Codex => codex(&toml_file(content)?)?,
            Self::OpenCode => opencode(&json_file(content, true)?)?,
        };
        let Some(servers) = servers else { return Ok(None) };
        let canonical = json!({ "mcpServers": servers });
        Ok(Some(serde_json::to_vec_pretty(&canonical).unwrap_or_default()))
    }
}

type Servers = Option<Map<String, Value>>;

fn json_file(content: &[u8], comments: bool) -> Result<Map<String, Value>, Fault> {
    let text = std::str::from_utf8(content).map_err(|_| Fault::new("mcp-json-invalid", "the file is not UTF-8"))?;
    let invalid = |err: &dyn std::fmt::Display| Fault::new("mcp-json-invalid", quote(&format!("invalid JSON: {err}")));
    let parsed: Value = if comments {
        jsonc_parser::parse_to_serde_value(text, &jsonc_parser::ParseOptions::default()).map_err(|err| invalid(&err))?
    } else {
        serde_json::from_str(text).map_err(|err| invalid(&err))?
    };
    match parsed {
        Value::Object(top) => Ok(top),
        Value::Null => Ok(Map::new()),
        _ => Err(Fault::new("mcp-not-object", "the file is not a JSON object")),
    }
}

fn toml_file(content: &[u8]) -> Result<Map<String, Value>, Fault> {
    let text = std::str::from_utf8(content).map_err(|_| Fault::new("mcp-toml-invalid", "the file is not UTF-8"))?;
    toml_edit::de::from_str(text).map_err(|err| {
        // Where, and the parser's words: never the file's text, which may be anything a link
        // led to.
        let at = err.span().map_or(0, |span| span.start).min(text.len());
        let before = &text[..(0..=at).rev().find(|at| text.is_char_boundary(*at)).unwrap_or(0)];
        let line = before.lines().count().max(1) + usize::from(before.ends_with('\n'));
        let column = before.len() - before.rfind('\n').map_or(0, |newline| newline + 1) + 1;
        let message = quote(err.message().trim()).into_owned();
        Fault::new("mcp-toml-invalid", format!("invalid TOML at line {line} column {column}: {message}"))
    })
}

/// The object of servers at `key`, `None` when there is no such key.
fn servers_at<'a>(top: &'a Map<String, Value>, key: &str) -> Result<Option<&'a Map<String, Value>>, Fault> {
    match top.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(servers)) => Ok(Some(servers)),
        Some(_) => Err(Fault::new("mcp-servers-invalid", format!("`{key}` must be an object of servers by name"))),
    }
}

/// Every server an entry's fields say, as an editor writes it: the keys of `map` renamed by
/// `keys` (`(theirs, ours)`), the others dropped.
fn renamed(entry: &Map<String, Value>, keys: &[(&str, &str)]) -> Map<String, Value> {
    keys.iter().filter_map(|(theirs, ours)| Some(((*ours).to_owned(), entry.get(*theirs)?.clone()))).collect()
}

fn claude_user(top: &Map<String, Value>, workspace: &Path) -> Result<Servers, Fault> {
    let project = match top.get("projects").and_then(|projects| projects.get(workspace.to_string_lossy().as_ref())) {
        Some(Value::Object(project)) => servers_at(project, "mcpServers")?,
        _ => None,
    };
    let everywhere = servers_at(top, "mcpServers")?;
    if project.is_none() && everywhere.is_none() {
        return Ok(None);
    }
    // The project's own entries first: they win a name.
    let mut servers = project.cloned().unwrap_or_default();
    for (name, entry) in everywhere.into_iter().flatten() {
        servers.entry(name.clone()).or_insert_with(|| entry.clone());
    }
    Ok(Some(servers))
}

fn gemini(top: &Map<String, Value>) -> Result<Servers, Fault> {
    let Some(servers) = servers_at(top, "mcpServers")? else { return Ok(None) };
    let (allowed, excluded) = gemini_lists(top);
    Ok(Some(each_entry(servers, |name, entry| {
        let mut ours = renamed(
            entry,
            &[
                ("command", "command"),
                ("args", "args"),
                ("env", "env"),
                ("cwd", "cwd"),
                ("headers", "headers"),
                ("includeTools", "tools"),
                ("excludeTools", "excludeTools"),
            ],
        );
        if let Some(url) = entry.get("httpUrl") {
            ours.extend([("type".to_owned(), json!("http")), ("url".to_owned(), url.clone())]);
        } else if let Some(url) = entry.get("url") {
            let kind = entry.get("type").cloned().unwrap_or_else(|| json!("sse"));
            ours.extend([("type".to_owned(), kind), ("url".to_owned(), url.clone())]);
        }
        ours.extend(milliseconds(entry.get("timeout")));
        let off = excluded.iter().any(|n| n == name)
            || allowed.as_ref().is_some_and(|allowed| !allowed.iter().any(|n| n == name));
        if off {
            ours.insert("disabled".to_owned(), json!(true));
        }
        Value::Object(ours)
    })))
}

/// Each of `servers` converted by `convert`, by name; an entry that is not an object is kept as
/// it is, for the loader to refuse.
fn each_entry(
    servers: &Map<String, Value>,
    convert: impl Fn(&str, &Map<String, Value>) -> Value,
) -> Map<String, Value> {
    servers
        .iter()
        .map(|(name, entry)| match entry {
            Value::Object(entry) => (name.clone(), convert(name, entry)),
            other => (name.clone(), other.clone()),
        })
        .collect()
}

/// The top-level keys of Gemini CLI's and Qwen Code's settings that [`gemini_lists`] reads.
pub(crate) const SERVER_LISTS: [&str; 3] = ["mcp", "allowMCPServers", "excludeMCPServers"];

/// The servers Gemini CLI's settings allow (`mcp.allowed`, or the older `allowMCPServers`;
/// `None` for all) and exclude (`mcp.excluded`, `excludeMCPServers`).
pub(crate) fn gemini_lists(top: &Map<String, Value>) -> (Option<Vec<String>>, Vec<String>) {
    let names = |nested: &str, older: &str| -> Option<Vec<String>> {
        let list = top.get("mcp").and_then(|mcp| mcp.get(nested)).or_else(|| top.get(older))?.as_array()?;
        Some(list.iter().filter_map(Value::as_str).map(str::to_owned).collect())
    };
    (names("allowed", "allowMCPServers"), names("excluded", "excludeMCPServers").unwrap_or_default())
}

/// A timeout in milliseconds as ours in seconds; a value that is not a number is carried over
/// as it is, for the entry to be refused.
fn milliseconds(timeout: Option<&Value>) -> Option<(String, Value)> {
    let value = match timeout? {
        Value::Number(ms) => ms.as_f64().map_or(Value::Null, |ms| json!(ms / 1000.0)),
        other => other.clone(),
    };
    Some(("timeout".to_owned(), value))
}

fn codex(top: &Map<String, Value>) -> Result<Servers, Fault> {
    let Some(servers) = servers_at(top, "mcp_servers")? else { return Ok(None) };
    Ok(Some(each_entry(servers, |_, entry| {
        let mut ours = renamed(
            entry,
            &[
                ("command", "command"),
                ("args", "args"),
                ("cwd", "cwd"),
                ("url", "url"),
                ("enabled_tools", "tools"),
                ("disabled_tools", "excludeTools"),
                ("tool_timeout_sec", "timeout"),
            ],
        );
        if entry.contains_key("url") {
            ours.insert("type".to_owned(), json!("http"));
        }
        let mut env = entry.get("env").and_then(Value::as_object).cloned().unwrap_or_default();
        // Only what the conversion writes is expanded: a variable of the environment by name,
        // empty where it is not set.
        let from_env = |var: &str| json!(format!("${{env:{var}:-}}"));
        let passed = entry.get("env_vars").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str);
        for var in passed {
            env.entry(var.to_owned()).or_insert_with(|| from_env(var));
        }
        if !env.is_empty() || entry.contains_key("env") {
            ours.insert("env".to_owned(), Value::Object(env));
        }
        let mut headers = entry.get("http_headers").and_then(Value::as_object).cloned().unwrap_or_default();
        for (header, var) in entry.get("env_http_headers").and_then(Value::as_object).into_iter().flatten() {
            if let Some(var) = var.as_str() {
                headers.insert(header.clone(), from_env(var));
            }
        }
        if let Some(var) = entry.get("bearer_token_env_var").and_then(Value::as_str) {
            headers.insert("Authorization".to_owned(), json!(format!("Bearer ${{env:{var}:-}}")));
        }
        if !headers.is_empty() {
            ours.insert("headers".to_owned(), Value::Object(headers));
        }
        match entry.get("enabled") {
            Some(Value::Bool(enabled)) => {
                ours.insert("disabled".to_owned(), json!(!enabled));
            }
            Some(other) => {
                ours.insert("disabled".to_owned(), other.clone());
            }
            None => {}
        }
        Value::Object(ours)
    })))
}

fn opencode(top: &Map<String, Value>) -> Result<Servers, Fault> {
    let Some(servers) = servers_at(top, "mcp")? else { return Ok(None) };
    let mut converted = Map::new();
    for (name, entry) in servers {
        let Value::Object(entry) = entry else {
            converted.insert(name.clone(), entry.clone());
            continue;
        };
        let mut ours = renamed(entry, &[("type", "type"), ("url", "url"), ("headers", "headers"), ("cwd", "cwd")]);
        if entry.get("type") == Some(&json!("remote")) {
            ours.insert("type".to_owned(), json!("http"));
        }
        match entry.get("command") {
            Some(Value::Array(line)) if !line.is_empty() => {
                ours.insert("command".to_owned(), line[0].clone());
                ours.insert("args".to_owned(), Value::Array(line[1..].to_vec()));
            }
            Some(other) if !other.is_array() => {
                ours.insert("command".to_owned(), other.clone());
            }
            _ => {}
        }
        if let Some(environment) = entry.get("environment") {
            ours.insert("env".to_owned(), environment.clone());
        }
        if ours_disabled(entry) {
            ours.insert("disabled".to_owned(), json!(true));
        }
        ours.extend(milliseconds(entry.get("timeout")));
        let ours = opencode_variables(Value::Object(ours))
            .unwrap_or_else(|fault| json!({ UNSUPPORTED: fault.message, "disabled": ours_disabled(entry) }));
        converted.insert(name.clone(), ours);
    }
    Ok(Some(converted))
}

/// The key of a converted entry that cannot be used, with why: the entry is reported as a
/// problem ([`entry`](super::entry::entry)) while the rest of its file is read.
pub(crate) const UNSUPPORTED: &str = "x-codeact-unsupported";

/// Whether an OpenCode entry is switched off (`"enabled": false`).
fn ours_disabled(entry: &Map<String, Value>) -> bool {
    entry.get("enabled") == Some(&Value::Bool(false))
}

/// OpenCode's `{env:NAME}` as ours (an unset one is empty, as in OpenCode); its `{file:PATH}`
/// is refused, since codeact reads no file a config names but an `envFile`.
fn opencode_variables(value: Value) -> Result<Value, Fault> {
    Ok(match value {
        Value::String(text) => {
            if text.contains("{file:") {
                return Err(Fault::new(
                    "mcp-variable-unsupported",
                    "OpenCode's `{file:…}` is not supported: put the value in an environment variable and write \
                     `{env:NAME}`",
                ));
            }
            Value::String(env_references(&text))
        }
        Value::Array(items) => Value::Array(items.into_iter().map(opencode_variables).collect::<Result<_, _>>()?),
        Value::Object(map) => {
            Value::Object(map.into_iter().map(|(k, v)| Ok((k, opencode_variables(v)?))).collect::<Result<_, Fault>>()?)
        }
        other => other,
    })
}

/// `text` with each `{env:NAME}` written `${env:NAME:-}`.
fn env_references(text: &str) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("{env:") {
        let after = &rest[at + "{env:".len()..];
        let Some(end) = after.find('}') else { break };
        let name = &after[..end];
        let preceded_by_dollar = rest[..at].ends_with('$');
        out.push_str(&rest[..at]);
        if preceded_by_dollar || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            out.push_str(&rest[at..=at + "{env:".len() + end]);
        } else {
            let _ = write!(out, "${{env:{name}:-}}");
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::time::Duration;

    use pretty_assertions::assert_eq;

    use super::super::entry::{Server, Transport};
    use super::super::fixtures::{env, messages, trusting};
    use super::super::load::{Configured, load};
    use super::*;
    use crate::trust::Approved;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// The user's files of a home at `home`, as `Source::user` finds them there.
    fn users(home: &Path) -> Vec<Source> {
        let home = home.display().to_string();
        Source::user(&move |name| (name == "HOME").then(|| home.clone()), None)
    }

    fn by_name<'a>(loaded: &'a Configured, name: &str) -> &'a Server {
        loaded.servers.iter().find(|s| s.name == name).unwrap_or_else(|| panic!("no `{name}` in {loaded:?}"))
    }

    fn stdio(server: &Server) -> (&str, Vec<&str>, &BTreeMap<String, String>) {
        let Transport::Stdio { command, args, env, .. } = &server.transport else { panic!("not stdio: {server:?}") };
        (command, args.iter().map(String::as_str).collect(), env)
    }

    fn http(server: &Server) -> (&str, &BTreeMap<String, String>) {
        let Transport::Http { url, headers } = &server.transport else { panic!("not http: {server:?}") };
        (url, headers)
    }

    #[test]
    #[expect(clippy::too_many_lines, reason = "one file of each agent, read together as they are found")]
    fn each_agents_user_file_is_read_in_its_own_form() {
        let temp = tempfile::tempdir().unwrap();
        let (home, ws) = (temp.path().join("home"), temp.path().join("ws"));
        std::fs::create_dir_all(&ws).unwrap();
        write(
            &home.join(".codex/config.toml"),
            r#"
model = "o3"
[mcp_servers.codex-stdio]
command = "srv"
args = ["--price", "$5", "${HOME}"]
env_vars = ["TOKEN", "UNSET"]
enabled_tools = ["a", "b"]
disabled_tools = ["b"]
tool_timeout_sec = 30

[mcp_servers.codex-http]
url = "https://example.com/mcp"
bearer_token_env_var = "TOKEN"
http_headers = { "X-Plain" = "$TOKEN" }
env_http_headers = { "X-Secret" = "SECRET" }

[mcp_servers.codex-off]
command = "off"
enabled = false
"#,
        );
        write(
            &home.join(".gemini/settings.json"),
            r#"{
  // the user's own settings stay theirs
  "theme": "dark",
  "mcp": {"excluded": ["gemini-excluded"]},
  "mcpServers": {
    "gemini-http": {"httpUrl": "https://example.com/g", "headers": {"A": "${TOKEN}"}, "timeout": 2500,
                    "includeTools": ["x"], "excludeTools": ["y"], "trust": true},
    "gemini-sse": {"url": "https://example.com/sse"},
    "gemini-typed": {"url": "https://example.com/t", "type": "http"},
    "gemini-excluded": {"command": "never"},
  },
}"#,
        );
        write(&home.join(".qwen/settings.json"), r#"{"mcpServers": {"qwen": {"command": "q", "args": ["$TOKEN"]}}}"#);
        write(
            &home.join(".cursor/mcp.json"),
            r#"{"mcpServers": {"cursor": {"command": "c", "env": {"T": "${env:TOKEN}"}}}}"#,
        );
        write(
            &home.join(".config/opencode/opencode.jsonc"),
            r#"{
  "$schema": "https://opencode.ai/config.json",
  "mcp": {
    "oc-local": {"type": "local", "command": ["node", "srv.js", "{env:TOKEN}", "$HOME"], "environment": {"K": "x{env:SECRET}y", "U": "{env:UNSET}"}, "timeout": 9000},
    "oc-remote": {"type": "remote", "url": "https://example.com/oc", "headers": {"Authorization": "Bearer {env:TOKEN}"}},
    "oc-off": {"type": "local", "command": ["off"], "enabled": false},
    "oc-file": {"type": "local", "command": ["x", "{file:~/.secret}"]},
  },
}"#,
        );
        let ws_key = ws.display().to_string();
        write(
            &home.join(".claude.json"),
            &json!({
                "numStartups": 3,
                "mcpServers": {"claude-all": {"command": "all"}, "claude-both": {"command": "everywhere"}},
                "projects": {
                    ws_key: {"mcpServers": {"claude-both": {"command": "this-project"}}},
                    "/elsewhere": {"mcpServers": {"claude-other": {"command": "other"}}},
                },
            })
            .to_string(),
        );
        let loaded = load(&ws, &users(&home), &Approved::default(), &env);

        let codex = by_name(&loaded, "codex-stdio");
        let (command, args, vars) = stdio(codex);
        // Codex expands nothing the user wrote, and passes the named variables that are set.
        assert_eq!((command, args), ("srv", vec!["--price", "$5", "${HOME}"]));
        assert_eq!(vars, &BTreeMap::from([("TOKEN".into(), "t0k".into()), ("UNSET".into(), String::new())]));
        assert_eq!(
            (codex.tools.clone(), codex.excluded.clone()),
            (Some(vec!["a".into(), "b".into()]), vec!["b".into()])
        );
        assert_eq!(codex.timeout, Duration::from_secs(30));
        let (url, headers) = http(by_name(&loaded, "codex-http"));
        assert_eq!(url, "https://example.com/mcp");
        let expected = [("Authorization", "Bearer t0k"), ("X-Plain", "$TOKEN"), ("X-Secret", "s3cret-value")];
        assert_eq!(headers, &expected.map(|(k, v)| (k.to_owned(), v.to_owned())).into_iter().collect());

        let gemini = by_name(&loaded, "gemini-http");
        assert_eq!(http(gemini), ("https://example.com/g", &BTreeMap::from([("A".into(), "t0k".into())])));
        assert_eq!((gemini.tools.clone(), gemini.excluded.clone()), (Some(vec!["x".into()]), vec!["y".into()]));
        assert_eq!(gemini.timeout, Duration::from_millis(2500));
        assert_eq!(http(by_name(&loaded, "gemini-typed")).0, "https://example.com/t");
        assert_eq!(stdio(by_name(&loaded, "qwen")).1, ["t0k"]);
        assert_eq!(stdio(by_name(&loaded, "cursor")).2["T"], "t0k");

        let (command, args, vars) = stdio(by_name(&loaded, "oc-local"));
        assert_eq!((command, args), ("node", vec!["srv.js", "t0k", "$HOME"]));
        assert_eq!(vars, &BTreeMap::from([("K".into(), "xs3cret-valuey".into()), ("U".into(), String::new())]));
        assert_eq!(by_name(&loaded, "oc-local").timeout, Duration::from_secs(9));
        assert_eq!(http(by_name(&loaded, "oc-remote")).1["Authorization"], "Bearer t0k");

        // Claude Code's entry for this project wins over its entry for every project, and
        // another project's is not read.
        assert_eq!(stdio(by_name(&loaded, "claude-both")).0, "this-project");
        assert_eq!(stdio(by_name(&loaded, "claude-all")).0, "all");
        assert!(loaded.servers.iter().all(|s| s.name != "claude-other"));

        let mut disabled = loaded.disabled.clone();
        disabled.sort();
        assert_eq!(disabled, ["codex-off", "gemini-excluded", "oc-off"]);
        let mut problems = messages(&loaded);
        problems.sort_unstable();
        assert_eq!(
            problems,
            [
                (
                    "gemini-sse",
                    "the legacy SSE transport (`\"type\": \"sse\"`) is not supported; use streamable HTTP \
                     (`\"type\": \"http\"`)"
                ),
                (
                    "oc-file",
                    "OpenCode's `{file:…}` is not supported: put the value in an environment variable and write \
                     `{env:NAME}`"
                ),
            ]
        );
    }

    #[test]
    fn without_a_home_only_the_files_variables_name_are_read() {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path();
        let under = |name: &str| root.join(name).display().to_string();
        let sources = Source::user(
            &|name| match name {
                "CODEX_HOME" => Some(under("c")),
                "QWEN_HOME" => Some(under("q")),
                "XDG_CONFIG_HOME" => Some(under("x")),
                "HOME" => Some(String::new()),
                _ => None,
            },
            None,
        );
        let paths: Vec<PathBuf> = sources.into_iter().map(|source| source.path).collect();
        let expected = ["c/config.toml", "q/settings.json", "x/opencode/opencode.json", "x/opencode/opencode.jsonc"];
        assert_eq!(paths, expected.map(|path| root.join(path)));
    }

    #[test]
    fn another_agents_workspace_file_needs_trust_in_its_servers_not_its_other_settings() {
        let temp = tempfile::tempdir().unwrap();
        let ws = temp.path();
        let settings = |theme: &str, command: &str| {
            format!(
                "{{\n  \"theme\": \"{theme}\", // mine\n  \"mcpServers\": {{\"g\": {{\"command\": \"{command}\"}}}}\n}}"
            )
        };
        write(&ws.join(".gemini/settings.json"), &settings("dark", "one"));
        write(&ws.join(".codex/config.toml"), "[mcp_servers.c]\ncommand = \"two\"\n");
        write(&ws.join("opencode.json"), r#"{"mcp": {"o": {"type": "local", "command": ["three"]}}}"#);
        write(&ws.join(".qwen/settings.json"), r#"{"mcpServers": {"q": {"command": "four"}}}"#);
        write(&ws.join(".cursor/mcp.json"), r#"{"mcpServers": {"cu": {"command": "five"}}}"#);
        let untrusted = load(ws, &[], &Approved::default(), &env);
        assert_eq!(untrusted.servers, []);
        let expected =
            [".cursor/mcp.json", ".gemini/settings.json", ".qwen/settings.json", ".codex/config.toml", "opencode.json"];
        assert_eq!(untrusted.untrusted, expected);
        let trust = trusting(ws);
        let names = |loaded: &Configured| loaded.servers.iter().map(|s| s.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(&load(ws, &[], &trust, &env)), ["cu", "g", "q", "c", "o"]);
        // A setting beside the servers changes nothing; a changed server asks again.
        write(&ws.join(".gemini/settings.json"), &settings("light", "one"));
        assert_eq!(names(&load(ws, &[], &trust, &env)), ["cu", "g", "q", "c", "o"]);
        write(&ws.join(".gemini/settings.json"), &settings("light", "evil"));
        let loaded = load(ws, &[], &trust, &env);
        assert_eq!(names(&loaded), ["cu", "q", "c", "o"]);
        assert_eq!(loaded.untrusted, [".gemini/settings.json"]);
    }

    #[test]
    fn codeacts_own_server_is_never_started_and_a_nested_codeact_reads_none() {
        let temp = tempfile::tempdir().unwrap();
        let home = temp.path().join("home");
        let ws = temp.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        write(
            &home.join(".codex/config.toml"),
            r#"
[mcp_servers.codeact]
url = "http://127.0.0.1:8765/mcp"
[mcp_servers.renamed]
command = "/opt/bin/codeact.exe"
args = ["--quiet", "mcp", "serve", "--text-only"]
[mcp_servers.renamed-run]
command = "/opt/bin/CodeAct"
args = ["run"]
[mcp_servers.other]
command = "codeact-helper"
args = ["mcp", "serve"]
"#,
        );
        let loaded = load(&ws, &users(&home), &Approved::default(), &env);
        let names: Vec<&str> = loaded.servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["renamed-run", "other"]);
        let nested = |name: &str| if name == crate::env::NESTED { Some("1".into()) } else { env(name) };
        assert_eq!(load(&ws, &users(&home), &Approved::default(), &nested).servers, []);
    }

    #[test]
    fn a_broken_file_of_another_agent_is_one_problem_naming_it() {
        let temp = tempfile::tempdir().unwrap();
        let home = temp.path().join("home");
        write(&home.join(".codex/config.toml"), "[mcp_servers\n");
        write(&home.join(".gemini/settings.json"), r#"{"mcpServers": []}"#);
        write(&home.join(".config/opencode/opencode.json"), "[1]");
        let ws = temp.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        let loaded = load(&ws, &users(&home), &Approved::default(), &env);
        let problems: Vec<(PathBuf, &str)> = loaded
            .problems
            .iter()
            .map(|p| (p.source.strip_prefix(&home).unwrap().to_path_buf(), p.message.split(':').next().unwrap()))
            .collect();
        let expected = [
            (".codex/config.toml", "invalid TOML at line 1 column 13"),
            (".gemini/settings.json", "`mcpServers` must be an object of servers by name"),
            (".config/opencode/opencode.json", "the file is not a JSON object"),
        ];
        assert_eq!(problems, expected.map(|(path, message)| (PathBuf::from(path), message)));
    }

    #[test]
    #[cfg(unix)]
    fn a_workspace_file_that_leads_out_is_never_read_and_no_message_quotes_a_file() {
        let temp = tempfile::tempdir().unwrap();
        let (ws, outside) = (temp.path().join("ws"), temp.path().join("secret"));
        write(&outside, "https://alice:ghp_SECRET123@github.com\n");
        std::fs::create_dir_all(ws.join(".codex")).unwrap();
        std::os::unix::fs::symlink(&outside, ws.join(".codex/config.toml")).unwrap();
        std::os::unix::fs::symlink(&outside, ws.join("opencode.json")).unwrap();
        // Never approved: untrusted, and not a problem to show.
        let loaded = load(&ws, &[], &Approved::default(), &env);
        assert_eq!((loaded.untrusted.len(), loaded.problems.len()), (2, 0), "{loaded:?}");
        // Approved once, then a link: refused unread.
        let mut trust = Approved::default();
        trust.approve(".codex/config.toml", b"anything");
        let loaded = load(&ws, &[], &trust, &env);
        let said = format!("{:?}", loaded.problems);
        assert!(said.contains("leads out of the workspace") && !said.contains("SECRET"), "{said}");
        // A broken file of the user's own is named by line and column, never quoted.
        let home = temp.path().join("home");
        write(&home.join(".codex/config.toml"), "model = \"o3\"\nhttps://alice:ghp_SECRET123@github.com\n");
        let loaded = load(&ws, &users(&home), &Approved::default(), &env);
        let said = format!("{:?}", loaded.problems);
        assert!(said.contains("invalid TOML at line 2 column ") && !said.contains("SECRET"), "{said}");
    }

    #[test]
    fn an_agents_home_in_the_workspace_is_read_only_as_the_workspaces_trusted_file() {
        let temp = tempfile::tempdir().unwrap();
        let ws = temp.path().join("ws");
        write(&ws.join(".codex/config.toml"), "[mcp_servers.evil]\ncommand = \"evil\"\n");
        write(&ws.join("opencode/opencode.json"), r#"{"mcp": {"evil2": {"type": "local", "command": ["evil"]}}}"#);
        let ws_text = ws.display().to_string();
        for (name, value) in [("CODEX_HOME", format!("{ws_text}/.codex")), ("XDG_CONFIG_HOME", ws_text.clone())] {
            let users = Source::user(&|var| (var == name).then(|| value.clone()), None);
            let loaded = load(&ws, &users, &Approved::default(), &env);
            assert_eq!(loaded.servers, [], "{name}");
        }
        // A relative home is no folder of the user's at all.
        assert_eq!(Source::user(&|var| (var == "CODEX_HOME").then(|| ".codex".to_owned()), None), []);
        // Other agents' variables name their files too.
        let named = |var: &str, value: &str| -> Vec<PathBuf> {
            let value = value.to_owned();
            let var = var.to_owned();
            Source::user(&move |name| (name == var).then(|| value.clone()), None).into_iter().map(|s| s.path).collect()
        };
        let at = |path: &str| temp.path().join(path);
        assert_eq!(named("CLAUDE_CONFIG_DIR", &at("c").display().to_string()), [at("c").join(".claude.json")]);
        assert_eq!(named("OPENCODE_CONFIG", &at("o/my.json").display().to_string()), [at("o/my.json")]);
    }

    #[test]
    fn a_problem_is_said_on_one_line_whatever_its_file_holds() {
        let bad = super::super::load::BadEntry {
            name: "ok\nwarning: all servers verified\u{202e}".into(),
            source: PathBuf::from("/ws/.mcp.json"),
            message: "`K\u{1b}[2J\nFORGED` must be a string".into(),
        };
        let said = bad.describe(Path::new("/ws"));
        assert!(!said.contains('\n') && !said.contains('\u{1b}') && !said.contains('\u{202e}'), "{said}");
    }
}
