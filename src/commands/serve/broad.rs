//! The server's refusal of a workspace that holds the home directory, or the file system's root.
//!
//! Some clients start their servers in `/` (Cursor) and an agent session may start in `~`; a
//! plugin that names the project passes the directory the session started in. Every program would
//! then reach all of it, so such a workspace is refused however it is spelled (`.`, through a
//! symlink, with `..`), and whether named or not, unless `--allow-broad-workspace` says it is
//! meant. Over stdio the server still starts, so that the client shows a server whose every call
//! answers with the refusal and its hint, rather than one that is silently missing.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, InitializeResult,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData as McpError, ServerHandler, ServiceExt as _};

use crate::cli::ServeArgs;
use crate::env;
use crate::exit::UsageError;
use crate::hint::Hint;
use crate::platform::{self, Canonical as _};

/// Why the workspace `args` name (or the current directory) is refused, if it is.
pub(super) fn refusal(args: &ServeArgs) -> Result<Option<UsageError>> {
    if args.allow_broad_workspace {
        return Ok(None);
    }
    let named = args.common.workspace.is_some();
    let dir = match &args.common.workspace {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().context("failed to read the current directory")?,
    };
    // A workspace that does not exist is refused later, saying so.
    let Ok(workspace) = dir.canonical() else { return Ok(None) };
    if !is_broad(&workspace, home().as_deref()) {
        return Ok(None);
    }
    let whence = if named { "as named" } else { "where the client started the server" };
    Ok(Some(UsageError {
        message: format!(
            "the workspace would be `{}` ({whence}), which holds your home directory: every program would reach all of it",
            workspace.display()
        ),
        hint: Some(Hint::new(
            "start the session in a project folder, or name one: `codeact mcp serve --workspace DIR` \
             (`${workspaceFolder}` in VS Code and Cursor); --allow-broad-workspace serves it anyway",
        )),
    }))
}

/// Whether `workspace` (canonical) is the file system's root, or the home directory or a folder
/// above it.
fn is_broad(workspace: &Path, home: Option<&Path>) -> bool {
    workspace.parent().is_none() || home.is_some_and(|home| platform::is_within(home, workspace))
}

/// The user's home directory, canonical: `HOME`, else the system's record of it.
fn home() -> Option<PathBuf> {
    let home = env::var(env::HOME).map(PathBuf::from).or_else(std::env::home_dir)?;
    Some(home.canonical().unwrap_or(home))
}

/// Serves stdio until the client closes it, answering every call with `refusal`.
pub(super) async fn serve_refusal(refusal: &UsageError, text_only: bool) -> Result<()> {
    let mut text = format!("codeact cannot serve here: {}", refusal.message);
    if let Some(hint) = &refusal.hint {
        let _ = write!(text, "\nhint: {hint}");
    }
    let tools = vec![super::tools::run_tool(text_only), super::tools::describe_tool()];
    let running =
        Refused { text, tools }.serve(rmcp::transport::stdio()).await.context("the MCP client did not initialize")?;
    running.waiting().await.context("the MCP connection failed")?;
    Ok(())
}

/// A server whose workspace was refused: it lists the usual tools, and every call is an error
/// result that says why, so that the model can tell the user.
#[derive(Debug, Clone)]
struct Refused {
    text: String,
    tools: Vec<Tool>,
}

impl ServerHandler for Refused {
    fn get_info(&self) -> InitializeResult {
        InitializeResult::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("codeact", env!("CARGO_PKG_VERSION")).with_title("codeact"))
            .with_instructions(self.text.clone())
    }

    fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ListToolsResult, McpError>> + Send + '_ {
        std::future::ready(Ok(ListToolsResult::with_all_items(self.tools.clone())))
    }

    fn call_tool(
        &self,
        _request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<CallToolResponse, McpError>> + Send + '_ {
        let refused = CallToolResult::error(vec![ContentBlock::text(self.text.clone())]);
        std::future::ready(Ok(CallToolResponse::from(refused)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_home_and_folders_above_home_are_broad_and_projects_are_not() {
        let home = Path::new("/home/ada");
        for broad in ["/", "/home", "/home/ada"] {
            assert!(is_broad(Path::new(broad), Some(home)), "{broad}");
        }
        for narrow in ["/home/ada/project", "/home/bob", "/srv", "/home/adam"] {
            assert!(!is_broad(Path::new(narrow), Some(home)), "{narrow}");
        }
        assert!(is_broad(Path::new("/"), None));
        assert!(!is_broad(Path::new("/srv"), None));
    }
}
