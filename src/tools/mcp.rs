//! The MCP helpers: what they take and return. The host runs them on the run's MCP
//! connections; they are offered only when a server is configured.

use super::spec::{Kind, Param, ParamDefault, ToolSpec};

const SERVER: Param = Param::required("server", Kind::Str, "Server name");

pub(crate) static MCP_CALL: ToolSpec = ToolSpec {
    name: "mcp_call",
    description: "Call a tool of a configured MCP server by its exact name; structured results come back as Python values, text as str, images, audio and resources as dicts. A server or tool that does not exist raises, listing what does.",
    params: &[
        SERVER,
        Param::required("tool", Kind::Str, "Tool name"),
        Param::new("arguments", Kind::Kwargs, ParamDefault::None, "The tool's arguments, as keywords"),
    ],
    returns: "Any",
    risk: None,
};

pub(crate) static MCP_TOOLS: ToolSpec = ToolSpec {
    name: "mcp_tools",
    description: "A server's tools, each {name, function, title, description, input_schema, output_schema, annotations}.",
    params: &[SERVER],
    returns: "list[dict]",
    risk: None,
};

pub(crate) static MCP_RESOURCES: ToolSpec = ToolSpec {
    name: "mcp_resources",
    description: "A server's resources, each {uri, name, title, description, mime_type}, then its resource templates, each with uri_template instead of uri.",
    params: &[SERVER],
    returns: "list[dict]",
    risk: None,
};

pub(crate) static MCP_READ_RESOURCE: ToolSpec = ToolSpec {
    name: "mcp_read_resource",
    description: "Read a resource of a server: a list of {uri, mime_type, text} (or data: bytes, for binary content).",
    params: &[SERVER, Param::required("uri", Kind::Str, "The resource's URI")],
    returns: "list[dict]",
    risk: None,
};

pub(crate) static MCP_PROMPTS: ToolSpec = ToolSpec {
    name: "mcp_prompts",
    description: "A server's prompts, each {name, title, description, arguments: [{name, description, required}]}.",
    params: &[SERVER],
    returns: "list[dict]",
    risk: None,
};

pub(crate) static MCP_GET_PROMPT: ToolSpec = ToolSpec {
    name: "mcp_get_prompt",
    description: "Get a prompt of a server with its arguments: {description, messages: [{role, content}]}.",
    params: &[
        SERVER,
        Param::required("name", Kind::Str, "Prompt name"),
        Param::new("arguments", Kind::Kwargs, ParamDefault::None, "The prompt's arguments, as keywords"),
    ],
    returns: "dict",
    risk: None,
};

/// Every MCP helper, in the order they are offered.
pub(crate) static HELPERS: [&ToolSpec; 6] =
    [&MCP_CALL, &MCP_TOOLS, &MCP_RESOURCES, &MCP_READ_RESOURCE, &MCP_PROMPTS, &MCP_GET_PROMPT];
