//! Which folders of tool files count, in which order, and whose each is: the user's, whose files
//! run as they are, or the workspace's, each file of which needs the user's trust.
//!
//! The order (the first of two tools with one name wins): `--tools` folders, the user config's
//! `tools/`, the user config's `tool_dirs`, then the workspace's `.codeact/tools/`, an agent
//! folder's `tools/` (a workspace whose root has a file `agent.md` and a directory `tools/`), and
//! the project config's `tool_dirs`.
//!
//! Where a folder lies decides whose it is, not who named it: the sandboxed program can write
//! anywhere in the workspace, so a folder there may hold a tool the program planted. A folder is
//! the workspace's when it lies inside the workspace (its canonical path, or the path it was named
//! by) and not inside a user config dir that itself lies in the workspace. This module reads no
//! file; it only looks at paths and links.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};

use crate::exit::UsageError;
use crate::hint::Hint;
use crate::paths;
use crate::platform::{self, Canonical as _};

/// The agentschema agent file whose presence makes the workspace root's `tools/` a tools folder.
pub(crate) const AGENT_FILE: &str = "agent.md";

/// The folders asked for, before they are ordered and classified.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Named {
    /// `--tools` folders, absolute.
    pub(crate) flags: Vec<PathBuf>,
    /// The user's config directory, whose `tools/` is a tools folder.
    pub(crate) user_config: Option<PathBuf>,
    /// The user config's `tool_dirs`, absolute.
    pub(crate) user: Vec<PathBuf>,
    /// The project config's `tool_dirs`, absolute and inside the workspace; empty unless the
    /// user trusts that file.
    pub(crate) project: Vec<PathBuf>,
}

/// Whose a tools folder is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    /// The user's: its files count as they are.
    User,
    /// The workspace's: each file in it, helpers and other support files included, needs the
    /// user's trust, and a symbolic link on the way to it shuts it.
    Workspace,
}

/// One folder of tool files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ToolDir {
    /// Where its files are read; for a workspace folder, a path below the canonical workspace.
    pub(crate) path: PathBuf,
    pub(crate) origin: Origin,
}

impl ToolDir {
    /// For a workspace folder, the first symbolic link on the way to it from `workspace`,
    /// relative to the workspace (`tools`, `.codeact`): a link the repository ships could point
    /// at a folder the program writes, or at one nobody reviewed.
    #[must_use]
    pub(crate) fn link(&self, workspace: &Path) -> Option<String> {
        if self.origin == Origin::User {
            return None;
        }
        let rel = self.path.strip_prefix(workspace).ok()?;
        let mut at = workspace.to_path_buf();
        for component in rel.components() {
            at.push(component);
            match std::fs::symlink_metadata(&at) {
                Ok(meta) if meta.file_type().is_symlink() => return workspace_item(workspace, &at),
                Ok(_) => {}
                Err(_) => return None,
            }
        }
        None
    }
}

/// The tools folders for `workspace` (canonical), in the order they count, each once, with
/// whose each is.
#[must_use]
pub(crate) fn tool_dirs(workspace: &Path, named: &Named) -> Vec<ToolDir> {
    let mut wanted: Vec<PathBuf> = named.flags.clone();
    wanted.extend(named.user_config.iter().map(|dir| dir.join("tools")));
    wanted.extend(named.user.iter().cloned());
    wanted.push(workspace.join(".codeact").join("tools"));
    if let Some(tools) = agent_tools(workspace) {
        wanted.push(tools);
    }
    wanted.extend(named.project.iter().cloned());

    let user_config = named.user_config.as_deref().and_then(|dir| dir.canonical().ok());
    let mut seen: Vec<PathBuf> = Vec::new();
    let mut dirs = Vec::new();
    for path in wanted {
        // An agent folder named as a tools folder stands for its `tools/`, as in `check`.
        let path = agent_tools(&path).unwrap_or(path);
        let (dir, real) = classify(&path, workspace, user_config.as_deref());
        if !seen.contains(&real) {
            seen.push(real);
            dirs.push(dir);
        }
    }
    dirs
}

/// Whose the folder at `path` (absolute) is, in `workspace` (canonical).
#[must_use]
pub(crate) fn origin(workspace: &Path, user_config: Option<&Path>, path: &Path) -> Origin {
    let user_config = user_config.and_then(|dir| dir.canonical().ok());
    classify(path, workspace, user_config.as_deref()).0.origin
}

/// The agent folder's `tools/` when `workspace` is an agentschema agent folder: its root has a
/// file [`AGENT_FILE`] and a directory (or a link to one) `tools/`.
#[must_use]
pub(crate) fn agent_tools(workspace: &Path) -> Option<PathBuf> {
    let tools = workspace.join("tools");
    (workspace.join(AGENT_FILE).is_file() && tools.is_dir()).then_some(tools)
}

