//! The workspace: the only door from the sandbox to the file system.
//!
//! [`Workspace::confine`] turns whatever path a program passes into a [`Confined`] path,
//! relative to the workspace root, refusing absolute paths elsewhere and `..` that climbs out;
//! it is the only way to make one, and every file operation here takes one. Each operation then
//! goes through a `cap_std::fs::Dir` opened on the root, which resolves the path beneath it in
//! the kernel (`openat2(RESOLVE_BENEATH)` where available): a symlink, at any level, that leads
//! outside is refused at open time, so there is no check-then-open race. Only regular files are
//! ever read; devices, FIFOs and sockets are refused after opening without blocking.
//!
//! Writes are refused, as part of the same confinement, for the write-protected paths
//! ([`super::protected`]): [`Workspace::check_writable`] looks at the path as the program gave
//! it, at where it really leads, at the other names the workspace's links give it, and at the
//! files and folders on its way as they are on disk (a protected link's target, by device and
//! inode); [`Workspace::create_new`] and [`Workspace::replace`] ask it before anything is
//! written. The rules that depend on the workspace's contents are found once, before the
//! first write. No operation here makes a symbolic link.
//!
//! Two kinds of callers get more than a path. Walkers (`glob`, `grep`) get a [`WalkDir`]: a
//! directory opened beneath the root, whose subdirectories and files are opened through it
//! without following symlinks, so a directory swapped for a symlink mid-walk is never entered.
//! `SQLite` gets a directory opened beneath the root ([`Workspace::open_dir`]) and names its
//! files through that open directory.

use std::ffi::{OsStr, OsString};
use std::io::{self, Read, Write};
use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use cap_std::fs::{Dir, File, OpenOptions, OpenOptionsExt, Permissions};

use super::error::{ErrorKind, ToolError};
use super::protected::{Hit, Protected, scan};

mod confined;
mod walk_dir;

pub(crate) use confined::Confined;
pub(crate) use walk_dir::{Listed, WalkDir};

/// The directory tools may touch.
#[derive(Debug)]
pub(crate) struct Workspace {
    /// Canonical absolute root.
    root: PathBuf,
    dir: Dir,
    /// What no tool writes here, as far as the configuration tells.
    rules: Protected,
    /// `rules` with what the workspace's contents add, found before the first write.
    protected: OnceLock<Protected>,
}

/// A path opened by [`Workspace::open_entry`].
#[derive(Debug)]
pub(crate) enum Opened {
    File(File, u64),
    Dir,
}

/// What a path names inside the workspace, following symlinks that stay inside.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Entry {
    File,
    Dir,
    /// A device, FIFO or socket: never read.
    Special,
}

/// Where the workspace's link `rel` leads when it leaves the workspace and comes back into it
/// (`../<the workspace's own name>/…`, an absolute path to it, through a link outside, or
/// `/proc/self/cwd/…`, which an agent working in the project reads as the project), relative to
/// `root` (canonical). The program's tools never follow such a link, but every other reader
/// does: its target is protected like any other's. A dangling target is resolved as far as it
/// exists.
fn coming_back(root: &Path, rel: &Path) -> Option<PathBuf> {
    let link = root.join(rel);
    let written = std::fs::read_link(&link).ok()?;
    let cwd = ["/proc/self/cwd", "/proc/thread-self/cwd"].iter().find_map(|at| written.strip_prefix(at).ok());
    let at = match cwd {
        Some(below) => root.join(below),
        None => link.parent()?.join(&written),
    };
    // The part that exists, where it really is, and the names below it as written.
    let mut existing = at.as_path();
    let mut rest = Vec::new();
    let base = loop {
        if let Ok(real) = existing.canonicalize() {
            break real;
        }
        rest.push(existing.file_name()?);
        existing = existing.parent()?;
    };
    let target = rest.iter().rev().fold(base, |path, name| path.join(name));
    target.strip_prefix(root).ok().map(Path::to_path_buf)
}

