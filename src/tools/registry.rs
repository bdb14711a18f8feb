//! The tool registry: the built-in tools, filtered by the allow and deny lists, and the one
//! entry point that binds arguments and calls a tool.

use super::args;
use super::context::ToolContext;
use super::error::ToolError;
use super::spec::ToolSpec;
use super::value::Value;
use super::{bash, files, github, glob, grep, mcp, sql, web};
use crate::config::ToolFilter;
use crate::usertools::load::UserTool;

/// Every built-in tool, in the order the instructions present them.
pub const BUILTINS: &[&ToolSpec] =
    &[&files::VIEW, &files::CREATE, &files::EDIT, &glob::GLOB, &grep::GREP, &bash::BASH, &sql::SQL, &web::WEB_FETCH];

/// Whether a user tool may not take `name`: a built-in tool, an MCP helper, or a Python name
/// that a call would reach first.
#[must_use]
pub fn is_reserved(name: &str) -> bool {
    BUILTINS.iter().any(|t| t.name == name) || crate::usertools::check::RESERVED.contains(&name)
}

/// The tools offered in this run.
#[derive(Debug, Clone)]
pub struct Registry {
    tools: Vec<&'static ToolSpec>,
    disabled: Vec<String>,
    user: Vec<UserTool>,
    /// Python drop-ins: name and description (empty until described).
    dropins: Vec<(String, String)>,
}

impl Registry {
    /// The built-ins that `filter` allows.
    #[must_use]
    pub fn new(filter: &ToolFilter) -> Self {
        Self::with_mcp(filter, false)
    }

    /// The built-ins that `filter` allows, plus `mcp_call` and `mcp_tools` when MCP servers are
    /// configured, and `github_api` when `gh` or a token is there to use. A tool that could only
    /// fail here is not offered.
    #[must_use]
    pub fn with_mcp(filter: &ToolFilter, mcp: bool) -> Self {
        let mcp_tools: &[&'static ToolSpec] = if mcp { &[&mcp::MCP_CALL, &mcp::MCP_TOOLS] } else { &[] };
        let github: &[&'static ToolSpec] = if github::access().is_some() { &[&github::GITHUB_API] } else { &[] };
        let (tools, disabled): (Vec<_>, Vec<_>) =
            BUILTINS.iter().chain(github).chain(mcp_tools).copied().partition(|t| filter.allows(t.name));
        Self {
            tools,
            disabled: disabled.into_iter().map(|t| t.name.to_owned()).collect(),
            user: Vec::new(),
            dropins: Vec::new(),
        }
    }

    /// Adds the user's tools that `filter` allows.
    #[must_use]
    pub fn with_user_tools(mut self, filter: &ToolFilter, tools: Vec<UserTool>) -> Self {
        for tool in tools {
            if filter.allows(&tool.tool.name) {
                self.user.push(tool);
            } else {
                self.disabled.push(tool.tool.name.clone());
            }
        }
        self
    }

    /// Adds the Python drop-ins that `filter` allows and that no other tool has taken.
    #[must_use]
    pub fn with_dropins(mut self, filter: &ToolFilter, dropins: Vec<(String, String)>) -> Self {
        for (name, description) in dropins {
            let taken = is_reserved(&name) || self.user_tool(&name).is_some() || self.is_dropin(&name);
            if !taken && crate::usertools::is_identifier(&name) {
                if filter.allows(&name) {
                    self.dropins.push((name, description));
                } else {
                    self.disabled.push(name);
                }
            }
        }
        self
    }

    /// Whether `name` is an offered Python drop-in.
    #[must_use]
    pub fn is_dropin(&self, name: &str) -> bool {
        self.dropins.iter().any(|(n, _)| n == name)
    }

    /// The offered Python drop-ins, with their descriptions.
    #[must_use]
    pub fn dropins(&self) -> &[(String, String)] {
        &self.dropins
    }

    /// The offered user tools.
    #[must_use]
    pub fn user_tools(&self) -> &[UserTool] {
        &self.user
    }

    /// The user tool `name`, if offered.
    #[must_use]
    pub fn user_tool(&self, name: &str) -> Option<&UserTool> {
        self.user.iter().find(|t| t.tool.name == name)
    }

    /// The offered tools, in presentation order.
    #[must_use]
    pub fn tools(&self) -> &[&'static ToolSpec] {
        &self.tools
    }

    #[must_use]
    pub fn get(&self, name: &str) -> Option<&'static ToolSpec> {
        self.tools.iter().copied().find(|t| t.name == name)
    }

    /// Whether `name` is a tool that configuration switched off.
    #[must_use]
    pub fn is_disabled(&self, name: &str) -> bool {
        self.disabled.iter().any(|d| d == name)
    }

    /// The offered tool names: built-ins, user tools, drop-ins.
    #[must_use]
    pub fn name_list(&self) -> Vec<&str> {
        self.tools
            .iter()
            .map(|t| t.name)
            .chain(self.user.iter().map(|t| t.tool.name.as_str()))
            .chain(self.dropins.iter().map(|(n, _)| n.as_str()))
            .collect()
    }

    /// The offered tool names, comma-separated, for error messages.
    #[must_use]
    pub fn names(&self) -> String {
        self.name_list().join(", ")
    }

    /// Binds the arguments and runs the tool.
    pub fn call(
        &self,
        ctx: &mut ToolContext,
        spec: &'static ToolSpec,
        positional: Vec<Value>,
        keywords: Vec<(String, Value)>,
    ) -> Result<Value, ToolError> {
        let bound = args::bind(spec, positional, keywords)?;
        (spec.handler)(ctx, &bound)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names_are_unique_identifiers() {
        let mut names: Vec<&str> = BUILTINS.iter().map(|t| t.name).collect();
        assert!(names.iter().all(|n| n.chars().all(|c| c.is_ascii_lowercase() || c == '_')));
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), BUILTINS.len());
    }

    #[test]
    fn allow_and_deny_lists_filter_the_registry() {
        let filter = ToolFilter { allow: Some(vec!["view".into(), "bash".into()]), deny: vec!["bash".into()] };
        let registry = Registry::new(&filter);
        assert_eq!(registry.names(), "view");
        assert!(registry.is_disabled("bash"));
        assert!(registry.is_disabled("grep"));
        assert!(!registry.is_disabled("nonexistent"));
    }
}
