//! `codeact check`: validate user tool files, config files and MCP server config files; exit 4
//! when any has an error.
//!
//! Without paths it reads each config dir's `config.json`, every tools folder the other
//! commands would read — the user's, the workspace's (`.codeact/tools/`, an agent folder's
//! `tools/`, the project config's `tool_dirs`, trusted or not: checking runs nothing) — the
//! `--tools` folders, and the MCP config files codeact reads (the workspace's and Copilot CLI's,
//! none of their servers started); with paths, those and the `--tools` folders. Finding nothing
//! to check is said, not reported as a pass.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde_json::{Value, json};

use crate::backend::monty;
use crate::cli::CheckArgs;
use crate::config::{self, PROJECT_FILE};
use crate::platform::Canonical as _;
use crate::usertools::check::{Validators, check};
use crate::usertools::folders::{self, Base, Named};
use crate::usertools::{Problem, Severity};
use crate::{bounded, copilot, dirs, exit, mcp, output};

pub(crate) fn run(args: &CheckArgs) -> Result<u8> {
    let flags = folders::flags(&args.tools)?;
    let (targets, mut problems) = if args.paths.is_empty() {
        let workspace = match &args.workspace {
            Some(dir) => dir.clone(),
            None => std::env::current_dir().context("failed to read the current directory")?,
        };
        let workspace = workspace.canonical().unwrap_or(workspace);
        let (targets, problems) = default_targets(&workspace, flags);
        if targets.is_empty() && problems.is_empty() {
            output::diagnostic(&format!(
                "nothing to check in {}: no config.json, no tools/ folder; pass a path or --tools DIR",
                workspace.display()
            ));
            return Ok(exit::SUCCESS);
        }
        (targets, problems)
    } else {
        let mut targets: Vec<PathBuf> = args.paths.clone();
        targets.extend(flags);
        (targets, Vec::new())
    };
    let validators =
        Validators { python: monty::syntax_error, config: config::check_text, mcp: mcp_file, project: project(args)? };
    problems.extend(check(&targets, &validators));
    problems.sort();
    let errors = problems.iter().filter(|p| p.severity == Severity::Error).count();
    if args.json {
        output::json(&json!({"ok": errors == 0, "problems": problems}))?;
    } else {
        let mut text = String::new();
        for problem in &problems {
            let prefix = if problem.severity == Severity::Warning { "warning: " } else { "" };
            let _ = writeln!(text, "{}:{}: {prefix}{}", problem.path.display(), problem.line, problem.message);
        }
        output::text(&text)?;
        let files = targets.len();
        output::diagnostic(&format!(
            "{errors} error(s), {} warning(s) in {files} location(s) checked",
            problems.len() - errors
        ));
    }
    Ok(if errors == 0 { exit::SUCCESS } else { exit::INVALID_CONFIG })
}

/// The project `check` looks at: the workspace (`--workspace`, else the current directory),
/// widened to the repository around it, whose files may be anyone's.
fn project(args: &CheckArgs) -> Result<PathBuf> {
    let dir = match &args.workspace {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().context("failed to read the current directory")?,
    };
    let dir = std::path::absolute(&dir)?;
    let dir = dir.canonical().unwrap_or(dir);
    let repository = dir.ancestors().find(|folder| folder.join(".git").symlink_metadata().is_ok());
    Ok(repository.unwrap_or(&dir).to_path_buf())
}

/// What `check` reads without paths: each config dir's `config.json` that exists, every tools
/// folder that exists, after the `flags` folders (absolute), and each MCP config file that
/// exists; and a problem for each `tool_dirs` entry that names no folder or leaves the
/// workspace, which is not followed. The config files are read leniently here, since `check`
/// reports their own problems.
fn default_targets(workspace: &Path, flags: Vec<PathBuf>) -> (Vec<PathBuf>, Vec<Problem>) {
    let user_dir = dirs::config();
    let mut named = Named { flags, user_config: user_dir.clone(), ..Named::default() };
    let mut targets = Vec::new();
    let mut problems = Vec::new();
    let files = [
        user_dir.as_deref().map(|dir| (dir.join("config.json"), Base::UserConfig(dir))),
        Some((workspace.join(PROJECT_FILE), Base::Workspace(workspace))),
    ];
    for (file, base) in files.into_iter().flatten() {
        if !file.exists() {
            continue;
        }
        targets.push(file.clone());
        let Ok(Some(content)) = bounded::read(&file, bounded::MAX_FILE_BYTES) else { continue };
        let text = String::from_utf8_lossy(&content);
        let parsed: Value = serde_json::from_str(&text).unwrap_or_default();
        let Some(entries) = parsed.get("tool_dirs").and_then(Value::as_array) else { continue };
        let line = text.lines().position(|l| l.contains("\"tool_dirs\"")).map_or(1, |at| at + 1);
        for entry in entries.iter().filter_map(Value::as_str) {
            match (folders::config_entry(base, entry), base) {
                (Ok(dir), Base::UserConfig(_)) => named.user.push(dir),
                (Ok(dir), Base::Workspace(_)) => named.project.push(dir),
                (Err(message), _) => {
                    let message = format!("key `tool_dirs`: {message}");
                    problems.push(Problem::error(&file, line, "config-tool-dirs", message));
                }
            }
        }
    }
    let dirs = folders::tool_dirs(workspace, &named);
    targets.extend(dirs.into_iter().map(|dir| dir.path).filter(|dir| dir.is_dir()));
    let mut mcp_files: Vec<PathBuf> = mcp::config::WORKSPACE_FILES.iter().map(|rel| workspace.join(rel)).collect();
    mcp_files.extend(copilot::copilot_home().map(|home| home.join("mcp-config.json")));
    targets.extend(mcp_files.into_iter().filter(|file| file.exists()));
    (targets, problems)
}

/// The problems of the MCP config file `path`, for [`Validators::mcp`]. A workspace's file is
/// checked for its workspace, any other (Copilot CLI's) for the current directory, where
/// codeact would run; an unset variable is only a warning, as it may be set there.
fn mcp_file(path: &Path, text: &str) -> Vec<Problem> {
    let workspace = mcp::check::workspace_of(path).or_else(|| std::env::current_dir().ok()).unwrap_or_default();
    let lookup = |name: &str| std::env::var(name).ok();
    mcp::check::check(path, text.as_bytes(), &workspace, &lookup)
        .into_iter()
        .map(|finding| match finding.severity {
            mcp::check::Severity::Error => Problem::error(path, finding.line, finding.rule, finding.message),
            mcp::check::Severity::Warning => Problem::warning(path, finding.line, finding.rule, finding.message),
        })
        .collect()
}
