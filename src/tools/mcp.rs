//! `mcp_call` and `mcp_tools`, and the `server__tool` functions, over the run's MCP servers.
//! Registered only when at least one server is configured.

use serde_json::Value as Json;

use super::args::Args;
use super::context::ToolContext;
use super::error::ToolError;
use super::spec::{Default, Kind, Param, ToolSpec};
use super::value::Value;

pub static MCP_CALL: ToolSpec = ToolSpec {
    name: "mcp_call",
    description: "Call a tool of a configured MCP server; structured results come back as Python values, text as str. A server or tool that does not exist raises, listing what does.",
    params: &[
        Param { name: "server", kind: Kind::Str, default: Default::Required, doc: "Server name" },
        Param { name: "tool", kind: Kind::Str, default: Default::Required, doc: "Tool name" },
        Param {
            name: "arguments",
            kind: Kind::Kwargs,
            default: Default::None,
            doc: "The tool's arguments, as keywords",
        },
    ],
    returns: "Any",
    risk: None,
    handler: call,
};

pub static MCP_TOOLS: ToolSpec = ToolSpec {
    name: "mcp_tools",
    description: "A server's tools, each {name, description, input_schema}.",
    params: &[Param { name: "server", kind: Kind::Str, default: Default::Required, doc: "Server name" }],
    returns: "list[dict]",
    risk: None,
    handler: tools,
};

fn call(ctx: &mut ToolContext, args: &Args) -> Result<Value, ToolError> {
    let server = args.str("server")?.to_owned();
    let tool = args.str("tool")?.to_owned();
    call_tool(ctx, &server, &tool, args.get("arguments"))
}

/// Calls `tool` on `server` with `arguments` (a dict of keywords).
pub fn call_tool(ctx: &mut ToolContext, server: &str, tool: &str, arguments: &Value) -> Result<Value, ToolError> {
    let arguments = match arguments.to_json() {
        Json::Object(map) => map,
        Json::Null | Json::Array(_) => serde_json::Map::new(),
        _ => return Err(ToolError::type_error("MCP tool arguments must be keywords")),
    };
    let deadline = ctx.deadline;
    ctx.mcp.call(server, tool, arguments, deadline).map(|json| Value::from_json(&json))
}

fn tools(ctx: &mut ToolContext, args: &Args) -> Result<Value, ToolError> {
    let server = args.str("server")?.to_owned();
    let deadline = ctx.deadline;
    ctx.mcp.tools(&server, deadline).map(|tools| Value::List(tools.iter().map(Value::from_json).collect()))
}

/// Finds the server and tool a `server__tool` function name stands for, connecting to the
/// server whose sanitised name is its prefix.
pub fn resolve_function(ctx: &mut ToolContext, name: &str) -> Option<Result<(String, String), ToolError>> {
    let servers: Vec<String> = ctx
        .mcp
        .servers()
        .iter()
        .map(|s| s.name.clone())
        .filter(|server| {
            name.starts_with(&format!("{}__", crate::mcp::function_name(server, "").trim_end_matches("__")))
        })
        .collect();
    let server = servers.into_iter().next()?;
    let deadline = ctx.deadline;
    let tools = match ctx.mcp.tools(&server, deadline) {
        Ok(tools) => tools,
        Err(err) => return Some(Err(err)),
    };
    let tool = tools
        .iter()
        .filter_map(|t| t["name"].as_str())
        .find(|tool| crate::mcp::function_name(&server, tool) == name)
        .map(str::to_owned);
    if let Some(tool) = tool {
        return Some(Ok((server, tool)));
    }
    let names: Vec<String> =
        tools.iter().filter_map(|t| t["name"].as_str()).map(|t| crate::mcp::function_name(&server, t)).collect();
    Some(Err(ToolError::new(
        super::error::ErrorKind::Name,
        format!("name '{name}' is not defined (MCP server '{server}' offers: {})", names.join(", ")),
    )))
}
