//! The one walk of the workspace that finds what makes more of it write-protected than its
//! names say: every symbolic link (a protected name may be a link, and a link may give a file
//! a protected name), every `.git` (a repository whose config may name a hooks folder), and
//! every Python environment (a folder holding `pyvenv.cfg`, or a conda one's `conda-meta/`).
//!
//! The walk opens each directory through its parent's handle without following links, reads
//! the entries' types from the directory listing, and never reads a file or a link. It is bounded, in
//! entries and in depth ([`Bounds`]); past a bound the rest is unknown, and the caller fails
//! safe (every write refused). A directory that cannot be opened is passed over when this user
//! cannot enter it either (nothing there can be written); one that can be entered but not
//! listed leaves the rules unknown.

use std::path::{Path, PathBuf};

use cap_fs_ext::DirExt;
use cap_std::fs::Dir;

use super::fold::fold;

/// How much of a workspace is walked before giving up.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bounds {
    pub(crate) entries: usize,
    pub(crate) depth: usize,
}

/// The bounds of a real run: a million entries take about a second to list, once a run.
pub(crate) const BOUNDS: Bounds = Bounds { entries: 1_000_000, depth: 128 };

/// What the walk found, paths relative to the workspace root.
#[derive(Debug, Default)]
pub(crate) struct Found {
    /// Each symbolic link.
    pub(crate) links: Vec<PathBuf>,
    /// Each directory holding a `.git`.
    pub(crate) repos: Vec<PathBuf>,
    /// Each directory holding a `pyvenv.cfg` or `conda-meta/`.
    pub(crate) envs: Vec<PathBuf>,
    /// Why the walk stopped before the end, if it did.
    pub(crate) incomplete: Option<String>,
}

/// Walks everything beneath `root`.
pub(crate) fn scan(root: &Dir, bounds: Bounds) -> Found {
    let mut found = Found::default();
    let mut seen = 0;
    if let Err(stop) = visit(root, Path::new(""), 0, bounds, &mut seen, &mut found) {
        found.incomplete = Some(stop);
    }
    found
}

fn visit(
    dir: &Dir,
    rel: &Path,
    depth: usize,
    bounds: Bounds,
    seen: &mut usize,
    found: &mut Found,
) -> Result<(), String> {
    let entries = match dir.entries() {
        Ok(entries) => entries,
        // A folder that can be entered but not listed may hold anything a write reaches.
        Err(_) if can_enter(dir) => return Err(format!("`{}` can be entered but not listed", rel.display())),
        Err(_) => return Ok(()),
    };
    for entry in entries {
        let Ok(entry) = entry else { continue };
        *seen += 1;
        if *seen > bounds.entries {
            return Err(format!("the workspace holds more than {} files and folders", bounds.entries));
        }
        let name = entry.file_name();
        let Ok(kind) = entry.file_type() else { continue };
        let folded = fold(&name.to_string_lossy());
        let path = rel.join(&name);
        if folded == ".git" {
            found.repos.push(rel.to_path_buf());
        }
        if folded == "pyvenv.cfg" || (folded == "conda-meta" && kind.is_dir()) {
            found.envs.push(rel.to_path_buf());
        }
        if kind.is_symlink() {
            found.links.push(path);
        } else if kind.is_dir() {
            if depth + 1 >= bounds.depth {
                return Err(format!("the workspace is more than {} folders deep", bounds.depth));
            }
            if let Ok(sub) = dir.open_dir_nofollow(&name) {
                visit(&sub, &path, depth + 1, bounds, seen, found)?;
            }
        }
    }
    Ok(())
}

/// Whether this process may pass through `dir`.
#[cfg(unix)]
fn can_enter(dir: &Dir) -> bool {
    rustix::fs::accessat(dir, ".", rustix::fs::Access::EXEC_OK, rustix::fs::AtFlags::empty()).is_ok()
}

#[cfg(not(unix))]
fn can_enter(_dir: &Dir) -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open(path: &Path) -> Dir {
        Dir::open_ambient_dir(path, cap_std::ambient_authority()).unwrap()
    }

    #[cfg(unix)]
    #[test]
    fn links_repositories_and_environments_are_found_at_any_depth() {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path();
        std::fs::create_dir_all(root.join("a/b/.venv/lib")).unwrap();
        std::fs::write(root.join("a/b/.venv/pyvenv.cfg"), "home = /usr/bin\n").unwrap();
        std::fs::create_dir_all(root.join("vendor/lib/.git")).unwrap();
        std::fs::create_dir_all(root.join("envs/conda/conda-meta")).unwrap();
        std::os::unix::fs::symlink("docs/guide.md", root.join("a/AGENTS.md")).unwrap();
        std::os::unix::fs::symlink("..", root.join("a/b/up")).unwrap();
        let mut found = scan(&open(root), BOUNDS);
        found.links.sort();
        found.envs.sort();
        assert_eq!(found.links, [PathBuf::from("a/AGENTS.md"), PathBuf::from("a/b/up")]);
        assert_eq!(found.repos, [PathBuf::from("vendor/lib")]);
        assert_eq!(found.envs, [PathBuf::from("a/b/.venv"), PathBuf::from("envs/conda")]);
        assert_eq!(found.incomplete, None);
    }

    #[test]
    fn past_a_bound_the_walk_says_it_is_incomplete() {
        let temp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(temp.path().join("a/b/c/d")).unwrap();
        for n in 0..10 {
            std::fs::write(temp.path().join(format!("f{n}")), "").unwrap();
        }
        let dir = open(temp.path());
        assert_eq!(scan(&dir, Bounds { entries: 100, depth: 10 }).incomplete, None);
        assert!(scan(&dir, Bounds { entries: 5, depth: 10 }).incomplete.is_some());
        assert!(scan(&dir, Bounds { entries: 100, depth: 3 }).incomplete.is_some());
    }
}
