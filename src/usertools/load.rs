//! Finding and loading Markdown tool files from the user's and the project's `tools/` folders,
//! and [`survey`]ing a workspace tools folder for what trust must cover. A file with problems is
//! left out with a warning that points at `codeact check`; which of the loaded tools are offered
//! is the catalogue's decision.
//!
//! A workspace folder's files are read without following a symbolic link ([`read_tool`]): a
//! link could make a file the program writes part of a trusted tool.

use std::borrow::Cow;
use std::collections::HashSet;
use std::io;
use std::path::{Path, PathBuf};

use super::folders::{Origin, ToolDir};
use super::markdown::{self, MarkdownTool, ToolFile};
use crate::bounded;
use crate::platform::{self, Canonical as _, Follow};
use crate::tools::spec::{Kind, Param, ParamDefault, Signature};

/// A loaded Markdown tool.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct UserTool {
    pub(crate) tool: MarkdownTool,
    pub(crate) path: PathBuf,
    /// The tools folder it came from.
    pub(crate) folder: PathBuf,
    /// The input table as parameters: required inputs first-class, the others left out unless
    /// passed (the tool's own defaults apply).
    params: Vec<Param>,
}

impl UserTool {
    #[must_use]
    pub(crate) fn new(tool: MarkdownTool, path: PathBuf, folder: PathBuf) -> Self {
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
        Self { tool, path, folder, params }
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
pub(crate) struct ToolsFound {
    pub(crate) tools: Vec<UserTool>,
    /// One line for each file that does not parse or cannot be read.
    pub(crate) warnings: Vec<String>,
    /// The files left out because `trusted` refused them.
    pub(crate) untrusted: Vec<PathBuf>,
}

/// Every Markdown tool file in `dir` that `trusted` accepts (given its path and content) and
/// that parses, in order, and a warning for each that does not parse.
#[must_use]
pub(crate) fn load(dir: &ToolDir, trusted: &dyn Fn(&Path, &[u8]) -> bool) -> ToolsFound {
    let mut loaded = ToolsFound::default();
    let mut unmapped = Vec::new();
    for path in markdown_files(&dir.path) {
        let content = match read_tool(dir, &path) {
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
            Some(ToolFile::Custom(tool)) => loaded.tools.push(UserTool::new(tool, path, dir.path.clone())),
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

/// The most entries (files, folders, links) a workspace tools folder may hold: each file is
/// hashed on every run and every session start, so a folder with more stays unused rather than
/// slow every command. The count stops at the first one over, so that a folder of millions costs
/// no more than one of this many.
pub(crate) const MAX_FOLDER_FILES: usize = 10_000;

/// The most bytes the files of a workspace tools folder may hold together, for the same reason.
pub(crate) const MAX_FOLDER_BYTES: u64 = 64 * 1024 * 1024;

/// The file `path` of the tools folder `dir`, or `None` when nothing is there. A workspace
/// folder's file is read only when it is a regular file by its own name — a symbolic link is
/// not followed (`O_NOFOLLOW`) — and has no other name (a hard link elsewhere in the workspace
/// could change it); the user's folders' files are read as they are.
pub(crate) fn read_tool(dir: &ToolDir, path: &Path) -> io::Result<Option<Vec<u8>>> {
    if dir.origin == Origin::User {
        return bounded::read(path, bounded::MAX_FILE_BYTES);
    }
    let only_name = |file: &std::fs::File| {
        if platform::link_count(file)? > 1 {
            return Err(io::Error::other("a file with another hard link, whose other name could change it"));
        }
        Ok(())
    };
    bounded::read_with(path, bounded::MAX_FILE_BYTES, Follow::NoLinks, only_name).map_err(|err| {
        if std::fs::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_symlink()) {
            io::Error::other("a symbolic link, which codeact does not follow in a tools folder of the workspace")
        } else {
            err
        }
    })
}

/// What an entry of a workspace tools folder is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Role {
    /// A Markdown tool file or a Python drop-in.
    Tool,
    /// Any other file — a helper a tool imports or reads, a package, a cache, data — which the
    /// tools' trust covers too.
    Support,
    /// A symbolic link, with its target as written.
    Link(PathBuf),
}

/// One entry of a workspace tools folder, as trust sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FolderEntry {
    pub(crate) path: PathBuf,
    pub(crate) role: Role,
    /// Why no approval can cover it, when none can.
    refused: Option<String>,
}

impl FolderEntry {
    /// What the user approves of the entry: a file's bytes, read by [`read_tool`]; for a link
    /// to a file of the same tools folder, the link itself (its target as written: the file it
    /// leads to is an entry of its own). `Err` says why no approval can cover it.
    pub(crate) fn content(&self, dir: &ToolDir) -> Result<Vec<u8>, String> {
        if let Some(why) = &self.refused {
            return Err(why.clone());
        }
        if let Role::Link(target) = &self.role {
            let mut content = b"symbolic link\0".to_vec();
            content.extend_from_slice(target.as_os_str().as_encoded_bytes());
            return Ok(content);
        }
        match read_tool(dir, &self.path) {
            Ok(Some(content)) => Ok(content),
            Ok(None) => Err("gone".to_owned()),
            Err(err) => Err(err.to_string()),
        }
    }
}

/// Every entry of the workspace tools folder `dir` that trust must cover, tool files first,
/// then the others in walk order. A symbolic link counts only when it leads to a regular file
/// inside the same folder, which the program's write tools refuse; a link out of it, to a
/// folder, or to nothing, and a folder too deep to look into, are entries no approval covers,
/// so that the folder stays unused while they are there. `Err` says why the whole folder stays
/// unused: more than [`MAX_FOLDER_FILES`] entries or [`MAX_FOLDER_BYTES`] bytes, found without
/// reading or hashing any of them.
pub(crate) fn survey(dir: &Path) -> Result<Vec<FolderEntry>, String> {
    let mut all = Vec::new();
    let mut budget = MAX_FOLDER_FILES + 1;
    walk_to(dir, 0, MAX_SUPPORT_DEPTH, true, &|_| false, &mut budget, &mut all);
    if budget == 0 {
        return Err(format!("more than {MAX_FOLDER_FILES} files and folders"));
    }
    let metas: Vec<Option<std::fs::Metadata>> = all.iter().map(|path| std::fs::symlink_metadata(path).ok()).collect();
    let bytes: u64 = metas.iter().flatten().filter(|meta| meta.is_file()).map(std::fs::Metadata::len).sum();
    if bytes > MAX_FOLDER_BYTES {
        return Err(format!("more than {} MiB of files", MAX_FOLDER_BYTES / 1024 / 1024));
    }
    let mut tools: Vec<PathBuf> =
        markdown_files(dir).into_iter().chain(super::dropin::files(&[dir.to_path_buf()])).collect();
    tools.sort();
    let is_tool: HashSet<&PathBuf> = tools.iter().collect();
    let real_dir = dir.canonical().unwrap_or_else(|_| dir.to_path_buf());
    let mut others = Vec::new();
    for (path, meta) in all.into_iter().zip(metas) {
        if meta.as_ref().is_some_and(|meta| meta.file_type().is_symlink()) {
            // A linked tool file too is listed as the link it is.
            let target = std::fs::read_link(&path).unwrap_or_default();
            let refused = link_refused(&path, &real_dir);
            others.push(FolderEntry { path, role: Role::Link(target), refused });
        } else if is_tool.contains(&path) {
            // Listed first, below.
        } else if meta.is_some_and(|meta| meta.is_dir()) {
            let refused = Some("a folder too deep below the tools folder to look into".to_owned());
            others.push(FolderEntry { path, role: Role::Support, refused });
        } else {
            others.push(FolderEntry { path, role: Role::Support, refused: None });
        }
    }
    let linked: HashSet<&PathBuf> =
        others.iter().filter(|entry| matches!(entry.role, Role::Link(_))).map(|entry| &entry.path).collect();
    let mut entries: Vec<FolderEntry> = tools
        .iter()
        .filter(|path| !linked.contains(path))
        .map(|path| FolderEntry { path: path.clone(), role: Role::Tool, refused: None })
        .collect();
    entries.extend(others);
    Ok(entries)
}

/// Why the symbolic link at `path` counts for nothing in the tools folder whose real location
/// is `real_dir`; `None` when it leads to a regular file inside it.
fn link_refused(path: &Path, real_dir: &Path) -> Option<String> {
    let why = match path.canonical() {
        Err(_) => "a symbolic link that leads nowhere: make it a regular file",
        Ok(real) if real.is_dir() => "a symbolic link to a folder: make it a real directory",
        Ok(real) if !platform::is_within(&real, real_dir) => {
            "a symbolic link out of the tools folder: make it a regular file"
        }
        Ok(real) if !real.is_file() => "a symbolic link to something other than a regular file",
        Ok(_) => return None,
    };
    Some(why.to_owned())
}

/// The files in `dir` and below, symlinked folders not followed, [`MAX_DEPTH`] folders down at
/// most, sorted in each folder; a folder or file whose name `skip` accepts is passed over.
fn walk(dir: &Path, depth: usize, skip: &dyn Fn(&Path) -> bool, out: &mut Vec<PathBuf>) {
    let mut budget = usize::MAX;
    walk_to(dir, depth, MAX_DEPTH, false, skip, &mut budget, out);
}

/// [`walk`] down to `limit` folders; a folder past it is listed in place of what it holds when
/// `list_deeper`, else passed over. Each entry read, folders included, takes one from `budget`;
/// once it is spent the walk stops, without reading the rest of a folder.
fn walk_to(
    dir: &Path,
    depth: usize,
    limit: usize,
    list_deeper: bool,
    skip: &dyn Fn(&Path) -> bool,
    budget: &mut usize,
    out: &mut Vec<PathBuf>,
) {
    let Ok(read) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<(PathBuf, bool)> = Vec::new();
    for entry in read.flatten() {
        if *budget == 0 {
            return;
        }
        *budget -= 1;
        entries.push((entry.path(), entry.file_type().is_ok_and(|t| t.is_dir())));
    }
    entries.sort();
    for (path, is_dir) in entries {
        if skip(&path) {
            continue;
        }
        if !is_dir || (depth >= limit && list_deeper) {
            out.push(path);
        } else if depth < limit {
            walk_to(&path, depth + 1, limit, list_deeper, skip, budget, out);
        }
    }
}

#[cfg(test)]
mod tests {
    #[cfg(unix)]
    use std::os::unix::fs::symlink;

    use super::*;

    #[cfg(unix)]
    fn workspace_dir(path: &Path) -> ToolDir {
        ToolDir { path: path.to_path_buf(), origin: Origin::Workspace }
    }

    #[cfg(unix)]
    #[test]
    fn the_survey_lists_tools_first_and_accepts_only_links_to_files_of_the_same_folder() {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path().canonical().unwrap();
        let tools = root.join("tools");
        std::fs::create_dir_all(tools.join("sub")).unwrap();
        std::fs::write(root.join("outside.js"), "x").unwrap();
        std::fs::write(tools.join("t.md"), "# t").unwrap();
        std::fs::write(tools.join("sub/real.js"), "x").unwrap();
        symlink("sub/real.js", tools.join("alias.js")).unwrap();
        symlink("../outside.js", tools.join("out.js")).unwrap();
        symlink("sub", tools.join("folder")).unwrap();
        symlink("missing", tools.join("nowhere")).unwrap();
        let dir = workspace_dir(&tools);
        let entries = survey(&tools).unwrap();
        let shown: Vec<(String, Role, Result<Vec<u8>, String>)> = entries
            .iter()
            .map(|entry| {
                let rel = entry.path.strip_prefix(&tools).unwrap().display().to_string();
                (rel, entry.role.clone(), entry.content(&dir))
            })
            .collect();
        let refused = |why: &str| Err(why.to_owned());
        assert_eq!(
            shown,
            [
                ("t.md".to_owned(), Role::Tool, Ok(b"# t".to_vec())),
                ("alias.js".to_owned(), Role::Link("sub/real.js".into()), Ok(b"symbolic link\0sub/real.js".to_vec())),
                (
                    "folder".to_owned(),
                    Role::Link("sub".into()),
                    refused("a symbolic link to a folder: make it a real directory")
                ),
                (
                    "nowhere".to_owned(),
                    Role::Link("missing".into()),
                    refused("a symbolic link that leads nowhere: make it a regular file")
                ),
                (
                    "out.js".to_owned(),
                    Role::Link("../outside.js".into()),
                    refused("a symbolic link out of the tools folder: make it a regular file")
                ),
                ("sub/real.js".to_owned(), Role::Support, Ok(b"x".to_vec())),
            ]
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_workspace_folders_file_is_read_by_its_own_name_only() {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path();
        std::fs::write(root.join("a.py"), "x").unwrap();
        symlink("a.py", root.join("link.py")).unwrap();
        std::fs::hard_link(root.join("a.py"), root.join("hard.py")).unwrap();
        std::fs::write(root.join("only.py"), "y").unwrap();
        let dir = workspace_dir(root);
        assert_eq!(read_tool(&dir, &root.join("only.py")).unwrap(), Some(b"y".to_vec()));
        assert!(read_tool(&dir, &root.join("link.py")).unwrap_err().to_string().contains("a symbolic link"));
        assert!(read_tool(&dir, &root.join("hard.py")).unwrap_err().to_string().contains("another hard link"));
        let users = ToolDir { path: root.to_path_buf(), origin: Origin::User };
        assert_eq!(read_tool(&users, &root.join("link.py")).unwrap(), Some(b"x".to_vec()));
    }

    #[test]
    fn the_survey_stops_counting_at_the_first_entry_over_the_cap() {
        let temp = tempfile::tempdir().unwrap();
        let tools = temp.path();
        for index in 0..=MAX_FOLDER_FILES {
            std::fs::write(tools.join(index.to_string()), "").unwrap();
        }
        assert_eq!(survey(tools).unwrap_err(), format!("more than {MAX_FOLDER_FILES} files and folders"));
        std::fs::remove_file(tools.join("0")).unwrap();
        assert_eq!(survey(tools).unwrap().len(), MAX_FOLDER_FILES);
    }
}
