//! The server itself: [`run`] reads the configuration, builds the catalogue and the reference
//! once, and serves them over stdio or HTTP until the client goes; [`CodeactServer`] answers the MCP
//! requests, handing each tool call to [`tools`](super::tools).

use std::ffi::OsString;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, Result};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, InitializeResult, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData as McpError, ServerHandler, ServiceExt as _};
use serde_json::Value as Json;
use tokio::sync::Semaphore;

use super::child::Launch;
use super::running::Runs;
use super::sandbox;
use super::sessions::{Session, Sessions};
use super::tools::{clip, describe_tool, run_tool};
use super::{broad, http};
use crate::backend;
use crate::catalog::Discovery;
use crate::cli::ServeArgs;
use crate::commands::reach;
use crate::commands::setup::{self, PROBE_TIME};
use crate::exit::{self, UsageError};
use crate::output;
use crate::render::{Reference, Serving};
use crate::route::Route;
use crate::tools::github;

/// `codeact mcp serve` with `args`: serves until the client goes or the server is stopped.
pub(crate) fn run(args: &ServeArgs) -> Result<u8> {
    forbid_inspection();
    if let Some(refusal) = broad::refusal(args)? {
        return refuse(args, refusal);
    }
    let mut config = setup::serve_config(&args.common, &args.tools)?;
    config.limits.read_only |= args.read_only;
    let backend = backend::select(config.backend)?;
    let token = http::token(args)?;
    // Listing what the workspace offers may start its MCP servers: before serving, on this
    // thread, since that has a runtime of its own.
    let built =
        setup::catalog(&config, github::access(&config.workspace).as_ref(), Discovery::Probe(PROBE_TIME), false);
    let binary = reach::invocation();
    // A workspace that holds the sessions' folder would let programs read them: no sessions
    // there.
    let mut keeps_state = !args.session_idle.is_zero();
    if keeps_state && crate::session::dir().is_none_or(|dir| crate::session::folder_in(&dir, &config.workspace)) {
        output::warning(
            "codeact's sessions folder lies in the workspace (or there is none): programs keep no state between \
             calls; set XDG_STATE_HOME to a folder outside it",
        );
        keeps_state = false;
    }
    let reference = Reference {
        backend,
        fallback: backend::fallback(config.backend),
        catalog: &built.catalog,
        limits: &config.limits,
        binary: &binary,
        route: Route::Mcp,
        serving: Serving { keeps_state, yield_after: (!args.yield_after.is_zero()).then_some(args.yield_after) },
    };
    let instructions = reference.reference()?;
    let docs: Vec<Json> = built.catalog.every_tool().map(|tool| tool.describe().to_json()).collect();
    drop(built);

    let mut shared = vec![OsString::from("--workspace"), config.workspace.clone().into_os_string()];
    shared.extend([OsString::from("--backend"), OsString::from(backend.name())]);
    for dir in &args.tools.dirs {
        let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.clone());
        shared.extend([OsString::from("--tools"), dir.into_os_string()]);
    }
    // The limits the server read (its config and `CODEACT_*` variables) are the runs' own: the
    // report's size, the progress total and the deadline of an overdue run follow them.
    shared.extend([OsString::from("--max-output"), OsString::from(config.limits.max_output.to_string())]);
    if config.limits.read_only {
        shared.push(OsString::from("--read-only"));
    }
    let program = std::env::current_exe().context("failed to find this binary to run programs with")?;
    let sessions = if keeps_state {
        Some(Sessions::new(args.session_idle, usize::from(args.max_concurrent), config.backend.keeps_state())?)
    } else {
        None
    };
    let max_output = config.limits.max_output;
    let server = CodeactServer {
        shared: Arc::new(Shared {
            launch: Launch {
                program,
                args: shared,
                // The report holds the output twice (the object and the text), a return value
                // and the program's stderr, each within the output limit.
                max_report: max_output.saturating_mul(8).saturating_add(1 << 20),
            },
            tools: vec![run_tool(args.text_only), describe_tool()],
            text_only: args.text_only,
            instructions,
            docs,
            default_timeout: config.limits.timeout,
            yield_after: args.yield_after,
            max_output,
            backend: backend.name(),
            slots: Arc::new(Semaphore::new(usize::from(args.max_concurrent))),
            sessions: sessions.clone(),
        }),
        session: None,
        runs: Arc::default(),
    };

    // A served run ends its own tools' groups in its grace before the server kills it.
    crate::reap::set_grace(crate::reap::TERM_GRACE * 2 + Duration::from_millis(500));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("failed to start the server's runtime")?;
    let served = runtime.block_on(async {
        if let Some(sessions) = sessions {
            tokio::spawn(async move {
                let mut sweeps = tokio::time::interval(sessions.sweep_every());
                loop {
                    sweeps.tick().await;
                    sessions.end_idle();
                }
            });
        }
        match args.http {
            Some(addr) => http::serve(server, addr, args, token).await,
            None => serve_stdio(server).await,
        }
    });
    // A client that went away leaves nothing running.
    crate::reap::terminate_all();
    runtime.shutdown_timeout(Duration::from_secs(1));
    served?;
    Ok(exit::SUCCESS)
}

