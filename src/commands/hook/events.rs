//! The three hook events: reading the payload, deciding, and printing the answer in the form
//! the host reads.
//!
//! A hook must never block the user: every internal error fails open — one line on stderr,
//! nothing on stdout, exit 0. To allow a call the hook prints nothing (printing `allow` would
//! bypass the user's own approval); to deny, exactly one JSON object, in the form its host
//! reads: the host its command line names (`--host`, which both plugins pass), else the one the
//! parsed payload shows. A payload the hook cannot read is no internal error: exclusive mode
//! denies it, and without `--host` in a form both hosts read as a denial.
//!
//! The mode and the root a codeact run may not leave are the project's ([`Project`]), whatever
//! subdirectory the payload's `cwd` names.

use std::io::Read;

use anyhow::{Context, Result};
use serde_json::json;

use super::confine;
use super::known::Known;
use super::project::Project;
use crate::backend;
use crate::catalog::Discovery;
use crate::cli::HookEvent;
use crate::commands::{pairing, reach, setup};
use crate::config::{Config, Overrides};
use crate::copilot;
use crate::env;
use crate::exit;
use crate::hook::mode::Mode;
use crate::hook::payload::{self, Agent, MAX_PAYLOAD, ToolUse};
use crate::hook::policy::{self, Decision, Rules};
use crate::hook::state::{self, Session, StateDir};
use crate::hook::suggest::Runner;
use crate::output;
use crate::render::{Reference, Serving};
use crate::route::Route;
use crate::tools::github;

