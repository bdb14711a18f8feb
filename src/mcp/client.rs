//! MCP connections for one run, on the official Rust SDK (`rmcp`): opened on first use, reused
//! for every later call, and closed (process groups ended) when the run ends. Every request is
//! cut to the server's per-call timeout and to the run's remaining time less a margin, so a
//! program that catches the `TimeoutError` has time left to go on. Probing (`discover`,
//! `instructions`, `install`) starts every server at once, each with its own short timeout.
//!
//! A server's tools become `server__tool` functions. Two tools (or servers) whose names clean
//! up to one function keep the first that is already a Python name (else the first listed);
//! the other is said once and reached through `mcp_call`. A name is resolved against the
//! longest server prefix first, so servers `a` and `a__b` are both reachable.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::{
    CallToolRequestParams, ClientRequest, GetPromptRequestParams, ListToolsRequest, PaginatedRequestParams,
    ReadResourceRequestParams, ServerResult,
};
use rmcp::service::{RoleClient, RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Map, Value as Json};

use super::config::{BadEntry, Loaded, Server, Transport};
use super::content;
use super::handler::Client;
use super::schema;
use super::stdio::{self, Notes, Process, SharedNotes};
use crate::limits::format_seconds;
use crate::tools::network::NetworkPolicy;
use crate::tools::{ErrorKind, ToolError, Value};
use crate::trust::Approved;

/// How long a server has to start and answer `initialize` (a probe: and list its tools),
/// whatever its per-call timeout.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(10);

/// What a request leaves of the run's remaining time, a tenth of it within these bounds, so a
/// program can still handle a server that did not answer.
const MIN_MARGIN: Duration = Duration::from_millis(500);
const MAX_MARGIN: Duration = Duration::from_secs(3);

/// The largest message taken from a server when no run says otherwise (a probe).
const DEFAULT_MAX_MESSAGE: usize = 64 << 20;

/// The most pages of a list followed.
const MAX_PAGES: usize = 100;

/// Lines of a server's stderr a timeout quotes.
const STDERR_LINES: usize = 5;

type Service = RunningService<RoleClient, Client>;

/// A server that answered, with its tools as `mcp_tools` gives them.
pub(crate) type Listed = (String, Vec<Json>);

/// An open connection.
struct Connection {
    service: Service,
    client: Client,
    notes: SharedNotes,
    /// The child process of a stdio server.
    process: Option<Process>,
    tools: Option<Arc<Listing>>,
}

/// A server's tools as listed.
struct Listing {
    /// Each as `mcp_tools` gives it, with its `function` (or none).
    entries: Vec<Json>,
    /// Each tool's input and output schema, compiled once, by name.
    checks: HashMap<String, (schema::ArgumentCheck, content::OutputCheck)>,
}

