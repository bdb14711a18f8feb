//! `codeact discover`: the tool manifest for this workspace and configuration, as JSON.

use anyhow::Result;
use serde_json::json;

use super::setup::{self, PROBE_TIME};
use crate::backend;
use crate::catalog::Discovery;
use crate::cli::BackendArgs;
use crate::exit;
use crate::output;
use crate::tools::github;

pub(crate) fn run(args: &BackendArgs) -> Result<u8> {
    let config = setup::config(&args.common, Some(&args.tools))?;
    let backend = backend::select(config.backend)?;
    let built =
        setup::catalog(&config, github::access(&config.workspace).as_ref(), Discovery::Probe(PROBE_TIME), false);
    let catalog = &built.catalog;
    let servers: Vec<_> =
        catalog.servers().into_iter().map(|(name, tools)| json!({"name": name, "tools": tools})).collect();
    let manifest = json!({
        "backend": backend.name(),
        // Where a program the backend cannot run runs again (`auto` with CPython installed).
        "fallback": backend::fallback(config.backend).map(backend::Backend::name),
        "workspace": config.workspace.display().to_string(),
        "tools": catalog.tools().map(|tool| tool.describe().to_json()).collect::<Vec<_>>(),
        "mcp_servers": servers,
    });
    output::json(&manifest)?;
    Ok(exit::SUCCESS)
}
