//! `mcp_call` and `mcp_tools`: what they take and return. The host runs them on the run's MCP
//! connections; they are offered only when a server is configured.

use super::spec::{Kind, Param, ParamDefault, ToolSpec};

pub(crate) static MCP_CALL: ToolSpec = ToolSpec {
    name: "mcp_call",
    description: "Call a tool of a configured MCP server; structured results come back as Python values, text as str. A server or tool that does not exist raises, listing what does.",
    params: &[
        Param::required("server", Kind::Str, "Server name"),
        Param::required("tool", Kind::Str, "Tool name"),
        Param::new("arguments", Kind::Kwargs, ParamDefault::None, "The tool's arguments, as keywords"),
    ],
    returns: "Any",
    risk: None,
};

pub(crate) static MCP_TOOLS: ToolSpec = ToolSpec {
    name: "mcp_tools",
    description: "A server's tools, each {name, description, input_schema}.",
    params: &[Param::required("server", Kind::Str, "Server name")],
    returns: "list[dict]",
    risk: None,
};
