//! One server entry of a config file, read into a [`Server`]: its transport (`command`, `args`,
//! `env`, `cwd` and `envFile` for stdio; `url` and `headers` for HTTP), `timeout`, `disabled`,
//! Copilot CLI's `tools` allow-list and the `excludeTools` deny-list. Both the `servers` and `mcpServers` spellings are read;
//! keys other tools use are ignored, since these files are shared with them. What is wrong is a
//! [`Fault`] with a stable rule id, as `codeact check` reports it.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};

use super::env_file::env_file;
use super::expand::{Vars, expand_into};
use crate::trust::quote::{quote, shell_word};

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
    /// The tools it may offer (Copilot CLI's `tools`); `None` for every tool (no list, or `"*"`).
    pub(crate) tools: Option<Vec<String>>,
    /// The tools it must not offer (Gemini CLI's `excludeTools`, Codex CLI's `disabled_tools`).
    pub(crate) excluded: Vec<String>,
    /// Each expanded variable's value, with the text that names it.
    pub(super) expanded: Vec<(String, String)>,
}

/// Why a config file or one of its entries cannot be used, as `codeact check` reports it: a
/// stable rule id and a message (which names variables, never their values).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fault {
    pub(crate) rule: &'static str,
    pub(crate) message: String,
}

impl Fault {
    pub(super) fn new(rule: &'static str, message: impl Into<String>) -> Self {
        Self { rule, message: message.into() }
    }

    /// An entry whose keys are not what they must be.
    pub(super) fn invalid(message: impl Into<String>) -> Self {
        Self::new("mcp-entry-invalid", message)
    }
}

/// One entry of a config file, as far as it can be used.
#[derive(Debug)]
pub(crate) enum ServerEntry {
    Server(Box<Server>),
    /// `"disabled": true`: not started, though it takes its name.
    Disabled,
}

/// The server entries of a config file, by name, in file order.
pub(super) fn entries(content: &[u8]) -> Result<Vec<(String, Value)>, Fault> {
    let parsed: Value = serde_json::from_slice(content)
        .map_err(|err| Fault::new("mcp-json-invalid", format!("invalid JSON: {err}")))?;
    Ok(servers_of(&parsed)?.map(|(_, entries)| entries).unwrap_or_default())
}

/// The key that holds a config file's server entries, and the entries by name in file order.
pub(crate) type Servers = (&'static str, Vec<(String, Value)>);

/// The server entries of a parsed config file, under `mcpServers`, else `servers`; `None` when
/// there is neither key.
pub(crate) fn servers_of(parsed: &Value) -> Result<Option<Servers>, Fault> {
    let top = parsed.as_object().ok_or_else(|| Fault::new("mcp-not-object", "the file is not a JSON object"))?;
    let Some((key, entries)) = ["mcpServers", "servers"].into_iter().find_map(|key| Some((key, top.get(key)?))) else {
        return Ok(None);
    };
    let entries = entries
        .as_object()
        .ok_or_else(|| Fault::new("mcp-servers-invalid", format!("`{key}` must be an object of servers by name")))?;
    Ok(Some((key, entries.iter().map(|(name, entry)| (name.clone(), entry.clone())).collect())))
}

/// One entry, read for `vars`' mode.
pub(crate) fn entry(name: &str, entry: &Value, source: &Path, vars: &Vars<'_>) -> Result<ServerEntry, Fault> {
    if disabled(entry)? {
        return Ok(ServerEntry::Disabled);
    }
    server(name, entry, source, vars).map(|server| ServerEntry::Server(Box::new(server)))
}

/// Whether an entry says `"disabled": true`.
pub(super) fn disabled(entry: &Value) -> Result<bool, Fault> {
    match entry.get("disabled") {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(disabled)) => Ok(*disabled),
        Some(_) => Err(Fault::invalid("`disabled` must be `true` or `false`")),
    }
}

