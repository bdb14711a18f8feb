//! [`Workspace`]: the workspace root opened once, the confinement of every path a program
//! passes ([`Workspace::confine`]), and reading and listing what lies beneath it.

use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

use cap_fs_ext::DirExt as _;
use cap_std::fs::{Dir, File, OpenOptions};

use super::entry::{classify, not_regular, outside};
use super::windows_names::{below_root, name_problem, refused_name};
use super::{Confined, Entry, Opened, WalkDir, io_error, read_capped};
use crate::platform::{Careful as _, Follow};
use crate::tools::error::{ErrorKind, ToolError};
use crate::tools::protected::Protected;

/// The directory tools may touch.
#[derive(Debug)]
pub(crate) struct Workspace {
    /// Canonical absolute root.
    pub(super) root: PathBuf,
    pub(super) dir: Dir,
    /// What no tool writes here, as far as the configuration tells.
    pub(super) rules: Protected,
    /// `rules` with what the workspace's contents add, found before the first write.
    pub(super) protected: OnceLock<Protected>,
}

impl Workspace {
    /// Opens the workspace at `root`, which must be canonical.
    pub(crate) fn open(root: &Path) -> io::Result<Self> {
        let dir = Dir::open_ambient_dir(root, cap_std::ambient_authority())?;
        Ok(Self { root: root.to_path_buf(), dir, rules: Protected::for_root(root), protected: OnceLock::new() })
    }

    /// The canonical root.
    #[must_use]
    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// Maps a program-supplied path to a normalised path relative to the root.
    ///
    /// Absolute paths are accepted when they lie under the root. `.` components are dropped and
    /// `..` is resolved lexically; climbing above the root is a `PermissionError`. Symlinks are
    /// not looked at here: the kernel-side resolution in every operation below refuses those
    /// that leave the workspace.
    ///
    /// On Windows, `/` and `\` both separate names, and every other way to name something
    /// else is a `PermissionError` too: a drive or share prefix other than the root's (`C:x`,
    /// `D:\x`, `\\server\share\x`, `\\?\…`, `\\.\…`), a path from the current drive's root
    /// (`\x`, `\??\x`), and a name Windows does not take for the plain file it spells
    /// ([`windows_name_problem`](super::windows_names::windows_name_problem): a stream, a
    /// device, a trailing dot or space, a short name, a reserved character).
    pub(crate) fn confine(&self, path: &str) -> Result<Confined, ToolError> {
        if path.contains('\0') {
            return Err(ToolError::value(format!("path {path:?} contains a NUL byte")));
        }
        let given = Path::new(path);
        let components = if given.is_absolute() {
            below_root(&self.root, given).ok_or_else(|| outside(path))?
        } else {
            given.components()
        };
        let mut normal = PathBuf::new();
        for component in components {
            match component {
                Component::Normal(part) => match name_problem(part) {
                    Some(problem) => return Err(refused_name(path, problem)),
                    None => normal.push(part),
                },
                Component::CurDir => {}
                Component::ParentDir => {
                    if !normal.pop() {
                        return Err(outside(path));
                    }
                }
                Component::RootDir | Component::Prefix(_) => return Err(outside(path)),
            }
        }
        Ok(Confined::from_normal(normal))
    }

    /// [`Self::confine`], then [`Self::canonical`]: where a program's path really leads.
    pub(crate) fn resolve(&self, path: &str) -> Result<Confined, ToolError> {
        self.canonical(&self.confine(path)?)
    }

    /// What `rel` is, following symlinks inside the workspace.
    pub(crate) fn entry(&self, rel: &Confined) -> Result<Entry, ToolError> {
        let meta = self.dir.metadata(rel.as_path()).map_err(|e| io_error(&e, rel))?;
        Ok(classify(&meta))
    }

    /// The real location of `rel` (symlinks inside the workspace resolved).
    pub(crate) fn canonical(&self, rel: &Confined) -> Result<Confined, ToolError> {
        let real = self.dir.canonicalize(rel.as_path()).map_err(|e| io_error(&e, rel))?;
        Ok(Confined::from_normal(real))
    }

    /// Where a new entry at `rel` would really be: the directories on the way with every
    /// symlink in them resolved inside the workspace — a dangling one too, since making the
    /// missing directories would follow it — and the last name as it is (a new file replaces
    /// nothing, so a symlink there is never followed).
    pub(crate) fn real_location(&self, rel: &Confined) -> Result<Confined, ToolError> {
        let Some(name) = rel.as_path().file_name() else { return Ok(Confined::root()) };
        let parent = self.resolve_names(&rel.parent(), rel)?;
        parent.join(Path::new(name)).ok_or_else(|| outside(&rel.shown()))
    }

