//! Writing in the workspace: a new file or a replaced one lands whole or not at all (written
//! beside its target, then linked or renamed into place), and only once the write protection
//! allows it.

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use cap_std::fs::{Dir, OpenOptions, Permissions};

use super::entry::{not_regular, outside};
use super::{Confined, Entry, Workspace, io_error};
use crate::platform::Modes as _;
use crate::tools::error::{ErrorKind, ToolError};

impl Workspace {
    /// Creates a new file atomically: written beside its target, then linked into place,
    /// which fails if anything already exists there. Parent directories are created. The file
    /// is written through its directory opened where the check found it, following no
    /// symlink: a folder swapped for a symlink meanwhile is refused, not written through.
    pub(crate) fn create_new(&self, rel: &Confined, contents: &[u8]) -> Result<(), ToolError> {
        // Asked before the parents are made: making `.git/hooks` is a write too.
        let real = self.real_location(rel)?;
        self.check_writable(rel, &real)?;
        let parent = rel.parent();
        match self.entry(&parent) {
            Ok(Entry::Dir) => {}
            Ok(_) => {
                return Err(ToolError::new(ErrorKind::NotADirectory, format!("not a directory: '{}'", parent.shown())));
            }
            Err(err) if err.kind == ErrorKind::FileNotFound => {}
            Err(err) => return Err(err),
        }
        // The missing folders are made on the checked way, one in the next, never through a
        // symlink: a folder swapped for one meanwhile makes nothing where it leads.
        let (dir, name) = self.held_parent(&real, rel, Missing::Make)?;
        let temp = write_temp(&dir, rel, contents, None)?;
        let linked = dir.hard_link(&temp, &dir, &name);
        let _ = dir.remove_file(&temp);
        linked.map_err(|e| io_error(&e, rel))
    }

    /// Replaces an existing regular file atomically (temp file + rename), keeping its mode.
    /// `rel` is the file itself, not a symlink to it (see [`Self::canonical`]), written through
    /// its directory opened following no symlink, as [`Self::create_new`] writes.
    pub(crate) fn replace(&self, rel: &Confined, contents: &[u8]) -> Result<(), ToolError> {
        self.check_writable(rel, rel)?;
        let (dir, name) = self.held_parent(rel, rel, Missing::Refuse)?;
        let meta = dir.symlink_metadata(&name).map_err(|e| io_error(&e, rel))?;
        if !meta.is_file() {
            return Err(not_regular(rel));
        }
        let temp = write_temp(&dir, rel, contents, Some(meta.permissions()))?;
        dir.rename(&temp, &dir, &name).map_err(|e| {
            let _ = dir.remove_file(&temp);
            io_error(&e, rel)
        })
    }

    /// The directory `real` (a path with no symlink in it) lies in, opened following no
    /// symlink ([`Self::open_dir`]), its missing folders made where `missing` says so, and
    /// `real`'s name in it; `shown` names the path in errors.
    fn held_parent(&self, real: &Confined, shown: &Confined, missing: Missing) -> Result<(Dir, PathBuf), ToolError> {
        let name = PathBuf::from(real.as_path().file_name().ok_or_else(|| outside(&shown.shown()))?);
        let dir = match missing {
            Missing::Make => self.open_dir_creating(&real.parent())?,
            Missing::Refuse => self.open_dir(&real.parent())?,
        };
        Ok((dir, name))
    }
}

/// What opening a file's directory does with folders missing on the way.
#[derive(Debug, Clone, Copy)]
enum Missing {
    /// Makes them (a new file's).
    Make,
    /// Fails (an existing file's).
    Refuse,
}

/// Writes `contents` to a fresh, uniquely named file in `dir`, beside the file `rel` names, and
/// returns its name: short whatever the file's name, and matching no rule of its own.
fn write_temp(
    dir: &Dir,
    rel: &Confined,
    contents: &[u8],
    permissions: Option<Permissions>,
) -> Result<PathBuf, ToolError> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let temp =
        PathBuf::from(format!(".codeact-{}-{}.tmp", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed)));
    let mut options = OpenOptions::new();
    options.write(true).create_new(true).unix_mode(0o644);
    let mut file = dir.open_with(&temp, &options).map_err(|e| io_error(&e, rel))?;
    let written = file.write_all(contents).and_then(|()| match permissions {
        Some(permissions) => file.set_permissions(permissions),
        None => Ok(()),
    });
    if let Err(err) = written {
        let _ = dir.remove_file(&temp);
        return Err(io_error(&err, rel));
    }
    Ok(temp)
}
