//! `codeact check`: every problem in every tool file and config file, each as
//! `path:line: message`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::markdown::{self, Language};
use super::{Problem, secrets};
use crate::bounded;
use crate::tools::builtin::is_reserved;

/// How `check` validates what it cannot parse itself, given by the command layer.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Validators {
    /// The first syntax error in Python code: (1-based line, message).
    pub(crate) python: fn(&str) -> Option<(usize, String)>,
    /// Whether the text of a `config.json` is valid; `Err` names the key and the position.
    pub(crate) config: fn(&str) -> Result<(), String>,
}

/// The files `check` looks at by default: each config dir's `config.json` and `tools/`.
#[must_use]
pub(crate) fn default_targets(user_config: Option<&Path>, workspace: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = user_config.into_iter().map(Path::to_path_buf).collect();
    dirs.push(workspace.join(".codeact"));
    dirs.iter().flat_map(|dir| [dir.join("config.json"), dir.join("tools")]).filter(|p| p.exists()).collect()
}

/// Checks every file under `targets` and returns every problem, sorted by file and line.
#[must_use]
pub(crate) fn check(targets: &[PathBuf], validators: Validators) -> Vec<Problem> {
    let mut files = Vec::new();
    for target in targets {
        collect(target, true, 0, &mut files);
    }
    files.sort();
    files.dedup();
    let mut problems = Vec::new();
    let mut names: BTreeMap<String, PathBuf> = BTreeMap::new();
    for path in &files {
        let text = match bounded::read_text(path, bounded::MAX_FILE_BYTES) {
            Ok(Some(text)) => text,
            Ok(None) => continue,
            Err(err) => {
                problems.push(Problem::error(path, 1, format!("cannot be read: {err}")));
                continue;
            }
        };
        for (line, what) in secrets::find(&text) {
            problems.push(Problem::error(
                path,
                line,
                format!("this looks like {what}; keep secrets in the environment, not in files"),
            ));
        }
        match path.extension().and_then(|e| e.to_str()) {
            Some("json") => {
                if let Err(message) = (validators.config)(&text) {
                    problems.push(Problem::error(path, line_of(&message), message));
                }
            }
            Some("md") => {
                let (tool, found) = markdown::parse(path, &text);
                problems.extend(found);
                let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
                if is_reserved(&stem) {
                    problems.push(Problem::error(
                        path,
                        1,
                        format!("`{stem}` is reserved: a built-in tool or Python name; rename the file and its `name`"),
                    ));
                }
                if let Some(first) = names.get(&stem) {
                    problems.push(Problem::error(
                        path,
                        1,
                        format!("duplicate tool name `{stem}`: also defined in `{}`", first.display()),
                    ));
                } else {
                    names.insert(stem, path.clone());
                }
                if let Some(tool) = tool {
                    problems.extend(check_code(path, &tool, validators.python));
                }
            }
            _ => {}
        }
    }
    problems.sort();
    problems
}

/// Whether the code block parses: Python with Monty's parser, JavaScript with `node --check`
/// when node is installed.
fn check_code(path: &Path, tool: &markdown::MarkdownTool, python: fn(&str) -> Option<(usize, String)>) -> Vec<Problem> {
    match tool.language {
        Language::Python => python(&tool.code)
            .map(|(line, message)| {
                Problem::error(
                    path,
                    tool.code_line + line.saturating_sub(1),
                    format!("the Python code does not parse: {message}"),
                )
            })
            .into_iter()
            .collect(),
        Language::JavaScript => {
            let Ok(dir) = tempfile::tempdir() else { return Vec::new() };
            let file = dir.path().join("tool.js");
            if std::fs::write(&file, &tool.code).is_err() {
                return Vec::new();
            }
            match Command::new("node").arg("--check").arg(&file).output() {
                Ok(out) if !out.status.success() => {
                    let stderr = String::from_utf8_lossy(&out.stderr);
                    let line = stderr
                        .lines()
                        .next()
                        .and_then(|l| l.rsplit(':').next())
                        .and_then(|n| n.trim().parse::<usize>().ok())
                        .unwrap_or(1);
                    let message =
                        stderr.lines().find(|l| l.contains("Error")).unwrap_or("syntax error").trim().to_owned();
                    vec![Problem::error(
                        path,
                        tool.code_line + line.saturating_sub(1),
                        format!("the JavaScript code does not parse: {message}"),
                    )]
                }
                _ => Vec::new(),
            }
        }
        Language::Shell => Vec::new(),
    }
}

/// How many folders down `check` looks.
const MAX_DEPTH: usize = 8;

/// The files to check under `path`: `.md` tool files (recursively, skipping dot-files and
/// symlinked folders, at most [`MAX_DEPTH`] down), top-level `.py` tools not starting with `_`,
/// and `config.json`. A path given explicitly is followed even when it is a link.
fn collect(path: &Path, explicit: bool, depth: usize, out: &mut Vec<PathBuf>) {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    if !explicit && name.starts_with('.') {
        return;
    }
    let meta = if explicit { std::fs::metadata(path) } else { std::fs::symlink_metadata(path) };
    if meta.is_ok_and(|meta| meta.is_dir()) {
        let Ok(entries) = std::fs::read_dir(path) else { return };
        if depth >= MAX_DEPTH {
            return;
        }
        for entry in entries.flatten() {
            collect(&entry.path(), false, depth + 1, out);
        }
    } else {
        let extension = path.extension().map(|e| e.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
        if explicit || extension == "md" || name == "config.json" || (extension == "py" && !name.starts_with('_')) {
            out.push(path.to_path_buf());
        }
    }
}

/// `… at line 3 column 5` → 3.
fn line_of(message: &str) -> usize {
    message.rsplit_once(" at line ").and_then(|(_, rest)| rest.split_whitespace().next()?.parse().ok()).unwrap_or(1)
}
