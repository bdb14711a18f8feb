//! `codeact mcp serve`: codeact as an MCP server, over stdio or streamable HTTP.
//!
//! It offers two tools. `run` takes a program (`code`, and an optional `timeout`) and runs it as
//! one `codeact run` of its own ([`child`]): the result's text is what a model reads from the
//! command line, its structured content the `--json` object, and a failed program is an error
//! result. `describe` gives the tool reference, or the full documentation of the tools it is
//! asked about, so that `run`'s own description stays short. The reference is also the server's
//! instructions.
//!
//! Calls from every client share [`ServeArgs::max_concurrent`] slots; a call waits for one. A
//! call whose request carries a progress token gets a progress notification every
//! [`PROGRESS_EVERY`] while its program runs, and `notifications/cancelled` stops its program,
//! as does, over HTTP, a client gone for [`GONE_GRACE`].
//!
//! The workspace may not be the root or hold the home directory ([`broad`]), and on Linux the
//! server is not dumpable, so that a program's `bash` cannot read the token from `/proc`.

mod broad;
mod child;
mod http;
mod waiting;

use std::ffi::OsString;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, Result};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, InitializeResult,
    JsonObject, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ServerCapabilities, Tool,
    ToolAnnotations,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData as McpError, ServerHandler, ServiceExt as _};
use serde_json::{Value as Json, json};
use tokio::sync::Semaphore;
use tokio_util::sync::{CancellationToken, DropGuard};

use self::child::{Failed, Finished, Launch};
use super::reach;
use super::setup::{self, PROBE_TIME};
use crate::backend;
use crate::catalog::Discovery;
use crate::cli::ServeArgs;
use crate::exit::{self, UsageError};
use crate::limits::{self, format_seconds};
use crate::output;
use crate::render::{Reference, Route};
use crate::tools::github;

/// How often a running program's call reports progress, when its client asked for progress.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);

/// How long a call's program goes on once its HTTP client is gone: a run about to end still
/// ends with its report.
const GONE_GRACE: Duration = Duration::from_secs(3);

