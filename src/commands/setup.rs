//! What a command sets up from its arguments: the configuration ([`config`], [`run_config`],
//! [`serve_config`]) and the tool catalogue with what this machine offers ([`catalog()`]), telling
//! the user what the workspace has that they do not trust.

use std::time::Duration;

use anyhow::Result;

use crate::catalog::{self, Built, Discovery, Sources};
use crate::cli::{CommonArgs, LimitArgs, RunArgs, ToolsArgs};
use crate::config::{Config, Overrides};
use crate::mcp;
use crate::output;
use crate::program;
use crate::tools::github::Access;
use crate::trust::quote::quote;

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
    with_limits(&args.common, &args.tools, &args.limits)
}

/// The configuration for `mcp serve`: that of `codeact run` with no flags but the server's
/// workspace, backend and tools folders, so with the limits of `CODEACT_TIMEOUT`,
/// `CODEACT_MAX_MEMORY`, `CODEACT_MAX_OUTPUT` and `CODEACT_MAX_TOOL_CALLS`.
pub(crate) fn serve_config(common: &CommonArgs, tools: &ToolsArgs) -> Result<Config> {
    with_limits(common, tools, &limits_from_variables()?)
}

fn with_limits(common: &CommonArgs, tools: &ToolsArgs, limits: &LimitArgs) -> Result<Config> {
    Config::load(&Overrides {
        backend: common.backend,
        workspace: common.workspace.clone(),
        timeout: limits.timeout,
        max_memory: limits.max_memory,
        max_output: limits.max_output,
        max_tool_calls: limits.max_tool_calls,
        read_only: limits.read_only,
        tools: tools.dirs.clone(),
        skip_unusable_project: false,
    })
}

/// `run`'s limit flags as their `CODEACT_*` variables alone set them: the flags parsed from no
/// arguments, so each variable is read by its flag's own parser. The command line's parse has
/// refused a value that does not parse already: the top-level `codeact` takes `run`'s flags too.
fn limits_from_variables() -> Result<LimitArgs> {
    use clap::{Args as _, FromArgMatches as _};
    let flags = LimitArgs::augment_args(clap::Command::new("run").no_binary_name(true));
    let matches = flags.try_get_matches_from(std::iter::empty::<&str>())?;
    Ok(LimitArgs::from_arg_matches(&matches)?)
}

/// The catalogue for `config`, telling `github` what the command found; each tool file or server
/// left out is reported on stderr unless `quiet`, and what the user does not trust in one line.
pub(crate) fn catalog(config: &Config, github: Option<&Access>, discovery: Discovery, quiet: bool) -> Built {
    let user_mcp = mcp::config::Source::user(&|name| crate::env::var(name), crate::dirs::config().as_deref());
    let sources = Sources {
        workspace: Some(&config.workspace),
        tool_dirs: &config.tool_dirs,
        user_mcp: &user_mcp,
        filter: &config.tools,
        trust: &config.trust,
        network: &config.network,
        github: github.is_some(),
        node: || program::find("node", None).is_ok(),
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

/// The most items [`report_ignored`] names; the others are counted.
const MAX_IGNORED_NAMED: usize = 10;

/// One line naming `ignored` ([quoted](quote), the first [`MAX_IGNORED_NAMED`] of them, then
/// how many more), unless it is empty, and `command`, which trusts them.
pub(crate) fn report_ignored(ignored: &[String], command: &str) {
    if ignored.is_empty() {
        return;
    }
    let mut named: Vec<String> = ignored.iter().take(MAX_IGNORED_NAMED).map(|item| quote(item).into_owned()).collect();
    if ignored.len() > MAX_IGNORED_NAMED {
        named.push(format!("… and {} more", ignored.len() - MAX_IGNORED_NAMED));
    }
    output::warning(&format!(
        "ignored until you trust them: {}; review and approve with `{command}`",
        named.join(", ")
    ));
}
