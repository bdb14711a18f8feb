//! What `codeact setup` writes for each agent: the file, the key, and the entry that makes
//! codeact's MCP server work there headless and interactive, with what the agent needs beyond
//! the plain server line (found by running each agent headless against a scripted model):
//!
//! - **Codex CLI** runs `codex exec` with approvals set to "never", which refuses every call to
//!   a tool not marked read-only: `default_tools_approval_mode = "approve"`. It shows the model
//!   the structured result unless the server sends text only, and passes the server none of
//!   its environment but the variables `env_vars` names.
//! - **Gemini CLI** leaves an untrusted server's tools out in headless mode: `trust`.
//! - **Qwen Code** defers a server's tools behind a search unless `alwaysLoadTools`, and asks an
//!   LLM classifier about each call unless the server is trusted.
//! - **Claude Code**, Codex and Qwen show the model the structured result, or both forms:
//!   `--text-only`.
//! - **VS Code** and **Cursor** start a server in no particular folder: `--workspace
//!   ${workspaceFolder}`.
//!
//! With `--url`, the agent connects to a server already serving streamable HTTP, with the same
//! settings but those of the server's own command line, which the notes name.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use serde_json::{Value, json};

use super::edit::Format;
use crate::cli::{Scope, SetupAgent};
use crate::env;

/// One agent's setup: where, what, and what the user should know.
pub(super) struct Plan {
    pub(super) file: PathBuf,
    pub(super) format: Format,
    pub(super) key: &'static [&'static str],
    pub(super) entry: Value,
    pub(super) notes: Vec<&'static str>,
}

/// The variables codeact's server reads, which Codex passes on only when named: codeact's own
/// (`CODEACT_NESTED` too, so that a codeact that Codex runs as another codeact's server starts
/// no servers again), and where the user keeps configuration and state (its config, trust, and the servers
/// `--gateway` moved are found there).
const SERVER_VARIABLES: [&str; 13] = [
    env::NESTED,
    env::BACKEND,
    env::TIMEOUT,
    env::MAX_MEMORY,
    env::MAX_OUTPUT,
    env::MAX_TOOL_CALLS,
    env::READ_ONLY,
    env::DISABLE,
    env::CONFIG_DIR,
    "XDG_CONFIG_HOME",
    "XDG_STATE_HOME",
    "XDG_DATA_HOME",
    "XDG_CACHE_HOME",
];

/// Where each agent's files are: the project's folder and the user's home folders.
pub(super) struct Places<'a> {
    pub(super) project: &'a Path,
    pub(super) home: &'a Path,
    /// The user's configuration folder (`XDG_CONFIG_HOME`, `~/.config`; `%APPDATA%` on Windows).
    pub(super) config: &'a Path,
}

/// The scope an agent is set up in when none is named: the project where the agent reads a
/// project file headless, else the user's.
pub(super) fn default_scope(agent: SetupAgent) -> Scope {
    match agent {
        // Headless Qwen Code skips a project's servers until approved interactively.
        SetupAgent::Copilot | SetupAgent::Codex | SetupAgent::Qwen => Scope::User,
        _ => Scope::Project,
    }
}

/// What setting up `agent` in `scope` writes, for the agent to reach codeact as `reach` says.
pub(super) fn plan(agent: SetupAgent, scope: Scope, places: &Places<'_>, reach: &Reach) -> Result<Plan> {
    let (file, format, key) = place(agent, scope, places)?;
    let (entry, notes) = entry(agent, scope, reach);
    Ok(Plan { file, format, key, entry, notes })
}

