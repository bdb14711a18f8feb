//! Finding and loading Markdown tool files from the user's and the project's `tools/` folders.
//! A file with problems is left out with a warning that points at `codeact check`; a tool may not
//! take a built-in's name, and the first of two tools with one name wins.

use std::path::{Path, PathBuf};

use super::markdown::{self, Language, MarkdownTool};
use crate::config;
use crate::tools::process;

/// A loaded user tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserTool {
    pub tool: MarkdownTool,
    pub path: PathBuf,
}

impl UserTool {
    /// `count_todos(paths, limit=None) -> Any`, as the instructions show it.
    #[must_use]
    pub fn signature(&self) -> String {
        let params: Vec<String> = self
            .tool
            .inputs
            .iter()
            .map(|i| if i.required { i.name.clone() } else { format!("{}=None", i.name) })
            .collect();
        format!("{}({}) -> Any", self.tool.name, params.join(", "))
    }

    /// The JSON Schema of the inputs.
    #[must_use]
    pub fn parameters_schema(&self) -> serde_json::Value {
        let mut properties = serde_json::Map::new();
        for input in &self.tool.inputs {
            let schema = match input.ty.strip_suffix("[]") {
                Some(item) => {
                    serde_json::json!({"type": "array", "items": {"type": item}, "description": input.description})
                }
                None => serde_json::json!({"type": input.ty, "description": input.description}),
            };
            properties.insert(input.name.clone(), schema);
        }
        let required: Vec<&str> = self.tool.inputs.iter().filter(|i| i.required).map(|i| i.name.as_str()).collect();
        serde_json::json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
    }
}

/// The user tools for `workspace`, warning on stderr about each file left out.
#[must_use]
pub fn load_reporting(workspace: &Path) -> Vec<UserTool> {
    let builtin = |name: &str| crate::tools::registry::is_reserved(name);
    let (tools, warnings) = load(workspace, &builtin);
    for warning in warnings {
        crate::output::warning(&warning);
    }
    tools
}

/// The `tools/` folders, user first, then project.
#[must_use]
pub fn tool_dirs(workspace: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = config::user_dir().into_iter().map(|d| d.join("tools")).collect();
    dirs.push(workspace.join(".codeact").join("tools"));
    dirs
}

/// Loads every usable Markdown tool; `taken` says whether a name belongs to a built-in.
/// Returns the tools and a warning for each file left out.
pub fn load(workspace: &Path, taken: &dyn Fn(&str) -> bool) -> (Vec<UserTool>, Vec<String>) {
    let mut files = Vec::new();
    for dir in tool_dirs(workspace) {
        collect(&dir, &mut files);
    }
    let mut tools: Vec<UserTool> = Vec::new();
    let mut warnings = Vec::new();
    for path in files {
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        let (tool, problems) = markdown::parse(&path, &text);
        let Some(tool) = tool else {
            warnings.push(format!(
                "tool file `{}` has {} problem(s); run `codeact check`",
                path.display(),
                problems.len()
            ));
            continue;
        };
        if taken(&tool.name) {
            warnings.push(format!("tool `{}` in `{}` would shadow a built-in; rename it", tool.name, path.display()));
        } else if tools.iter().any(|t| t.tool.name == tool.name) {
            warnings.push(format!(
                "tool `{}` in `{}` is defined twice; the first one is used",
                tool.name,
                path.display()
            ));
        } else if tool.language == Language::JavaScript && process::on_path("node").is_none() {
            warnings.push(format!("tool `{}` needs `node`, which is not on PATH", tool.name));
        } else {
            tools.push(UserTool { tool, path });
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
