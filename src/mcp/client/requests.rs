//! What a program asks of a server: a tool called by its function or through `mcp_call`, its
//! tools, resources and prompts. Structured content comes back as Python values, text as `str`,
//! anything else as dicts (see [`crate::mcp::content`]).

use std::time::Instant;

use rmcp::model::{CallToolRequestParams, GetPromptRequestParams, ReadResourceRequestParams};
use serde_json::{Map, Value as Json};

use super::connection::{Listing, json_items, json_of};
use super::servers::Mcp;
use crate::mcp::content;
use crate::tools::{ErrorKind, ToolError, Value};

impl Mcp {
    /// The server and tool that the function `name` calls, connecting to servers as needed:
    /// the longest server prefix that has such a function wins. `Err` is the `NameError`.
    pub(crate) fn resolve(&mut self, name: &str, deadline: Instant) -> Result<Option<(String, String)>, ToolError> {
        let mut candidates: Vec<(String, String)> = self
            .configs()
            .iter()
            .filter_map(|s| self.prefix(&s.name).map(|prefix| (s.name.clone(), prefix)))
            .filter(|(_, prefix)| name.strip_prefix(prefix.as_str()).is_some_and(|rest| rest.starts_with("__")))
            .collect();
        candidates.sort_by_key(|(_, prefix)| std::cmp::Reverse(prefix.len()));
        let mut first_offer = None;
        for (server, _) in candidates {
            let listing = self.listing(&server, deadline, false)?;
            if let Some(tool) = listing.tool_of(name) {
                return Ok(Some((server, tool.to_owned())));
            }
            first_offer.get_or_insert((server, listing));
        }
        let Some((server, listing)) = first_offer else { return Ok(None) };
        let offered: Vec<&str> = listing.tools.iter().filter_map(|t| t.tool.function.as_deref()).collect();
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
        if listing.tool(tool).is_none() {
            // The server may have added it since: ask once more before refusing.
            listing = self.listing(server, deadline, true)?;
        }
        let Some(checked) = listing.tool(tool) else {
            return Err(self.no_tool(server, tool, &listing));
        };
        let shown = checked.tool.function.clone().unwrap_or_else(|| format!("mcp_call('{server}', '{tool}')"));
        checked.arguments.check(&shown, &arguments).map_err(ToolError::type_error)?;
        let config = self.server(server)?;
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = Some(arguments);
        let result =
            self.request(server, tool, deadline, async |service| service.call_tool(params).await.and_then(json_of))?;
        if result["isError"] == Json::Bool(true) {
            let text = content::text_of(&result);
            return Err(ToolError::runtime(config.redact(&format!("MCP tool '{server}.{tool}' failed: {text}"))));
        }
        checked
            .output
            .tool_result(&result)
            .map_err(|why| ToolError::runtime(format!("MCP tool '{server}.{tool}' {why}")))
    }

    fn no_tool(&self, server: &str, tool: &str, listing: &Listing) -> ToolError {
        let names: Vec<&str> = listing.tools.iter().map(|t| t.tool.name.as_str()).collect();
        let hidden = self
            .server(server)
            .ok()
            .and_then(|s| {
                if s.excluded.iter().any(|t| t == tool) {
                    Some(format!("; its config leaves `{tool}` out"))
                } else {
                    s.tools.as_ref().map(|_| format!("; the `tools` list of its config may leave `{tool}` out"))
                }
            })
            .unwrap_or_default();
        ToolError::value(format!("MCP server '{server}' has no tool '{tool}' (tools: {}){hidden}", names.join(", ")))
    }

    /// The resources of `server`, then its resource templates.
    pub(crate) fn resources(&mut self, server: &str, deadline: Instant) -> Result<Value, ToolError> {
        let (resources, templates) = self.request(server, "resources/list", deadline, async |service| {
            let resources = service.list_all_resources().await?;
            let templates = service.list_all_resource_templates().await.unwrap_or_default();
            Ok((json_of(resources)?, json_of(templates)?))
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
            service.read_resource(params).await.and_then(json_of)
        })?;
        Ok(content::resource_contents(&result))
    }

    /// The prompts of `server`.
    pub(crate) fn prompts(&mut self, server: &str, deadline: Instant) -> Result<Value, ToolError> {
        let prompts = self.request(server, "prompts/list", deadline, async |service| {
            service.list_all_prompts().await.and_then(json_of)
        })?;
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
        let result = self.request(server, "prompts/get", deadline, async |service| {
            service.get_prompt(params).await.and_then(json_of)
        })?;
        Ok(content::prompt_messages(&result))
    }
}
