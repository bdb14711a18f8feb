//! `codeact install` and `codeact uninstall`: write, or remove, the always-on instructions (and,
//! with `--agent`, the bash-only agent) where Copilot CLI loads them.
//!
//! The command the files tell the model to run is [`reach::invocation`]: the plugin's launcher
//! when install runs through it, `codeact` when that is what `PATH` finds, else this binary's
//! path — so that a `cargo clean` or an upgrade does not leave the model a missing file.
//!
//! Install first fetches the CPython guest when it is missing ([`fetch_guest`]), then runs the
//! backend's preflight and writes nothing when it fails. It checks every
//! target before writing any and writes nothing when one is refused: a file codeact did not
//! generate, a generated file edited since (unless `--force`), a symbolic link, or a file reached
//! through a symbolic link in the repository. Each file is written atomically (temp file +
//! rename, mode 0644) inside its directory's handle, and identical files are left alone.
//! Uninstall removes only generated files that were not edited since (any, with `--force`), and
//! removes nothing when a directory on the way is a symbolic link. [`copilot`] says how the
//! files are reached and how edits are told apart.

use anyhow::{Context, Result};
use cap_std::fs::Dir;

use super::preflight;
use super::reach;
use super::setup::{self, PROBE_TIME};
use crate::backend::{self, Choice, hyperlight, wasm};
use crate::catalog::Discovery;
use crate::cli::{InstallArgs, UninstallArgs};
use crate::config::Config;
use crate::copilot::{self, Authorship, Existing, FileKind, Place, Target};
use crate::exit;
use crate::guest::{self, GuestInstall, Missing};
use crate::hint;
use crate::output;
use crate::render::{Reference, Serving};
use crate::route::Route;
use crate::tools::github;

/// The route the instructions tell: the one named (`--route`, `CODEACT_ROUTE`), else the MCP
/// `run` tool where the plugin serves it (this runs through the plugin, or the user's Copilot
/// CLI loads it), else the shell.
fn install_route(args: &InstallArgs) -> Route {
    args.route.unwrap_or_else(|| {
        if reach::route(None) == Route::Mcp {
            return Route::Mcp;
        }
        let plugin = copilot::copilot_home().is_some_and(|home| copilot::plugin_enabled(&home));
        if plugin {
            output::diagnostic(
                "codeact's Copilot CLI plugin is enabled: the instructions name its MCP `run` tool (`--route bash` \
                 names the shell instead)",
            );
        }
        if plugin { Route::Mcp } else { Route::Bash }
    })
}

pub(crate) fn install(args: &InstallArgs) -> Result<u8> {
    let config = setup::config(&args.common, Some(&args.tools))?;
    fetch_guest(&config, args);
    let (choice, checks) = backend::preflight(config.backend);
    if !checks.iter().all(|c| c.ok) {
        output::diagnostic(&preflight::report(choice.name(), &checks));
        output::error(&anyhow::anyhow!("nothing was installed"));
        return Ok(exit::BACKEND_UNAVAILABLE);
    }
    let backend = backend::select(config.backend)?;
    let built =
        setup::catalog(&config, github::access(&config.workspace).as_ref(), Discovery::Probe(PROBE_TIME), false);
    if !args.tools.dirs.is_empty() {
        // The files tell the model to run `codeact run` without them (and exclusive mode refuses
        // a run that names `--tools`).
        output::warning(
            "the instructions list the tools of the --tools folders, but a `codeact run` without the same \
             --tools does not offer them: name the folders in `tool_dirs` of your config.json to use them in \
             every run",
        );
    }
    let invocation = reach::invocation();
    let route = install_route(args);
    let reference = Reference {
        backend,
        fallback: backend::fallback(config.backend),
        catalog: &built.catalog,
        limits: &config.limits,
        binary: &invocation,
        route,
        serving: Serving::defaults(route),
    };
    let regenerate = format!(
        "codeact install{}{} --backend {}",
        if args.global { " --global" } else { "" },
        if args.agent { " --agent" } else { "" },
        config.backend.name()
    );
    // Check every target before writing any: a user's file is never overwritten, and nothing is
    // written when one target is refused.
    let mut plan = Vec::new();
    let wanted = targets(&config.workspace, args.global)?
        .into_iter()
        .filter(|target| target.kind == FileKind::Instructions || args.agent);
    for target in wanted {
        let rendered = match target.kind {
            FileKind::Instructions => reference.instructions_file()?,
            FileKind::Agent => reference.agent_file()?,
        };
        let text = copilot::seal(&rendered)
            .with_context(|| format!("the rendered `{}` has no marker to seal", target.path.display()))?;
        let dir = match target.open_dir(false)? {
            Place::Dir(dir) => Some(dir),
            Place::Missing => None,
            Place::Link(link) => return Err(through_link(&link, "write")),
        };
        let existing = match &dir {
            Some(dir) => target.read(dir)?,
            None => Existing::Missing,
        };
        let unchanged = check_overwrite(&target, &existing, &text, args.force, &regenerate)?;
        plan.push((target, dir, text, unchanged));
    }
    for (target, dir, text, unchanged) in plan {
        let path = target.path.display();
        if args.dry_run {
            output::text(&format!("==> {path} <==\n{text}\n"))?;
        } else if unchanged {
            output::diagnostic(&format!("unchanged {path}"));
        } else {
            let dir = match dir {
                Some(dir) => dir,
                None => created_dir(&target)?,
            };
            target.write(&dir, text.as_bytes())?;
            output::diagnostic(&format!("wrote {path}"));
        }
    }
    Ok(exit::SUCCESS)
}

