//! Which function each MCP tool becomes. A server's tools become `server__tool` functions, both
//! names cleaned up to Python names. Two servers whose names clean up to one prefix keep the
//! first configured; two tools that clean up to one function keep the first that is already a
//! Python name (else the first listed). What loses is said once and reached through `mcp_call`.

use std::collections::HashMap;
use std::sync::Arc;

use crate::mcp::config::Server;
use crate::mcp::listed::ListedTool;

/// A name with every character that is not a letter, digit or `_` replaced by `_`.
fn clean(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect()
}

/// `server__tool`, cleaned up: the function a tool becomes when no other takes it.
#[must_use]
pub(crate) fn function_name(server: &str, tool: &str) -> String {
    format!("{}__{}", clean(server), clean(tool))
}

/// The prefix of `server`'s functions among `servers`: its name cleaned up, unless an earlier
/// server has it.
pub(super) fn prefix(servers: &[Arc<Server>], server: &str) -> Option<String> {
    let cleaned = clean(server);
    let first = servers.iter().find(|s| clean(&s.name) == cleaned)?;
    (first.name == server).then_some(cleaned)
}

/// A warning for each server whose prefix an earlier server has.
pub(super) fn server_collisions(servers: &[Arc<Server>]) -> Vec<String> {
    let mut warnings = Vec::new();
    for server in servers {
        let name = &server.name;
        if prefix(servers, name).is_none() {
            let taken = servers.iter().find(|s| clean(&s.name) == clean(name)).map(|s| s.name.as_str());
            warnings.push(format!(
                "MCP servers `{}` and `{name}` would both have functions `{}__…`; `{name}` is reached through mcp_call('{name}', …) only",
                taken.unwrap_or_default(),
                clean(name)
            ));
        }
    }
    warnings
}

/// Gives each of `tools` (a server's, in listed order) its function under `prefix` (none
/// without a prefix), and a warning for each tool whose function another took.
pub(super) fn assign_functions(server: &str, prefix: Option<&str>, tools: &mut [ListedTool]) -> Vec<String> {
    let Some(prefix) = prefix else { return Vec::new() };
    let function = |name: &str| format!("{prefix}__{}", clean(name));
    // A tool whose name is already a Python name keeps its function over one cleaned up to it.
    let mut taken: HashMap<String, String> = HashMap::new();
    for exact in [true, false] {
        for tool in tools.iter().filter(|tool| (clean(&tool.name) == tool.name) == exact) {
            taken.entry(function(&tool.name)).or_insert_with(|| tool.name.clone());
        }
    }
    let mut warnings = Vec::new();
    for tool in tools {
        let wanted = function(&tool.name);
        match taken.get(&wanted) {
            Some(winner) if *winner == tool.name => tool.function = Some(wanted),
            winner => {
                let (winner, name) = (winner.map_or("", String::as_str), &tool.name);
                warnings.push(format!(
                    "MCP server `{server}`: tools `{winner}` and `{name}` would both be `{wanted}`; `{name}` is reached through mcp_call('{server}', '{name}', …)"
                ));
            }
        }
    }
    warnings
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn function_names_are_python_names() {
        assert_eq!(function_name("my-server", "get.version"), "my_server__get_version");
    }

    #[test]
    fn a_tool_already_named_as_python_keeps_its_function_and_the_other_is_said() {
        let mut tools: Vec<ListedTool> =
            ["get-x", "get_x", "other"].iter().filter_map(|name| ListedTool::read(&json!({"name": name}))).collect();
        let warnings = assign_functions("s", Some("s"), &mut tools);
        let functions: Vec<Option<&str>> = tools.iter().map(|tool| tool.function.as_deref()).collect();
        assert_eq!(functions, [None, Some("s__get_x"), Some("s__other")]);
        assert_eq!(
            warnings,
            [
                "MCP server `s`: tools `get_x` and `get-x` would both be `s__get_x`; `get-x` is reached through mcp_call('s', 'get-x', …)"
            ]
        );
    }
}