/// The run's MCP servers and their connections.
pub(crate) struct Mcp {
    workspace: PathBuf,
    servers: Vec<Server>,
    problems: Vec<BadEntry>,
    disabled: Vec<String>,
    /// The workspace's config files left unread, untrusted.
    untrusted: Vec<String>,
    /// Where a workspace's HTTP server may be.
    network: NetworkPolicy,
    /// The largest message taken from a server.
    max_message: usize,
    runtime: Option<tokio::runtime::Runtime>,
    open: HashMap<String, Connection>,
    /// Servers that failed in this run, with why; they are not retried.
    failed: HashMap<String, ToolError>,
    /// Warnings for the program's stderr, each said once.
    warnings: Vec<String>,
    said: HashSet<String>,
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
        let Loaded { servers, problems, untrusted, disabled } =
            super::config::load(workspace, copilot_home, trust, &|name| std::env::var(name).ok());
        let mut mcp = Self::none();
        mcp.workspace = workspace.to_path_buf();
        (mcp.servers, mcp.problems, mcp.disabled, mcp.untrusted) = (servers, problems, disabled, untrusted);
        mcp.network = network.clone();
        mcp.note_server_collisions();
        mcp
    }

    /// No servers at all.
    #[must_use]
    pub(crate) fn none() -> Self {
        Self {
            workspace: PathBuf::new(),
            servers: Vec::new(),
            problems: Vec::new(),
            disabled: Vec::new(),
            untrusted: Vec::new(),
            network: NetworkPolicy::default(),
            max_message: DEFAULT_MAX_MESSAGE,
            runtime: None,
            open: HashMap::new(),
            failed: HashMap::new(),
            warnings: Vec::new(),
            said: HashSet::new(),
        }
    }

    /// Whether no server is configured, usable or not.
    #[must_use]
    pub(crate) fn is_empty(&self) -> bool {
        self.servers.is_empty() && self.problems.iter().all(|p| p.name.is_empty())
    }

    /// The workspace's config files left unread because the user does not trust them.
    #[must_use]
    pub(crate) fn untrusted(&self) -> &[String] {
        &self.untrusted
    }

    /// Each configured entry that cannot be used, once, naming its file and server.
    #[must_use]
    pub(crate) fn problems(&self) -> Vec<String> {
        self.problems.iter().map(|p| p.describe(&self.workspace)).collect()
    }

    /// Takes messages no larger than `bytes` from a server (a run's memory limit).
    pub(crate) fn set_max_message(&mut self, bytes: usize) {
        self.max_message = bytes;
    }

    /// What the program's stderr should learn, each once: name collisions.
    pub(crate) fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }

    fn warn(&mut self, message: String) {
        if self.said.insert(message.clone()) {
            self.warnings.push(message);
        }
    }

    fn server(&self, name: &str) -> Result<&Server, ToolError> {
        if let Some(server) = self.servers.iter().find(|s| s.name == name) {
            return Ok(server);
        }
        if let Some(problem) = self.problems.iter().find(|p| p.name == name) {
            return Err(ToolError::value(problem.describe(&self.workspace)));
        }
        if self.disabled.iter().any(|d| d == name) {
            return Err(ToolError::value(format!("MCP server '{name}' is disabled in its config (`disabled: true`)")));
        }
        let names: Vec<&str> = self.servers.iter().map(|s| s.name.as_str()).collect();
        Err(ToolError::value(format!("no MCP server named '{name}' (configured: {})", names.join(", "))))
    }

    /// The prefix of `server`'s functions: its name cleaned up, unless an earlier server has it.
    fn prefix(&self, server: &str) -> Option<String> {
        let cleaned = clean(server);
        let first = self.servers.iter().find(|s| clean(&s.name) == cleaned)?;
        (first.name == server).then_some(cleaned)
    }

    fn note_server_collisions(&mut self) {
        let names: Vec<String> = self.servers.iter().map(|s| s.name.clone()).collect();
        for name in names {
            if self.prefix(&name).is_none() {
                let taken = self.servers.iter().find(|s| clean(&s.name) == clean(&name)).map(|s| s.name.clone());
                self.warn(format!(
                    "MCP servers `{}` and `{name}` would both have functions `{}__…`; `{name}` is reached through mcp_call('{name}', …) only",
                    taken.unwrap_or_default(),
                    clean(&name)
                ));
            }
        }
    }

    /// The tools of `server`, as `mcp_tools` gives them.
    pub(crate) fn tools(&mut self, server: &str, deadline: Instant) -> Result<Vec<Json>, ToolError> {
        Ok(self.listing(server, deadline, false)?.entries.clone())
    }

    /// The listing of `server`, asked again when the server said it changed or `fresh` is set.
    fn listing(&mut self, server: &str, deadline: Instant, fresh: bool) -> Result<Arc<Listing>, ToolError> {
        self.connect(server, Self::startup_until(deadline)?)?;
        if let Some(connection) = self.open.get(server) {
            let changed = connection.client.take_tools_changed();
            if let Some(listing) = connection.tools.clone().filter(|_| !fresh && !changed) {
                return Ok(listing);
            }
        }
        let raw = self.request(server, "tools/list", deadline, async |service| list_tools(service).await)?;
        self.keep_listing(server, &raw)
    }

    /// The listing made from `raw`, kept with the connection until the server's tools change.
    fn keep_listing(&mut self, server: &str, raw: &[Json]) -> Result<Arc<Listing>, ToolError> {
        let listing = Arc::new(self.make_listing(server, raw)?);
        if let Some(connection) = self.open.get_mut(server) {
            connection.tools = Some(listing.clone());
        }
        Ok(listing)
    }

    /// A listing from the raw tools, as far as the config's `tools` list allows.
    fn make_listing(&mut self, server: &str, raw: &[Json]) -> Result<Listing, ToolError> {
        let config = self.server(server)?.clone();
        let prefix = self.prefix(server);
        let allowed = |name: &str| config.tools.as_ref().is_none_or(|list| list.iter().any(|t| t == "*" || t == name));
        let kept: Vec<&Json> = raw.iter().filter(|tool| tool["name"].as_str().is_some_and(allowed)).collect();
        // A tool whose name is already a Python name keeps its function over one cleaned up to it.
        let mut taken: HashMap<String, String> = HashMap::new();
        for exact in [true, false] {
            for tool in &kept {
                let name = tool["name"].as_str().unwrap_or_default();
                if (clean(name) == name) == exact
                    && let Some(prefix) = &prefix
                {
                    taken.entry(format!("{prefix}__{}", clean(name))).or_insert_with(|| name.to_owned());
                }
            }
        }
        let mut entries = Vec::new();
        let mut checks = HashMap::new();
        for tool in kept {
            let name = tool["name"].as_str().unwrap_or_default().to_owned();
            let function = prefix.as_ref().map(|prefix| format!("{prefix}__{}", clean(&name)));
            let function = function.filter(|f| taken.get(f) == Some(&name));
            if let (None, Some(prefix)) = (&function, &prefix) {
                let winner = taken.get(&format!("{prefix}__{}", clean(&name))).cloned().unwrap_or_default();
                self.warn(format!(
                    "MCP server `{server}`: tools `{winner}` and `{name}` would both be `{prefix}__{}`; `{name}` is reached through mcp_call('{server}', '{name}', …)",
                    clean(&name)
                ));
            }
            let mut entry = content::tool_entry(tool);
            if let Json::Object(map) = &mut entry {
                let mut ordered = Map::new();
                for (key, value) in std::mem::take(map) {
                    ordered.insert(key.clone(), value);
                    if key == "name" {
                        ordered.insert("function".into(), function.clone().map_or(Json::Null, Json::String));
                    }
                }
                *map = ordered;
            }
            let output = tool.get("outputSchema").filter(|s| s.is_object());
            let check = (schema::ArgumentCheck::new(&entry["input_schema"]), content::OutputCheck::new(output));
            checks.insert(name, check);
            entries.push(entry);
        }
        Ok(Listing { entries, checks })
    }

    /// The server and tool that the function `name` calls, connecting to servers as needed:
    /// the longest server prefix that has such a function wins. `Err` is the `NameError`.
    pub(crate) fn resolve(&mut self, name: &str, deadline: Instant) -> Result<Option<(String, String)>, ToolError> {
        let mut candidates: Vec<(String, String)> = self
            .servers
            .iter()
            .filter_map(|s| self.prefix(&s.name).map(|prefix| (s.name.clone(), prefix)))
            .filter(|(_, prefix)| name.strip_prefix(prefix.as_str()).is_some_and(|rest| rest.starts_with("__")))
            .collect();
        candidates.sort_by_key(|(_, prefix)| std::cmp::Reverse(prefix.len()));
        let mut first_offer = None;
        for (server, _) in candidates {
            let listing = self.listing(&server, deadline, false)?;
            if let Some(tool) = find_function(&listing, name) {
                return Ok(Some((server, tool)));
            }
            first_offer.get_or_insert((server, listing));
        }
        let Some((server, listing)) = first_offer else { return Ok(None) };
        let offered: Vec<&str> = listing.entries.iter().filter_map(|t| t["function"].as_str()).collect();
        Err(ToolError::new(
            ErrorKind::Name,
            format!("name '{name}' is not defined (MCP server '{server}' offers: {})", offered.join(", ")),
        ))
    }

    /// Calls `tool` on `server`: structured content
    /// comes back as Python values (unwrapped from the Python SDK's `{"result": …}`), text as
    /// `str`, anything else as dicts; a result marked `isError` raises with the server's message.
    pub(crate) fn call(
        &mut self,
        server: &str,
        tool: &str,
        arguments: Map<String, Json>,
        deadline: Instant,
    ) -> Result<Value, ToolError> {
        let mut listing = self.listing(server, deadline, false)?;
        if !has_tool(&listing, tool) {
            // The server may have added it since: ask once more before refusing.
            listing = self.listing(server, deadline, true)?;
        }
        let Some(entry) = listing.entries.iter().find(|t| t["name"] == tool) else {
            return Err(self.no_tool(server, tool, &listing));
        };
        let shown = entry["function"].as_str().map_or_else(|| format!("mcp_call('{server}', '{tool}')"), str::to_owned);
        let check = listing.checks.get(tool);
        if let Some(check) = check {
            check.0.check(&shown, &arguments).map_err(ToolError::type_error)?;
        }
        let config = self.server(server)?.clone();
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = Some(arguments);
        let result =
            self.request(server, tool, deadline, async |service| service.call_tool(params).await.map(json_of))?;
        if result["isError"] == Json::Bool(true) {
            let text = content::text_of(&result);
            return Err(ToolError::runtime(config.redact(&format!("MCP tool '{server}.{tool}' failed: {text}"))));
        }
        let value = match check {
            Some(check) => check.1.tool_result(&result),
            None => content::tool_result(&result, None),
        };
        value.map_err(|why| ToolError::runtime(format!("MCP tool '{server}.{tool}' {why}")))
    }

    fn no_tool(&self, server: &str, tool: &str, listing: &Listing) -> ToolError {
        let names: Vec<&str> = listing.entries.iter().filter_map(|t| t["name"].as_str()).collect();
        let hidden = self
            .server(server)
            .ok()
            .and_then(|s| s.tools.as_ref())
            .map_or(String::new(), |_| format!("; the `tools` list of its config may leave `{tool}` out"));
        ToolError::value(format!("MCP server '{server}' has no tool '{tool}' (tools: {}){hidden}", names.join(", ")))
    }

    /// The resources of `server`, then its resource templates.
    pub(crate) fn resources(&mut self, server: &str, deadline: Instant) -> Result<Value, ToolError> {
        let (resources, templates) = self.request(server, "resources/list", deadline, async |service| {
            let resources = service.list_all_resources().await?;
            let templates = service.list_all_resource_templates().await.unwrap_or_default();
            Ok((json_of(resources), json_of(templates)))
        })?;
        let entries = json_items(&resources)
            .map(content::resource_entry)
            .chain(json_items(&templates).map(content::template_entry))
            .collect();
        Ok(Value::List(entries))
    }

    /// The contents of the resource `uri` of `server`.
    pub(crate) fn read_resource(&mut self, server: &str, uri: &str, deadline: Instant) -> Result<Value, ToolError> {
        let params = ReadResourceRequestParams::new(uri);
        let result = self.request(server, "resources/read", deadline, async |service| {
            service.read_resource(params).await.map(json_of)
        })?;
        Ok(content::resource_contents(&result))
    }

    /// The prompts of `server`.
    pub(crate) fn prompts(&mut self, server: &str, deadline: Instant) -> Result<Value, ToolError> {
        let prompts = self
            .request(server, "prompts/list", deadline, async |service| service.list_all_prompts().await.map(json_of))?;
        Ok(Value::List(json_items(&prompts).map(content::prompt_entry).collect()))
    }

    /// The prompt `name` of `server`, given `arguments` (strings, as MCP has them).
    pub(crate) fn get_prompt(
        &mut self,
        server: &str,
        name: &str,
        arguments: Map<String, Json>,
        deadline: Instant,
    ) -> Result<Value, ToolError> {
        let arguments: Map<String, Json> = arguments
            .into_iter()
            .map(|(key, value)| match value {
                Json::String(text) => (key, Json::String(text)),
                other => (key, Json::String(other.to_string())),
            })
            .collect();
        let mut params = GetPromptRequestParams::new(name);
        params.arguments = Some(arguments);
        let result = self
            .request(server, "prompts/get", deadline, async |service| service.get_prompt(params).await.map(json_of))?;
        Ok(content::prompt_messages(&result))
    }

    /// When a request to `server` must have its answer: its timeout from now, but never later
    /// than the run's deadline less a margin.
    fn until(&self, server: &str, deadline: Instant) -> Result<Instant, ToolError> {
        within(self.server(server)?.timeout, deadline)
    }

    /// When a server must have started: [`STARTUP_TIMEOUT`] from now, cut as [`Self::until`].
    fn startup_until(deadline: Instant) -> Result<Instant, ToolError> {
        within(STARTUP_TIMEOUT, deadline)
    }

    fn runtime(&mut self) -> Result<&tokio::runtime::Runtime, ToolError> {
        if self.runtime.is_none() {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .map_err(|e| ToolError::runtime(format!("could not start the MCP runtime: {e}")))?;
            self.runtime = Some(runtime);
        }
        self.runtime.as_ref().ok_or_else(|| ToolError::runtime("the MCP runtime is gone"))
    }

    /// Sends one request to `server`, connecting first; each is cut to [`Self::until`].
    fn request<T>(
        &mut self,
        server: &str,
        what: &str,
        deadline: Instant,
        op: impl AsyncFnOnce(&Service) -> Result<T, ServiceError>,
    ) -> Result<T, ToolError> {
        // Starting the server and the request itself each get the whole timeout.
        self.connect(server, Self::startup_until(deadline)?)?;
        let until = self.until(server, deadline)?;
        let config = self.server(server)?.clone();
        let runtime = self.runtime.as_ref().ok_or_else(|| ToolError::runtime("the MCP runtime is gone"))?;
        let connection = self.open.get_mut(server).ok_or_else(|| ToolError::runtime("lost the MCP connection"))?;
        let within = until.saturating_duration_since(Instant::now());
        let answered = runtime.block_on(async { tokio::time::timeout(within, op(&connection.service)).await });
        let error = match answered {
            Ok(Ok(value)) => return Ok(value),
            Err(_) => return Err(timed_out(&config, what, within, &connection.notes)),
            Ok(Err(error)) => error,
        };
        let closed = connection.service.is_transport_closed()
            || matches!(error, ServiceError::TransportClosed | ServiceError::TransportSend(_));
        let oversized = stdio::lock(&connection.notes).oversized.take();
        // A server cut off for an oversized reply ends because codeact closed it: not worth saying.
        let ended = match (&mut connection.process, closed && oversized.is_none()) {
            (Some(process), true) => runtime.block_on(process.how_it_ended()),
            _ => None,
        };
        let mut why = match (&oversized, &error) {
            (Some(oversized), _) => oversized.clone(),
            (None, ServiceError::McpError(data)) => {
                format!("the server answered error {}: {}", data.code.0, data.message)
            }
            (None, ServiceError::UnexpectedResponse) => "the server's answer is not a valid MCP result".to_owned(),
            (None, ServiceError::TransportClosed) => "the connection closed".to_owned(),
            (None, other) => causes(other),
        };
        if let Some(ended) = ended {
            why = format!("{why}; the server {ended}");
        }
        let kind = match &error {
            ServiceError::McpError(data) if data.code.0 == -32602 => ErrorKind::Type,
            _ => ErrorKind::Runtime,
        };
        let failure = failed(&config, &format!("`{what}` failed: {why}"), &connection.notes, kind);
        if oversized.is_some() {
            // Only that message was too big: the next call starts the server again.
            self.drop_connection(server);
        } else if closed {
            self.failed.insert(server.to_owned(), failure.clone());
        }
        Err(failure)
    }

    fn drop_connection(&mut self, server: &str) {
        if let (Some(connection), Some(runtime)) = (self.open.remove(server), &self.runtime) {
            runtime.block_on(shut(connection));
        }
    }

    /// Opens the connection to `server` unless it is open (or failed earlier in this run).
    fn connect(&mut self, server: &str, until: Instant) -> Result<(), ToolError> {
        if self.open.contains_key(server) {
            return Ok(());
        }
        if let Some(error) = self.failed.get(server) {
            return Err(error.clone());
        }
        let config = self.server(server)?.clone();
        let (workspace, network, max_message) = (self.workspace.clone(), self.network.clone(), self.max_message);
        let notes = SharedNotes::default();
        let within = until.saturating_duration_since(Instant::now());
        let runtime = self.runtime()?;
        let opened = runtime.block_on(async {
            tokio::time::timeout(within, open(&config, &workspace, &network, max_message, notes.clone())).await
        });
        match opened {
            Ok(Ok(connection)) => {
                self.open.insert(server.to_owned(), connection);
                Ok(())
            }
            Ok(Err(message)) => {
                let error = failed(&config, &message, &notes, ErrorKind::Runtime);
                self.failed.insert(server.to_owned(), error.clone());
                Err(error)
            }
            Err(_) => {
                let error = timed_out(&config, "initialize", within, &notes);
                self.failed.insert(server.to_owned(), error.clone());
                Err(error)
            }
        }
    }

    /// Every server with its tools, and every server that could not be reached or configured,
    /// with why; each server is started at once, with its own timeout within `deadline`.
    pub(crate) fn catalog(&mut self, deadline: Instant) -> (Vec<Listed>, Vec<(String, String)>) {
        let mut left_out: Vec<(String, String)> = Vec::new();
        let pending: Vec<Server> = self
            .servers
            .iter()
            .filter(|s| !self.open.contains_key(&s.name) && !self.failed.contains_key(&s.name))
            .cloned()
            .collect();
        let (workspace, network, max_message) = (self.workspace.clone(), self.network.clone(), self.max_message);
        let probed = match self.runtime() {
            Ok(runtime) => runtime.block_on(async {
                let mut probes = tokio::task::JoinSet::new();
                for config in pending {
                    let (workspace, network) = (workspace.clone(), network.clone());
                    let within = STARTUP_TIMEOUT.min(deadline.saturating_duration_since(Instant::now()));
                    probes.spawn(async move {
                        let notes = SharedNotes::default();
                        let probe = async {
                            let connection = open(&config, &workspace, &network, max_message, notes.clone()).await?;
                            let tools = list_tools(&connection.service).await;
                            let tools = match tools {
                                Ok(tools) => tools,
                                Err(err) => {
                                    let why = format!("could not list tools: {}", causes(&err));
                                    shut(connection).await;
                                    return Err(why);
                                }
                            };
                            Ok((connection, tools))
                        };
                        let outcome = match tokio::time::timeout(within, probe).await {
                            Ok(Ok(done)) => Ok(done),
                            Ok(Err(why)) => Err(failed(&config, &why, &notes, ErrorKind::Runtime)),
                            Err(_) => Err(timed_out(&config, "initialize", within, &notes)),
                        };
                        (config.name.clone(), outcome)
                    });
                }
                let mut done = Vec::new();
                while let Some(joined) = probes.join_next().await {
                    done.extend(joined.ok());
                }
                done
            }),
            Err(err) => {
                left_out.extend(self.servers.iter().map(|s| (s.name.clone(), err.message.clone())));
                return (Vec::new(), left_out);
            }
        };
        let mut raw_tools: HashMap<String, Vec<Json>> = HashMap::new();
        for (name, outcome) in probed {
            match outcome {
                Ok((connection, tools)) => {
                    self.open.insert(name.clone(), connection);
                    raw_tools.insert(name, tools);
                }
                Err(error) => {
                    self.failed.insert(name, error);
                }
            }
        }
        let mut listed = Vec::new();
        let names: Vec<String> = self.servers.iter().map(|s| s.name.clone()).collect();
        for name in names {
            let result = match raw_tools.remove(&name) {
                Some(raw) => self.keep_listing(&name, &raw),
                None => self.listing(&name, deadline, false),
            };
            match result {
                Ok(listing) => listed.push((name, listing.entries.clone())),
                Err(err) => left_out.push((name, err.message)),
            }
        }
        (listed, left_out)
    }

    /// Closes every connection at once and ends every server's process group.
    pub(crate) fn close(&mut self) {
        let Some(runtime) = self.runtime.take() else { return };
        let connections: Vec<Connection> = self.open.drain().map(|(_, c)| c).collect();
        runtime.block_on(async {
            let mut closing = tokio::task::JoinSet::new();
            for connection in connections {
                closing.spawn(shut(connection));
            }
            while closing.join_next().await.is_some() {}
        });
        runtime.shutdown_timeout(Duration::from_secs(1));
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        self.close();
    }
}