pub(crate) fn run(args: &ServeArgs) -> Result<u8> {
    forbid_inspection();
    if let Some(refusal) = broad::refusal(args)? {
        return refuse(args, refusal);
    }
    let config = setup::serve_config(&args.common, &args.tools)?;
    let backend = backend::select(config.backend)?;
    let token = http::token(args)?;
    // Listing what the workspace offers may start its MCP servers: before serving, on this
    // thread, since that has a runtime of its own.
    let built = setup::catalog(&config, github::access().as_ref(), Discovery::Probe(PROBE_TIME), false);
    let binary = reach::invocation();
    let reference =
        Reference { backend, catalog: &built.catalog, limits: &config.limits, binary: &binary, route: Route::Mcp };
    let instructions = reference.reference()?;
    let docs: Vec<Json> = built.catalog.tools().map(|tool| tool.describe().to_json()).collect();
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
    let program = std::env::current_exe().context("failed to find this binary to run programs with")?;
    let max_output = config.limits.max_output;
    let server = Server {
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
            slots: Semaphore::new(usize::from(args.max_concurrent)),
        }),
    };

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("failed to start the server's runtime")?;
    let served = runtime.block_on(async {
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
async fn serve_stdio(server: Server) -> Result<()> {
    let running = server.serve(rmcp::transport::stdio()).await.context("the MCP client did not initialize")?;
    running.waiting().await.context("the MCP connection failed")?;
    Ok(())
}

/// The server, one clone per connection, all sharing one [`Shared`].
#[derive(Debug, Clone)]
pub(crate) struct Server {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    launch: Launch,
    tools: Vec<Tool>,
    instructions: String,
    /// Each tool's documentation, as `discover` prints it (its `name` first).
    docs: Vec<Json>,
    /// A run's timeout when its call gives none, as `codeact run` would take it.
    default_timeout: Duration,
    /// The programs that may run at once.
    slots: Semaphore,
    /// Whether results leave out their structured content.
    text_only: bool,
}

/// The `run` tool. Its description is short, since every client shows it on every request: the
/// signatures are in the server's instructions, and `describe` gives them to a client that does
/// not pass those on.
fn run_tool(text_only: bool) -> Tool {
    let description = "Run a Python program that calls the workspace's tools as functions (see the codeact \
                       reference, or `describe`); returns what it prints and its last expression.";
    let input = json!({
        "type": "object",
        "properties": {
            "code": {"type": "string"},
            // Seconds. The bounds are checked on the call, with a message: in the schema, every
            // client would show them to the model on every request.
            "timeout": {"type": "number"}
        },
        // Unknown arguments are refused on the call, with a message, not in every request.
        "required": ["code"]
    });
    let output = json!({
        "type": "object",
        "properties": {
            "success": {"type": "boolean"},
            "stdout": {"type": "string"},
            "stderr": {"type": "string"},
            "return_value": {"description": "The last expression's value, as JSON (its repr when too large)."},
            "error": {
                "type": ["object", "null"],
                "properties": {
                    "type": {"type": "string"},
                    "message": {"type": "string"},
                    "line": {"type": ["integer", "null"]},
                    "traceback": {"type": "string"}
                }
            },
            "backend": {"type": "string"},
            "duration_ms": {"type": "integer"},
            "tool_calls": {"type": "integer"},
            "truncated": {"type": "boolean"},
            "guest_cache": {"type": "string"}
        },
        "required": ["success", "stdout", "stderr", "return_value", "error", "backend", "duration_ms", "tool_calls", "truncated"]
    });
    let tool = Tool::new("run", description, object(input))
        .with_title("Run a codeact program")
        .with_annotations(ToolAnnotations::new().read_only(false).destructive(true).idempotent(false).open_world(true));
    if text_only { tool } else { tool.with_raw_output_schema(Arc::new(object(output))) }
}

/// The `describe` tool.
fn describe_tool() -> Tool {
    let input = json!({
        "type": "object",
        "properties": {
            "names": {"type": "array", "items": {"type": "string"}}
        },
        "additionalProperties": false
    });
    Tool::new(
        "describe",
        "The full documentation (signature, parameters, result) of the named functions of codeact programs; \
         without names, the reference of all.",
        object(input),
    )
    .with_title("Describe codeact's tools")
    .with_annotations(ToolAnnotations::new().read_only(true).destructive(false).idempotent(true).open_world(false))
}

fn object(value: Json) -> JsonObject {
    match value {
        Json::Object(map) => map,
        _ => JsonObject::new(),
    }
}

impl ServerHandler for Server {
    fn get_info(&self) -> InitializeResult {
        InitializeResult::new(ServerCapabilities::builder().enable_tools().build())
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

impl Server {
    async fn call_run(
        &self,
        arguments: &JsonObject,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        if let Some(unknown) = arguments.keys().find(|key| !matches!(key.as_str(), "code" | "timeout")) {
            return Err(McpError::invalid_params(
                format!("`run` takes `code` and `timeout`, not `{}`", clip(unknown)),
                None,
            ));
        }
        let Some(Json::String(code)) = arguments.get("code") else {
            return Err(McpError::invalid_params("`run` needs `code`: the Python program, as a string", None));
        };
        let timeout = match arguments.get("timeout") {
            None | Some(Json::Null) => None,
            Some(Json::Number(seconds)) => Some(
                seconds
                    .as_f64()
                    .ok_or_else(|| "not a number".to_owned())
                    .and_then(limits::parse_timeout)
                    .map_err(|why| McpError::invalid_params(format!("`timeout`: {why}"), None))?,
            ),
            Some(_) => return Err(McpError::invalid_params("`timeout` is a number of seconds", None)),
        };
        let cancel = context.ct.child_token();
        let _watching = stop_when_gone(&context, &cancel);
        let _slot = tokio::select! {
            slot = self.shared.slots.acquire() => slot.map_err(|_| McpError::internal_error("the server is stopping", None))?,
            () = cancel.cancelled() => return Err(McpError::internal_error("cancelled", None)),
        };
        let timeout = timeout.unwrap_or(self.shared.default_timeout);
        let progress_token = context.meta.get_progress_token();
        let peer = context.peer.clone();
        let mut sent = Vec::new();
        let report = |elapsed: Duration| {
            let Some(token) = progress_token.clone() else { return };
            let peer = peer.clone();
            let mut param = ProgressNotificationParam::new(token, elapsed.as_secs_f64().floor());
            param.total = Some(timeout.as_secs_f64());
            param.message = Some(format!("running for {}", format_seconds(Duration::from_secs(elapsed.as_secs()))));
            sent.push(tokio::spawn(async move {
                let _ = peer.notify_progress(param).await;
            }));
        };
        let finished = child::run(&self.shared.launch, code, timeout, &cancel, PROGRESS_EVERY, report).await;
        // No progress may follow the result.
        for notification in sent {
            let _ = notification.await;
        }
        match finished {
            Ok(Finished { result, text, success }) => {
                let text = ContentBlock::text(if text.is_empty() { "(no output)".to_owned() } else { text });
                let mut answer = if self.shared.text_only {
                    CallToolResult::success(Vec::new())
                } else {
                    CallToolResult::structured(result)
                };
                answer.content = vec![text];
                answer.is_error = Some(!success);
                Ok(answer)
            }
            Err(Failed::Cancelled) => Err(McpError::internal_error("cancelled: the program was stopped", None)),
            Err(Failed::NoReport(why)) => Ok(CallToolResult::error(vec![ContentBlock::text(why)])),
        }
    }

    /// The documentation of each tool named, once, in the order first named. More names than
    /// there are tools is refused, so an answer is never larger than all the documentation.
    fn call_describe(&self, arguments: &JsonObject) -> Result<CallToolResult, McpError> {
        if let Some(unknown) = arguments.keys().find(|key| key.as_str() != "names") {
            return Err(McpError::invalid_params(format!("`describe` takes `names`, not `{}`", clip(unknown)), None));
        }
        let names: Vec<&str> = match arguments.get("names") {
            None | Some(Json::Null) => Vec::new(),
            Some(Json::Array(items)) => {
                items.iter().map(Json::as_str).collect::<Option<_>>().ok_or_else(names_are_strings)?
            }
            Some(_) => return Err(names_are_strings()),
        };
        if names.is_empty() {
            return Ok(CallToolResult::success(vec![ContentBlock::text(self.shared.instructions.clone())]));
        }
        let docs = &self.shared.docs;
        if names.len() > docs.len() {
            return Err(McpError::invalid_params(
                format!(
                    "`names` lists {} names, and there are {} tools: name each at most once",
                    names.len(),
                    docs.len()
                ),
                None,
            ));
        }
        let mut found: Vec<&Json> = Vec::new();
        for name in names {
            let Some(doc) = docs.iter().find(|doc| doc["name"] == name) else {
                let known: Vec<&str> = docs.iter().filter_map(|doc| doc["name"].as_str()).collect();
                return Ok(CallToolResult::error(vec![ContentBlock::text(format!(
                    "no tool `{}`; the tools are: {}",
                    clip(name),
                    known.join(", ")
                ))]));
            };
            if !found.iter().any(|seen| std::ptr::eq(*seen, doc)) {
                found.push(doc);
            }
        }
        // Compact: a model reads every byte, and Copilot CLI compacts it anyway.
        let text = serde_json::to_string(&found).unwrap_or_default();
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]))
    }
}

fn names_are_strings() -> McpError {
    McpError::invalid_params("`names` is a list of tool names", None)
}

/// A name the client sent, shortened for a message: the answer to a refused request stays
/// small whatever the request held.
fn clip(name: &str) -> String {
    const KEPT: usize = 64;
    match name.char_indices().nth(KEPT) {
        Some((at, _)) => format!("{}…", &name[..at]),
        None => name.to_owned(),
    }
}

/// Cancels `stop` once the HTTP client of the call is gone (its connection closed before the
/// answer's end) and [`GONE_GRACE`] has passed, so that a client that dropped its connection
/// does not hold a slot until the run's own timeout, which may be a day. Watches until the
/// guard it returns is dropped.
fn stop_when_gone(context: &RequestContext<RoleServer>, stop: &CancellationToken) -> Option<DropGuard> {
    let gone = context.extensions.get::<::http::request::Parts>()?.extensions.get::<http::ClientGone>()?.0.clone();
    let done = CancellationToken::new();
    let watching = done.clone();
    let stop = stop.clone();
    tokio::spawn(async move {
        tokio::select! {
            () = watching.cancelled() => {}
            () = async {
                gone.cancelled().await;
                tokio::time::sleep(GONE_GRACE).await;
            } => stop.cancel(),
        }
    });
    Some(done.drop_guard())
}

/// Says where the HTTP server listens, for the people and tests that start it.
fn announce(url: &str) {
    output::diagnostic(&format!("codeact: serving MCP at {url}"));
}