/// Fetches the CPython guest, which `auto` runs what Monty cannot on (and `wasm` and
/// `hyperlight` need), when it is missing and this build runs it. Failing to is a warning: the
/// instructions are still written, for what runs without it.
fn fetch_guest(config: &Config, args: &InstallArgs) {
    let wanted = config.backend != Choice::Monty
        && !args.no_guest
        && config.guest_install != GuestInstall::Never
        && (wasm::COMPILED_IN || hyperlight::COMPILED_IN);
    if !wanted {
        return;
    }
    match guest::installed() {
        Ok(_) | Err(Missing::NoHome) => return,
        Err(Missing::NotInstalled(_) | Missing::Damaged { .. }) => {}
    }
    if args.dry_run {
        output::diagnostic(
            "would install the CPython guest, which runs what Monty cannot (`--no-guest` leaves it out)",
        );
        return;
    }
    output::diagnostic("the CPython guest runs what Monty cannot; installing it once (`--no-guest` leaves it out)");
    if let Err(err) = super::guest::install_guest(&args.guest_from, true) {
        output::warning(&format!(
            "the CPython guest was not installed: {err:#}\n  the instructions are written for what runs without it; \
             `{}` tries again",
            guest::INSTALL_HINT
        ));
    }
}

/// Whether `existing` may be replaced by `text`: `Ok(true)` when it already is `text`, an error
/// saying why when it must be left.
fn check_overwrite(target: &Target, existing: &Existing, text: &str, force: bool, regenerate: &str) -> Result<bool> {
    let path = target.path.display();
    let refuse = |why: &str, what: String| Err(hint::error(format!("refusing to overwrite `{path}`: {why}"), what));
    match existing {
        Existing::Missing => Ok(false),
        Existing::Link => refuse(
            "it is a symbolic link",
            "codeact writes a regular file there and never through a link: remove the link".into(),
        ),
        Existing::Special => refuse("it is not a regular file", "move it aside".into()),
        Existing::Text(existing) if existing == text => Ok(true),
        Existing::Text(existing) => match copilot::authorship(existing) {
            Authorship::Generated | Authorship::Undigested => Ok(false),
            Authorship::Edited if force => Ok(false),
            Authorship::Edited => refuse(
                "it was edited since codeact wrote it",
                format!("move it aside to keep your edits, or run `{regenerate} --force` to replace it"),
            ),
            Authorship::Foreign => refuse("codeact did not write it", "move it aside, or merge it by hand".into()),
        },
    }
}

/// The target's directory, with the directories that are missing created (never through a link).
fn created_dir(target: &Target) -> Result<Dir> {
    match target.open_dir(true)? {
        Place::Dir(dir) => Ok(dir),
        Place::Link(link) => Err(through_link(&link, "write")),
        Place::Missing => anyhow::bail!("failed to create the directory of `{}`", target.path.display()),
    }
}

pub(crate) fn uninstall(args: &UninstallArgs) -> Result<u8> {
    let config = setup::config(&args.common, None)?;
    // Every target is looked at before any is removed: a link on the way removes nothing.
    let mut found = Vec::new();
    for target in targets(&config.workspace, args.global)? {
        match target.open_dir(false)? {
            Place::Dir(dir) => found.push((target, dir)),
            Place::Missing => {}
            Place::Link(link) => return Err(through_link(&link, "remove")),
        }
    }
    let again = format!("codeact uninstall{} --force", if args.global { " --global" } else { "" });
    for (target, dir) in found {
        let path = target.path.display();
        let left = |why: &str| output::warning(&format!("left `{path}`: {why}"));
        match target.read(&dir)? {
            Existing::Missing => {}
            Existing::Link => left("it is a symbolic link, which codeact never writes"),
            Existing::Special => left("it is not a regular file"),
            Existing::Text(text) => match copilot::authorship(&text) {
                Authorship::Edited if !args.force => {
                    left(&format!("it was edited since codeact wrote it (`{again}` removes it)"));
                }
                Authorship::Generated | Authorship::Undigested | Authorship::Edited => {
                    target.remove(&dir)?;
                    output::diagnostic(&format!("removed {path}"));
                }
                Authorship::Foreign => left("codeact did not write it"),
            },
        }
    }
    Ok(exit::SUCCESS)
}

/// The refusal to `verb` anything through the symbolic link `link` in the repository.
fn through_link(link: &std::path::Path, verb: &str) -> anyhow::Error {
    hint::error(
        format!("refusing to {verb} through `{}`: it is a symbolic link", link.display()),
        "codeact follows no link in the repository, which could point anywhere: make it a real directory",
    )
}

fn targets(workspace: &std::path::Path, global: bool) -> Result<Vec<Target>> {
    copilot::targets(workspace, global).context("cannot find the Copilot home: set COPILOT_HOME or HOME")
}
