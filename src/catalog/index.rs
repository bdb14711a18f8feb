//! [`Catalog`]: the tools offered in one command, in presentation order, and the names
//! configuration switched off, with the lookups every consumer shares.

use std::sync::Arc;

use super::entry::{McpFunction, Tool};
use crate::mcp::{ListedTool, McpHelper, function_name};
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

    /// Adds the tools `server` listed, each as its function (`function` in the listing; a tool
    /// without one is reached through `mcp_call` only), in place of what it listed before.
    pub(crate) fn add_server(&mut self, server: &str, tools: &[ListedTool]) {
        if !self.servers.iter().any(|s| s == server) {
            self.servers.push(server.to_owned());
        }
        self.tools.retain(|t| t.server() != Some(server));
        for listed in tools {
            let Some(function) = &listed.function else { continue };
            self.tools.push(Tool::Mcp(Arc::new(McpFunction::Tool {
                function: function.clone(),
                server: server.to_owned(),
                tool: listed.name.clone(),
                description: listed.description.clone(),
                input_schema: listed.input_schema.clone(),
                read_only: listed.read_only(),
            })));
        }
    }

    /// The offered tool `name`.
    #[must_use]
    pub(crate) fn get(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|t| t.name() == name)
    }

    /// Every offered tool, the MCP servers' own tools too: what `describe` documents.
    pub(crate) fn every_tool(&self) -> impl Iterator<Item = &Tool> {
        self.tools.iter()
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
        self.tools.iter().any(|t| match t {
            Tool::Mcp(function) => match function.as_ref() {
                McpFunction::Helper(helper) => match helper {
                    McpHelper::Call => true,
                    McpHelper::Tools
                    | McpHelper::Resources
                    | McpHelper::ReadResource
                    | McpHelper::Prompts
                    | McpHelper::GetPrompt => false,
                },
                McpFunction::Tool { .. } => false,
            },
            Tool::Builtin(_) | Tool::Markdown(_) | Tool::DropIn(_) => false,
        })
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

    /// Each listed MCP server with its functions as a program calls them, parameters and all
    /// (`get_sum(a, b)`, `fetch(url, max_length=…)`): what the instructions list.
    #[must_use]
    pub(crate) fn server_signatures(&self) -> Vec<(&str, Vec<String>)> {
        self.servers()
            .into_iter()
            .map(|(server, suffixes)| {
                let schemas = self.tools.iter().filter_map(|t| match t {
                    Tool::Mcp(function) => match function.as_ref() {
                        McpFunction::Tool { server: of, input_schema, .. } if of == server => Some(input_schema),
                        _ => None,
                    },
                    _ => None,
                });
                let signatures =
                    suffixes.into_iter().zip(schemas).map(|(suffix, schema)| signature(&suffix, schema)).collect();
                (server, signatures)
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

/// `name(required, optional=…)` from a tool's input schema.
fn signature(name: &str, schema: &serde_json::Value) -> String {
    let required: Vec<&str> =
        schema["required"].as_array().into_iter().flatten().filter_map(serde_json::Value::as_str).collect();
    let properties = schema["properties"].as_object().into_iter().flatten().map(|(key, _)| key.as_str());
    let (mut first, mut rest): (Vec<String>, Vec<String>) = (Vec::new(), Vec::new());
    for key in properties {
        if required.contains(&key) { first.push(key.to_owned()) } else { rest.push(format!("{key}=…")) }
    }
    first.extend(rest);
    format!("{name}({})", first.join(", "))
}
