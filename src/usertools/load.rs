//! Finding and loading Markdown tool files from the user's and the project's `tools/` folders.
//! A file with problems is left out with a warning that points at `codeact check`; which of the
//! loaded tools are offered is the catalogue's decision.

use std::borrow::Cow;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::markdown::{self, MarkdownTool, ToolFile};
use crate::bounded;
use crate::tools::spec::{Kind, Param, ParamDefault, Signature};

/// A loaded Markdown tool.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct UserTool {
    pub(crate) tool: MarkdownTool,
    pub(crate) path: PathBuf,
    /// The input table as parameters: required inputs first-class, the others left out unless
    /// passed (the tool's own defaults apply).
    params: Vec<Param>,
}

impl UserTool {
    #[must_use]
    pub(crate) fn new(tool: MarkdownTool, path: PathBuf) -> Self {
        let params = tool
            .inputs
            .iter()
            .map(|input| Param {
                name: Cow::Owned(input.name.clone()),
                kind: Kind::Json(input.ty),
                default: if input.required { ParamDefault::Required } else { ParamDefault::Omitted },
                doc: Cow::Owned(input.description.clone()),
            })
            .collect();
        Self { tool, path, params }
    }

    #[must_use]
    pub(crate) fn signature(&self) -> Signature<'_> {
        Signature { name: &self.tool.name, params: &self.params, returns: "Any" }
    }
}

/// How deep below a `tools/` folder Markdown tool files are looked for.
pub(crate) const MAX_DEPTH: usize = 8;

/// What [`load`] found.
#[derive(Debug, Default)]
pub(crate) struct Loaded {
    pub(crate) tools: Vec<UserTool>,
    /// One line for each file that does not parse or cannot be read.
    pub(crate) warnings: Vec<String>,
    /// The files left out because `trusted` refused them.
    pub(crate) untrusted: Vec<PathBuf>,
}

/// Every Markdown tool file in `dirs` that `trusted` accepts (given its path and content) and
/// that parses, in order, and a warning for each that does not parse.
#[must_use]
pub(crate) fn load(dirs: &[PathBuf], trusted: &dyn Fn(&Path, &[u8]) -> bool) -> Loaded {
    let mut loaded = Loaded::default();
    let mut unmapped = Vec::new();
    for path in dirs.iter().flat_map(|dir| markdown_files(dir)) {
        let content = match bounded::read(&path, bounded::MAX_FILE_BYTES) {
            Ok(Some(content)) => content,
            Ok(None) => continue,
            Err(err) => {
                loaded.warnings.push(format!("tool file `{}` left out: {err}", path.display()));
                continue;
            }
        };
        if !trusted(&path, &content) {
            loaded.untrusted.push(path);
            continue;
        }
        let Ok(text) = String::from_utf8(content) else {
            loaded.warnings.push(format!("tool file `{}` left out: not UTF-8 text", path.display()));
            continue;
        };
        let parsed = markdown::parse_file(&path, &text);
        match parsed.tool {
            Some(ToolFile::Custom(tool)) => loaded.tools.push(UserTool::new(tool, path)),
            Some(ToolFile::Prebuilt(name)) => {
                if markdown::prebuilt_equivalent(name).is_none() {
                    unmapped.push(format!("`{name}` ({})", path.display()));
                }
            }
            None => loaded.warnings.push(format!(
                "tool file `{}` has {} problem(s); run `codeact check`",
                path.display(),
                parsed.problems.len()
            )),
        }
    }
    // Pre-built tool files stand for codeact's own tools (`read` is `view`, `write` is
    // `create`, …), which are there anyway; the others are named once.
    if !unmapped.is_empty() {
        loaded.warnings.push(format!("pre-built tools that codeact does not have, left out: {}", unmapped.join(", ")));
    }
    loaded
}

/// Whether `path` is a tool file by its name: it ends in `.md` (as written: `X.MD` is not).
#[must_use]
pub(crate) fn is_tool_file(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "md")
}

/// The Markdown files in `dir` and the folders below it, sorted in each folder, hidden names
/// skipped. Symlinked folders are not followed (a link to `.` or `/` would never end), and the
/// walk stops [`MAX_DEPTH`] folders down.
#[must_use]
pub(crate) fn markdown_files(dir: &Path) -> Vec<PathBuf> {
    let hidden = |path: &Path| path.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.'));
    let mut out = Vec::new();
    walk(dir, 0, &hidden, &mut out);
    out.retain(|path| is_tool_file(path));
    out
}

/// How many folders below a tools folder its other files are looked for (a package's
/// `node_modules` nest deep).
const MAX_SUPPORT_DEPTH: usize = 32;

/// The files in `dir` and below that are not tool files — helpers a tool imports or reads,
/// packages, caches, data — which the tools' trust covers too. Symlinked folders are not
/// followed but listed, as is a folder past [`MAX_SUPPORT_DEPTH`]: neither can be read as a
/// file, so neither can ever pass for trusted.
#[must_use]
pub(crate) fn support_files(dir: &Path) -> Vec<PathBuf> {
    let tools: HashSet<PathBuf> =
        markdown_files(dir).into_iter().chain(super::dropin::files(&[dir.to_path_buf()])).collect();
    let mut all = Vec::new();
    walk_to(dir, 0, MAX_SUPPORT_DEPTH, true, &|_| false, &mut all);
    all.retain(|path| !tools.contains(path));
    all
}

/// The files in `dir` and below, symlinked folders not followed, [`MAX_DEPTH`] folders down at
/// most, sorted in each folder; a folder or file whose name `skip` accepts is passed over.
fn walk(dir: &Path, depth: usize, skip: &dyn Fn(&Path) -> bool, out: &mut Vec<PathBuf>) {
    walk_to(dir, depth, MAX_DEPTH, false, skip, out);
}

/// [`walk`] down to `limit` folders; a folder past it is listed in place of what it holds when
/// `list_deeper`, else passed over.
fn walk_to(
    dir: &Path,
    depth: usize,
    limit: usize,
    list_deeper: bool,
    skip: &dyn Fn(&Path) -> bool,
    out: &mut Vec<PathBuf>,
) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<(PathBuf, bool)> =
        entries.flatten().map(|e| (e.path(), e.file_type().is_ok_and(|t| t.is_dir()))).collect();
    entries.sort();
    for (path, is_dir) in entries {
        if skip(&path) {
            continue;
        }
        if !is_dir || (depth >= limit && list_deeper) {
            out.push(path);
        } else if depth < limit {
            walk_to(&path, depth + 1, limit, list_deeper, skip, out);
        }
    }
}