    /// `rel` with each symlink in it replaced by its target, whether or not the target exists,
    /// name by name; `shown` names the path in errors. This only finds where a write would
    /// land: the kernel still confines the write itself.
    ///
    /// A target counts only as [`link_target`] reads it: an absolute one when it lies under
    /// the root, a relative one when its names are plain. On Windows a junction is such a link
    /// (std and cap-std see every name-surrogate reparse point as one), and its target reads
    /// as absolute (`C:\…`): one into the workspace is followed here, any other refused. (A
    /// junction to a volume by its GUID reads as `Volume{…}\…`, which is taken for names
    /// beside the link: a write there lands in the workspace, never on that volume.)
    pub(super) fn resolve_names(&self, rel: &Confined, shown: &Confined) -> Result<Confined, ToolError> {
        /// Symlinks followed before giving up, as the kernel does (`ELOOP`).
        const MAX_LINKS: usize = 40;
        let mut todo: Vec<OsString> = rel.as_path().iter().rev().map(OsStr::to_os_string).collect();
        let mut done = PathBuf::new();
        let mut links = 0;
        while let Some(name) = todo.pop() {
            match name.to_str() {
                Some(".") => continue,
                Some("..") => {
                    if !done.pop() {
                        return Err(outside(&shown.shown()));
                    }
                    continue;
                }
                _ => {}
            }
            let candidate = done.join(&name);
            let is_link = self.dir.symlink_metadata(&candidate).is_ok_and(|meta| meta.file_type().is_symlink());
            if !is_link {
                done = candidate;
                continue;
            }
            links += 1;
            if links > MAX_LINKS {
                return Err(ToolError::new(
                    ErrorKind::Os,
                    format!("'{}': too many levels of symbolic links", shown.shown()),
                ));
            }
            let target = self.dir.read_link_contents(&candidate).map_err(|e| io_error(&e, shown))?;
            let (from_root, names) = link_target(&self.root, &target, shown)?;
            if from_root {
                done = PathBuf::new();
            }
            todo.extend(names.into_iter().rev());
        }
        Ok(Confined::from_normal(done))
    }

    /// Opens the directory `rel` (symlinks inside the workspace followed) for a walker.
    pub(crate) fn open_walk(&self, rel: &Confined) -> Result<WalkDir, ToolError> {
        let dir = self.dir.open_dir(rel.as_path()).map_err(|e| io_error(&e, rel))?;
        Ok(WalkDir { dir, rel: rel.clone() })
    }

    /// Opens the directory `rel`, a path with no symlink in it (as [`Self::canonical`] gives
    /// one), for a caller that names files through it: one name at a time, following no
    /// symlink, so that a directory swapped for a symlink since `rel` was resolved and checked
    /// is refused rather than followed to another place in the workspace.
    pub(crate) fn open_dir(&self, rel: &Confined) -> Result<Dir, ToolError> {
        self.open_names(rel, false)
    }

    /// Opens the directory `rel` as [`Self::open_dir`] does, making each one missing on the
    /// way in the one opened before it (never through a symlink): the folders a new file needs.
    pub(crate) fn open_dir_creating(&self, rel: &Confined) -> Result<Dir, ToolError> {
        self.open_names(rel, true)
    }

    fn open_names(&self, rel: &Confined, create: bool) -> Result<Dir, ToolError> {
        let mut dir = self.dir.try_clone().map_err(|e| io_error(&e, rel))?;
        for name in rel.as_path() {
            let opened = match dir.open_dir_nofollow(name) {
                Err(err) if create && err.kind() == io::ErrorKind::NotFound => match dir.create_dir(name) {
                    Ok(()) => dir.open_dir_nofollow(name),
                    Err(err) if err.kind() == io::ErrorKind::AlreadyExists => dir.open_dir_nofollow(name),
                    Err(err) => Err(err),
                },
                opened => opened,
            };
            dir = opened.map_err(|e| io_error(&e, rel))?;
        }
        Ok(dir)
    }

    /// Opens what `rel` names, once, for reading: a regular file with its size, or a directory.
    /// The open never blocks (a FIFO or device is refused after opening, before any read).
    pub(crate) fn open_entry(&self, rel: &Confined) -> Result<Opened, ToolError> {
        let mut options = OpenOptions::new();
        options.read(true).careful_entry(Follow::Links);
        let file = self.dir.open_with(rel.as_path(), &options).map_err(|e| io_error(&e, rel))?;
        let meta = file.metadata().map_err(|e| io_error(&e, rel))?;
        match classify(&meta) {
            Entry::File => Ok(Opened::File(file, meta.len())),
            Entry::Dir => Ok(Opened::Dir),
            Entry::Special => Err(not_regular(rel)),
        }
    }

    /// Opens a regular file for reading and returns it with its size.
    pub(crate) fn open_regular(&self, rel: &Confined) -> Result<(File, u64), ToolError> {
        match self.open_entry(rel)? {
            Opened::File(file, len) => Ok((file, len)),
            Opened::Dir => Err(ToolError::new(ErrorKind::IsADirectory, format!("is a directory: '{}'", rel.shown()))),
        }
    }