/// The folder at `path` (absolute) as a [`ToolDir`], and its real location, by which one folder
/// named twice is told apart.
fn classify(path: &Path, workspace: &Path, user_config: Option<&Path>) -> (ToolDir, PathBuf) {
    let lexical = paths::lexical(path);
    let canonical = path.canonical().ok();
    let real = canonical.clone().unwrap_or_else(|| lexical.clone());
    // The user's own config dir, when it lies in the workspace, is still the user's.
    let users = user_config.is_some_and(|dir| platform::is_within(dir, workspace) && platform::is_within(&real, dir));
    let dir = if users {
        ToolDir { path: real.clone(), origin: Origin::User }
    } else if platform::is_within(&lexical, workspace) {
        // Named through the workspace: the path as named, so that a link on the way is seen.
        ToolDir { path: lexical, origin: Origin::Workspace }
    } else if platform::is_within(&real, workspace) {
        ToolDir { path: real.clone(), origin: Origin::Workspace }
    } else {
        ToolDir { path: real.clone(), origin: Origin::User }
    };
    (dir, real)
}

/// The `--tools` folders, absolute (relative ones from the current directory); each must be a
/// folder, else this is a usage error saying which.
pub(crate) fn flags(given: &[PathBuf]) -> Result<Vec<PathBuf>> {
    if given.is_empty() {
        return Ok(Vec::new());
    }
    let cwd = std::env::current_dir().context("failed to read the current directory")?;
    given
        .iter()
        .map(|dir| {
            let path = cwd.join(dir);
            if path.is_dir() {
                return Ok(path);
            }
            let what = if path.exists() { "is not a folder" } else { "does not exist" };
            let shown = if dir.is_absolute() { String::new() } else { format!(" (`{}`)", path.display()) };
            Err(UsageError {
                message: format!("--tools `{}` {what}{shown}", dir.display()),
                hint: Some(Hint::new(
                    "--tools takes a folder of tool files (`*.md`, `*.py`), relative to the current directory, \
                     e.g. `--tools my-agent/tools`",
                )),
            }
            .into())
        })
        .collect()
}

