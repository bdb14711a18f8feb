//! `codeact discover`: the tool manifest for this workspace and configuration, as JSON.

use anyhow::{Context, Result};
use serde_json::{Value as Json, json};

use super::instructions::tools_and_servers;
use crate::backend;
use crate::cli::BackendArgs;
use crate::config::Config;
use crate::exit;
use crate::output;
use crate::tools::ToolSpec;

pub fn run(args: &BackendArgs) -> Result<u8> {
    let config = Config::load(&args.common)?;
    let backend = backend::select(config.backend)?;
    let (registry, servers) = tools_and_servers(&config);
    let mcp: Vec<_> = servers.iter().map(|(name, tools)| json!({"name": name, "tools": tools})).collect();
    let manifest = json!({
        "backend": backend.name(),
        "workspace": config.workspace.display().to_string(),
        "tools": registry.tools().iter().map(|t| tool_json(t)).chain(registry.user_tools().iter().map(|t| json!({
            "name": t.tool.name,
            "description": t.tool.description,
            "signature": t.signature(),
            "parameters": t.parameters_schema(),
            "returns": "Any",
            "source": t.path.display().to_string(),
        }))).chain(registry.dropins().iter().map(|(name, description)| json!({
            "name": name,
            "description": description,
            "signature": format!("{name}(**arguments) -> Any"),
            "returns": "Any",
        }))).collect::<Vec<_>>(),
        "mcp_servers": mcp,
    });
    output::json(&manifest).context("failed to write to stdout")?;
    Ok(exit::SUCCESS)
}

/// One tool's manifest entry.
#[must_use]
pub fn tool_json(spec: &ToolSpec) -> Json {
    let mut entry = json!({
        "name": spec.name,
        "description": spec.description,
        "signature": spec.signature(),
        "parameters": spec.parameters_schema(),
        "returns": spec.returns,
    });
    if let (Some(risk), Json::Object(map)) = (spec.risk, &mut entry) {
        map.insert("risk".into(), json!({"level": "high", "reason": risk}));
    }
    entry
}
