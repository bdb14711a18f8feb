//! `codeact install` and `codeact uninstall`: write, or remove, the always-on instructions and
//! the bash-only agent where Copilot CLI loads them.
//!
//! Install runs the backend's preflight first and writes nothing when it fails. It checks every
//! target before writing any, never overwrites a file it did not generate, writes each file
//! atomically (temp file + rename, mode 0644) and leaves identical files alone. Uninstall
//! removes only files that carry codeact's marker.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::common::{self, PROBE_TIME};
use super::preflight;
use crate::atomic::{self, Access};
use crate::backend;
use crate::catalog::Discovery;
use crate::cli::{InstallArgs, UninstallArgs};
use crate::copilot::{self, FileKind};
use crate::exit;
use crate::hint;
use crate::output;
use crate::render::Reference;
use crate::tools::github;

pub(crate) fn install(args: &InstallArgs) -> Result<u8> {
    let config = common::config(&args.common)?;
    let (choice, checks) = backend::preflight(config.backend);
    if !checks.iter().all(|c| c.ok) {
        output::diagnostic(&preflight::report(choice.name(), &checks));
        output::error(&anyhow::anyhow!("nothing was installed"));
        return Ok(exit::BACKEND_UNAVAILABLE);
    }
    let backend = backend::select(config.backend)?;
    let built = common::catalog(&config, github::access().as_ref(), Discovery::Probe(PROBE_TIME), false);
    let binary = common::current_binary();
    let reference = Reference { backend, catalog: &built.catalog, limits: &config.limits, binary: &binary };
    let regenerate =
        format!("codeact install{} --backend {}", if args.global { " --global" } else { "" }, backend.name());
    let targets = targets(&config.workspace, args.global)?;
    let mut files = Vec::new();
    for (kind, path) in targets {
        let text = match kind {
            FileKind::Instructions => reference.instructions_file(&regenerate)?,
            FileKind::Agent => reference.agent_file(&regenerate)?,
        };
        files.push((path, text));
    }
    // Check every target before writing any: a user's own file is never overwritten.
    for (path, _) in &files {
        if let Ok(existing) = fs::read_to_string(path)
            && !copilot::has_marker(&existing)
        {
            return Err(hint::error(
                format!("refusing to overwrite `{}`: codeact did not write it", path.display()),
                "move it aside, or merge it by hand",
            ));
        }
    }
    for (path, text) in &files {
        if args.dry_run {
            output::data(format!("==> {} <==\n{text}\n", path.display()).as_bytes())?;
        } else if fs::read_to_string(path).is_ok_and(|existing| existing == *text) {
            output::diagnostic(&format!("unchanged {}", path.display()));
        } else {
            atomic::write(path, text.as_bytes(), Access::Shared)
                .with_context(|| format!("failed to write `{}`", path.display()))?;
            output::diagnostic(&format!("wrote {}", path.display()));
        }
    }
    Ok(exit::SUCCESS)
}

pub(crate) fn uninstall(args: &UninstallArgs) -> Result<u8> {
    let config = common::config(&args.common)?;
    for (_, path) in targets(&config.workspace, args.global)? {
        match fs::read_to_string(&path) {
            Ok(text) if copilot::has_marker(&text) => {
                fs::remove_file(&path).with_context(|| format!("failed to remove `{}`", path.display()))?;
                output::diagnostic(&format!("removed {}", path.display()));
            }
            Ok(_) => output::warning(&format!("left `{}`: codeact did not write it", path.display())),
            Err(_) => {}
        }
    }
    Ok(exit::SUCCESS)
}

fn targets(workspace: &Path, global: bool) -> Result<Vec<(FileKind, PathBuf)>> {
    copilot::targets(workspace, global).context("cannot find the Copilot home: set COPILOT_HOME or HOME")
}