/// The file and key `agent` reads its MCP servers from in `scope`.
fn place(agent: SetupAgent, scope: Scope, places: &Places<'_>) -> Result<(PathBuf, Format, &'static [&'static str])> {
    const SERVERS: &[&str] = &["mcpServers", "codeact"];
    let (project, home) = (places.project, places.home);
    let at = |folder: &str, file: &str| {
        if scope == Scope::Project { project.join(folder).join(file) } else { home.join(folder).join(file) }
    };
    Ok(match (agent, scope) {
        (SetupAgent::Copilot, Scope::User) => (copilot_home(home).join("mcp-config.json"), Format::Json, SERVERS),
        (SetupAgent::Claude, Scope::Project) => (project.join(".mcp.json"), Format::Json, SERVERS),
        (SetupAgent::Claude, Scope::User) => (home.join(".claude.json"), Format::Json, SERVERS),
        (SetupAgent::Codex, Scope::User) => {
            (codex_home(home).join("config.toml"), Format::Toml, &["mcp_servers", "codeact"])
        }
        (SetupAgent::Gemini, Scope::User) => {
            let base = env::var("GEMINI_CLI_HOME").map_or_else(|| home.to_path_buf(), PathBuf::from);
            (base.join(".gemini").join("settings.json"), Format::Json, SERVERS)
        }
        (SetupAgent::Qwen, Scope::User) => {
            let base = env::var("QWEN_HOME").map_or_else(|| home.join(".qwen"), PathBuf::from);
            (base.join("settings.json"), Format::Json, SERVERS)
        }
        (SetupAgent::Gemini, _) => (at(".gemini", "settings.json"), Format::Json, SERVERS),
        (SetupAgent::Qwen, _) => (at(".qwen", "settings.json"), Format::Json, SERVERS),
        (SetupAgent::Cursor, _) => (at(".cursor", "mcp.json"), Format::Json, SERVERS),
        (SetupAgent::Opencode, Scope::Project) => (project.join("opencode.json"), Format::Json, &["mcp", "codeact"]),
        (SetupAgent::Opencode, Scope::User) => {
            (places.config.join("opencode").join("opencode.json"), Format::Json, &["mcp", "codeact"])
        }
        (SetupAgent::Vscode, Scope::Project) => {
            (project.join(".vscode").join("mcp.json"), Format::Json, &["servers", "codeact"])
        }
        (SetupAgent::Vscode, Scope::User) => {
            (vscode_user(home, places.config).join("mcp.json"), Format::Json, &["servers", "codeact"])
        }
        (agent, Scope::Project) => {
            bail!("{} reads MCP servers from the user's configuration only: use `--scope user`", name(agent))
        }
    })
}

/// How the agent reaches codeact: it starts `codeact mcp serve` itself, or it connects to a
/// server already serving streamable HTTP.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Reach {
    /// Start this codeact program over stdio.
    Command(String),
    /// Connect to this URL.
    Url(String),
}

/// The server entry `agent` needs, and what its user should know.
fn entry(agent: SetupAgent, scope: Scope, reach: &Reach) -> (Value, Vec<&'static str>) {
    match reach {
        Reach::Command(command) => stdio_entry(agent, scope, command),
        Reach::Url(url) => http_entry(agent, url),
    }
}

fn stdio_entry(agent: SetupAgent, scope: Scope, command: &str) -> (Value, Vec<&'static str>) {
    let serve = |extra: &[&str]| -> Value {
        let args: Vec<&str> = ["mcp", "serve"].into_iter().chain(extra.iter().copied()).collect();
        json!(args)
    };
    match agent {
        SetupAgent::Copilot => (
            json!({"type": "local", "command": command, "args": serve(&["--text-only"]), "tools": ["*"]}),
            vec![COPILOT_PLUGIN],
        ),
        SetupAgent::Claude if scope == Scope::Project => (
            json!({"command": command, "args": serve(&["--text-only"])}),
            vec!["Claude Code asks once to approve a project's .mcp.json servers"],
        ),
        SetupAgent::Claude => {
            (json!({"type": "stdio", "command": command, "args": serve(&["--text-only"])}), Vec::new())
        }
        SetupAgent::Codex => (
            json!({
                "command": command,
                "args": serve(&["--text-only"]),
                "default_tools_approval_mode": "approve",
                "env_vars": SERVER_VARIABLES,
            }),
            vec![CODEX_APPROVAL],
        ),
        SetupAgent::Gemini => {
            (json!({"command": command, "args": serve(&["--text-only"]), "trust": true}), vec![GEMINI_TRUST])
        }
        SetupAgent::Opencode => {
            (json!({"type": "local", "command": [command, "mcp", "serve"], "enabled": true}), Vec::new())
        }
        SetupAgent::Qwen => (
            json!({"command": command, "args": serve(&["--text-only"]), "trust": true, "alwaysLoadTools": true}),
            Vec::new(),
        ),
        SetupAgent::Cursor => {
            (json!({"command": command, "args": serve(&["--workspace", "${workspaceFolder}"])}), Vec::new())
        }
        SetupAgent::Vscode => (
            json!({"type": "stdio", "command": command, "args": serve(&["--workspace", "${workspaceFolder}"])}),
            Vec::new(),
        ),
    }
}

