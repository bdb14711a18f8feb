//! `codeact hook pre-tool-use` and `codeact hook session-start`: Copilot CLI hooks.
//!
//! A hook must never block the user: every internal error fails open — one line on stderr,
//! nothing on stdout, exit 0. To allow a call the hook prints nothing (printing `allow` would
//! bypass the user's own approval); to deny, exactly one JSON object. A payload the hook cannot
//! read is no internal error: exclusive mode denies it.
//!
//! What counts as codeact is decided here, against the file system: the program word of a
//! shell call must be this very binary or the plugin's launcher, by canonical path. A word
//! with a slash must be absolute; a bare `codeact` is looked up on the hook's `PATH` as the
//! shell would, and refused when a relative entry (the shell's current directory) comes first.

use std::cell::OnceCell;
use std::ffi::OsString;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
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
use crate::hook::shell::Program;
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
    let call = match payload::tool_use(input) {
        Ok(call) => call,
        Err(why) => {
            // Without a payload there is no `cwd`: the mode comes from the environment and the
            // project directory Copilot CLI names.
            let config = load_config(None)?;
            if config.mode == Mode::Off {
                return Ok(None);
            }
            let (_, command) = run_command(&config);
            return Ok(reply(policy::decide_unreadable(config.mode, why, &command)));
        }
    };
    let config = load_config(call.cwd.as_deref())?;
    if let Some(ignored) = config.ignored() {
        common::report_ignored(&[ignored], &config.trust_command);
    }
    if config.mode == Mode::Off {
        return Ok(None);
    }
    let (binary, command) = run_command(&config);
    let known = Known::new(&binary);
    let class = policy::classify(&call, |word| known.identify(word));
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
    Ok(reply(decision))
}

/// This binary's path and the command line a deny reason tells the model to run.
fn run_command(config: &Config) -> (String, String) {
    let binary = common::current_binary();
    let backend = backend::select_without_probing(config.backend).unwrap_or(backend::Backend::Monty);
    let command = format!("{binary} run --backend {}", backend.name());
    (binary, command)
}

/// What the hook prints for `decision`.
fn reply(decision: Decision) -> Option<serde_json::Value> {
    match decision {
        Decision::Allow => None,
        Decision::Deny { reason } => Some(json!({"permissionDecision": "deny", "permissionDecisionReason": reason})),
    }
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
    let backend = backend::select_without_probing(config.backend).unwrap_or(backend::Backend::Monty);
    // Nothing is started here (the hook must answer within its few seconds), so only what is
    // known without starting it is offered; what is left out is not reported (a hook's stderr
    // is not the user's), except what the user has not trusted, in one line.
    let built = common::catalog(&config, github::access().as_ref(), Discovery::Static, true);
    common::report_untrusted(&config, &built);
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
    let config =
        Config::load(&Overrides { workspace: Some(workspace), skip_unusable_project: true, ..Overrides::default() })?;
    // A repository's broken config must not switch off the user's mode: it is left out.
    if let Some(why) = &config.unusable_project {
        output::diagnostic(&format!("codeact hook: left out the project's config: {why}"));
    }
    Ok(config)
}

/// The files a shell call may run and still count as codeact, by canonical path; each is
/// looked up only when a command needs it.
struct Known {
    /// This binary, canonical (as [`common::current_binary`] gives it).
    binary: Option<PathBuf>,
    /// The plugin's launcher, `<plugin root>/bin/codeact`, canonical.
    launcher: OnceCell<Option<PathBuf>>,
}

impl Known {
    fn new(binary: &str) -> Self {
        let binary = Path::new(binary);
        Self { binary: binary.is_absolute().then(|| binary.to_path_buf()), launcher: OnceCell::new() }
    }

    /// What a literal program word names.
    fn identify(&self, word: &str) -> Program {
        let file = if word.contains('/') {
            // A relative path names a file in the shell's current directory, usually the
            // workspace, where codeact's own `create` can put a file called `codeact`.
            if !word.starts_with('/') {
                return Program::Other;
            }
            PathBuf::from(word)
        } else {
            match word {
                "sh" | "bash" => return if on_path(word).is_some() { Program::Shell } else { Program::Other },
                "codeact" => match on_path(word) {
                    Some(file) => file,
                    None => return Program::Other,
                },
                _ => return Program::Other,
            }
        };
        if self.binary.as_ref() == Some(&file) {
            return Program::Codeact;
        }
        let Ok(file) = file.canonicalize() else { return Program::Other };
        if self.binary.as_ref() == Some(&file) {
            Program::Codeact
        } else if self.launcher().is_some_and(|launcher| *launcher == file) {
            Program::Launcher
        } else {
            Program::Other
        }
    }

    fn launcher(&self) -> Option<&PathBuf> {
        self.launcher
            .get_or_init(|| {
                let root = env::PLUGIN_ROOTS.iter().find_map(|name| env::var(name)).map(PathBuf::from)?;
                root.is_absolute().then(|| root.join("bin").join("codeact").canonicalize().ok()).flatten()
            })
            .as_ref()
    }
}

/// The file the shell would run for a bare `program`: the first executable regular file in
/// the hook's `PATH`. `None` when there is none, or when a relative entry (an empty one is the
/// current directory) comes before it: the shell resolves that against its current directory,
/// usually the workspace, which is no place to trust a program from.
fn on_path(program: &str) -> Option<PathBuf> {
    let path: OsString = std::env::var_os("PATH")?;
    for dir in std::env::split_paths(&path) {
        if !dir.is_absolute() {
            return None;
        }
        let candidate = dir.join(program);
        if std::fs::metadata(&candidate).is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0) {
            return Some(candidate);
        }
    }
    None
}
