//! `codeact check`: every problem in every tool file and config file, each as
//! `path:line: message` with the rule it breaks. MCP server config files are checked by the
//! validator the command layer gives, since `usertools` may not use `mcp`.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use super::load::{MAX_DEPTH, is_tool_file};
use super::markdown::{self, Code, Declared, Language, ToolFile};
use super::{Problem, folders, node, secrets};
use crate::bounded;

/// How `check` validates what it cannot parse itself, given by the command layer.
#[derive(Debug, Clone)]
pub(crate) struct Validators {
    /// The first syntax error in Python code: (1-based line, message).
    pub(crate) python: fn(&str) -> Option<(usize, String)>,
    /// Whether the text of a `config.json` is valid; `Err` names the key and the position.
    pub(crate) config: fn(&str) -> Result<(), String>,
    /// Every problem of the MCP server config file at this path, whose text is given.
    pub(crate) mcp: fn(&Path, &str) -> Vec<Problem>,
    /// The project being checked, which may not be trusted: the `node` that parses JavaScript
    /// is never one of its files.
    pub(crate) project: PathBuf,
}

/// The names of MCP server config files: editors' and Copilot CLI's, not codeact's own
/// `config.json`, though they are JSON too.
const MCP_FILE_NAMES: [&str; 3] = [".mcp.json", "mcp.json", "mcp-config.json"];

/// The most tools the API takes for one agent: the custom tools, plus one entry for all the
/// pre-built ones.
const MAX_TOOLS: usize = 256;

