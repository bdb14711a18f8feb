//! What codeact tells an MCP server about itself, and how it answers the server's requests:
//! it is `codeact` at this version, speaks the newest protocol revision that has an
//! `initialize` handshake, offers the workspace as its one root, and notes when the server
//! says its tool list changed. Sampling is refused and elicitation declined (rmcp's
//! defaults): codeact runs unattended, with no model or person to ask.
//!
//! Roots are deprecated in the newest protocol revision (SEP-2577), but the revision codeact
//! speaks has them, and roots-aware servers (filesystem, git) scope themselves to them.
#![allow(deprecated, reason = "roots are part of the protocol revision codeact negotiates")]

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rmcp::ClientHandler;
use rmcp::model::{
    ClientCapabilities, ClientConfig, ErrorData, Implementation, ListRootsResult, ProtocolVersion, Root,
    RootsCapabilities,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};

/// The client side of one connection.
#[derive(Debug, Clone)]
pub(super) struct Client {
    /// The workspace as a `file://` URI, and its folder name.
    root: (String, String),
    /// Set when the server says its tools changed; the next listing asks again.
    tools_changed: Arc<AtomicBool>,
}

impl Client {
    pub(super) fn new(workspace: &Path) -> Self {
        let uri = url::Url::from_directory_path(workspace)
            .map_or_else(|()| format!("file://{}", workspace.display()), |url| url.to_string());
        let name = workspace.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        Self { root: (uri, name), tools_changed: Arc::new(AtomicBool::new(false)) }
    }

    /// Whether the server said its tools changed since this was last asked, clearing it.
    pub(super) fn take_tools_changed(&self) -> bool {
        self.tools_changed.swap(false, Ordering::SeqCst)
    }
}

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        capabilities.roots = Some(RootsCapabilities::default());
        ClientConfig::new(capabilities, Implementation::new("codeact", env!("CARGO_PKG_VERSION")))
            .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> impl Future<Output = Result<ListRootsResult, ErrorData>> + Send + '_ {
        let (uri, name) = &self.root;
        let mut root = Root::new(uri.clone());
        root.name = (!name.is_empty()).then(|| name.clone());
        std::future::ready(Ok(ListRootsResult::new(vec![root])))
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tools_changed.store(true, Ordering::SeqCst);
    }
}
