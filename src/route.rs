//! How a model reaches codeact ([`Route`]): a here-document for the host's shell tool, or the
//! `run` tool of codeact's MCP server, and the names the hosts give that tool.

/// How a model reaches codeact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Route {
    /// A here-document for the host's shell tool: `codeact run <<'PY'`.
    Bash,
    /// The `run` tool of `codeact mcp serve` (the plugin bundles it).
    Mcp,
}

/// The names a host gives the `run` tool of codeact's MCP server (named `codeact`): Copilot
/// CLI's `<server>-<tool>`, Claude Code's `mcp__<server>__<tool>`, and Claude Code's for the
/// server of its codeact plugin.
pub(crate) const MCP_RUN_TOOLS: &[&str] = &["codeact-run", "mcp__codeact__run", "mcp__plugin_codeact_codeact__run"];