/// What a config file's `tool_dirs` entries are relative to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Base<'a> {
    /// The user config dir, for the user's file.
    UserConfig(&'a Path),
    /// The workspace (canonical), for the project's file, whose entries may not leave it.
    Workspace(&'a Path),
}

/// The folder a `tool_dirs` entry names, from `base`. A project's entry may not lead outside
/// the workspace, neither as written (`..`, an absolute path) nor through a link. `Err` says
/// what is wrong with it.
pub(crate) fn config_entry(base: Base<'_>, entry: &str) -> Result<PathBuf, String> {
    match base {
        Base::UserConfig(dir) => {
            let path = dir.join(entry);
            if path.is_dir() { Ok(path) } else { Err(format!("`{entry}` is not a folder (`{}`)", path.display())) }
        }
        Base::Workspace(workspace) => {
            let path = workspace.join(entry);
            let lexical = paths::lexical(&path);
            if !platform::is_within(&lexical, workspace) {
                return Err(format!("`{entry}` is outside the workspace; name a folder inside it"));
            }
            if path.canonical().is_ok_and(|real| !platform::is_within(&real, workspace)) {
                return Err(format!("`{entry}` leads outside the workspace through a symbolic link"));
            }
            if !path.is_dir() {
                return Err(format!("`{entry}` is not a folder in the workspace"));
            }
            Ok(lexical)
        }
    }
}

/// `path` relative to `workspace`, `/`-separated: the key under which a workspace file is
/// trusted. `None` outside the workspace.
#[must_use]
pub(crate) fn workspace_item(workspace: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(workspace).ok()?;
    Some(rel.to_string_lossy().replace('\\', "/"))
}

#[cfg(test)]
mod tests {
    #[cfg(unix)]
    use std::os::unix::fs::symlink;

    use super::*;

    /// A canonical temporary root with `ws/` and `cfg/`.
    fn root() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path().canonical().unwrap();
        std::fs::create_dir_all(root.join("ws")).unwrap();
        std::fs::create_dir_all(root.join("cfg/tools")).unwrap();
        (temp, root.join("ws"), root.join("cfg"))
    }

    fn mkdir(path: &Path) -> PathBuf {
        std::fs::create_dir_all(path).unwrap();
        path.to_path_buf()
    }

    #[test]
    fn folders_come_flags_first_then_the_users_then_the_workspaces() {
        let (_temp, ws, cfg) = root();
        let flag = mkdir(&ws.join("../flag"));
        let user = mkdir(&ws.join("../mine"));
        let project = mkdir(&ws.join("sub/tools"));
        mkdir(&ws.join("tools"));
        std::fs::write(ws.join(AGENT_FILE), "# agent\n").unwrap();
        let named =
            Named { flags: vec![flag], user_config: Some(cfg.clone()), user: vec![user], project: vec![project] };
        let shown: Vec<(String, Origin)> = tool_dirs(&ws, &named)
            .into_iter()
            .map(|dir| {
                let shown = dir.path.strip_prefix(ws.parent().unwrap()).unwrap().display().to_string();
                (shown.replace('\\', "/"), dir.origin)
            })
            .collect();
        assert_eq!(
            shown,
            [
                ("flag".to_owned(), Origin::User),
                ("cfg/tools".to_owned(), Origin::User),
                ("mine".to_owned(), Origin::User),
                ("ws/.codeact/tools".to_owned(), Origin::Workspace),
                ("ws/tools".to_owned(), Origin::Workspace),
                ("ws/sub/tools".to_owned(), Origin::Workspace),
            ]
        );
    }

    #[test]
    fn a_tools_folder_without_an_agent_file_is_no_agent_folder() {
        let (_temp, ws, _) = root();
        mkdir(&ws.join("tools"));
        assert_eq!(agent_tools(&ws), None);
        std::fs::create_dir(ws.join(AGENT_FILE)).unwrap();
        assert_eq!(agent_tools(&ws), None, "agent.md must be a file");
    }

    #[test]
    fn a_folder_named_by_the_user_inside_the_workspace_is_the_workspaces() {
        let (_temp, ws, cfg) = root();
        let inside = mkdir(&ws.join("vendor/tools"));
        let named = Named { flags: vec![inside.clone()], user_config: Some(cfg), ..Named::default() };
        assert_eq!(tool_dirs(&ws, &named)[0], ToolDir { path: inside, origin: Origin::Workspace });
    }

    #[cfg(unix)]
    #[test]
    fn a_link_into_the_workspace_does_not_make_a_folder_the_users() {
        let (_temp, ws, _) = root();
        let inside = mkdir(&ws.join("planted"));
        let link = ws.parent().unwrap().join("looks-outside");
        symlink(&inside, &link).unwrap();
        let named = Named { flags: vec![link], ..Named::default() };
        assert_eq!(tool_dirs(&ws, &named)[0], ToolDir { path: inside, origin: Origin::Workspace });
    }

    #[cfg(unix)]
    #[test]
    fn a_link_out_of_the_workspace_is_still_the_workspaces_and_is_seen() {
        let (_temp, ws, _) = root();
        let outside = mkdir(&ws.join("../elsewhere"));
        symlink(&outside, ws.join("tools")).unwrap();
        std::fs::write(ws.join(AGENT_FILE), "").unwrap();
        let dirs = tool_dirs(&ws, &Named::default());
        assert_eq!(dirs[1], ToolDir { path: ws.join("tools"), origin: Origin::Workspace });
        assert_eq!(dirs[1].link(&ws).as_deref(), Some("tools"));
        assert_eq!(dirs[0].link(&ws), None);
    }

    #[test]
    fn a_user_config_dir_inside_the_workspace_stays_the_users() {
        let (_temp, ws, _) = root();
        let cfg = mkdir(&ws.join("home/.config/codeact/tools")).parent().unwrap().to_path_buf();
        let named = Named { user_config: Some(cfg.clone()), ..Named::default() };
        assert_eq!(tool_dirs(&ws, &named)[0], ToolDir { path: cfg.join("tools"), origin: Origin::User });
    }

    #[test]
    fn a_workspace_inside_the_user_config_dir_is_still_the_workspaces() {
        let (_temp, _, cfg) = root();
        let ws = mkdir(&cfg.join("tools/cloned"));
        let project = mkdir(&ws.join("t"));
        let named = Named { user_config: Some(cfg), project: vec![project.clone()], ..Named::default() };
        assert_eq!(tool_dirs(&ws, &named).last(), Some(&ToolDir { path: project, origin: Origin::Workspace }));
    }

    #[test]
    fn one_folder_named_twice_counts_once_where_it_comes_first() {
        let (_temp, ws, _) = root();
        let tools = mkdir(&ws.join("tools"));
        std::fs::write(ws.join(AGENT_FILE), "").unwrap();
        let named = Named { flags: vec![ws.join("./x/../tools")], ..Named::default() };
        let dirs = tool_dirs(&ws, &named);
        assert_eq!(dirs.iter().filter(|dir| dir.path == tools).count(), 1, "{dirs:?}");
        assert_eq!(dirs[0].path, tools);
    }
}