/// When something that may take `timeout` must be done: never later than the run's deadline
/// less a margin (a tenth of what is left, within bounds), so a program can still handle a
/// server that did not answer.
fn within(timeout: Duration, deadline: Instant) -> Result<Instant, ToolError> {
    let now = Instant::now();
    let left = deadline.saturating_duration_since(now);
    if left.is_zero() {
        return Err(ToolError::new(ErrorKind::Timeout, "the run's time limit was reached"));
    }
    let margin = (left / 10).clamp(MIN_MARGIN, MAX_MARGIN);
    let usable = left.checked_sub(margin).filter(|usable| !usable.is_zero()).unwrap_or(left);
    Ok(now + timeout.min(usable))
}

/// Closes one connection: the transport (for stdio, its stdin), then the process.
async fn shut(connection: Connection) {
    let Connection { service, process, .. } = connection;
    let _ = tokio::time::timeout(Duration::from_secs(1), service.cancel()).await;
    if let Some(process) = process {
        process.close().await;
    }
}

fn has_tool(listing: &Listing, tool: &str) -> bool {
    listing.entries.iter().any(|t| t["name"] == tool)
}

fn find_function(listing: &Listing, function: &str) -> Option<String> {
    listing.entries.iter().find(|t| t["function"] == function).and_then(|t| t["name"].as_str().map(str::to_owned))
}

