//! `codeact instructions`: the Markdown tool reference a model reads.

use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::backend;
use crate::cli::BackendArgs;
use crate::config::Config;
use crate::exit;
use crate::mcp::{Mcp, ServerTools};
use crate::output;
use crate::render::Reference;
use crate::tools::Registry;
use crate::usertools::load::load_reporting;
use crate::usertools::pyworker;

pub fn run(args: &BackendArgs) -> Result<u8> {
    let config = Config::load(&args.common)?;
    let backend = backend::select(config.backend)?;
    let (registry, mcp) = tools_and_servers(&config);
    let binary = current_binary();
    let text =
        Reference { backend, registry: &registry, limits: &config.limits, binary: &binary, mcp: &mcp }.reference()?;
    output::data(text.as_bytes()).context("failed to write to stdout")?;
    Ok(exit::SUCCESS)
}

/// The offered tools and the MCP servers that answered, with their tools. A server that cannot
/// be reached is left out with a warning: nothing is advertised that would fail.
#[must_use]
pub fn tools_and_servers(config: &Config) -> (Registry, Vec<ServerTools>) {
    let (registry, servers) = builtins_and_servers(config);
    (
        registry
            .with_user_tools(&config.tools, load_reporting(&config.workspace))
            .with_dropins(&config.tools, dropins(config)),
        servers,
    )
}

/// The Python drop-ins that load, described by a worker; those that fail are reported.
fn dropins(config: &Config) -> Vec<(String, String)> {
    let files = pyworker::files(&config.workspace);
    if files.is_empty() {
        return Vec::new();
    }
    let described = pyworker::Worker::start(&files, &config.workspace).and_then(|mut w| w.describe(DISCOVERY_TIME));
    let tools = match described {
        Ok(tools) => tools,
        Err(err) => {
            output::warning(&format!("Python tools left out: {}", err.message));
            return Vec::new();
        }
    };
    tools
        .into_iter()
        .filter_map(|tool| {
            let name = tool["name"].as_str()?.to_owned();
            if let Some(error) = tool["error"].as_str() {
                output::warning(&format!("Python tool `{name}` left out: {error}"));
                return None;
            }
            Some((name, tool["description"].as_str().unwrap_or_default().to_owned()))
        })
        .collect()
}

/// The built-in tools and the MCP servers that answered.
fn builtins_and_servers(config: &Config) -> (Registry, Vec<ServerTools>) {
    let mut mcp = Mcp::load(&config.workspace);
    if mcp.is_empty() || !config.tools.allows("mcp_call") {
        return (Registry::with_mcp(&config.tools, false), Vec::new());
    }
    let (servers, failed) = mcp.catalog(Instant::now() + DISCOVERY_TIME);
    for (name, error) in failed {
        output::warning(&format!("MCP server `{name}` left out: {error}"));
    }
    let registry = Registry::with_mcp(&config.tools, !servers.is_empty());
    (registry, servers)
}

/// How long listing every MCP server's tools may take.
const DISCOVERY_TIME: Duration = Duration::from_secs(20);

/// The absolute path of this binary, as models should invoke it.
#[must_use]
pub fn current_binary() -> String {
    std::env::current_exe()
        .and_then(|p| p.canonicalize())
        .map_or_else(|_| "codeact".to_owned(), |p| p.display().to_string())
}