pub(super) fn server(name: &str, entry: &Value, source: &Path, vars: &Vars<'_>) -> Result<Server, Fault> {
    let entry = entry.as_object().ok_or_else(|| Fault::invalid("the entry is not an object"))?;
    if let Some(why) = entry.get(super::sources::UNSUPPORTED).and_then(Value::as_str) {
        return Err(Fault::new("mcp-entry-unsupported", why));
    }
    let expanded = RefCell::new(Vec::new());
    let expand = |text: &str| expand_into(text, vars, &mut expanded.borrow_mut());
    let string = |key: &str| -> Result<Option<&str>, Fault> {
        match entry.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => Ok(Some(text)),
            Some(_) => Err(Fault::invalid(format!("`{key}` must be a string"))),
        }
    };
    let strings = |key: &str| -> Result<Option<Vec<&str>>, Fault> {
        let wrong = || Fault::invalid(format!("`{key}` must be a list of strings"));
        match entry.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Array(items)) => {
                items.iter().map(|v| v.as_str().ok_or_else(wrong)).collect::<Result<_, _>>().map(Some)
            }
            Some(_) => Err(wrong()),
        }
    };
    let table = |key: &str| -> Result<BTreeMap<String, String>, Fault> {
        match entry.get(key) {
            None | Some(Value::Null) => Ok(BTreeMap::new()),
            Some(Value::Object(map)) => map_strings(map, key, &expand),
            Some(_) => Err(Fault::invalid(format!("`{key}` must be an object of strings"))),
        }
    };
    let timeout = match entry.get("timeout") {
        None | Some(Value::Null) => DEFAULT_CALL_TIMEOUT,
        Some(value) => value
            .as_f64()
            .filter(|s| *s > 0.0 && *s <= 86_400.0)
            .map(Duration::from_secs_f64)
            .ok_or_else(|| Fault::invalid("`timeout` must be a number of seconds"))?,
    };
    let tools = strings("tools")
        .map_err(|_| Fault::invalid("`tools` must be a list of tool names (`[\"*\"]` for all)"))?
        .filter(|names| !names.contains(&"*"))
        .map(|names| names.into_iter().map(str::to_owned).collect());
    let excluded = strings("excludeTools")?.unwrap_or_default().into_iter().map(str::to_owned).collect();
    let stdio = match string("type")?.unwrap_or("") {
        "stdio" | "local" => true,
        "http" | "streamable-http" => false,
        "sse" => {
            return Err(Fault::new(
                "mcp-transport-unsupported",
                "the legacy SSE transport (`\"type\": \"sse\"`) is not supported; use streamable HTTP \
                 (`\"type\": \"http\"`)",
            ));
        }
        "" if entry.contains_key("command") => true,
        "" if entry.contains_key("url") => false,
        "" => return Err(Fault::invalid("needs `command` (stdio) or `url` (http)")),
        other => {
            return Err(Fault::new(
                "mcp-type-unknown",
                format!("unknown `type` `{other}`: expected `stdio` (or `local`) or `http` (or `streamable-http`)"),
            ));
        }
    };
    let (transport, shown) = if stdio {
        let command = string("command")?.ok_or_else(|| Fault::invalid("a stdio server needs `command`"))?;
        let args = strings("args")?.unwrap_or_default();
        let shown = std::iter::once(command).chain(args.iter().copied()).map(shell_word).collect::<Vec<_>>();
        let command = expand(command)?;
        let args = args.into_iter().map(&expand).collect::<Result<_, _>>()?;
        // The file's variables first, so `env` wins.
        let mut env = match string("envFile")? {
            Some(path) => env_file(path, &expand(path)?, vars, &mut expanded.borrow_mut())?,
            None => BTreeMap::new(),
        };
        env.extend(table("env")?);
        let cwd = string("cwd")?.map(expand).transpose()?.map(|cwd| vars.workspace.join(cwd));
        (Transport::Stdio { command, args, env, cwd }, shown.join(" "))
    } else {
        let url = string("url")?.ok_or_else(|| Fault::invalid("an http server needs `url`"))?;
        (Transport::Http { url: expand(url)?, headers: table("headers")? }, quote(url).into_owned())
    };
    Ok(Server {
        name: name.to_owned(),
        transport,
        timeout,
        source: source.to_path_buf(),
        from_workspace: false,
        shown,
        tools,
        excluded,
        expanded: expanded.into_inner(),
    })
}

impl Server {
    /// Whether this is codeact's own MCP server, as `codeact setup` names it or as a config
    /// starts it (`codeact mcp serve`): never started from codeact, which would start itself.
    #[must_use]
    pub(crate) fn is_codeact(&self) -> bool {
        if self.name == "codeact" {
            return true;
        }
        let Transport::Stdio { command, args, .. } = &self.transport else { return false };
        let stem = Path::new(command).file_stem().map(|stem| stem.to_string_lossy().to_ascii_lowercase());
        stem.as_deref() == Some("codeact") && args.windows(2).any(|pair| pair[0] == "mcp" && pair[1] == "serve")
    }
}

