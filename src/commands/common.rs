//! What the commands share: the configuration from their arguments, the tool catalogue with
//! what this machine offers, and how a model runs this binary.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;

use crate::catalog::{self, Built, Discovery, Sources};
use crate::cli::{CommonArgs, RunArgs, ToolsArgs};
use crate::config::{Config, Overrides};
use crate::copilot;
use crate::env;
use crate::hook::shell;
use crate::output;
use crate::program;
use crate::render::Route;
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

/// The configuration for `mcp serve`: that of `codeact run` with no flags but the server's
/// workspace, backend and tools folders, so with the limits of `CODEACT_TIMEOUT`,
/// `CODEACT_MAX_MEMORY`, `CODEACT_MAX_OUTPUT` and `CODEACT_MAX_TOOL_CALLS`, read by `run`'s
/// own flags.
pub(crate) fn serve_config(common: &CommonArgs, tools: &ToolsArgs) -> Result<Config> {
    use clap::{Args as _, FromArgMatches as _};
    let flags = RunArgs::augment_args(clap::Command::new("run").no_binary_name(true))
        .try_get_matches_from(std::iter::empty::<&str>())
        .and_then(|matches| RunArgs::from_arg_matches(&matches));
    // The command line's own parse has refused a value that does not parse already: the
    // top-level `codeact` takes `run`'s flags too.
    let mut run = flags?;
    run.common = common.clone();
    run.tools = tools.clone();
    run_config(&run)
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

/// How a model should run this codeact, as shell words: the plugin's launcher when this process
/// was started through it (`sh /…/bin/codeact`, which finds the binary again after an upgrade or
/// a `cargo clean`), `codeact` when `PATH` finds this very binary, else this binary's absolute
/// path.
#[must_use]
pub(crate) fn invocation() -> String {
    if let Some(launcher) = env::var(env::LAUNCHER).map(PathBuf::from).filter(|p| p.is_absolute() && p.is_file()) {
        return format!("sh {}", shell_quote(&launcher.display().to_string()));
    }
    let binary = current_binary();
    let found = on_path("codeact").and_then(|file| file.canonicalize().ok());
    if found.is_some_and(|file| file == Path::new(&binary)) {
        return "codeact".to_owned();
    }
    shell_quote(&binary)
}

/// `word` as the shell reads it back: as it is when it holds only safe characters, else in
/// single quotes.
#[must_use]
pub(crate) fn shell_quote(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "/._-+@%,:=".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// The file the shell would run for a bare `program` ([`program::shell_would_run`]).
#[must_use]
pub(crate) fn on_path(name: &str) -> Option<PathBuf> {
    program::shell_would_run(name)
}

/// The program a command line names that is not there: `codeact` not on `PATH`, a binary or
/// launcher script that was removed (after a `cargo clean`, say). `None` when it runs, or when
/// the line is not one this can read.
#[must_use]
pub(crate) fn missing_program(command: &str) -> Option<String> {
    let commands = shell::parse(command)?;
    let words = &commands.first()?.words;
    let (program, rest) = words.split_first()?;
    let missing = match (program.as_str(), rest.first()) {
        ("sh" | "bash", Some(script)) => !Path::new(script).is_file(),
        (word, _) if word.contains('/') => !program::is_executable(Path::new(word)),
        (word, _) => on_path(word).is_none(),
    };
    let shown = if matches!(program.as_str(), "sh" | "bash") { rest.first()? } else { program };
    missing.then(|| shown.clone())
}

/// The installed instructions file for `workspace` (repository or user level) whose command no
/// longer runs, with the program that is missing.
#[must_use]
pub(crate) fn stale_instructions(workspace: &Path) -> Option<(PathBuf, String)> {
    let (path, text) = copilot::installed_instructions(workspace)?;
    stale_command(&text).map(|missing| (path, missing))
}

/// The program the command of a generated file's text names that is gone, if it is.
#[must_use]
pub(crate) fn stale_command(text: &str) -> Option<String> {
    missing_program(copilot::command_in(text)?)
}

/// How the instructions this command writes or injects tell a model to run programs: `--route`
/// when given, else `$CODEACT_ROUTE`, else the MCP server's `run` tool when the plugin, which
/// bundles the server, runs this command, else a here-document for the shell. A value it does
/// not know counts as unset: the hooks must not fail on it.
#[must_use]
pub(crate) fn route(given: Option<Route>) -> Route {
    given
        .or_else(|| match env::var(env::ROUTE).as_deref() {
            Some("mcp") => Some(Route::Mcp),
            Some("bash") => Some(Route::Bash),
            _ => None,
        })
        .unwrap_or(if env::var(env::LAUNCHER).is_some() { Route::Mcp } else { Route::Bash })
}

/// The absolute path of this binary.
#[must_use]
pub(crate) fn current_binary() -> String {
    std::env::current_exe()
        .and_then(|p| p.canonicalize())
        .map_or_else(|_| "codeact".to_owned(), |p| p.display().to_string())
}