/// The entry for a server at `url`, with what each agent needs beyond the URL as over stdio.
/// Flags such as `--text-only` are the server's: the notes say which it should be started with.
fn http_entry(agent: SetupAgent, url: &str) -> (Value, Vec<&'static str>) {
    const TEXT_ONLY: &str = "start the server with `codeact mcp serve --http ADDR --text-only`: this agent shows a \
                             model the structured result otherwise";
    const PLAIN: &str = "start the server with `codeact mcp serve --http ADDR --workspace PROJECT`";
    match agent {
        SetupAgent::Copilot => (json!({"type": "http", "url": url, "tools": ["*"]}), vec![TEXT_ONLY, COPILOT_PLUGIN]),
        SetupAgent::Claude | SetupAgent::Vscode => {
            (json!({"type": "http", "url": url}), vec![if agent == SetupAgent::Claude { TEXT_ONLY } else { PLAIN }])
        }
        SetupAgent::Codex => {
            (json!({"url": url, "default_tools_approval_mode": "approve"}), vec![TEXT_ONLY, CODEX_APPROVAL])
        }
        SetupAgent::Gemini => (json!({"httpUrl": url, "trust": true}), vec![TEXT_ONLY, GEMINI_TRUST]),
        SetupAgent::Qwen => (json!({"httpUrl": url, "trust": true, "alwaysLoadTools": true}), vec![TEXT_ONLY]),
        SetupAgent::Opencode => (json!({"type": "remote", "url": url, "enabled": true}), vec![PLAIN]),
        SetupAgent::Cursor => (json!({"url": url}), vec![PLAIN]),
    }
}

const COPILOT_PLUGIN: &str = "the Copilot CLI plugin also brings codeact's hooks and instructions: see docs/agents.md";
const CODEX_APPROVAL: &str = "codex runs codeact's calls without asking (`codex exec` refuses them otherwise); \
                              codeact's server runs outside Codex's sandbox, and serves read-only when Codex runs \
                              read-only";
const GEMINI_TRUST: &str =
    "headless Gemini runs only in a trusted folder: trust this one in Gemini, or set GEMINI_CLI_TRUST_WORKSPACE=true";

/// The agent as codeact's files name it (`mcp/codex.toml`).
pub(super) fn id(agent: SetupAgent) -> &'static str {
    match agent {
        SetupAgent::Copilot => "copilot",
        SetupAgent::Claude => "claude",
        SetupAgent::Codex => "codex",
        SetupAgent::Gemini => "gemini",
        SetupAgent::Opencode => "opencode",
        SetupAgent::Qwen => "qwen",
        SetupAgent::Cursor => "cursor",
        SetupAgent::Vscode => "vscode",
    }
}

/// The agent as its users call it.
pub(super) fn name(agent: SetupAgent) -> &'static str {
    match agent {
        SetupAgent::Copilot => "Copilot CLI",
        SetupAgent::Claude => "Claude Code",
        SetupAgent::Codex => "Codex CLI",
        SetupAgent::Gemini => "Gemini CLI",
        SetupAgent::Opencode => "OpenCode",
        SetupAgent::Qwen => "Qwen Code",
        SetupAgent::Cursor => "Cursor",
        SetupAgent::Vscode => "VS Code",
    }
}

fn copilot_home(home: &Path) -> PathBuf {
    env::var(env::COPILOT_HOME).map_or_else(|| home.join(".copilot"), PathBuf::from)
}

fn codex_home(home: &Path) -> PathBuf {
    env::var("CODEX_HOME").map_or_else(|| home.join(".codex"), PathBuf::from)
}

/// VS Code's user folder: beneath the configuration folder on Linux and Windows, in
/// `Library/Application Support` on macOS.
fn vscode_user(home: &Path, config: &Path) -> PathBuf {
    if cfg!(target_os = "macos") {
        home.join("Library/Application Support/Code/User")
    } else {
        config.join("Code").join("User")
    }
}
