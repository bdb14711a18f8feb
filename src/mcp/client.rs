//! MCP connections for one run, on the official Rust SDK (`rmcp`): opened on first use, reused
//! for every later call, and closed (children reaped) when the run ends. Every request is cut to
//! the server's per-call timeout and to the run's remaining time. A stdio server gets a small
//! allow-listed environment plus its own `env`; its stderr is kept in a bounded buffer, never
//! mixed into the program's output, and quoted when the server fails.

use std::collections::HashMap;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use serde_json::{Map, Value};
use tokio::io::AsyncReadExt;

use super::config::{BadEntry, Loaded, Server, Transport};
use crate::env;
use crate::tools::network::NetworkPolicy;
use crate::tools::{ErrorKind, ToolError};
use crate::trust::Approved;

/// How long a server that failed its handshake gets for its last stderr to be read.
const STDERR_DRAIN: Duration = Duration::from_millis(500);

/// Bytes of a server's stderr kept (the end matters most).
const MAX_STDERR: usize = 16 * 1024;

type Service = RunningService<RoleClient, ()>;

/// A server that answered, with its tools: `{"name", "description", "input_schema"}` each.
pub(crate) type Listed = (String, Vec<Value>);

/// An open connection.
struct Connection {
    service: Service,
    stderr: Arc<Mutex<String>>,
    tools: Option<Vec<Value>>,
}

/// The run's MCP servers and their connections.
pub(crate) struct Mcp {
    workspace: std::path::PathBuf,
    servers: Vec<Server>,
    problems: Vec<BadEntry>,
    /// The workspace's config files left unread, untrusted.
    untrusted: Vec<String>,
    /// Where a workspace's HTTP server may be.
    network: NetworkPolicy,
    runtime: Option<tokio::runtime::Runtime>,
    open: HashMap<String, Connection>,
    /// Servers that failed in this run, with why; they are not retried.
    failed: HashMap<String, String>,
}

