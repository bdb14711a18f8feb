//! Finding and loading Markdown tool files from the user's and the project's `tools/` folders.
//! A file with problems is left out with a warning that points at `codeact check`; which of the
//! loaded tools are offered is the catalogue's decision.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use super::markdown::{self, MarkdownTool};
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

/// The `tools/` folders, the user's (in `user_config`) first, then the project's.
#[must_use]
pub(crate) fn tool_dirs(user_config: Option<&Path>, workspace: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = user_config.into_iter().map(|d| d.join("tools")).collect();
    dirs.push(workspace.join(".codeact").join("tools"));
    dirs
}

/// Every Markdown tool file in `dirs` that parses, in order, and a warning for each that does
/// not.
#[must_use]
pub(crate) fn load(dirs: &[PathBuf]) -> (Vec<UserTool>, Vec<String>) {
    let mut files = Vec::new();
    for dir in dirs {
        collect(dir, &mut files);
    }
    let mut tools = Vec::new();
    let mut warnings = Vec::new();
    for path in files {
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        match markdown::parse(&path, &text) {
            (Some(tool), _) => tools.push(UserTool::new(tool, path)),
            (None, problems) => warnings.push(format!(
                "tool file `{}` has {} problem(s); run `codeact check`",
                path.display(),
                problems.len()
            )),
        }
    }
    (tools, warnings)
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        let hidden = path.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.'));
        if hidden {
            continue;
        }
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("md")) {
            out.push(path);
        }
    }
}