/// Keeps the user's other processes out of the server's memory and environment (Linux): a
/// program's `bash` runs as the same user, and would otherwise read the token from
/// `/proc/<server>/environ`. What the server starts is dumpable again after its `exec`.
#[cfg(target_os = "linux")]
fn forbid_inspection() {
    let _ = rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable);
}

/// Elsewhere a process of the same user may read the server's environment (macOS: `ps -E`);
/// `--token-file` keeps the token out of it.
#[cfg(not(target_os = "linux"))]
fn forbid_inspection() {}

/// A refused workspace: an error over HTTP, which a person starts; over stdio, a server whose
/// every call says why, since a client shows a server that exits at once as merely missing.
/// Either way the exit status is a usage error's.
fn refuse(args: &ServeArgs, refusal: UsageError) -> Result<u8> {
    if args.http.is_some() {
        return Err(refusal.into());
    }
    let text_only = args.text_only;
    let refusal = anyhow::Error::from(refusal);
    output::error(&refusal);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("failed to start the server's runtime")?;
    if let Some(refusal) = refusal.downcast_ref::<UsageError>() {
        // The client closing the connection, or never opening it, is the end either way.
        let _ = runtime.block_on(broad::serve_refusal(refusal, text_only));
    }
    Ok(exit::USAGE)
}

/// Serves one client on stdin and stdout until it closes them.
async fn serve_stdio(server: CodeactServer) -> Result<()> {
    let running =
        server.with_new_session().serve(rmcp::transport::stdio()).await.context("the MCP client did not initialize")?;
    running.waiting().await.context("the MCP connection failed")?;
    Ok(())
}

/// The server, one clone per connection, all sharing one [`Shared`].
#[derive(Debug, Clone)]
pub(crate) struct CodeactServer {
    pub(super) shared: Arc<Shared>,
    /// The connection's session, where the server keeps one.
    pub(super) session: Option<Session>,
    /// The connection's runs that went on past their call.
    pub(super) runs: Arc<Runs>,
}

impl CodeactServer {
    /// The server for a client that has just connected: with a session of its own.
    pub(super) fn with_new_session(&self) -> Self {
        let session = self.shared.sessions.as_ref().map(Sessions::open);
        Self { shared: Arc::clone(&self.shared), session, runs: Arc::default() }
    }
}

#[derive(Debug)]
pub(super) struct Shared {
    pub(super) launch: Launch,
    tools: Vec<Tool>,
    pub(super) instructions: String,
    /// Each tool's documentation, as `discover` prints it (its `name` first).
    pub(super) docs: Vec<Json>,
    /// A run's timeout when its call gives none, as `codeact run` would take it.
    pub(super) default_timeout: Duration,
    /// How long a call waits for its program before it answers that it still runs, when the
    /// call does not say; 0: until it ends.
    pub(super) yield_after: Duration,
    /// The output budget of one answer.
    pub(super) max_output: usize,
    /// The backend's name, for the answer of a run that still runs.
    pub(super) backend: &'static str,
    /// The programs that may run at once.
    pub(super) slots: Arc<Semaphore>,
    /// Whether results leave out their structured content.
    pub(super) text_only: bool,
    /// The clients' sessions, where programs keep their state between calls.
    pub(super) sessions: Option<Arc<Sessions>>,
}

impl ServerHandler for CodeactServer {
    fn get_info(&self) -> InitializeResult {
        // Codex sends its sandbox state with every call to a server that asks (`sandbox`).
        let experimental = [(sandbox::CAPABILITY.to_owned(), rmcp::model::JsonObject::new())].into_iter().collect();
        InitializeResult::new(
            ServerCapabilities::builder().enable_experimental_with(experimental).enable_tools().build(),
        )
        .with_server_info(Implementation::new("codeact", env!("CARGO_PKG_VERSION")).with_title("codeact"))
        .with_instructions(self.shared.instructions.clone())
    }

    fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ListToolsResult, McpError>> + Send + '_ {
        std::future::ready(Ok(ListToolsResult::with_all_items(self.shared.tools.clone())))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.shared.tools.iter().find(|tool| tool.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let arguments = request.arguments.unwrap_or_default();
        match request.name.as_ref() {
            "run" => self.call_run(&arguments, context).await.map(CallToolResponse::from),
            "describe" => self.call_describe(&arguments).map(CallToolResponse::from),
            other => Err(McpError::invalid_params(
                format!("no tool `{}`: this server has `run` and `describe`", clip(other)),
                None,
            )),
        }
    }
}
