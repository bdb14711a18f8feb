//! [`Mcp`]: the run's MCP servers, each with its state — not yet started, open, or failed for
//! the rest of the run — and the one runtime their connections run on. Connections open on
//! first use, are reused for every later call, and close (process groups ended) when the run
//! ends. Every request is cut to the server's per-call timeout and to the run's remaining time
//! less a margin, so a program that catches the `TimeoutError` has time left to go on.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::service::ServiceError;

use super::connection::{Connection, Listing, STARTUP_TIMEOUT, Service, list_tools, open, shut, within};
use super::errors::{causes, failed, timed_out};
use super::naming::{assign_functions, prefix, server_collisions};
use crate::mcp::config::{self, BadEntry, Configured, Server};
use crate::mcp::listed::ListedTool;
use crate::mcp::stdio::{self, SharedNotes};
use crate::tools::network::NetworkPolicy;
use crate::tools::{ErrorKind, ToolError};
use crate::trust::Approved;

/// The largest message taken from a server when no run says otherwise (a probe).
const DEFAULT_MAX_MESSAGE: usize = 64 << 20;

/// Where a server stands in this run.
pub(super) enum State {
    /// Not started yet.
    Idle,
    Open(Box<Connection>),
    /// It failed, with why; it is not retried.
    Failed(ToolError),
}

/// A configured server and its state.
pub(super) struct Slot {
    pub(super) server: Arc<Server>,
    pub(super) state: State,
}

/// The run's MCP servers and their connections.
pub(crate) struct Mcp {
    pub(super) workspace: PathBuf,
    pub(super) servers: Vec<Slot>,
    problems: Vec<BadEntry>,
    disabled: Vec<String>,
    /// The workspace's config files left unread, untrusted.
    untrusted: Vec<String>,
    /// Where a workspace's HTTP server may be.
    pub(super) network: NetworkPolicy,
    /// The largest message taken from a server.
    pub(super) max_message: usize,
    pub(super) runtime: Option<tokio::runtime::Runtime>,
    /// Warnings for the program's stderr, each said once.
    warnings: Vec<String>,
    said: HashSet<String>,
}

impl std::fmt::Debug for Mcp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let servers: Vec<&Server> = self.servers.iter().map(|slot| slot.server.as_ref()).collect();
        let open: Vec<&str> = self
            .servers
            .iter()
            .filter(|slot| matches!(slot.state, State::Open(_)))
            .map(|slot| slot.server.name.as_str())
            .collect();
        f.debug_struct("Mcp").field("servers", &servers).field("open", &open).finish_non_exhaustive()
    }
}