impl std::fmt::Debug for Mcp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mcp")
            .field("servers", &self.servers)
            .field("open", &self.open.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl Mcp {
    /// The servers configured for `workspace` (its own files only as far as `trust` approves
    /// them); a workspace's HTTP server must be where `network` allows.
    #[must_use]
    pub(crate) fn load(
        workspace: &Path,
        copilot_home: Option<&Path>,
        trust: &Approved,
        network: &NetworkPolicy,
    ) -> Self {
        let Loaded { servers, problems, untrusted } =
            super::config::load(workspace, copilot_home, trust, &|name| std::env::var(name).ok());
        Self {
            workspace: workspace.to_path_buf(),
            servers,
            problems,
            untrusted,
            network: network.clone(),
            runtime: None,
            open: HashMap::new(),
            failed: HashMap::new(),
        }
    }

    /// No servers at all.
    #[must_use]
    pub(crate) fn none() -> Self {
        Self {
            workspace: std::path::PathBuf::new(),
            servers: Vec::new(),
            problems: Vec::new(),
            untrusted: Vec::new(),
            network: NetworkPolicy::default(),
            runtime: None,
            open: HashMap::new(),
            failed: HashMap::new(),
        }
    }

    #[must_use]
    pub(crate) fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    /// The workspace's config files left unread because the user does not trust them.
    #[must_use]
    pub(crate) fn untrusted(&self) -> &[String] {
        &self.untrusted
    }

    fn server(&self, name: &str) -> Result<&Server, ToolError> {
        self.servers.iter().find(|s| s.name == name).ok_or_else(|| {
            let names: Vec<&str> = self.servers.iter().map(|s| s.name.as_str()).collect();
            ToolError::value(format!("no MCP server named '{name}' (configured: {})", names.join(", ")))
        })
    }

    /// The tools of `server`: `{"name", "description", "input_schema"}` each.
    pub(crate) fn tools(&mut self, server: &str, deadline: Instant) -> Result<Vec<Value>, ToolError> {
        let timeout = self.timeout(server, deadline)?;
        self.connect(server, deadline)?;
        let runtime = self.runtime.as_ref().ok_or_else(|| ToolError::runtime("the MCP runtime is gone"))?;
        let connection = self.open.get_mut(server).ok_or_else(|| ToolError::runtime("lost the MCP connection"))?;
        if let Some(tools) = &connection.tools {
            return Ok(tools.clone());
        }
        let listed =
            runtime.block_on(async { tokio::time::timeout(timeout, connection.service.list_all_tools()).await });
        let tools = match listed {
            Ok(Ok(tools)) => tools,
            Ok(Err(err)) => {
                let config = self.servers.iter().find(|s| s.name == server);
                let message = format!("could not list tools: {err}");
                return Err(config.map_or_else(
                    || ToolError::runtime(message.clone()),
                    |config| server_failed(config, &message, &connection.stderr),
                ));
            }
            Err(_) => return Err(timed_out(server, "tools/list", timeout)),
        };
        let tools: Vec<Value> = tools
            .iter()
            .map(|tool| {
                let json = serde_json::to_value(tool).unwrap_or(Value::Null);
                let mut entry = Map::new();
                entry.insert("name".into(), json["name"].clone());
                entry.insert(
                    "description".into(),
                    json.get("description").cloned().unwrap_or(Value::String(String::new())),
                );
                entry.insert("input_schema".into(), json.get("inputSchema").cloned().unwrap_or(Value::Null));
                Value::Object(entry)
            })
            .collect();
        connection.tools = Some(tools.clone());
        Ok(tools)
    }

    /// Calls `tool` on `server`. Structured content comes back as it is, else the joined text;
    /// a result marked `isError` raises with the server's message.
    pub(crate) fn call(
        &mut self,
        server: &str,
        tool: &str,
        arguments: Map<String, Value>,
        deadline: Instant,
    ) -> Result<Value, ToolError> {
        let known = self.tools(server, deadline)?;
        if !known.iter().any(|t| t["name"] == tool) {
            let names: Vec<&str> = known.iter().filter_map(|t| t["name"].as_str()).collect();
            return Err(ToolError::value(format!(
                "MCP server '{server}' has no tool '{tool}' (tools: {})",
                names.join(", ")
            )));
        }
        let timeout = self.timeout(server, deadline)?;
        let config = self.server(server)?.clone();
        let runtime = self.runtime.as_ref().ok_or_else(|| ToolError::runtime("the MCP runtime is gone"))?;
        let connection = self.open.get(server).ok_or_else(|| ToolError::runtime("lost the MCP connection"))?;
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = Some(arguments);
        let called =
            runtime.block_on(async { tokio::time::timeout(timeout, connection.service.call_tool(params)).await });
        let result = match called {
            Ok(Ok(result)) => serde_json::to_value(result).unwrap_or(Value::Null),
            Ok(Err(err)) => {
                let error = server_failed(&config, &format!("calling '{tool}' failed: {err}"), &connection.stderr);
                if connection.service.is_transport_closed() {
                    self.failed.insert(server.to_owned(), error.message.clone());
                }
                return Err(error);
            }
            Err(_) => return Err(timed_out(server, tool, timeout)),
        };
        let text = joined_text(&result);
        if result["isError"] == Value::Bool(true) {
            return Err(ToolError::runtime(config.redact(&format!("MCP tool '{server}.{tool}' failed: {text}"))));
        }
        match result.get("structuredContent") {
            Some(structured) if !structured.is_null() => Ok(structured.clone()),
            _ => Ok(Value::String(text)),
        }
    }

    /// The time one request may take: the server's timeout, cut to what is left of the run.
    fn timeout(&self, server: &str, deadline: Instant) -> Result<Duration, ToolError> {
        let configured = self.server(server)?.timeout;
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(ToolError::new(ErrorKind::Timeout, "the run's time limit was reached"));
        }
        Ok(configured.min(left))
    }

    /// Opens the connection to `server` unless it is open (or failed earlier in this run).
    fn connect(&mut self, server: &str, deadline: Instant) -> Result<(), ToolError> {
        if self.open.contains_key(server) {
            return Ok(());
        }
        if let Some(why) = self.failed.get(server) {
            return Err(ToolError::runtime(why.clone()));
        }
        let timeout = self.timeout(server, deadline)?;
        let config = self.server(server)?.clone();
        if self.runtime.is_none() {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .map_err(|e| ToolError::runtime(format!("could not start the MCP runtime: {e}")))?;
            self.runtime = Some(runtime);
        }
        let runtime = self.runtime.as_ref().ok_or_else(|| ToolError::runtime("the MCP runtime is gone"))?;
        let stderr = Arc::new(Mutex::new(String::new()));
        let workspace = self.workspace.clone();
        let network = &self.network;
        let opened = runtime.block_on(async {
            tokio::time::timeout(timeout, open(&config, &workspace, network, stderr.clone())).await
        });
        match opened {
            Ok(Ok(service)) => {
                self.open.insert(server.to_owned(), Connection { service, stderr, tools: None });
                Ok(())
            }
            Ok(Err(message)) => {
                let error = server_failed(&config, &message, &stderr);
                self.failed.insert(server.to_owned(), error.message.clone());
                Err(error)
            }
            Err(_) => {
                let error = timed_out(server, "initialize", timeout);
                self.failed.insert(server.to_owned(), error.message.clone());
                Err(error)
            }
        }
    }

    /// Every server with its tools, and every server that could not be reached or configured,
    /// with why. Used to advertise only what works.
    pub(crate) fn catalog(&mut self, deadline: Instant) -> (Vec<Listed>, Vec<(String, String)>) {
        let mut listed = Vec::new();
        let mut failed: Vec<(String, String)> =
            self.problems.iter().map(|p| (p.name.clone(), format!("{}: {}", p.source.display(), p.message))).collect();
        let names: Vec<String> = self.servers.iter().map(|s| s.name.clone()).collect();
        for name in names {
            match self.tools(&name, deadline) {
                Ok(tools) => listed.push((name, tools)),
                Err(err) => failed.push((name, err.message)),
            }
        }
        (listed, failed)
    }

    /// The configured server whose functions are named `<prefix>__…` for the function `name`.
    #[must_use]
    pub(crate) fn server_of(&self, name: &str) -> Option<String> {
        self.servers
            .iter()
            .map(|s| s.name.clone())
            .find(|server| name.starts_with(&format!("{}__", function_name(server, "").trim_end_matches("__"))))
    }

    /// Closes every connection and reaps every child.
    pub(crate) fn close(&mut self) {
        let Some(runtime) = self.runtime.take() else { return };
        let connections: Vec<Connection> = self.open.drain().map(|(_, c)| c).collect();
        runtime.block_on(async {
            for connection in connections {
                // A server still busy is not waited for: dropping it kills the child.
                let _ = tokio::time::timeout(Duration::from_millis(500), connection.service.cancel()).await;
            }
        });
        runtime.shutdown_timeout(Duration::from_secs(1));
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        self.close();
    }
}

