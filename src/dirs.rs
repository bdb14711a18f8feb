//! codeact's own directories, each from its `CODEACT_*` variable when set, else the XDG
//! variable (when it is an absolute path, as the XDG spec asks), else the usual place under
//! `HOME`; and [`open_private`] for the small files codeact keeps in them.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use crate::env;
use crate::platform::{Careful as _, Follow, Modes as _};

/// The user's config directory: `$CODEACT_CONFIG_DIR`, `$XDG_CONFIG_HOME/codeact`,
/// `~/.config/codeact`.
#[must_use]
pub(crate) fn config() -> Option<PathBuf> {
    codeact_dir(Some(env::CONFIG_DIR), "XDG_CONFIG_HOME", ".config")
}

/// codeact's data directory: `$XDG_DATA_HOME/codeact`, else `~/.local/share/codeact`.
#[must_use]
pub(crate) fn data() -> Option<PathBuf> {
    codeact_dir(None, "XDG_DATA_HOME", ".local/share")
}

/// codeact's state directory, for what it remembers between runs (the workspaces the user
/// trusts): `$XDG_STATE_HOME/codeact`, else `~/.local/state/codeact`.
#[must_use]
pub(crate) fn state() -> Option<PathBuf> {
    codeact_dir(None, "XDG_STATE_HOME", ".local/state")
}

/// codeact's cache directory: `$CODEACT_CACHE_DIR`, `$XDG_CACHE_HOME/codeact`, `~/.cache/codeact`.
#[must_use]
pub(crate) fn cache() -> Option<PathBuf> {
    codeact_dir(Some(env::CACHE_DIR), "XDG_CACHE_HOME", ".cache")
}

/// A private directory for per-session state: `$COPILOT_PLUGIN_DATA`, else
/// `$XDG_RUNTIME_DIR/codeact`, else the cache directory.
#[must_use]
pub(crate) fn runtime() -> Option<PathBuf> {
    env::var(env::COPILOT_PLUGIN_DATA)
        .map(PathBuf::from)
        .or_else(|| xdg("XDG_RUNTIME_DIR").map(|dir| dir.join("codeact")))
        .or_else(|| codeact_dir(None, "XDG_CACHE_HOME", ".cache"))
}

/// The user's home folder: `HOME`; on Windows `USERPROFILE` (then `HOME`).
#[must_use]
pub(crate) fn home() -> Option<PathBuf> {
    let named =
        if cfg!(windows) { env::var("USERPROFILE").or_else(|| env::var(env::HOME)) } else { env::var(env::HOME) };
    named.map(PathBuf::from).filter(|dir| dir.is_absolute())
}

/// The folder programs keep their configuration in: `$XDG_CONFIG_HOME`, else `~/.config`; on
/// Windows `%APPDATA%`.
#[must_use]
pub(crate) fn config_base() -> Option<PathBuf> {
    if cfg!(windows) {
        return env::var("APPDATA").map(PathBuf::from).filter(|dir| dir.is_absolute());
    }
    xdg("XDG_CONFIG_HOME").or_else(|| home().map(|home| home.join(".config")))
}

/// `$override_var` when set, else `$xdg_var/codeact`, else `~/home_fallback/codeact`; on
/// Windows, where no XDG variable is set, the folder [`windows_home`] names for `xdg_var`.
fn codeact_dir(override_var: Option<&str>, xdg_var: &str, home_fallback: &str) -> Option<PathBuf> {
    if let Some(dir) = override_var.and_then(env::var) {
        return Some(PathBuf::from(dir));
    }
    if let Some(xdg) = xdg(xdg_var) {
        return Some(xdg.join("codeact"));
    }
    #[cfg(windows)]
    {
        let _ = home_fallback;
        windows_home(xdg_var)
    }
    #[cfg(not(windows))]
    env::var(env::HOME).map(|home| PathBuf::from(home).join(home_fallback).join("codeact"))
}

/// Where codeact's folders are on Windows, beneath the user's profile, whose ACL admits the
/// user alone (with the administrators and the system): the config in the roaming
/// `%APPDATA%\codeact`, the rest in the local `%LOCALAPPDATA%\codeact` (`data`, `state`,
/// `cache`).
#[cfg(windows)]
fn windows_home(xdg_var: &str) -> Option<PathBuf> {
    let (known, sub) = match xdg_var {
        "XDG_CONFIG_HOME" => ("APPDATA", None),
        "XDG_DATA_HOME" => ("LOCALAPPDATA", Some("data")),
        "XDG_STATE_HOME" => ("LOCALAPPDATA", Some("state")),
        _ => ("LOCALAPPDATA", Some("cache")),
    };
    let base = env::var(known).map(PathBuf::from).filter(|dir| dir.is_absolute())?.join("codeact");
    Some(match sub {
        Some(sub) => base.join(sub),
        None => base,
    })
}

