//! One open connection to an MCP server, on the official Rust SDK (`rmcp`): starting its
//! transport (a child process on stdio, or streamable HTTP) through the `initialize` handshake,
//! listing its tools page by page, and closing it. Also when a request must have its answer:
//! within its timeout, and never later than the run's deadline less a margin.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::{ClientRequest, ListToolsRequest, PaginatedRequestParams, ServerResult};
use rmcp::service::{RoleClient, RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::Value as Json;

use super::errors::causes;
use crate::mcp::config::{Server, Transport};
use crate::mcp::handler::Client;
use crate::mcp::http;
use crate::mcp::listed::ListedTool;
use crate::mcp::output::OutputCheck;
use crate::mcp::schema::ArgumentCheck;
use crate::mcp::stdio::{self, Process, SharedNotes};
use crate::tools::network::NetworkPolicy;
use crate::tools::{ErrorKind, ToolError};

/// How long a server has to start and answer `initialize` (a probe: and list its tools),
/// whatever its per-call timeout.
pub(super) const STARTUP_TIMEOUT: Duration = Duration::from_secs(10);

/// What a request leaves of the run's remaining time, a tenth of it within these bounds, so a
/// program can still handle a server that did not answer.
const MIN_MARGIN: Duration = Duration::from_millis(500);
const MAX_MARGIN: Duration = Duration::from_secs(3);

/// The most pages of a list followed.
const MAX_PAGES: usize = 100;

pub(super) type Service = RunningService<RoleClient, Client>;

/// An open connection.
pub(super) struct Connection {
    pub(super) service: Service,
    pub(super) client: Client,
    pub(super) notes: SharedNotes,
    /// The child process of a stdio server.
    pub(super) process: Option<Process>,
    /// Its tools as last listed, until the server says they changed.
    pub(super) tools: Option<Arc<Listing>>,
}

/// A server's tools as listed, as far as its config's `tools` list allows.
pub(super) struct Listing {
    pub(super) tools: Vec<Checked>,
}

/// A listed tool, with its input and output schemas compiled once.
pub(super) struct Checked {
    pub(super) tool: ListedTool,
    pub(super) arguments: ArgumentCheck,
    pub(super) output: OutputCheck,
}

impl Listing {
    /// The listing of `tools`, their schemas compiled.
    pub(super) fn new(tools: Vec<ListedTool>) -> Self {
        let tools = tools
            .into_iter()
            .map(|tool| Checked {
                arguments: ArgumentCheck::new(&tool.input_schema),
                output: OutputCheck::new(tool.output_schema()),
                tool,
            })
            .collect();
        Self { tools }
    }

    /// The tools, as listed.
    pub(super) fn tools(&self) -> Vec<ListedTool> {
        self.tools.iter().map(|checked| checked.tool.clone()).collect()
    }

    /// The tool `name`.
    pub(super) fn tool(&self, name: &str) -> Option<&Checked> {
        self.tools.iter().find(|checked| checked.tool.name == name)
    }

    /// The name of the tool that the function `function` calls.
    pub(super) fn tool_of(&self, function: &str) -> Option<&str> {
        let checked = self.tools.iter().find(|checked| checked.tool.function.as_deref() == Some(function))?;
        Some(&checked.tool.name)
    }
}

/// When something that may take `timeout` must be done: never later than the run's deadline
/// less a margin (a tenth of what is left, within bounds), so a program can still handle a
/// server that did not answer.
pub(super) fn within(timeout: Duration, deadline: Instant) -> Result<Instant, ToolError> {
    let now = Instant::now();
    let left = deadline.saturating_duration_since(now);
    if left.is_zero() {
        return Err(ToolError::new(ErrorKind::Timeout, "the run's time limit was reached"));
    }
    let margin = (left / 10).clamp(MIN_MARGIN, MAX_MARGIN);
    let usable = left.checked_sub(margin).filter(|usable| !usable.is_zero()).unwrap_or(left);
    Ok(now + timeout.min(usable))
}

/// Starts the transport and performs the `initialize` handshake.
pub(super) async fn open(
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
                .custom_headers(http::header_map(headers)?)
                .max_sse_event_size(max_message);
            config.max_json_response_size = max_message;
            let shown = &server.shown;
            let http = http::client(url, server.from_workspace.then_some(network)).await?;
            let transport = StreamableHttpClientTransport::with_client(http, config);
            match client.clone().serve(transport).await {
                Ok(service) => Ok(Connection { service, client, notes, process: None, tools: None }),
                Err(err) => Err(format!("the MCP handshake with {shown} failed: {}", handshake_error(&err))),
            }
        }
    }
}

/// Closes one connection: the transport (for stdio, its stdin), then the process.
pub(super) async fn shut(connection: Connection) {
    let Connection { service, process, .. } = connection;
    let _ = tokio::time::timeout(Duration::from_secs(1), service.cancel()).await;
    if let Some(process) = process {
        process.close().await;
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

/// An rmcp result as the JSON the server sent (its types serialize back to the wire format);
/// one that cannot be written as JSON is no valid MCP result.
pub(super) fn json_of(result: impl serde::Serialize) -> Result<Json, ServiceError> {
    serde_json::to_value(result).map_err(|_| ServiceError::UnexpectedResponse)
}

/// The items of a JSON list (none when it is not one).
pub(super) fn json_items(list: &Json) -> impl Iterator<Item = &Json> {
    list.as_array().into_iter().flatten()
}

/// Every page of `tools/list`, each tool read on its own: one the SDK's types refuse (no
/// `inputSchema`, say) must not cost the server all its tools, and one without a name is left
/// out.
pub(super) async fn list_tools(service: &Service) -> Result<Vec<ListedTool>, ServiceError> {
    let mut tools = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let params = cursor.take().map(|cursor| PaginatedRequestParams::default().with_cursor(Some(cursor)));
        let request = ClientRequest::ListToolsRequest(
            params.map_or_else(ListToolsRequest::default, ListToolsRequest::with_param),
        );
        let page = match service.send_request(request).await? {
            ServerResult::ListToolsResult(result) => json_of(result)?,
            ServerResult::CustomResult(result) => result.0,
            _ => return Err(ServiceError::UnexpectedResponse),
        };
        tools.extend(json_items(&page["tools"]).filter_map(ListedTool::read));
        match page["nextCursor"].as_str() {
            Some(next) if !next.is_empty() => cursor = Some(next.to_owned()),
            _ => break,
        }
    }
    Ok(tools)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::*;

    #[test]
    fn an_answer_that_cannot_be_written_as_json_is_an_error_not_null() {
        // JSON objects have string keys only.
        let pairs = BTreeMap::from([((1, 2), "three")]);
        assert!(matches!(json_of(pairs), Err(ServiceError::UnexpectedResponse)));
        assert!(matches!(json_of(BTreeMap::from([("a", 1)])), Ok(value) if value == json!({"a": 1})));
    }
}