/// An rmcp result as the JSON the server sent (its types serialize back to the wire format).
fn json_of(result: impl serde::Serialize) -> Json {
    serde_json::to_value(result).unwrap_or_default()
}

fn json_items(list: &Json) -> impl Iterator<Item = &Json> {
    list.as_array().into_iter().flatten()
}

/// Every page of `tools/list`, as the server sent each tool: one the SDK's types refuse (no
/// `inputSchema`, say) must not cost the server all its tools.
async fn list_tools(service: &Service) -> Result<Vec<Json>, ServiceError> {
    let mut tools = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let params = cursor.take().map(|cursor| PaginatedRequestParams::default().with_cursor(Some(cursor)));
        let request = ClientRequest::ListToolsRequest(
            params.map_or_else(ListToolsRequest::default, ListToolsRequest::with_param),
        );
        let page = match service.send_request(request).await? {
            ServerResult::ListToolsResult(result) => json_of(result),
            ServerResult::CustomResult(result) => result.0,
            _ => return Err(ServiceError::UnexpectedResponse),
        };
        tools.extend(page["tools"].as_array().into_iter().flatten().filter(|t| t["name"].is_string()).cloned());
        match page["nextCursor"].as_str() {
            Some(next) if !next.is_empty() => cursor = Some(next.to_owned()),
            _ => break,
        }
    }
    Ok(tools)
}