impl Mcp {
    /// The servers configured for `workspace` (its own files only as far as `trust` approves
    /// them); a workspace's HTTP server must be where `network` allows.
    #[must_use]
    pub(crate) fn load(workspace: &Path, users: &[config::Source], trust: &Approved, network: &NetworkPolicy) -> Self {
        let Configured { servers, problems, untrusted, disabled } =
            config::load(workspace, users, trust, &|name| std::env::var(name).ok());
        let mut mcp = Self::none();
        mcp.workspace = workspace.to_path_buf();
        mcp.servers = servers.into_iter().map(|server| Slot { server: Arc::new(server), state: State::Idle }).collect();
        (mcp.problems, mcp.disabled, mcp.untrusted) = (problems, disabled, untrusted);
        mcp.network = network.clone();
        for warning in server_collisions(&mcp.configs()) {
            mcp.warn(warning);
        }
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

    pub(super) fn warn(&mut self, message: String) {
        if self.said.insert(message.clone()) {
            self.warnings.push(message);
        }
    }

    /// Every configured server, in order.
    pub(super) fn configs(&self) -> Vec<Arc<Server>> {
        self.servers.iter().map(|slot| slot.server.clone()).collect()
    }

    fn slot(&self, name: &str) -> Option<&Slot> {
        self.servers.iter().find(|slot| slot.server.name == name)
    }

    pub(super) fn slot_mut(&mut self, name: &str) -> Option<&mut Slot> {
        self.servers.iter_mut().find(|slot| slot.server.name == name)
    }

    /// The open connection to `name`, if any.
    fn connection(&self, name: &str) -> Option<&Connection> {
        match &self.slot(name)?.state {
            State::Open(connection) => Some(connection),
            State::Idle | State::Failed(_) => None,
        }
    }

    /// The server `name`, or the `ValueError` saying why there is none.
    pub(super) fn server(&self, name: &str) -> Result<Arc<Server>, ToolError> {
        if let Some(slot) = self.slot(name) {
            return Ok(slot.server.clone());
        }
        if let Some(problem) = self.problems.iter().find(|p| p.name == name) {
            return Err(ToolError::value(problem.describe(&self.workspace)));
        }
        if self.disabled.iter().any(|d| d == name) {
            return Err(ToolError::value(format!("MCP server '{name}' is disabled in its config (`disabled: true`)")));
        }
        let names: Vec<&str> = self.servers.iter().map(|slot| slot.server.name.as_str()).collect();
        Err(ToolError::value(format!("no MCP server named '{name}' (configured: {})", names.join(", "))))
    }

    /// The prefix of `server`'s functions: its name cleaned up, unless an earlier server has it.
    pub(super) fn prefix(&self, server: &str) -> Option<String> {
        prefix(&self.configs(), server)
    }

    /// The tools of `server`, as listed.
    pub(crate) fn tools(&mut self, server: &str, deadline: Instant) -> Result<Vec<ListedTool>, ToolError> {
        Ok(self.listing(server, deadline, false)?.tools())
    }

    /// The listing of `server`, asked again when the server said it changed or `fresh` is set.
    pub(super) fn listing(&mut self, server: &str, deadline: Instant, fresh: bool) -> Result<Arc<Listing>, ToolError> {
        self.connect(server, Self::startup_until(deadline)?)?;
        if let Some(connection) = self.connection(server) {
            let changed = connection.client.take_tools_changed();
            if let Some(listing) = connection.tools.clone().filter(|_| !fresh && !changed) {
                return Ok(listing);
            }
        }
        let tools = self.request(server, "tools/list", deadline, async |service| list_tools(service).await)?;
        self.keep_listing(server, tools)
    }

    /// The listing made from `tools`, kept with the connection until the server's tools change:
    /// as far as the config's `tools` list allows, each with its function.
    pub(super) fn keep_listing(&mut self, server: &str, mut tools: Vec<ListedTool>) -> Result<Arc<Listing>, ToolError> {
        let config = self.server(server)?;
        tools.retain(|tool| {
            config.tools.as_ref().is_none_or(|list| list.iter().any(|t| t == "*" || *t == tool.name))
                && !config.excluded.contains(&tool.name)
        });
        for warning in assign_functions(server, self.prefix(server).as_deref(), &mut tools) {
            self.warn(warning);
        }
        let listing = Arc::new(Listing::new(tools));
        if let Some(Slot { state: State::Open(connection), .. }) = self.slot_mut(server) {
            connection.tools = Some(listing.clone());
        }
        Ok(listing)
    }

    /// When a request to `server` must have its answer: its timeout from now, but never later
    /// than the run's deadline less a margin.
    fn until(&self, server: &str, deadline: Instant) -> Result<Instant, ToolError> {
        within(self.server(server)?.timeout, deadline)
    }

    /// When a server must have started: [`STARTUP_TIMEOUT`] from now, cut as [`Self::until`].
    pub(super) fn startup_until(deadline: Instant) -> Result<Instant, ToolError> {
        within(STARTUP_TIMEOUT, deadline)
    }

    pub(super) fn runtime(&mut self) -> Result<&tokio::runtime::Runtime, ToolError> {
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
    pub(super) fn request<T>(
        &mut self,
        server: &str,
        what: &str,
        deadline: Instant,
        op: impl AsyncFnOnce(&Service) -> Result<T, ServiceError>,
    ) -> Result<T, ToolError> {
        // Starting the server and the request itself each get the whole timeout.
        self.connect(server, Self::startup_until(deadline)?)?;
        let until = self.until(server, deadline)?;
        let runtime = self.runtime.as_ref().ok_or_else(|| ToolError::runtime("the MCP runtime is gone"))?;
        let lost = || ToolError::runtime("lost the MCP connection");
        let Slot { server: config, state } =
            self.servers.iter_mut().find(|slot| slot.server.name == server).ok_or_else(lost)?;
        let State::Open(connection) = state else { return Err(lost()) };
        let within = until.saturating_duration_since(Instant::now());
        let answered = runtime.block_on(async { tokio::time::timeout(within, op(&connection.service)).await });
        let error = match answered {
            Ok(Ok(value)) => return Ok(value),
            Err(_) => return Err(timed_out(config, what, within, &connection.notes)),
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
        let failure = failed(config, &format!("`{what}` failed: {why}"), &connection.notes, kind);
        // Only an oversized message: the next call starts the server again. A closed
        // connection: the server failed for the rest of the run.
        let next = match (&oversized, closed) {
            (Some(_), _) => State::Idle,
            (None, true) => State::Failed(failure.clone()),
            (None, false) => return Err(failure),
        };
        if let State::Open(connection) = std::mem::replace(state, next) {
            runtime.block_on(shut(*connection));
        }
        Err(failure)
    }

    /// Opens the connection to `server` unless it is open (or failed earlier in this run).
    fn connect(&mut self, server: &str, until: Instant) -> Result<(), ToolError> {
        let config = match self.slot(server).map(|slot| &slot.state) {
            Some(State::Open(_)) => return Ok(()),
            Some(State::Failed(error)) => return Err(error.clone()),
            Some(State::Idle) | None => self.server(server)?,
        };
        let (workspace, network, max_message) = (self.workspace.clone(), self.network.clone(), self.max_message);
        let notes = SharedNotes::default();
        let within = until.saturating_duration_since(Instant::now());
        let runtime = self.runtime()?;
        let opened = runtime.block_on(async {
            tokio::time::timeout(within, open(&config, &workspace, &network, max_message, notes.clone())).await
        });
        let (state, outcome) = match opened {
            Ok(Ok(connection)) => (State::Open(Box::new(connection)), Ok(())),
            Ok(Err(message)) => {
                let error = failed(&config, &message, &notes, ErrorKind::Runtime);
                (State::Failed(error.clone()), Err(error))
            }
            Err(_) => {
                let error = timed_out(&config, "initialize", within, &notes);
                (State::Failed(error.clone()), Err(error))
            }
        };
        if let Some(slot) = self.slot_mut(server) {
            slot.state = state;
        }
        outcome
    }

    /// Closes every connection at once and ends every server's process group.
    pub(crate) fn close(&mut self) {
        let Some(runtime) = self.runtime.take() else { return };
        let mut connections = Vec::new();
        for slot in &mut self.servers {
            if let State::Open(connection) = std::mem::replace(&mut slot.state, State::Idle) {
                connections.push(*connection);
            }
        }
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
