//! The MCP helpers a program calls by name (`mcp_call`, `mcp_tools`, …), as one closed set: the
//! catalogue offers them and the host runs them by matching on [`McpHelper`], so a helper added
//! here is one the compiler makes both handle.

use crate::tools::mcp::{MCP_CALL, MCP_GET_PROMPT, MCP_PROMPTS, MCP_READ_RESOURCE, MCP_RESOURCES, MCP_TOOLS};
use crate::tools::spec::ToolSpec;

/// One MCP helper.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum McpHelper {
    /// `mcp_call(server, tool, **arguments)`.
    Call,
    /// `mcp_tools(server)`.
    Tools,
    /// `mcp_resources(server)`.
    Resources,
    /// `mcp_read_resource(server, uri)`.
    ReadResource,
    /// `mcp_prompts(server)`.
    Prompts,
    /// `mcp_get_prompt(server, name, **arguments)`.
    GetPrompt,
}

impl McpHelper {
    /// Every helper, in the order they are offered.
    pub(crate) const ALL: [Self; 6] =
        [Self::Call, Self::Tools, Self::Resources, Self::ReadResource, Self::Prompts, Self::GetPrompt];

    /// What it takes and returns, and what it is called.
    #[must_use]
    pub(crate) fn spec(self) -> &'static ToolSpec {
        match self {
            Self::Call => &MCP_CALL,
            Self::Tools => &MCP_TOOLS,
            Self::Resources => &MCP_RESOURCES,
            Self::ReadResource => &MCP_READ_RESOURCE,
            Self::Prompts => &MCP_PROMPTS,
            Self::GetPrompt => &MCP_GET_PROMPT,
        }
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::tools::mcp::HELPERS;

    #[test]
    fn every_helper_is_offered_in_the_order_of_its_specs() {
        let names: Vec<&str> = McpHelper::ALL.iter().map(|helper| helper.spec().name).collect();
        let specs: Vec<&str> = HELPERS.iter().map(|spec| spec.name).collect();
        assert_eq!(names, specs);
    }
}