/// Starts the transport and performs the `initialize` handshake.
async fn open(
    server: &Server,
    workspace: &Path,
    network: &NetworkPolicy,
    max_message: usize,
    notes: SharedNotes,
) -> Result<Connection, String> {
    let client = Client::new(workspace);
    match &server.transport {
        Transport::Stdio { command, args, env, cwd } => {
            let cwd = cwd.as_deref().unwrap_or(workspace);
            let started = stdio::start(command, args, env, cwd, workspace, max_message, &notes)
                .map_err(|e| format!("could not start `{}`: {e}", server.shown))?;
            let mut process = started.process;
            let transport =
                AsyncRwTransport::new_client(started.stdout, started.stdin).with_max_line_length(usize::MAX);
            match client.clone().serve(transport).await {
                Ok(service) => Ok(Connection { service, client, notes, process: Some(process), tools: None }),
                Err(err) => {
                    let ended = process.how_it_ended().await;
                    // Let the stderr reader take in what the server wrote before it ended.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    let ended = ended.map_or(String::new(), |how| format!(" (the server {how})"));
                    Err(format!("the MCP handshake failed: {}{ended}", handshake_error(&err)))
                }
            }
        }
        Transport::Http { url, headers } => {
            let mut config = StreamableHttpClientTransportConfig::with_uri(url.clone())
                .custom_headers(super::http::header_map(headers)?)
                .max_sse_event_size(max_message);
            config.max_json_response_size = max_message;
            let shown = &server.shown;
            let http = super::http::client(url, server.from_workspace.then_some(network)).await?;
            let transport = StreamableHttpClientTransport::with_client(http, config);
            match client.clone().serve(transport).await {
                Ok(service) => Ok(Connection { service, client, notes, process: None, tools: None }),
                Err(err) => Err(format!("the MCP handshake with {shown} failed: {}", handshake_error(&err))),
            }
        }
    }
}