fn map_strings(
    map: &Map<String, Value>,
    key: &str,
    expand: &dyn Fn(&str) -> Result<String, Fault>,
) -> Result<BTreeMap<String, String>, Fault> {
    map.iter()
        .map(|(k, v)| match v {
            Value::String(s) => Ok((k.clone(), expand(s)?)),
            _ => Err(Fault::invalid(format!("`{key}.{k}` must be a string"))),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::super::fixtures::{load_servers, messages, only_server};
    use super::*;

    #[test]
    fn every_field_with_variables_is_expanded() {
        let (temp, loaded) = load_servers(
            &json!({"s": {
                "command": "${workspaceFolder}/bin/server",
                "args": ["--home", "${userHome}", "--mode", "${MODE:-fast}"],
                "env": {"TOKEN": "${env:TOKEN}", "NAME": "${workspaceFolderBasename}"},
                "cwd": "${workspaceFolder}/sub",
            }}),
            &[],
        );
        let ws = temp.path();
        let base = ws.file_name().unwrap().to_string_lossy().into_owned();
        let expected = Transport::Stdio {
            command: format!("{}/bin/server", ws.display()),
            args: ["--home", "/home/u", "--mode", "fast"].map(String::from).to_vec(),
            env: BTreeMap::from([("NAME".into(), base), ("TOKEN".into(), "t0k".into())]),
            cwd: Some(ws.join("sub")),
        };
        let server = only_server(&loaded);
        assert_eq!(server.transport, expected);
        assert_eq!(server.shown, "${workspaceFolder}/bin/server --home ${userHome} --mode ${MODE:-fast}");
        let (_, loaded) = load_servers(
            &json!({"h": {"url": "https://${HOST:-example.com}/mcp", "headers": {"X-Token": "${env:SECRET}"}}}),
            &[],
        );
        let expected = Transport::Http {
            url: "https://example.com/mcp".into(),
            headers: BTreeMap::from([("X-Token".into(), "s3cret-value".into())]),
        };
        assert_eq!(only_server(&loaded).transport, expected);
    }

    #[test]
    fn an_input_variable_makes_the_entry_a_problem() {
        let (_temp, loaded) =
            load_servers(&json!({"a": {"command": "x", "env": {"TOKEN": "${input:tok}"}}, "b": {"command": "y"}}), &[]);
        let names: Vec<&str> = loaded.servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["b"]);
        assert_eq!(
            messages(&loaded),
            [(
                "a",
                "VS Code input variables (`${input:tok}`) are not supported: codeact cannot prompt; put the value in \
                 an environment variable and write `${env:NAME}`"
            )]
        );
    }

    #[test]
    fn the_tools_list_is_kept_and_a_star_means_every_tool() {
        let (_temp, loaded) = load_servers(
            &json!({
                "some": {"command": "x", "tools": ["get_time", "convert"]},
                "all": {"command": "x", "tools": ["*"]},
                "unset": {"command": "x"},
                "bad": {"command": "x", "tools": "get_time"},
                "bad2": {"command": "x", "tools": [1]},
            }),
            &[],
        );
        let tools: Vec<(&str, Option<Vec<String>>)> =
            loaded.servers.iter().map(|s| (s.name.as_str(), s.tools.clone())).collect();
        assert_eq!(tools, [("some", Some(vec!["get_time".into(), "convert".into()])), ("all", None), ("unset", None)]);
        let wrong = "`tools` must be a list of tool names (`[\"*\"]` for all)";
        assert_eq!(messages(&loaded), [("bad", wrong), ("bad2", wrong)]);
    }

    #[test]
    fn an_unknown_or_unsupported_type_is_a_problem_naming_it() {
        let (_temp, loaded) = load_servers(
            &json!({
                "ws": {"type": "websocket", "url": "ws://x"},
                "sse": {"type": "sse", "url": "http://x/sse"},
                "num": {"type": 3, "command": "x"},
                "none": {"args": ["x"]},
                "stdio": {"type": "stdio", "url": "http://x"},
                "local": {"type": "local", "command": "x"},
                "http": {"type": "streamable-http", "url": "http://x"},
            }),
            &[],
        );
        let names: Vec<&str> = loaded.servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["local", "http"]);
        assert_eq!(
            messages(&loaded),
            [
                ("ws", "unknown `type` `websocket`: expected `stdio` (or `local`) or `http` (or `streamable-http`)"),
                (
                    "sse",
                    "the legacy SSE transport (`\"type\": \"sse\"`) is not supported; use streamable HTTP \
                     (`\"type\": \"http\"`)"
                ),
                ("num", "`type` must be a string"),
                ("none", "needs `command` (stdio) or `url` (http)"),
                ("stdio", "a stdio server needs `command`"),
            ]
        );
    }

    #[test]
    fn a_wrong_cwd_is_a_problem_and_a_relative_one_is_in_the_workspace() {
        let (temp, loaded) = load_servers(&json!({"s": {"command": "x", "cwd": "sub"}}), &[]);
        let Transport::Stdio { cwd, .. } = &only_server(&loaded).transport else { panic!("not stdio") };
        assert_eq!(cwd.as_deref(), Some(temp.path().join("sub").as_path()));
        let (_temp, loaded) = load_servers(&json!({"s": {"command": "x", "cwd": 1}}), &[]);
        assert_eq!(messages(&loaded), [("s", "`cwd` must be a string")]);
    }
}
