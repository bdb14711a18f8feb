//! The workspace: the only door from the sandbox to the file system.
//!
//! [`Workspace::confine`] turns whatever path a program passes into a path relative to the
//! workspace root, refusing absolute paths elsewhere and `..` that climbs out. Every file
//! operation then goes through a `cap_std::fs::Dir` opened on the root, which resolves the path
//! beneath it in the kernel (`openat2(RESOLVE_BENEATH)` where available): a symlink, at any
//! level, that leads outside is refused at open time, so there is no check-then-open race.
//! Only regular files are ever read; devices, FIFOs and sockets are refused after opening
//! without blocking.

use std::io::{self, Read, Write};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use cap_std::fs::{Dir, File, OpenOptions, OpenOptionsExt, Permissions};

use super::error::{ErrorKind, ToolError};

/// The directory tools may touch.
#[derive(Debug)]
pub struct Workspace {
    /// Canonical absolute root.
    root: PathBuf,
    dir: Dir,
}

/// A path opened by [`Workspace::open_entry`].
#[derive(Debug)]
pub enum Opened {
    File(File, u64),
    Dir,
}

/// Reads an opened regular file of `len` bytes, refusing anything larger than `max_bytes`.
pub fn read_capped(file: File, len: u64, rel: &Path, max_bytes: u64) -> Result<Vec<u8>, ToolError> {
    if len > max_bytes {
        return Err(ToolError::value(format!(
            "'{}' is {} bytes, over the {max_bytes}-byte limit for one read; pass view_range to read part of it",
            display(rel),
            len
        )));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.take(max_bytes + 1).read_to_end(&mut bytes).map_err(|e| io_error(&e, rel))?;
    if bytes.len() as u64 > max_bytes {
        return Err(ToolError::value(format!("'{}' grew past {max_bytes} bytes while being read", display(rel))));
    }
    Ok(bytes)
}

/// What a path names inside the workspace, following symlinks that stay inside.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    File,
    Dir,
    /// A device, FIFO or socket: never read.
    Special,
}

impl Workspace {
    /// Opens the workspace at `root`, which must be canonical.
    pub fn open(root: &Path) -> io::Result<Self> {
        let dir = Dir::open_ambient_dir(root, cap_std::ambient_authority())?;
        Ok(Self { root: root.to_path_buf(), dir })
    }

    /// The canonical root.
    #[must_use]
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Maps a program-supplied path to a normalised path relative to the root.
    ///
    /// Absolute paths are accepted when they lie under the root. `.` components are dropped and
    /// `..` is resolved lexically; climbing above the root is a `PermissionError`. Symlinks are
    /// not looked at here: the kernel-side resolution in every operation below refuses those
    /// that leave the workspace.
    pub fn confine(&self, path: &str) -> Result<PathBuf, ToolError> {
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
        if normal.as_os_str().is_empty() {
            normal.push(".");
        }
        Ok(normal)
    }

    /// What `rel` is, following symlinks inside the workspace.
    pub fn entry(&self, rel: &Path) -> Result<Entry, ToolError> {
        let meta = self.dir.metadata(rel).map_err(|e| io_error(&e, rel))?;
        Ok(classify(&meta))
    }

    /// The real location of `rel` (symlinks inside the workspace resolved), relative to the root.
    pub fn canonical(&self, rel: &Path) -> Result<PathBuf, ToolError> {
        let real = self.dir.canonicalize(rel).map_err(|e| io_error(&e, rel))?;
        Ok(if real.as_os_str().is_empty() { PathBuf::from(".") } else { real })
    }

    /// The host path of a directory inside the workspace, for walkers that need one. The
    /// directory is resolved through the confined `Dir` first, so the result lies inside.
    pub fn host_dir(&self, rel: &Path) -> Result<PathBuf, ToolError> {
        let real = self.canonical(rel)?;
        match self.entry(&real)? {
            Entry::Dir => Ok(self.root.join(real)),
            _ => Err(ToolError::new(ErrorKind::NotADirectory, format!("not a directory: '{}'", display(rel)))),
        }
    }

    /// Opens what `rel` names, once, for reading: a regular file with its size, or a directory.
    /// The open never blocks (a FIFO or device is refused after opening, before any read).
    pub fn open_entry(&self, rel: &Path) -> Result<Opened, ToolError> {
        let mut options = OpenOptions::new();
        options.read(true).custom_flags(nonblocking_flags());
        let file = self.dir.open_with(rel, &options).map_err(|e| io_error(&e, rel))?;
        let meta = file.metadata().map_err(|e| io_error(&e, rel))?;
        match classify(&meta) {
            Entry::File => Ok(Opened::File(file, meta.len())),
            Entry::Dir => Ok(Opened::Dir),
            Entry::Special => Err(not_regular(rel)),
        }
    }