/// Answers one hook `event` sent by `host` (told by the payload when `None`).
pub(crate) fn run(event: HookEvent, host: Option<Agent>) -> Result<u8> {
    let outcome = read_stdin().and_then(|input| match event {
        HookEvent::PreToolUse => pre_tool_use(&input, host),
        HookEvent::PostToolUse => post_tool_use(&input, host),
        HookEvent::SessionStart => session_start(&input, host),
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
fn pre_tool_use(input: &[u8], host: Option<Agent>) -> Result<Option<serde_json::Value>> {
    let call = match payload::tool_use(input, host) {
        Ok(call) => call,
        Err(why) => {
            // Without a payload there is no `cwd`: the mode comes from the environment and the
            // host's project directory.
            let config = load_config(&Project::locate(None, host))?;
            if config.mode == Mode::Off {
                return Ok(None);
            }
            let command = shell_command(&config);
            let decision = policy::decide_unreadable(config.mode, why, runner(command.as_deref()));
            // Who sent what cannot be read only the command line says.
            let answer = |reply| match host {
                Some(host) => for_host(host, "PreToolUse", reply),
                None => for_both("PreToolUse", &reply),
            };
            return Ok(reply(decision).map(answer));
        }
    };
    let project = Project::locate(call.cwd.as_deref(), Some(call.host));
    let config = load_config(&project)?;
    if let Some(ignored) = config.ignored() {
        setup::report_ignored(&[ignored], &config.trust_command);
    }
    if config.mode == Mode::Off {
        return Ok(None);
    }
    let command = shell_command(&config);
    let rules = rules(&config, command.as_deref(), &project);
    let state = session_state(&call)?;
    let session = state.as_ref().map_or_else(Session::default, |(dir, id)| dir.read(id));
    let (decision, next) = policy::decide(rules, classify(&call, &project), session, &call);
    save(state.as_ref(), session, next)?;
    Ok(reply(decision).map(|reply| for_host(call.host, "PreToolUse", reply)))
}

/// The JSON to print after a tool ran: nudge's advice, once a streak.
fn post_tool_use(input: &[u8], host: Option<Agent>) -> Result<Option<serde_json::Value>> {
    let Ok(call) = payload::tool_use(input, host) else { return Ok(None) };
    let project = Project::locate(call.cwd.as_deref(), Some(call.host));
    let config = load_config(&project)?;
    if config.mode != Mode::Nudge {
        return Ok(None);
    }
    let Some(state) = session_state(&call)? else { return Ok(None) };
    let command = shell_command(&config);
    let rules = rules(&config, command.as_deref(), &project);
    let session = state.0.read(state.1);
    let (advice, next) = policy::advise(rules, classify(&call, &project), session, &call);
    save(Some(&state), session, next)?;
    Ok(advice.map(|text| for_host(call.host, "PostToolUse", json!({"additionalContext": text}))))
}

/// What kind of call this is, with shell program words looked up as [`Known`] says, and a
/// codeact run's workspace and program file checked against the project root.
fn classify(call: &ToolUse, project: &Project) -> policy::Class {
    let known = Known::new(&reach::current_binary());
    let within = |run: &_| confine::within(run, project.cwd.as_deref(), &project.root);
    policy::classify(call, |dialect, word| known.identify(dialect, word), within)
}

/// The session's state file, for the modes that keep one (nudge counts rounds, exclusive counts
/// direct calls); `None` without a session id.
fn session_state(call: &ToolUse) -> Result<Option<(StateDir, &str)>> {
    let Some(session) = &call.session_id else { return Ok(None) };
    let dir = state::default_dir().context("no place for hook state: set XDG_RUNTIME_DIR or HOME")?;
    let opened = StateDir::open(&dir).with_context(|| format!("hook state in `{}`", dir.display()))?;
    Ok(Some((opened, session.as_str())))
}

fn save(state: Option<&(StateDir, &str)>, before: Session, after: Session) -> Result<()> {
    match state {
        Some((dir, session)) if before != after => dir.write(session, after).context("failed to save the hook state"),
        _ => Ok(()),
    }
}

/// The command line a deny reason or advice tells the model to run, on the shell route; on the
/// MCP route they name the `run` tool, and nothing is looked up.
fn shell_command(config: &Config) -> Option<String> {
    (reach::route(None) == Route::Bash).then(|| {
        let backend = backend::select_without_probing(config.backend).unwrap_or(backend::Backend::Monty);
        format!("{} run --backend {}", reach::invocation(), backend.flag(backend::fallback(config.backend)))
    })
}

/// How a model is told to run a program: the shell `command`, or codeact's MCP `run` tool.
fn runner(command: Option<&str>) -> Runner<'_> {
    command.map_or(Runner::Mcp, Runner::Shell)
}

/// What the policy goes by: `config`'s mode, the way a model runs a program (`command`, the
/// shell's, or the MCP server's `run` without one), and `project`'s root.
fn rules<'a>(config: &Config, command: Option<&'a str>, project: &'a Project) -> Rules<'a> {
    Rules { mode: config.mode, nudge_after: config.nudge_after, runner: runner(command), root: &project.root }
}

/// An answer in the form `host` reads: Claude Code wants it in `hookSpecificOutput`, with the
/// event's name.
fn for_host(host: Agent, event: &str, reply: serde_json::Value) -> serde_json::Value {
    match (host, reply) {
        (Agent::Claude, serde_json::Value::Object(mut fields)) => {
            fields.insert("hookEventName".into(), event.into());
            json!({"hookSpecificOutput": fields})
        }
        (_, reply) => reply,
    }
}

/// A denial or advice in both hosts' forms at once, for a payload that does not say who sent
/// it: Copilot CLI reads the top-level fields, Claude Code `hookSpecificOutput`, and each passes
/// over the other's.
fn for_both(event: &str, reply: &serde_json::Value) -> serde_json::Value {
    match (reply.clone(), for_host(Agent::Claude, event, reply.clone())) {
        (serde_json::Value::Object(mut both), serde_json::Value::Object(claude)) => {
            both.extend(claude);
            serde_json::Value::Object(both)
        }
        (copilot, _) => copilot,
    }
}

/// What the hook prints for `decision`.
fn reply(decision: Decision) -> Option<serde_json::Value> {
    match decision {
        Decision::Allow => None,
        Decision::Deny { reason } => Some(json!({"permissionDecision": "deny", "permissionDecisionReason": reason})),
    }
}

fn session_start(input: &[u8], host: Option<Agent>) -> Result<Option<serde_json::Value>> {
    let start = payload::session_start(input);
    if let Some(dir) = state::default_dir().and_then(|d| StateDir::open(&d).ok()) {
        dir.prune();
    }
    if env::var(env::INJECT).is_some_and(|v| v == "0") {
        return Ok(None);
    }
    let project = Project::locate(start.as_ref().and_then(|s| s.cwd.as_deref()), host);
    let cwd = project.cwd.clone().unwrap_or_else(|| project.root.clone());
    // Said once a session, whatever else is said: the plugin calls this binary's commands as
    // its own version has them.
    let mismatch = pairing::plugin_mismatch().map(|m| format!("codeact: {}.", m.message()));
    if let Some((path, text)) = copilot::installed_instructions(&cwd) {
        // The file brings the instructions; all that is left to say is when the command it
        // names no longer runs.
        let stale = reach::stale_command(&text).map(|missing| {
            format!(
                "codeact: the instructions in `{}` name `{missing}`, which no longer exists; run codeact as `{}` \
                 instead (`codeact install` rewrites the file).",
                path.display(),
                reach::invocation()
            )
        });
        let said: Vec<String> = mismatch.into_iter().chain(stale).collect();
        return Ok((!said.is_empty()).then(|| json!({"additionalContext": said.join("\n")})));
    }
    let config = load_config(&project)?;
    let backend = backend::select_without_probing(config.backend).unwrap_or(backend::Backend::Monty);
    // Nothing is started here (the hook must answer within its few seconds), so only what is
    // known without starting it is offered; what is left out is not reported (a hook's stderr
    // is not the user's), except what the user has not trusted, in one line.
    let built = setup::catalog(&config, github::access(&config.workspace).as_ref(), Discovery::Static, true);
    setup::report_untrusted(&config, &built);
    let invocation = reach::invocation();
    let route = reach::route(None);
    let text = Reference {
        backend,
        fallback: backend::fallback(config.backend),
        catalog: &built.catalog,
        limits: &config.limits,
        binary: &invocation,
        route,
        serving: Serving::defaults(route),
    }
    .reference()?;
    let text = match mismatch {
        Some(mismatch) => format!("{mismatch}\n\n{text}"),
        None => text,
    };
    Ok(Some(json!({"additionalContext": text})))
}

/// The configuration at the project's root, with its subdirectories' modes ([`Project`]): a
/// subdirectory's file tightens the mode as the root's does the user's, and the user's own
/// `CODEACT_MODE` is above both.
fn load_config(project: &Project) -> Result<Config> {
    let workspace = project.root.clone();
    let mut config =
        Config::load(&Overrides { workspace: Some(workspace), skip_unusable_project: true, ..Overrides::default() })?;
    // A repository's broken config must not switch off the user's mode: it is left out.
    if let Some(why) = &config.unusable_project {
        output::diagnostic(&format!("codeact hook: left out the project's config: {why}"));
    }
    if env::var(env::MODE).is_none()
        && let Some(nested) = project.nested_mode()
    {
        config.mode = config.mode.max(nested);
    }
    Ok(config)
}
