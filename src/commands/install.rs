//! `codeact install` and `codeact uninstall`: write, or remove, the always-on instructions and
//! the bash-only agent where Copilot CLI loads them.
//!
//! Install runs the backend's preflight first and writes nothing when it fails. It checks every
//! target before writing any, never overwrites a file it did not generate, writes each file
//! atomically (temp file + rename, mode 0644) and leaves identical files alone. Uninstall
//! removes only files that carry codeact's marker.

use std::fs;
use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use super::instructions::{current_binary, tools_and_servers};
use super::preflight;
use crate::backend;
use crate::cli::{InstallArgs, UninstallArgs};
use crate::config::Config;
use crate::copilot::{self, FileKind};
use crate::exit;
use crate::output;
use crate::render::Reference;

pub fn install(args: &InstallArgs) -> Result<u8> {
    let config = Config::load(&args.common)?;
    let (name, checks) = backend::preflight(config.backend);
    if !checks.iter().all(|c| c.ok) {
        output::diagnostic(&preflight::report(name, &checks));
        output::diagnostic("error: nothing was installed");
        return Ok(exit::BACKEND_UNAVAILABLE);
    }
    let backend = backend::select(config.backend)?;
    let (registry, mcp) = tools_and_servers(&config);
    let binary = current_binary();
    let reference = Reference { backend, registry: &registry, limits: &config.limits, binary: &binary, mcp: &mcp };
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
            bail!(
                "refusing to overwrite `{}`: codeact did not write it\nhint: move it aside, or merge it by hand",
                path.display()
            );
        }
    }
    for (path, text) in &files {
        if args.dry_run {
            output::data(format!("==> {} <==\n{text}\n", path.display()).as_bytes())
                .context("failed to write to stdout")?;
        } else if fs::read_to_string(path).is_ok_and(|existing| existing == *text) {
            output::diagnostic(&format!("unchanged {}", path.display()));
        } else {
            write_atomic(path, text.as_bytes())?;
            output::diagnostic(&format!("wrote {}", path.display()));
        }
    }
    Ok(exit::SUCCESS)
}

pub fn uninstall(args: &UninstallArgs) -> Result<u8> {
    let config = Config::load(&args.common)?;
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

/// Writes `bytes` to `path` through a temporary file in the same directory and a rename.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().context("a target has no parent directory")?;
    fs::create_dir_all(dir).with_context(|| format!("failed to create `{}`", dir.display()))?;
    let temp = dir.join(format!(
        ".{}.{}.tmp",
        path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default(),
        std::process::id()
    ));
    let result = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .open(&temp)
        .and_then(|mut file| file.write_all(bytes))
        .and_then(|()| fs::rename(&temp, path));
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result.with_context(|| format!("failed to write `{}`", path.display()))
}