    /// Opens a regular file for reading and returns it with its size.
    pub fn open_regular(&self, rel: &Path) -> Result<(File, u64), ToolError> {
        match self.open_entry(rel)? {
            Opened::File(file, len) => Ok((file, len)),
            Opened::Dir => Err(ToolError::new(ErrorKind::IsADirectory, format!("is a directory: '{}'", display(rel)))),
        }
    }

    /// Reads a regular file, refusing anything larger than `max_bytes`.
    pub fn read(&self, rel: &Path, max_bytes: u64) -> Result<Vec<u8>, ToolError> {
        let (file, len) = self.open_regular(rel)?;
        read_capped(file, len, rel, max_bytes)
    }

    /// Lists a directory: sorted names, `/` after directories.
    pub fn list(&self, rel: &Path) -> Result<Vec<String>, ToolError> {
        let entries = self.dir.read_dir(rel).map_err(|e| io_error(&e, rel))?;
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
    pub fn create_new(&self, rel: &Path, contents: &[u8]) -> Result<(), ToolError> {
        let parent = rel.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        match self.entry(parent) {
            Ok(Entry::Dir) => {}
            Ok(_) => {
                return Err(ToolError::new(
                    ErrorKind::NotADirectory,
                    format!("not a directory: '{}'", display(parent)),
                ));
            }
            Err(err) if err.kind == ErrorKind::FileNotFound => {
                self.dir.create_dir_all(parent).map_err(|e| io_error(&e, parent))?;
            }
            Err(err) => return Err(err),
        }
        let temp = self.write_temp(rel, contents, None)?;
        let linked = self.dir.hard_link(&temp, &self.dir, rel);
        let _ = self.dir.remove_file(&temp);
        linked.map_err(|e| io_error(&e, rel))
    }

    /// Replaces an existing regular file atomically (temp file + rename), keeping its mode.
    pub fn replace(&self, rel: &Path, contents: &[u8]) -> Result<(), ToolError> {
        let meta = self.dir.metadata(rel).map_err(|e| io_error(&e, rel))?;
        let temp = self.write_temp(rel, contents, Some(meta.permissions()))?;
        self.dir.rename(&temp, &self.dir, rel).map_err(|e| {
            let _ = self.dir.remove_file(&temp);
            io_error(&e, rel)
        })
    }

    /// Writes `contents` to a fresh, uniquely named file next to `rel` and returns its path.
    fn write_temp(&self, rel: &Path, contents: &[u8], permissions: Option<Permissions>) -> Result<PathBuf, ToolError> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let name = rel.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let temp_name =
            format!(".{name}.codeact-{}-{}.tmp", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed));
        let temp = rel.with_file_name(temp_name);
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

/// A workspace-relative path as programs see it: `/`-separated, no leading `./`.
#[must_use]
pub fn display(rel: &Path) -> String {
    let text = rel.to_string_lossy();
    let text = text.strip_prefix("./").unwrap_or(&text);
    if text.is_empty() { ".".to_owned() } else { text.replace('\\', "/") }
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

fn io_error(err: &io::Error, rel: &Path) -> ToolError {
    ToolError::io(err, &display(rel))
}

fn outside(path: &str) -> ToolError {
    ToolError::permission(format!("'{path}' is outside the workspace"))
}

fn not_regular(rel: &Path) -> ToolError {
    ToolError::permission(format!(
        "'{}' is not a regular file (devices, FIFOs and sockets are never read)",
        display(rel)
    ))
}

/// `O_NONBLOCK | O_NOCTTY`: opening a FIFO or a terminal must not block or adopt it.
fn nonblocking_flags() -> i32 {
    let flags = rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY;
    i32::try_from(flags.bits()).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workspace() -> (tempfile::TempDir, Workspace) {
        let temp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = temp.path().canonicalize().unwrap_or_else(|e| panic!("{e}"));
        let ws = Workspace::open(&root).unwrap_or_else(|e| panic!("{e}"));
        (temp, ws)
    }

    #[test]
    fn confine_normalises_relative_and_inside_absolute_paths() {
        let (_temp, ws) = workspace();
        assert_eq!(ws.confine("./a/../b/c.py"), Ok(PathBuf::from("b/c.py")));
        assert_eq!(ws.confine(""), Ok(PathBuf::from(".")));
        let absolute = ws.root().join("src/x.py");
        assert_eq!(ws.confine(&absolute.to_string_lossy()), Ok(PathBuf::from("src/x.py")));
    }

    #[test]
    fn confine_refuses_climbing_out_and_foreign_absolute_paths() {
        let (_temp, ws) = workspace();
        for path in ["..", "../x", "a/../../x", "/etc/passwd"] {
            let err = ws.confine(path).err();
            assert_eq!(err.map(|e| e.kind), Some(ErrorKind::Permission), "{path}");
        }
    }
}
