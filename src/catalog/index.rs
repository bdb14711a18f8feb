//! [`Catalog`]: the tools offered in one command, in presentation order, and the names
//! configuration switched off, with the lookups every consumer shares.

use std::sync::Arc;

use super::entry::{McpFunction, Tool};
use crate::mcp::function_name;
use crate::tools::{ErrorKind, ToolError};

/// The tools offered here.
#[derive(Debug, Clone, Default)]
pub(crate) struct Catalog {
    tools: Vec<Tool>,
    /// Names configuration switched off, for a clearer `NameError`.
    disabled: Vec<String>,
    /// MCP servers whose tools were listed, in order.
    servers: Vec<String>,
}

impl Catalog {
    pub(crate) fn offer(&mut self, tool: Tool) {
        self.tools.push(tool);
    }

    pub(crate) fn disable(&mut self, name: &str) {
        self.disabled.push(name.to_owned());
    }

    /// Adds the tools `server` listed, each as a `<server>__<tool>` function.
    pub(crate) fn add_server(&mut self, server: &str, tools: &[serde_json::Value]) {
        if self.servers.iter().any(|s| s == server) {
            return;
        }
        self.servers.push(server.to_owned());
        for listed in tools {
            let Some(tool) = listed["name"].as_str() else { continue };
            self.tools.push(Tool::Mcp(Arc::new(McpFunction::Tool {
                function: function_name(server, tool),
                server: server.to_owned(),
                tool: tool.to_owned(),
                description: listed["description"].as_str().unwrap_or_default().to_owned(),
                input_schema: listed["input_schema"].clone(),
            })));
        }
    }

    /// The offered tool `name`.
    #[must_use]
    pub(crate) fn get(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|t| t.name() == name)
    }

    /// The offered tools a program calls by name, in presentation order: everything but the
    /// MCP servers' own tools, which are listed per server ([`Self::servers`]).
    pub(crate) fn tools(&self) -> impl Iterator<Item = &Tool> {
        self.tools.iter().filter(|t| t.server().is_none())
    }

    /// The names of [`Self::tools`].
    #[must_use]
    pub(crate) fn names(&self) -> Vec<&str> {
        self.tools().map(Tool::name).collect()
    }

    /// Whether MCP functions are offered, so that `<server>__<tool>` names resolve on use.
    #[must_use]
    pub(crate) fn offers_mcp(&self) -> bool {
        self.tools.iter().any(|t| matches!(t, Tool::Mcp(f) if **f == McpFunction::Call))
    }

    /// Each listed MCP server with its tools' function-name suffixes (`get-sum` → `get_sum`).
    #[must_use]
    pub(crate) fn servers(&self) -> Vec<(&str, Vec<String>)> {
        self.servers
            .iter()
            .map(|server| {
                let functions = self
                    .tools
                    .iter()
                    .filter(|t| t.server() == Some(server))
                    .map(|t| t.name().strip_prefix(&function_name(server, "")).unwrap_or(t.name()).to_owned())
                    .collect();
                (server.as_str(), functions)
            })
            .collect()
    }

    /// Whether `name` is a tool that configuration switched off.
    #[must_use]
    pub(crate) fn is_disabled(&self, name: &str) -> bool {
        self.disabled.iter().any(|d| d == name)
    }

    /// The `NameError` for a name that is neither defined nor an offered tool.
    #[must_use]
    pub(crate) fn unknown_name(&self, name: &str) -> ToolError {
        let available = self.names().join(", ");
        let message = if self.is_disabled(name) {
            format!(
                "name '{name}' is not defined: the tool '{name}' is disabled by configuration (available tools: {available})"
            )
        } else {
            format!("name '{name}' is not defined (available tools: {available})")
        };
        ToolError::new(ErrorKind::Name, message)
    }
}
