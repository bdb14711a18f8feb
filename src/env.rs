//! Every `CODEACT_*` environment variable, defined once. clap reads the flag-backed ones through
//! `env = …`; the rest are read here. `codeact --help` lists them all from [`ALL`].

/// Backend used by `run` and friends when `--backend` is not given.
pub const BACKEND: &str = "CODEACT_BACKEND";
/// Wall-clock limit in seconds for `run` (`--timeout`).
pub const TIMEOUT: &str = "CODEACT_TIMEOUT";
/// Memory limit for `run` (`--max-memory`), e.g. `512MiB`.
pub const MAX_MEMORY: &str = "CODEACT_MAX_MEMORY";
/// Output budget in bytes for `run` (`--max-output`).
pub const MAX_OUTPUT: &str = "CODEACT_MAX_OUTPUT";
/// Tool-call budget for `run` (`--max-tool-calls`).
pub const MAX_TOOL_CALLS: &str = "CODEACT_MAX_TOOL_CALLS";
/// Comma-separated allow-list of tools; only these are offered.
pub const TOOLS: &str = "CODEACT_TOOLS";
/// Comma-separated deny-list of tools.
pub const DISABLE: &str = "CODEACT_DISABLE";
/// Directory holding the user's `config.json` and `tools/`.
pub const CONFIG_DIR: &str = "CODEACT_CONFIG_DIR";
/// The hook's enforcement mode: `off`, `nudge` or `exclusive`.
pub const MODE: &str = "CODEACT_MODE";
/// In nudge mode, the consecutive read-only call that is denied (default 3).
pub const NUDGE_AFTER: &str = "CODEACT_NUDGE_AFTER";
/// `0` stops the session-start hook from adding codeact's instructions.
pub const INJECT: &str = "CODEACT_INJECT";
/// The real binary the plugin's launcher runs.
pub const BIN: &str = "CODEACT_BIN";
/// Where the CPython guest is installed.
pub const GUEST_DIR: &str = "CODEACT_GUEST_DIR";
/// Where compiled guest components are cached.
pub const CACHE_DIR: &str = "CODEACT_CACHE_DIR";

use std::fmt::Write as _;

/// Every variable with a one-line description, for `--help` and the README.
pub const ALL: &[(&str, &str)] = &[
    (BACKEND, "backend when --backend is not given (auto, monty, wasm, hyperlight)"),
    (TIMEOUT, "wall-clock limit in seconds for `run` (default 30)"),
    (MAX_MEMORY, "memory limit for `run`, e.g. 512MiB (default 512MiB)"),
    (MAX_OUTPUT, "stdout budget in bytes for `run` (default 20000)"),
    (MAX_TOOL_CALLS, "tool-call budget for `run` (default 10000)"),
    (TOOLS, "comma-separated allow-list of tools"),
    (DISABLE, "comma-separated deny-list of tools"),
    (CONFIG_DIR, "user config directory (default $XDG_CONFIG_HOME/codeact or ~/.config/codeact)"),
    (MODE, "hook enforcement: off (default), nudge or exclusive"),
    (NUDGE_AFTER, "nudge mode denies this many consecutive read-only calls (default 3)"),
    (INJECT, "0 stops the session-start hook from adding the instructions"),
    (BIN, "the codeact binary the plugin launcher runs"),
    (GUEST_DIR, "where the CPython guest is installed (default $XDG_DATA_HOME/codeact/guest/…)"),
    (CACHE_DIR, "where compiled guests are cached (default $XDG_CACHE_HOME/codeact)"),
];

/// One of codeact's directories: `$override_var` when set, else `$xdg_var/codeact`, else
/// `~/home_fallback/codeact`.
#[must_use]
pub fn codeact_dir(override_var: Option<&str>, xdg_var: &str, home_fallback: &str) -> Option<std::path::PathBuf> {
    use std::path::PathBuf;
    if let Some(dir) = override_var.and_then(var) {
        return Some(PathBuf::from(dir));
    }
    if let Some(xdg) = var(xdg_var) {
        return Some(PathBuf::from(xdg).join("codeact"));
    }
    var("HOME").map(|home| PathBuf::from(home).join(home_fallback).join("codeact"))
}

/// Reads a variable, treating an empty value as unset.
#[must_use]
pub fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|value| !value.is_empty())
}

/// The `after_help` text listing every variable.
#[must_use]
pub fn help_section() -> String {
    let mut text = String::from("Environment:\n");
    for (name, about) in ALL {
        let _ = writeln!(text, "  {name:<24} {about}");
    }
    text.push_str("  NO_COLOR                 disable colour in messages");
    text
}