/// Checks every file under `targets` and returns every problem, sorted by file and line.
#[must_use]
pub(crate) fn check(targets: &[PathBuf], validators: &Validators) -> Vec<Problem> {
    let files = files_of(targets);
    let mut problems = Vec::new();
    let mut names: BTreeMap<String, (PathBuf, usize)> = BTreeMap::new();
    let mut javascript: Vec<(PathBuf, Code)> = Vec::new();
    // Per target: its custom tools, and whether it has a pre-built one.
    let mut counts: Vec<(usize, bool)> = vec![(0, false); targets.len()];
    for (path, target) in &files {
        let text = match bounded::read_text(path, bounded::MAX_FILE_BYTES) {
            Ok(Some(text)) => text,
            Ok(None) => continue,
            Err(err) => {
                problems.push(Problem::error(path, 1, "unreadable", format!("cannot be read: {err}")));
                continue;
            }
        };
        for (line, what) in secrets::find(&text) {
            problems.push(Problem::error(
                path,
                line,
                "secret",
                format!("this looks like {what}; keep secrets in the environment, not in files"),
            ));
        }
        match path.extension().and_then(|e| e.to_str()) {
            Some("json") if is_mcp_file(path) => problems.extend((validators.mcp)(path, &text)),
            Some("json") => {
                if let Err(message) = (validators.config)(&text) {
                    problems.push(Problem::error(path, line_of(&message), "config", message));
                }
            }
            Some("md") => {
                let parsed = markdown::parse_file(path, &text);
                problems.extend(parsed.problems);
                match parsed.declared {
                    Some(Declared::Custom) => counts[*target].0 += 1,
                    Some(Declared::Prebuilt) => counts[*target].1 = true,
                    None => {}
                }
                let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
                match names.get(&stem) {
                    // In one tools folder, sub-folders do not count.
                    Some((first, in_target)) if in_target == target => problems.push(Problem::error(
                        path,
                        1,
                        "name-duplicate",
                        format!(
                            "more than one tool is named `{stem}`: also `{}` (folders do not count)",
                            first.display()
                        ),
                    )),
                    // Across folders, the first in codeact's order is used.
                    Some((first, _)) => problems.push(Problem::warning(
                        path,
                        1,
                        "name-shadowed",
                        format!("`{stem}` is also a tool in `{}`, which comes first and is used", first.display()),
                    )),
                    None => {
                        names.insert(stem, (path.clone(), *target));
                    }
                }
                match parsed.code {
                    Some(code) if code.language == Language::JavaScript => javascript.push((path.clone(), code)),
                    Some(code) if code.language == Language::Python => {
                        problems.extend(python_syntax(path, &code, validators.python));
                    }
                    _ => {}
                }
                match parsed.tool {
                    Some(ToolFile::Prebuilt(name)) if markdown::prebuilt_equivalent(name).is_none() => {
                        problems.push(Problem::warning(
                            path,
                            1,
                            "prebuilt-unmapped",
                            format!("codeact has no `{name}` tool: this pre-built tool is left out of codeact's runs"),
                        ));
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
    problems.extend(javascript_syntax(&javascript, &validators.project));
    for (target, (customs, prebuilt)) in targets.iter().zip(counts) {
        let tools = customs + usize::from(prebuilt);
        if tools > MAX_TOOLS {
            problems.push(Problem::error(
                target,
                1,
                "too-many-tools",
                format!(
                    "more than {MAX_TOOLS} tools ({tools}, the pre-built ones counting as one): the API takes no more"
                ),
            ));
        }
    }
    problems.sort();
    problems
}

/// The files to check under `targets`, each with the index of its target: in the targets'
/// order (codeact's), sorted in each; a file under two targets is the first's.
fn files_of(targets: &[PathBuf]) -> Vec<(PathBuf, usize)> {
    let mut files = Vec::new();
    let mut seen = HashSet::new();
    for (index, target) in targets.iter().enumerate() {
        let mut found = Vec::new();
        collect(&folders::agent_tools(target).unwrap_or_else(|| target.clone()), true, 0, &mut found);
        found.sort();
        for path in found {
            if seen.insert(path.clone()) {
                files.push((path, index));
            }
        }
    }
    files
}

/// Whether a Python tool's code parses, with Monty's parser.
fn python_syntax(path: &Path, code: &Code, python: fn(&str) -> Option<(usize, String)>) -> Option<Problem> {
    python(&code.source).map(|(line, message)| {
        Problem::error(
            path,
            code.first_line + line.saturating_sub(1),
            "code-syntax",
            format!("the Python code does not parse: {message}"),
        )
    })
}

/// Whether each JavaScript tool's code parses as agentschema loads it (a `CommonJS` function
/// body), in one `node`; each gets a warning that it was not checked when there is no `node`.
fn javascript_syntax(tools: &[(PathBuf, Code)], project: &Path) -> Vec<Problem> {
    if tools.is_empty() {
        return Vec::new();
    }
    let sources: Vec<&str> = tools.iter().map(|(_, code)| code.source.as_str()).collect();
    let Some(results) = node::syntax_errors(&sources, project) else {
        return tools
            .iter()
            .map(|(path, code)| {
                Problem::warning(
                    path,
                    code.first_line,
                    "code-unchecked",
                    "the JavaScript code was not checked: `node` is not on PATH".into(),
                )
            })
            .collect();
    };
    tools
        .iter()
        .zip(results)
        .filter_map(|((path, code), result)| {
            let (line, message) = result?;
            Some(Problem::error(
                path,
                code.first_line + line.saturating_sub(1),
                "code-syntax",
                format!("the JavaScript code does not parse: {message}"),
            ))
        })
        .collect()
}

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
        // As deep as the loader reads (`load::markdown_files`).
        let Ok(entries) = std::fs::read_dir(path) else { return };
        if depth > MAX_DEPTH {
            return;
        }
        for entry in entries.flatten() {
            collect(&entry.path(), false, depth + 1, out);
        }
    } else {
        let extension = path.extension().map(|e| e.to_string_lossy().into_owned()).unwrap_or_default();
        // A `config.json` counts only directly in a folder given (a config dir); one deeper
        // is some tool's data.
        let config = name == "config.json" && depth == 1;
        if explicit || is_tool_file(path) || config || (extension == "py" && !name.starts_with('_')) {
            out.push(path.to_path_buf());
        }
    }
}

/// Whether `path` has the name of an MCP server config file.
fn is_mcp_file(path: &Path) -> bool {
    path.file_name().and_then(|name| name.to_str()).is_some_and(|name| MCP_FILE_NAMES.contains(&name))
}

/// `… at line 3 column 5` → 3.
fn line_of(message: &str) -> usize {
    message.rsplit_once(" at line ").and_then(|(_, rest)| rest.split_whitespace().next()?.parse().ok()).unwrap_or(1)
}
