//! `codeact hook pre-tool-use` and `codeact hook session-start`: Copilot CLI hooks.
//!
//! A hook must never block the user: every internal error fails open — one line on stderr,
//! nothing on stdout, exit 0. To allow a call the hook prints nothing (printing `allow` would
//! bypass the user's own approval); to deny, exactly one JSON object.

use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde_json::json;

use super::common;
use crate::backend;
use crate::catalog::Discovery;
use crate::cli::HookEvent;
use crate::config::{Config, Overrides};
use crate::copilot;
use crate::env;
use crate::exit;
use crate::hook::mode::Mode;
use crate::hook::payload::{self, MAX_PAYLOAD};
use crate::hook::policy::{self, Decision};
use crate::hook::state::{self, StateDir};
use crate::output;
use crate::render::Reference;
use crate::tools::github;

pub(crate) fn run(event: HookEvent) -> Result<u8> {
    let outcome = read_stdin().and_then(|input| match event {
        HookEvent::PreToolUse => pre_tool_use(&input),
        HookEvent::SessionStart => session_start(&input),
    });
    match outcome {
        Ok(Some(reply)) => output::data(format!("{reply}\n").as_bytes())?,
        Ok(None) => {}
        Err(err) => output::diagnostic(&format!("codeact hook: {err:#} (allowing)")),
    }
    Ok(exit::SUCCESS)
}

fn read_stdin() -> Result<Vec<u8>> {
    let mut input = Vec::new();
    std::io::stdin()
        .lock()
        .take(MAX_PAYLOAD as u64 + 1)
        .read_to_end(&mut input)
        .context("failed to read the payload")?;
    Ok(input)
}

/// The JSON to print, if any.
fn pre_tool_use(input: &[u8]) -> Result<Option<serde_json::Value>> {
    let Some(call) = payload::tool_use(input) else { return Ok(None) };
    let config = load_config(call.cwd.as_deref())?;
    if config.mode == Mode::Off {
        return Ok(None);
    }
    let binary = common::current_binary();
    let backend = backend::select(config.backend).unwrap_or(backend::Backend::Monty);
    let command = format!("{binary} run --backend {}", backend.name());
    let class = policy::classify(&call, |word| is_codeact_program(word, &binary));
    let nudge_after = config.nudge_after;
    let state = match (&call.session_id, config.mode) {
        (Some(session), Mode::Nudge) => {
            let dir = state::default_dir().context("no place for hook state: set XDG_RUNTIME_DIR or HOME")?;
            Some((StateDir::open(&dir).with_context(|| format!("hook state in `{}`", dir.display()))?, session))
        }
        _ => None,
    };
    let count = state.as_ref().map_or(0, |(dir, session)| dir.read(session));
    let (decision, new_count) = policy::decide(config.mode, class, count, nudge_after, &call, &command);
    if let Some((dir, session)) = &state
        && new_count != count
    {
        dir.write(session, new_count).context("failed to save the hook state")?;
    }
    Ok(match decision {
        Decision::Allow => None,
        Decision::Deny { reason } => Some(json!({"permissionDecision": "deny", "permissionDecisionReason": reason})),
    })
}

fn session_start(input: &[u8]) -> Result<Option<serde_json::Value>> {
    let start = payload::session_start(input);
    if let Some(dir) = state::default_dir().and_then(|d| StateDir::open(&d).ok()) {
        dir.prune();
    }
    if env::var(env::INJECT).is_some_and(|v| v == "0") {
        return Ok(None);
    }
    let cwd = project_dir(start.as_ref().and_then(|s| s.cwd.as_deref()));
    if copilot::instructions_installed(&cwd) {
        return Ok(None);
    }
    let config = load_config(Some(&cwd.to_string_lossy()))?;
    let backend = backend::select(config.backend).unwrap_or(backend::Backend::Monty);
    // Nothing is started here (the hook must answer within its few seconds), so only what is
    // known without starting it is offered; what is left out is not reported: a hook's stderr
    // is not the user's.
    let built = common::catalog(&config, github::access().as_ref(), Discovery::Static, true);
    let binary = common::current_binary();
    let text = Reference { backend, catalog: &built.catalog, limits: &config.limits, binary: &binary }.reference()?;
    Ok(Some(json!({"additionalContext": text})))
}

/// The session's project directory: the payload's `cwd`, else `$COPILOT_PROJECT_DIR`, else ours.
fn project_dir(cwd: Option<&str>) -> PathBuf {
    cwd.map(PathBuf::from)
        .or_else(|| env::var(env::COPILOT_PROJECT_DIR).map(PathBuf::from))
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("."))
}

fn load_config(cwd: Option<&str>) -> Result<Config> {
    let workspace = project_dir(cwd);
    Config::load(&Overrides { workspace: Some(workspace), ..Overrides::default() })
}

/// Whether a command's program word runs codeact: its file name is `codeact` (the binary or
/// the plugin's launcher) or it is this very binary.
fn is_codeact_program(word: &str, binary: &str) -> bool {
    let path = Path::new(word);
    path.file_name().is_some_and(|name| name == "codeact") || word == binary
}