/// Reads an opened regular file of `len` bytes, refusing anything larger than `max_bytes`.
pub(crate) fn read_capped(file: File, len: u64, rel: &Confined, max_bytes: u64) -> Result<Vec<u8>, ToolError> {
    if len > max_bytes {
        return Err(ToolError::value(format!(
            "'{}' is {len} bytes, over the {max_bytes}-byte limit for one read; pass view_range to read part of it",
            rel.shown()
        )));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.take(max_bytes + 1).read_to_end(&mut bytes).map_err(|e| io_error(&e, rel))?;
    if bytes.len() as u64 > max_bytes {
        return Err(ToolError::value(format!("'{}' grew past {max_bytes} bytes while being read", rel.shown())));
    }
    Ok(bytes)
}

impl Workspace {
    /// Opens the workspace at `root`, which must be canonical.
    pub(crate) fn open(root: &Path) -> io::Result<Self> {
        let dir = Dir::open_ambient_dir(root, cap_std::ambient_authority())?;
        Ok(Self { root: root.to_path_buf(), dir, rules: Protected::for_root(root), protected: OnceLock::new() })
    }

    /// Write-protects the tools folders in `dirs` that lie in the workspace, and the packages
    /// their JavaScript tools load ([`Protected::add_tool_dir`]).
    pub(crate) fn protect_tool_dirs<'a>(&mut self, dirs: impl IntoIterator<Item = &'a Path>) {
        for dir in dirs {
            self.rules.add_tool_dir(&self.root, dir);
        }
        self.protected = OnceLock::new();
    }

    /// Every rule for this workspace: at the first call, the workspace is walked for what it
    /// adds ([`Protected::add_found`]), and each protected link's target is protected by what
    /// it is on disk as well.
    fn protected(&self) -> &Protected {
        self.protected.get_or_init(|| {
            let mut protected = self.rules.clone();
            let found = scan::scan(&self.dir, scan::BOUNDS);
            protected.add_found(&self.root, found, |rel| {
                let link = Confined::from_normal(rel.to_path_buf());
                let inside = self.resolve_names(&link, &link).ok().map(|target| target.as_path().to_path_buf());
                inside.or_else(|| coming_back(&self.root, rel))
            });
            for (target, hit) in protected.protected_targets() {
                if let Some(identity) = self.dir.metadata(&target).ok().and_then(|meta| identity(&meta)) {
                    protected.add_identity(identity, hit);
                }
            }
            protected
        })
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
    pub(crate) fn confine(&self, path: &str) -> Result<Confined, ToolError> {
        if path.contains('\0') {
            return Err(ToolError::value(format!("path {path:?} contains a NUL byte")));
        }
        let given = Path::new(path);
        let relative =
            if given.is_absolute() { given.strip_prefix(&self.root).map_err(|_| outside(path))? } else { given };
        let mut normal = PathBuf::new();
        for component in relative.components() {
            match component {
                Component::Normal(part) => normal.push(part),
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
    fn resolve_names(&self, rel: &Confined, shown: &Confined) -> Result<Confined, ToolError> {
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
            let target = if target.is_absolute() {
                done = PathBuf::new();
                target.strip_prefix(&self.root).map_err(|_| outside(&shown.shown()))?.to_path_buf()
            } else {
                target
            };
            todo.extend(target.iter().rev().filter(|part| *part != OsStr::new("/")).map(OsStr::to_os_string));
        }
        Ok(Confined::from_normal(done))
    }

    /// Refuses a write to `given` (as the program named it, normalised) that lands on `real`
    /// when either is write-protected ([`super::protected`]).
    pub(crate) fn check_writable(&self, given: &Confined, real: &Confined) -> Result<(), ToolError> {
        let protected = self.protected();
        for (path, leads) in [(given, None), (real, Some(real))] {
            if let Some(hit) = protected.rule_for(path.as_path()) {
                return Err(refused(given, leads, &hit));
            }
        }
        // What the way to `real` is on disk, itself included when it exists.
        for on_way in real.as_path().ancestors() {
            let on_way = if on_way.as_os_str().is_empty() { Path::new(".") } else { on_way };
            let found = self.dir.metadata(on_way).ok().and_then(|meta| identity(&meta));
            if let Some(hit) = found.and_then(|identity| protected.rule_for_identity(identity)) {
                return Err(refused(given, Some(real), &hit));
            }
        }
        Ok(())
    }

    /// Opens the directory `rel` (symlinks inside the workspace followed) for a walker.
    pub(crate) fn open_walk(&self, rel: &Confined) -> Result<WalkDir, ToolError> {
        let dir = self.dir.open_dir(rel.as_path()).map_err(|e| io_error(&e, rel))?;
        Ok(WalkDir { dir, rel: rel.clone() })
    }

    /// Opens the directory `rel` beneath the root, for a caller that names files through it.
    pub(crate) fn open_dir(&self, rel: &Confined) -> Result<Dir, ToolError> {
        self.dir.open_dir(rel.as_path()).map_err(|e| io_error(&e, rel))
    }

    /// Opens what `rel` names, once, for reading: a regular file with its size, or a directory.
    /// The open never blocks (a FIFO or device is refused after opening, before any read).
    pub(crate) fn open_entry(&self, rel: &Confined) -> Result<Opened, ToolError> {
        let mut options = OpenOptions::new();
        options.read(true).custom_flags(crate::bounded::nonblocking());
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

    /// Creates a new file atomically: written beside its target, then linked into place,
    /// which fails if anything already exists there. Parent directories are created.
    pub(crate) fn create_new(&self, rel: &Confined, contents: &[u8]) -> Result<(), ToolError> {
        // Asked before the parents are made: making `.git/hooks` is a write too.
        self.check_writable(rel, &self.real_location(rel)?)?;
        let parent = rel.parent();
        match self.entry(&parent) {
            Ok(Entry::Dir) => {}
            Ok(_) => {
                return Err(ToolError::new(ErrorKind::NotADirectory, format!("not a directory: '{}'", parent.shown())));
            }
            Err(err) if err.kind == ErrorKind::FileNotFound => {
                self.dir.create_dir_all(parent.as_path()).map_err(|e| io_error(&e, &parent))?;
            }
            Err(err) => return Err(err),
        }
        let temp = self.write_temp(rel, contents, None)?;
        let linked = self.dir.hard_link(&temp, &self.dir, rel.as_path());
        let _ = self.dir.remove_file(&temp);
        linked.map_err(|e| io_error(&e, rel))
    }

    /// Replaces an existing regular file atomically (temp file + rename), keeping its mode.
    /// `rel` is the file itself, not a symlink to it (see [`Self::canonical`]).
    pub(crate) fn replace(&self, rel: &Confined, contents: &[u8]) -> Result<(), ToolError> {
        self.check_writable(rel, rel)?;
        let meta = self.dir.metadata(rel.as_path()).map_err(|e| io_error(&e, rel))?;
        let temp = self.write_temp(rel, contents, Some(meta.permissions()))?;
        self.dir.rename(&temp, &self.dir, rel.as_path()).map_err(|e| {
            let _ = self.dir.remove_file(&temp);
            io_error(&e, rel)
        })
    }

    /// Writes `contents` to a fresh, uniquely named file next to `rel` and returns its path.
    fn write_temp(
        &self,
        rel: &Confined,
        contents: &[u8],
        permissions: Option<Permissions>,
    ) -> Result<PathBuf, ToolError> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let name = rel.as_path().file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let temp_name =
            format!(".{name}.codeact-{}-{}.tmp", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed));
        let temp = rel.as_path().with_file_name(temp_name);
        let mut options = OpenOptions::new();
        options.write(true).create_new(true).mode(0o644);
        let mut file = self.dir.open_with(&temp, &options).map_err(|e| io_error(&e, rel))?;
        let written = file.write_all(contents).and_then(|()| match permissions {
            Some(permissions) => file.set_permissions(permissions),
            None => Ok(()),
        });
        if let Err(err) = written {
            let _ = self.dir.remove_file(&temp);
            return Err(io_error(&err, rel));
        }
        Ok(temp)
    }
}

/// A write to `given`, which lands on `leads`, refused by `hit`.
fn refused(given: &Confined, leads: Option<&Confined>, hit: &Hit) -> ToolError {
    let shown = match leads {
        Some(real) if real != given => format!("'{}' leads to '{}', which", given.shown(), real.shown()),
        _ => format!("'{}'", given.shown()),
    };
    ToolError::permission(format!(
        "{shown} is write-protected by the rule {} ({}); tools may read it but never write it \
         (hint: if the change is wanted, make it outside codeact)",
        hit.rule, hit.why
    ))
}

/// What a file or folder is on disk: its device and inode.
#[cfg(unix)]
#[expect(clippy::unnecessary_wraps, reason = "the other systems' twin has no identity to give")]
fn identity(meta: &cap_std::fs::Metadata) -> Option<(u64, u64)> {
    use cap_std::fs::MetadataExt as _;
    Some((meta.dev(), meta.ino()))
}

/// Elsewhere, files are known by path only (SECURITY.md says what that leaves).
#[cfg(not(unix))]
fn identity(_meta: &cap_std::fs::Metadata) -> Option<(u64, u64)> {
    None
}

fn classify(meta: &cap_std::fs::Metadata) -> Entry {
    if meta.is_file() {
        Entry::File
    } else if meta.is_dir() {
        Entry::Dir
    } else {
        Entry::Special
    }
}

/// An I/O error on `rel` as the Python exception of the same kind.
pub(crate) fn io_error(err: &io::Error, rel: &Confined) -> ToolError {
    ToolError::io(err, &rel.shown())
}

fn outside(path: &str) -> ToolError {
    ToolError::permission(format!("'{path}' is outside the workspace"))
}

fn not_regular(rel: &Confined) -> ToolError {
    ToolError::permission(format!(
        "'{}' is not a regular file (devices, FIFOs and sockets are never read)",
        rel.shown()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workspace() -> (tempfile::TempDir, Workspace) {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path().canonicalize().unwrap();
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