    /// Reads a regular file, refusing anything larger than `max_bytes`.
    pub(crate) fn read(&self, rel: &Confined, max_bytes: u64) -> Result<Vec<u8>, ToolError> {
        let (file, len) = self.open_regular(rel)?;
        read_capped(file, len, rel, max_bytes)
    }

    /// Lists a directory: sorted names, `/` after directories.
    pub(crate) fn list(&self, rel: &Confined) -> Result<Vec<String>, ToolError> {
        let entries = self.dir.read_dir(rel.as_path()).map_err(|e| io_error(&e, rel))?;
        let mut names = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| io_error(&e, rel))?;
            let mut name = entry.file_name().to_string_lossy().into_owned();
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                name.push('/');
            }
            names.push(name);
        }
        names.sort();
        Ok(names)
    }
}

/// The names a link's `target` leads through, and whether they start from the root (an
/// absolute target) rather than from the link's directory; `shown` names the path in errors.
/// An absolute target must lie under `root` ([`below_root`], either spelling of its volume on
/// Windows). On Windows, a target from the current drive's root (`\x`) or relative to a drive
/// (`C:x`) leads outside as well, and a name Windows would not take for the plain file it
/// spells is refused as it is in a program's path.
pub(super) fn link_target(root: &Path, target: &Path, shown: &Confined) -> Result<(bool, Vec<OsString>), ToolError> {
    let from_root = target.is_absolute();
    let components =
        if from_root { below_root(root, target).ok_or_else(|| outside(&shown.shown()))? } else { target.components() };
    let mut names = Vec::new();
    for component in components {
        match component {
            Component::Normal(name) => {
                if let Some(problem) = name_problem(name) {
                    return Err(ToolError::permission(format!(
                        "'{}' goes through a link whose target {problem}",
                        shown.shown()
                    )));
                }
                names.push(name.to_os_string());
            }
            Component::CurDir | Component::ParentDir => names.push(component.as_os_str().to_os_string()),
            Component::RootDir | Component::Prefix(_) => return Err(outside(&shown.shown())),
        }
    }
    Ok((from_root, names))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::Canonical as _;

    fn workspace() -> (tempfile::TempDir, Workspace) {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path().canonical().unwrap();
        let ws = Workspace::open(&root).unwrap();
        (temp, ws)
    }

    fn path(confined: Result<Confined, ToolError>) -> PathBuf {
        confined.unwrap().as_path().to_path_buf()
    }

    #[test]
    fn confine_normalises_relative_and_inside_absolute_paths() {
        let (_temp, ws) = workspace();
        assert_eq!(path(ws.confine("./a/../b/c.py")), PathBuf::from("b/c.py"));
        assert_eq!(path(ws.confine("")), PathBuf::from("."));
        let absolute = ws.root().join("src/x.py");
        assert_eq!(path(ws.confine(&absolute.to_string_lossy())), PathBuf::from("src/x.py"));
    }

    #[test]
    fn confine_refuses_climbing_out_and_foreign_absolute_paths() {
        let (_temp, ws) = workspace();
        for path in ["..", "../x", "a/../../x", "/etc/passwd"] {
            let err = ws.confine(path).err();
            assert_eq!(err.map(|e| e.kind), Some(ErrorKind::Permission), "{path}");
        }
    }

    #[test]
    fn confined_paths_only_grow_by_plain_names() {
        let (_temp, ws) = workspace();
        let src = ws.confine("src").unwrap();
        assert_eq!(src.join(Path::new("a/b.py")).map(|c| c.shown()), Some("src/a/b.py".into()));
        assert_eq!(src.join(Path::new("../x")), None);
        assert_eq!(src.join(Path::new("/etc")), None);
        let root = ws.confine(".").unwrap();
        assert_eq!(root.join(Path::new("a.py")).map(|c| c.shown()), Some("a.py".into()));
        assert_eq!(ws.confine("src/a.py").unwrap().parent(), src);
        assert_eq!(src.parent(), root);
    }

    #[cfg(unix)]
    #[test]
    fn a_new_path_is_located_through_symlinks_dangling_ones_included() {
        let (temp, ws) = workspace();
        std::fs::create_dir(temp.path().join("real")).unwrap();
        std::os::unix::fs::symlink("real", temp.path().join("alias")).unwrap();
        std::os::unix::fs::symlink("../.github", temp.path().join("real/gh")).unwrap();
        std::os::unix::fs::symlink("elsewhere", temp.path().join("last")).unwrap();
        let located = |path: &str| ws.real_location(&ws.confine(path).unwrap()).map(|c| c.shown());
        assert_eq!(located("alias/new/x.txt"), Ok("real/new/x.txt".into()));
        assert_eq!(located("alias/gh/hooks/h.json"), Ok(".github/hooks/h.json".into()));
        // The last name is not followed: a new file never replaces what is there.
        assert_eq!(located("last"), Ok("last".into()));
        std::os::unix::fs::symlink("../..", temp.path().join("up")).unwrap();
        assert_eq!(located("up/x/y").map_err(|e| e.kind), Err(ErrorKind::Permission));
    }
}