/// Starts the transport and performs the `initialize` handshake.
async fn open(
    server: &Server,
    workspace: &Path,
    network: &NetworkPolicy,
    stderr: Arc<Mutex<String>>,
) -> Result<Service, String> {
    match &server.transport {
        Transport::Stdio { command, args, env, cwd } => {
            let mut cmd = tokio::process::Command::new(command);
            cmd.args(args).env_clear().current_dir(cwd.as_deref().unwrap_or(workspace)).kill_on_drop(true);
            cmd.envs(env::inherited());
            // A server runs in the workspace, where the program can write: a `python3 -m` server
            // must not import a module the program planted there (its own `env` may say otherwise).
            cmd.env(env::PYTHON_SAFE_PATH, "1");
            cmd.envs(env);
            let (transport, child_stderr) = TokioChildProcess::builder(cmd)
                .stderr(Stdio::piped())
                .spawn()
                .map_err(|e| format!("could not start `{}`: {e}", server.shown))?;
            let reader = child_stderr.map(|mut pipe| {
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 8192];
                    while let Ok(n) = pipe.read(&mut buf).await {
                        if n == 0 {
                            break;
                        }
                        let mut kept = stderr.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                        kept.push_str(&String::from_utf8_lossy(&buf[..n]));
                        if kept.len() > MAX_STDERR * 2 {
                            let cut = kept.len() - MAX_STDERR;
                            let cut = (cut..kept.len()).find(|i| kept.is_char_boundary(*i)).unwrap_or(kept.len());
                            kept.drain(..cut);
                        }
                    }
                })
            });
            match ().serve(transport).await {
                Ok(service) => Ok(service),
                Err(err) => {
                    // The failed transport has ended the child: let the reader take in what it
                    // wrote before dying, which the error quotes, for a moment at most.
                    if let Some(reader) = reader {
                        let _ = tokio::time::timeout(STDERR_DRAIN, reader).await;
                    }
                    Err(format!("the MCP handshake failed: {err}"))
                }
            }
        }
        Transport::Http { url, headers } => {
            let config = StreamableHttpClientTransportConfig::with_uri(url.clone())
                .custom_headers(super::http::header_map(headers)?);
            let shown = &server.shown;
            let client = super::http::client(url, server.from_workspace.then_some(network)).await?;
            let transport = StreamableHttpClientTransport::with_client(client, config);
            ().serve(transport).await.map_err(|e| format!("the MCP handshake with {shown} failed: {e}"))
        }
    }
}

/// The text parts of a tool result, joined; other content is named by its type.
fn joined_text(result: &Value) -> String {
    let parts: Vec<String> = result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|item| match item["type"].as_str() {
            Some("text") => item["text"].as_str().unwrap_or_default().to_owned(),
            Some(kind) => format!("[{kind} content]"),
            None => String::new(),
        })
        .collect();
    parts.join("\n")
}

/// The error for a server that failed: `message` and the end of its stderr, with every value
/// the configuration expanded taken out.
fn server_failed(server: &Server, message: &str, stderr: &Mutex<String>) -> ToolError {
    let log = stderr.lock().map(|s| s.clone()).unwrap_or_default();
    let log = log.trim();
    let tail = log.char_indices().rev().nth(1999).map_or(log, |(i, _)| &log[i..]);
    let name = &server.name;
    let text = if tail.is_empty() {
        format!("MCP server '{name}': {message}")
    } else {
        format!("MCP server '{name}': {message}\nserver stderr:\n{tail}")
    };
    ToolError::runtime(server.redact(&text))
}

fn timed_out(server: &str, what: &str, timeout: Duration) -> ToolError {
    ToolError::new(
        ErrorKind::Timeout,
        format!("MCP server '{server}' did not answer {what} within {}s", timeout.as_secs_f64()),
    )
}

/// `server__tool` with every character that is not a letter, digit or `_` replaced by `_`.
#[must_use]
pub(crate) fn function_name(server: &str, tool: &str) -> String {
    let clean =
        |s: &str| s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect::<String>();
    format!("{}__{}", clean(server), clean(tool))
}
