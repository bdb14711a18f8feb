//! Every environment variable codeact reads, defined once. clap reads the flag-backed ones
//! through `env = …`; the rest are read with [`var`]. `codeact --help` lists the `CODEACT_*`
//! ones from [`ALL`].

use std::fmt::Write as _;
use std::path::Path;

use crate::limits::{self, format_seconds, format_size};
use crate::program;

/// Backend used by `run` and friends when `--backend` is not given.
pub(crate) const BACKEND: &str = "CODEACT_BACKEND";
/// Wall-clock limit in seconds for `run` (`--timeout`).
pub(crate) const TIMEOUT: &str = "CODEACT_TIMEOUT";
/// Memory limit for `run` (`--max-memory`), e.g. `512MiB`.
pub(crate) const MAX_MEMORY: &str = "CODEACT_MAX_MEMORY";
/// Output budget in bytes for `run` (`--max-output`).
pub(crate) const MAX_OUTPUT: &str = "CODEACT_MAX_OUTPUT";
/// Tool-call budget for `run` (`--max-tool-calls`).
pub(crate) const MAX_TOOL_CALLS: &str = "CODEACT_MAX_TOOL_CALLS";
/// Serve read-only (`--read-only`): what may change something raises `PermissionError`.
pub(crate) const READ_ONLY: &str = "CODEACT_READ_ONLY";
/// Comma-separated allow-list of tools; only these are offered.
pub(crate) const TOOLS: &str = "CODEACT_TOOLS";
/// Comma-separated deny-list of tools.
pub(crate) const DISABLE: &str = "CODEACT_DISABLE";
/// Directory holding the user's `config.json` and `tools/`.
pub(crate) const CONFIG_DIR: &str = "CODEACT_CONFIG_DIR";
/// The hook's enforcement mode: `off`, `nudge` or `exclusive`.
pub(crate) const MODE: &str = "CODEACT_MODE";
/// In nudge mode, the read-only rounds in a row after which the hook advises (default 3).
pub(crate) const NUDGE_AFTER: &str = "CODEACT_NUDGE_AFTER";
/// `0` stops the session-start hook from adding codeact's instructions.
pub(crate) const INJECT: &str = "CODEACT_INJECT";
/// How the written and injected instructions tell a model to run programs: `mcp` (codeact's MCP
/// server's `run` tool) or `bash` (a here-document); by default `mcp` under the plugin, which
/// bundles the server, else `bash`.
pub(crate) const ROUTE: &str = "CODEACT_ROUTE";
/// The real binary the plugin's launcher runs.
pub(crate) const BIN: &str = "CODEACT_BIN";
/// Set by the plugin's launcher to its own path: the command texts then name the launcher,
/// which finds the binary again after an upgrade.
pub(crate) const LAUNCHER: &str = "CODEACT_LAUNCHER";
/// Set by codeact for the MCP servers it starts: a codeact started so (a config that names
/// codeact's own server under another name) reads no MCP servers, so none starts itself again.
pub(crate) const NESTED: &str = "CODEACT_NESTED";
/// The bearer token every request to `codeact mcp serve --http` must carry; required when it
/// binds an address other than loopback.
pub(crate) const MCP_TOKEN: &str = "CODEACT_MCP_TOKEN";
/// A file holding that token, read instead of [`MCP_TOKEN`] (`--token-file`).
pub(crate) const MCP_TOKEN_FILE: &str = "CODEACT_MCP_TOKEN_FILE";
/// Where the CPython guest is installed.
pub(crate) const GUEST_DIR: &str = "CODEACT_GUEST_DIR";
/// Where compiled guest components are cached.
pub(crate) const CACHE_DIR: &str = "CODEACT_CACHE_DIR";
/// Whether codeact fetches the CPython guest itself: `suggest`, `auto` or `never`.
pub(crate) const GUEST_INSTALL: &str = "CODEACT_GUEST_INSTALL";

