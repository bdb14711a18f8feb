//! What the commands share: the configuration from their arguments, the tool catalogue with
//! what this machine offers, and the binary's own path.

use std::time::Duration;

use anyhow::Result;

use crate::catalog::{self, Built, Discovery, Sources};
use crate::cli::{CommonArgs, RunArgs, ToolsArgs};
use crate::config::{Config, Overrides};
use crate::copilot;
use crate::output;
use crate::tools::github::Access;
use crate::tools::process;

/// How long listing every MCP server's tools and describing the drop-ins may take.
pub(crate) const PROBE_TIME: Duration = Duration::from_secs(20);

/// The configuration for a workspace command, with the `--tools` folders of one that builds the
/// tool catalogue.
pub(crate) fn config(common: &CommonArgs, tools: Option<&ToolsArgs>) -> Result<Config> {
    Config::load(&Overrides {
        backend: common.backend,
        workspace: common.workspace.clone(),
        tools: tools.map(|tools| tools.dirs.clone()).unwrap_or_default(),
        ..Overrides::default()
    })
}

/// The configuration for `run`, with its limits.
pub(crate) fn run_config(args: &RunArgs) -> Result<Config> {
    Config::load(&Overrides {
        backend: args.common.backend,
        workspace: args.common.workspace.clone(),
        timeout: args.timeout,
        max_memory: args.max_memory,
        max_output: args.max_output,
        max_tool_calls: args.max_tool_calls,
        tools: args.tools.dirs.clone(),
        skip_unusable_project: false,
    })
}

/// The catalogue for `config`, telling `github` what the command found; each tool file or server
/// left out is reported on stderr unless `quiet`, and what the user does not trust in one line.
pub(crate) fn catalog(config: &Config, github: Option<&Access>, discovery: Discovery, quiet: bool) -> Built {
    let copilot_home = copilot::copilot_home();
    let sources = Sources {
        workspace: Some(&config.workspace),
        tool_dirs: &config.tool_dirs,
        copilot_home: copilot_home.as_deref(),
        filter: &config.tools,
        trust: &config.trust,
        network: &config.network,
        github: github.is_some(),
        node: || process::on_path("node").is_some(),
    };
    let built = catalog::build(&sources, discovery);
    if !quiet {
        for warning in &built.warnings {
            output::warning(warning);
        }
        report_untrusted(config, &built);
    }
    built
}

/// One line naming what this workspace has that the user does not trust, if anything.
pub(crate) fn report_untrusted(config: &Config, built: &Built) {
    let mut ignored: Vec<String> = built.untrusted.clone();
    ignored.extend(config.ignored());
    report_ignored(&ignored, &config.trust_command);
}

/// One line naming `ignored`, unless it is empty, and `command`, which trusts them.
pub(crate) fn report_ignored(ignored: &[String], command: &str) {
    if !ignored.is_empty() {
        output::warning(&format!(
            "ignored until you trust them: {}; review and approve with `{command}`",
            ignored.join(", ")
        ));
    }
}

/// The absolute path of this binary, as models should invoke it.
#[must_use]
pub(crate) fn current_binary() -> String {
    std::env::current_exe()
        .and_then(|p| p.canonicalize())
        .map_or_else(|_| "codeact".to_owned(), |p| p.display().to_string())
}
