//! The project a hook call belongs to, whatever directory the payload's `cwd` names: its root,
//! which a codeact run may not leave in exclusive mode, and the mode its config files ask for.
//!
//! The root is the host's project directory (`CLAUDE_PROJECT_DIR`, `COPILOT_PROJECT_DIR`) when
//! it names one: a session that `cd`s into a subdirectory is still in its project. Without one
//! (an older host), it is the repository around the payload's `cwd` (the nearest folder holding
//! `.git`), else the `cwd` itself. The `.codeact/config.json` files below the root down to the
//! `cwd` — or, for a `cwd` in no repository, every one above it up to the file system's root —
//! may only make the mode stricter, as the root's may when untrusted: a subdirectory's file
//! cannot weaken its project's mode, and a project that is no repository is still found from
//! its subdirectories.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::bounded;
use crate::config::PROJECT_FILE;
use crate::env;
use crate::hook::mode::Mode;
use crate::hook::payload::Agent;
use crate::output;
use crate::platform::{self, Canonical as _};

/// The most folders looked through between the `cwd` and the root.
const MAX_DEPTH: usize = 64;

/// Where a hook call runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Project {
    /// The project root, canonical.
    pub(crate) root: PathBuf,
    /// The payload's `cwd`, canonical, when it names a directory.
    pub(crate) cwd: Option<PathBuf>,
    /// Whether the root lies above the `cwd` by what the host or the repository says (else it
    /// is the `cwd`, or ours).
    anchored: bool,
}

impl Project {
    /// The project of a call from `cwd` (the payload's), sent by `host` when known.
    #[must_use]
    pub(crate) fn locate(cwd: Option<&str>, host: Option<Agent>) -> Self {
        let names: &[&str] = match host {
            Some(Agent::Claude) => &[env::CLAUDE_PROJECT_DIR],
            Some(Agent::Copilot) => &[env::COPILOT_PROJECT_DIR],
            None => &[env::CLAUDE_PROJECT_DIR, env::COPILOT_PROJECT_DIR],
        };
        let host_dir = names.iter().filter_map(|name| env::var(name)).find_map(|dir| directory(Path::new(&dir)));
        let cwd = cwd.and_then(|cwd| directory(Path::new(cwd)));
        let ours = || std::env::current_dir().ok().and_then(|dir| directory(&dir));
        if let Some(root) = host_dir {
            return Self { root, cwd, anchored: true };
        }
        let repository = cwd.as_deref().and_then(|cwd| {
            cwd.ancestors()
                .take(MAX_DEPTH)
                .find(|dir| dir.join(".git").symlink_metadata().is_ok())
                .map(Path::to_path_buf)
        });
        if let Some(root) = repository {
            return Self { root, cwd, anchored: true };
        }
        let root = cwd.clone().or_else(ours).unwrap_or_else(|| PathBuf::from("/"));
        Self { root, cwd, anchored: false }
    }

    /// The strictest mode the project's config files below the root ask for (the root's own is
    /// [`Config`](crate::config::Config)'s); `None` when none asks. A file that cannot be read
    /// is left out, with one line on stderr.
    #[must_use]
    pub(crate) fn nested_mode(&self) -> Option<Mode> {
        self.nested_dirs().iter().filter_map(|dir| mode_of(&dir.join(PROJECT_FILE))).max()
    }

    /// The folders whose config files may tighten the mode: from the `cwd` up to the root,
    /// without it; for a root that is only the `cwd`, every folder above it up to the file
    /// system's root.
    fn nested_dirs(&self) -> Vec<PathBuf> {
        let Some(cwd) = &self.cwd else { return Vec::new() };
        if self.anchored {
            if !platform::is_within(cwd, &self.root) {
                return Vec::new();
            }
            return cwd
                .ancestors()
                .take_while(|dir| *dir != self.root)
                .take(MAX_DEPTH)
                .map(Path::to_path_buf)
                .collect();
        }
        cwd.ancestors().skip(1).take(MAX_DEPTH).map(Path::to_path_buf).collect()
    }
}

/// `path` canonical, when it is an absolute path to a directory.
fn directory(path: &Path) -> Option<PathBuf> {
    path.is_absolute().then(|| path.canonical().ok()).flatten().filter(|dir| dir.is_dir())
}

/// The mode a config file asks for, read on its own: the other keys do not matter to the hook,
/// and one it does not know must not hide a stricter mode.
fn mode_of(file: &Path) -> Option<Mode> {
    let read = bounded::read(file, bounded::MAX_FILE_BYTES).map_err(|err| err.to_string()).and_then(|bytes| {
        let Some(bytes) = bytes else { return Ok(None) };
        let value: Value = serde_json::from_slice(&bytes).map_err(|err| err.to_string())?;
        match value.get("mode") {
            None => Ok(None),
            Some(mode) => mode.as_str().and_then(Mode::parse).map(Some).ok_or_else(|| format!("`mode` is {mode}")),
        }
    });
    read.unwrap_or_else(|why| {
        output::diagnostic(&format!("codeact hook: left out `{}`: {why}", file.display()));
        None
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(root: &Path, cwd: &Path, anchored: bool) -> Project {
        Project { root: root.to_path_buf(), cwd: Some(cwd.to_path_buf()), anchored }
    }

    #[test]
    fn the_folders_between_the_cwd_and_the_root_may_tighten_the_mode() {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path().canonical().unwrap();
        let deep = root.join("a/b");
        std::fs::create_dir_all(&deep).unwrap();
        assert_eq!(project(&root, &deep, true).nested_dirs(), [deep.clone(), root.join("a")]);
        assert_eq!(project(&root, &root, true).nested_dirs(), Vec::<PathBuf>::new());
        // Outside the host's project, nothing below it applies.
        assert_eq!(project(&deep, &root, true).nested_dirs(), Vec::<PathBuf>::new());
        // A root that is only the cwd: every folder above it, up to the file system's root.
        let everything_above: Vec<PathBuf> = deep.ancestors().skip(1).take(MAX_DEPTH).map(Path::to_path_buf).collect();
        assert_eq!(project(&deep, &deep, false).nested_dirs(), everything_above);
        assert_eq!(everything_above.last().and_then(|last| last.parent()), None, "up to the file system's root");
    }

    #[test]
    fn only_the_mode_of_a_nested_file_is_read() {
        let temp = tempfile::tempdir().unwrap();
        let file = temp.path().join("config.json");
        for (text, mode) in [
            (r#"{"mode": "exclusive", "unknown": 1}"#, Some(Mode::Exclusive)),
            (r#"{"disabled": ["bash"]}"#, None),
            (r#"{"mode": "loud"}"#, None),
            ("{broken", None),
        ] {
            std::fs::write(&file, text).unwrap();
            assert_eq!(mode_of(&file), mode, "{text}");
        }
        assert_eq!(mode_of(&temp.path().join("absent.json")), None);
    }
}