/// The user's home directory.
pub(crate) const HOME: &str = "HOME";
/// Where Copilot CLI keeps its configuration (default `~/.copilot`).
pub(crate) const COPILOT_HOME: &str = "COPILOT_HOME";
/// The project directory Copilot CLI gives its hooks.
pub(crate) const COPILOT_PROJECT_DIR: &str = "COPILOT_PROJECT_DIR";
/// The project directory Claude Code gives its hooks.
pub(crate) const CLAUDE_PROJECT_DIR: &str = "CLAUDE_PROJECT_DIR";
/// A private directory Copilot CLI gives each plugin for its state.
pub(crate) const COPILOT_PLUGIN_DATA: &str = "COPILOT_PLUGIN_DATA";
/// Where Copilot CLI's hooks are told the plugin lives (both names are set; older hosts may
/// set only one).
pub(crate) const PLUGIN_ROOTS: [&str; 2] = ["COPILOT_PLUGIN_ROOT", "PLUGIN_ROOT"];
/// GitHub tokens `github_api` uses when `gh` is not installed, in this order.
pub(crate) const GITHUB_TOKENS: [&str; 2] = ["GITHUB_TOKEN", "GH_TOKEN"];

/// What a process codeact starts for a tool it does not confine (an MCP stdio server, the
/// Python drop-in worker) inherits of codeact's environment; anything else it must be given.
#[cfg(unix)]
pub(crate) const INHERITED: &[&str] =
    &["PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_ALL", "TERM", "TMPDIR", "TZ"];

/// What a process codeact starts for a tool it does not confine inherits of codeact's
/// environment on Windows: what Windows programs need to start at all (`SystemRoot`: Winsock
/// and the C runtime fail without it; `PATHEXT`, `ComSpec`; the temporary folder; the user's
/// profile folders), besides the variables Unix programs read. Windows compares names without
/// case, as [`inherited`] does.
#[cfg(windows)]
pub(crate) const INHERITED: &[&str] = &[
    "PATH",
    "PATHEXT",
    "SystemRoot",
    "SystemDrive",
    "windir",
    "ComSpec",
    "TEMP",
    "TMP",
    "USERPROFILE",
    "USERNAME",
    "USERDOMAIN",
    "HOMEDRIVE",
    "HOMEPATH",
    "APPDATA",
    "LOCALAPPDATA",
    "ProgramData",
    "ProgramFiles",
    "ProgramFiles(x86)",
    "CommonProgramFiles",
    "NUMBER_OF_PROCESSORS",
    "PROCESSOR_ARCHITECTURE",
    "OS",
    "HOME",
    "LANG",
    "TERM",
    "TZ",
];

/// Python's variable that keeps the working directory off `sys.path`: set for the host tools
/// and servers that run in the workspace, where the program can plant a module.
pub(crate) const PYTHON_SAFE_PATH: &str = "PYTHONSAFEPATH";

/// The [`INHERITED`] variables codeact has, with their values, for a child's environment;
/// `PATH` keeps only its absolute entries outside `workspace` ([`program::child_path`]).
pub(crate) fn inherited(workspace: Option<&Path>) -> impl Iterator<Item = (&'static str, std::ffi::OsString)> {
    INHERITED.iter().filter_map(move |name| {
        let value = std::env::var_os(name)?;
        Some((*name, if *name == "PATH" { program::child_path(&value, workspace) } else { value }))
    })
}

/// `PATH` for a child codeact starts for the user's own tools in `workspace`: see
/// [`program::child_path`].
#[must_use]
pub(crate) fn child_path(workspace: &Path) -> std::ffi::OsString {
    std::env::var_os("PATH").map(|value| program::child_path(&value, Some(workspace))).unwrap_or_default()
}

/// The variables that list where interpreters look for code, `PATH`-like: an empty or relative
/// entry is the working directory, which for a tool is the workspace.
const SEARCH_PATHS: [&str; 6] = ["PATH", "PYTHONPATH", "NODE_PATH", "PERL5LIB", "RUBYLIB", "CLASSPATH"];

