//! The list of built-in tools: the order they are presented in, and the names no user tool may
//! take. What a built-in tool is lives in [`super::handler`].

use super::handler::Builtin;
use super::{bash, files, github, glob, grep, mcp, sql, web};

/// The built-in tools offered everywhere (unless configuration disables them), in the order the
/// instructions present them.
pub(crate) const BUILTINS: &[&Builtin] =
    &[&files::VIEW, &files::CREATE, &files::EDIT, &glob::GLOB, &grep::GREP, &bash::BASH, &sql::SQL, &web::WEB_FETCH];

/// Python names a call would reach before a tool of the same name.
const PYTHON_NAMES: &[&str] = &[
    "call_tool",
    "print",
    "len",
    "range",
    "open",
    "input",
    "list",
    "dict",
    "set",
    "str",
    "int",
    "float",
    "bool",
    "tuple",
    "type",
    "sorted",
    "min",
    "max",
    "sum",
    "any",
    "all",
    "map",
    "filter",
    "zip",
    "enumerate",
    "repr",
    "isinstance",
    "getattr",
    "hasattr",
    "abs",
    "round",
];

/// Whether a user tool may not take `name`: a built-in tool (also those offered only where they
/// can work: `github_api`, the MCP helpers), or a Python name a call would reach first.
#[must_use]
pub(crate) fn is_reserved(name: &str) -> bool {
    let specs = BUILTINS.iter().map(|b| &b.spec).chain([&github::GITHUB_API.spec]).chain(mcp::HELPERS);
    specs.map(|spec| spec.name).chain(PYTHON_NAMES.iter().copied()).any(|reserved| reserved == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names_are_unique_identifiers() {
        let mut names: Vec<&str> = BUILTINS.iter().map(|t| t.spec.name).collect();
        assert!(names.iter().all(|n| n.chars().all(|c| c.is_ascii_lowercase() || c == '_')));
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), BUILTINS.len());
    }

    #[test]
    fn built_in_tools_helpers_and_python_names_are_reserved() {
        for name in ["view", "github_api", "mcp_call", "mcp_tools", "call_tool", "print"] {
            assert!(is_reserved(name), "{name}");
        }
        assert!(!is_reserved("count_todos"));
    }

    #[test]
    fn every_spec_names_each_parameter_once() {
        for builtin in BUILTINS.iter().copied().chain([&github::GITHUB_API]) {
            let mut names: Vec<&str> = builtin.spec.params.iter().map(|p| p.name.as_ref()).collect();
            names.sort_unstable();
            let count = names.len();
            names.dedup();
            assert_eq!(names.len(), count, "{}", builtin.spec.name);
        }
    }
}