/// Why a handshake failed, in words: the innermost causes, without the SDK's type names.
fn handshake_error(err: &rmcp::service::ClientInitializeError) -> String {
    use rmcp::service::ClientInitializeError as E;
    match err {
        E::ConnectionClosed(_) => "the server closed the connection".to_owned(),
        E::JsonRpcError(data) => format!("the server refused it: {}", data.message),
        E::TransportError { error, .. } => causes(error),
        other => causes(other),
    }
}

/// An error's message and its causes', leaving out what only names the SDK's types.
fn causes(err: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut next = Some(err);
    while let Some(err) = next {
        let text = err.to_string();
        let typed = text.contains("::") || text.contains("Send message error");
        if !typed && !text.is_empty() && !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        next = err.source();
    }
    if parts.is_empty() { err.to_string() } else { parts.join(": ") }
}

/// The error for a server that failed: `message` and the end of its stderr, with every value
/// the configuration expanded taken out.
fn failed(server: &Server, message: &str, notes: &SharedNotes, kind: ErrorKind) -> ToolError {
    let name = &server.name;
    let text = format!("MCP server '{name}': {message}{}", quoted_output(&stdio::lock(notes), 2000));
    ToolError::new(kind, server.redact(&text))
}

fn timed_out(server: &Server, what: &str, within: Duration, notes: &SharedNotes) -> ToolError {
    let notes = stdio::lock(notes);
    // Whole seconds: what is left of a run is never a round number.
    let rounded = within.as_secs() + u64::from(within.subsec_millis() >= 500);
    let seconds = Duration::from_secs(rounded.max(1));
    let mut text = format!("MCP server '{}' did not answer {what} within {}", server.name, format_seconds(seconds));
    if notes.stray_lines > 0 {
        let _ = write!(
            text,
            "\nits stdout had {} line(s) that are not MCP messages, the first: {:?}",
            notes.stray_lines,
            notes.first_stray.as_deref().unwrap_or_default()
        );
    }
    let log = notes.stderr.trim();
    if !log.is_empty() {
        let lines: Vec<&str> = log.lines().collect();
        let tail = lines[lines.len().saturating_sub(STDERR_LINES)..].join("\n");
        let _ = write!(text, "\nserver stderr:\n{tail}");
    }
    ToolError::new(ErrorKind::Timeout, server.redact(&text))
}

/// The end of a server's stderr, up to `chars`, as a block to add to a message.
fn quoted_output(notes: &Notes, chars: usize) -> String {
    let log = notes.stderr.trim();
    if log.is_empty() {
        return String::new();
    }
    let tail = log.char_indices().rev().nth(chars - 1).map_or(log, |(i, _)| &log[i..]);
    format!("\nserver stderr:\n{tail}")
}

/// A name with every character that is not a letter, digit or `_` replaced by `_`.
fn clean(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect()
}

/// `server__tool`, cleaned up: the function a tool becomes when no other takes it.
#[must_use]
pub(crate) fn function_name(server: &str, tool: &str) -> String {
    format!("{}__{}", clean(server), clean(tool))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn causes_leave_out_type_names_and_repeats() {
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "Connection refused (os error 111)");
        assert_eq!(causes(&io), "Connection refused (os error 111)");
    }

    #[test]
    fn function_names_are_python_names() {
        assert_eq!(function_name("my-server", "get.version"), "my_server__get_version");
    }
}