/// Each of [`SEARCH_PATHS`] codeact has, for a child that inherits codeact's environment and
/// works in `workspace`: kept to its absolute entries outside the workspace, `None` (to remove)
/// when none is left.
pub(crate) fn confined_search_paths(
    workspace: &Path,
) -> impl Iterator<Item = (&'static str, Option<std::ffi::OsString>)> {
    SEARCH_PATHS.into_iter().filter_map(move |name| {
        let kept = program::child_path(&std::env::var_os(name)?, Some(workspace));
        Some((name, (!kept.is_empty() || name == "PATH").then_some(kept)))
    })
}

/// Every `CODEACT_*` variable, for `--help` and docs/configuration.md.
pub const ALL: &[&str] = &[
    BACKEND,
    TIMEOUT,
    MAX_MEMORY,
    MAX_OUTPUT,
    MAX_TOOL_CALLS,
    TOOLS,
    DISABLE,
    CONFIG_DIR,
    MODE,
    NUDGE_AFTER,
    INJECT,
    ROUTE,
    BIN,
    LAUNCHER,
    MCP_TOKEN,
    MCP_TOKEN_FILE,
    GUEST_DIR,
    CACHE_DIR,
    GUEST_INSTALL,
];

/// One line about `name`, for `--help`; limit defaults come from [`limits::DEFAULT`], and
/// `backends` lists the backends [`BACKEND`] takes.
fn about(name: &str, backends: &str) -> String {
    let defaults = limits::DEFAULT;
    match name {
        BACKEND => format!("backend when --backend is not given ({backends})"),
        TIMEOUT => format!("wall-clock limit in seconds for `run` (default {})", format_seconds(defaults.timeout)),
        MAX_MEMORY => format!("memory limit for `run`, e.g. 512MiB (default {})", format_size(defaults.max_memory)),
        MAX_OUTPUT => format!("stdout budget in bytes for `run` (default {})", defaults.max_output),
        MAX_TOOL_CALLS => format!("tool-call budget for `run` (default {})", defaults.max_tool_calls),
        TOOLS => "comma-separated allow-list of tools".into(),
        DISABLE => "comma-separated deny-list of tools".into(),
        CONFIG_DIR => "user config directory (default $XDG_CONFIG_HOME/codeact or ~/.config/codeact)".into(),
        MODE => "hook enforcement: off (default), nudge or exclusive".into(),
        NUDGE_AFTER => "nudge mode advises after this many read-only rounds in a row, then denies (default 3)".into(),
        INJECT => "0 stops the session-start hook from adding the instructions".into(),
        ROUTE => {
            "how instructions run programs: mcp (the MCP server's run tool) or bash (default: mcp in the plugin)".into()
        }
        BIN => "the codeact binary the plugin launcher runs".into(),
        LAUNCHER => "set by the plugin launcher: the command texts run codeact through it".into(),
        MCP_TOKEN => "bearer token `mcp serve --http` requires (with --allow-remote, 32+ characters)".into(),
        MCP_TOKEN_FILE => "a file holding that token, read instead (`mcp serve --token-file`)".into(),
        GUEST_DIR => "where the CPython guest is installed (default $XDG_DATA_HOME/codeact/guest/…)".into(),
        CACHE_DIR => "where compiled guests are cached (default $XDG_CACHE_HOME/codeact)".into(),
        GUEST_INSTALL => {
            "fetching CPython: suggest (default; `install` fetches it), auto (also when a run needs it), never".into()
        }
        _ => String::new(),
    }
}

/// Reads a variable, treating an empty value as unset.
#[must_use]
pub(crate) fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|value| !value.is_empty())
}

/// The `after_help` text listing every variable. `backends` lists the backends [`BACKEND`]
/// takes, as their enum, which this module cannot name, spells them.
#[must_use]
pub(crate) fn help_section(backends: &str) -> String {
    let mut text = String::from("Environment:\n");
    for name in ALL {
        let _ = writeln!(text, "  {name:<24} {}", about(name, backends));
    }
    text.push_str("  NO_COLOR                 disable colour in messages");
    text
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_variable_has_a_description() {
        for name in super::ALL {
            assert!(!super::about(name, "auto").is_empty(), "{name}");
        }
    }
}