/// An XDG base directory variable, when it holds an absolute path; a relative one is ignored.
fn xdg(name: &str) -> Option<PathBuf> {
    env::var(name).map(PathBuf::from).filter(|dir| dir.is_absolute())
}

/// Opens `path`, a small file of codeact's own, for writing (appending with `append`), creating
/// it with mode 0600 and its folder with mode 0700 when missing. A symbolic link at `path` is
/// refused, not followed.
pub(crate) fn open_private(path: &Path, append: bool) -> io::Result<File> {
    if let Some(dir) = path.parent() {
        std::fs::DirBuilder::new().recursive(true).unix_mode(0o700).create(dir)?;
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .append(append)
        .unix_mode(0o600)
        .careful(Follow::NoLinks)
        .open(path)?;
    // Windows opens a link at the last name itself where O_NOFOLLOW fails: refuse it alike.
    if file.metadata()?.file_type().is_symlink() {
        return Err(io::Error::other(format!("`{}` is a link", path.display())));
    }
    Ok(file)
}

/// Makes `dir`, a folder of codeact's own, with mode 0700 (and its missing parents).
pub(crate) fn make_private_dir(dir: &Path) -> io::Result<()> {
    std::fs::DirBuilder::new().recursive(true).unix_mode(0o700).create(dir)
}

/// An agent whose own MCP configuration codeact reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AgentMcp {
    Copilot,
    Claude,
    Codex,
    Gemini,
    Qwen,
    Cursor,
    OpenCode,
}

/// Each agent's own MCP configuration file, in this order: Copilot CLI (`$COPILOT_HOME`, else
/// `~/.copilot`), Claude Code (`$CLAUDE_CONFIG_DIR/.claude.json`, else `~/.claude.json`), Codex CLI (`$CODEX_HOME`, else `~/.codex`),
/// Gemini CLI (`$GEMINI_CLI_HOME`, else the home folder), Qwen Code (`$QWEN_HOME`, else
/// `~/.qwen`), Cursor, OpenCode (`$OPENCODE_CONFIG`, `$OPENCODE_CONFIG_DIR`, then under
/// `$XDG_CONFIG_HOME`, else `~/.config`, on every system as OpenCode has it). `lookup` reads the environment; with no home folder, only what a variable
/// names.
pub(crate) fn agent_mcp_files(lookup: &dyn Fn(&str) -> Option<String>) -> Vec<(AgentMcp, PathBuf)> {
    // A relative value means a folder of wherever codeact runs: none of these is read then.
    let var =
        |name: &str| lookup(name).filter(|value| !value.is_empty()).map(PathBuf::from).filter(|p| p.is_absolute());
    let home = var(env::HOME).or_else(|| var("USERPROFILE"));
    let under = |name: &str, default: &str| var(name).or_else(|| Some(home.as_ref()?.join(default)));
    let config = var("XDG_CONFIG_HOME").or_else(|| Some(home.as_ref()?.join(".config")));
    let files = [
        (AgentMcp::Copilot, under(env::COPILOT_HOME, ".copilot").map(|dir| dir.join("mcp-config.json"))),
        (AgentMcp::Claude, under("CLAUDE_CONFIG_DIR", "").map(|dir| dir.join(".claude.json"))),
        (AgentMcp::Codex, under("CODEX_HOME", ".codex").map(|dir| dir.join("config.toml"))),
        (AgentMcp::Gemini, under("GEMINI_CLI_HOME", "").map(|dir| dir.join(".gemini/settings.json"))),
        (AgentMcp::Qwen, under("QWEN_HOME", ".qwen").map(|dir| dir.join("settings.json"))),
        (AgentMcp::Cursor, home.as_ref().map(|home| home.join(".cursor/mcp.json"))),
        (AgentMcp::OpenCode, var("OPENCODE_CONFIG")),
        (AgentMcp::OpenCode, var("OPENCODE_CONFIG_DIR").map(|dir| dir.join("opencode.json"))),
        (AgentMcp::OpenCode, var("OPENCODE_CONFIG_DIR").map(|dir| dir.join("opencode.jsonc"))),
        (AgentMcp::OpenCode, config.as_ref().map(|dir| dir.join("opencode/opencode.json"))),
        (AgentMcp::OpenCode, config.as_ref().map(|dir| dir.join("opencode/opencode.jsonc"))),
    ];
    files.into_iter().filter_map(|(agent, path)| Some((agent, path?))).collect()
}
