//! [`WalkDir`]: a directory opened beneath the workspace root for a walker, and everything
//! below it opened through its handle, one name at a time and never through a symlink.

use std::ffi::{OsStr, OsString};
use std::path::Path;

use cap_fs_ext::{DirExt, FollowSymlinks, OpenOptionsFollowExt};
use cap_std::fs::{Dir, File, OpenOptions};

use super::entry::{classify, not_regular, outside};
use super::{Confined, Entry, io_error, read_capped};
use crate::platform::{Careful as _, Follow};
use crate::tools::error::{ErrorKind, ToolError};

/// What a walker sees an entry as, without following it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Listed {
    File,
    Dir,
    Symlink,
    /// A device, FIFO or socket.
    Special,
}

/// A directory opened beneath the root for a walker ([`super::Workspace::open_walk`]). Everything
/// below it is opened through this handle, one name at a time and never through a symlink: a
/// directory swapped for a symlink after it was listed is refused when it is opened, so a walk
/// never lists or reads anything outside the directory it started in.
#[derive(Debug)]
pub(crate) struct WalkDir {
    pub(super) dir: Dir,
    pub(super) rel: Confined,
}

impl WalkDir {
    /// The directory's path in the workspace, as the walk reached it.
    #[must_use]
    pub(crate) fn rel(&self) -> &Confined {
        &self.rel
    }

    /// The entries, sorted by name; entries that cannot be read are left out.
    pub(crate) fn entries(&self) -> Result<Vec<(OsString, Listed)>, ToolError> {
        let entries = self.dir.entries().map_err(|e| io_error(&e, &self.rel))?;
        let mut out: Vec<(OsString, Listed)> = entries
            .filter_map(Result::ok)
            .filter_map(|entry| {
                let file_type = entry.file_type().ok()?;
                let kind = if file_type.is_dir() {
                    Listed::Dir
                } else if file_type.is_file() {
                    Listed::File
                } else if file_type.is_symlink() {
                    Listed::Symlink
                } else {
                    Listed::Special
                };
                Some((entry.file_name(), kind))
            })
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    }

    /// Whether this directory holds an entry `name` (of any kind, symlinks not followed).
    #[must_use]
    pub(crate) fn has(&self, name: &str) -> bool {
        self.dir.symlink_metadata(name).is_ok()
    }

    /// The subdirectory `name`, refused if it is a symlink (or no longer a directory).
    pub(crate) fn child(&self, name: &OsStr) -> Result<Self, ToolError> {
        let rel = self.rel.join(Path::new(name)).ok_or_else(|| outside(&name.to_string_lossy()))?;
        let dir = self.dir.open_dir_nofollow(name).map_err(|e| io_error(&e, &rel))?;
        Ok(Self { dir, rel })
    }

    /// Opens the regular file `name` in this directory for reading (never through a symlink,
    /// never blocking), with its size.
    pub(crate) fn open_file(&self, name: &OsStr) -> Result<(File, u64), ToolError> {
        let rel = self.rel.join(Path::new(name)).ok_or_else(|| outside(&name.to_string_lossy()))?;
        self.open_below(Path::new(name), &rel)
    }

    /// Reads a small regular file at `below` (plain names), or `None` when there is none, it is
    /// not a regular file, or it is larger than `max_bytes`.
    pub(crate) fn read_small(&self, below: &Path, max_bytes: u64) -> Option<Vec<u8>> {
        let rel = self.rel.join(below)?;
        let (file, len) = self.open_below(below, &rel).ok()?;
        read_capped(file, len, &rel, max_bytes).ok()
    }

    fn open_below(&self, below: &Path, rel: &Confined) -> Result<(File, u64), ToolError> {
        let mut options = OpenOptions::new();
        options.read(true).follow(FollowSymlinks::No).careful(Follow::NoLinks);
        let file = self.dir.open_with(below, &options).map_err(|e| io_error(&e, rel))?;
        let meta = file.metadata().map_err(|e| io_error(&e, rel))?;
        match classify(&meta) {
            Entry::File => Ok((file, meta.len())),
            Entry::Dir => Err(ToolError::new(ErrorKind::IsADirectory, format!("is a directory: '{}'", rel.shown()))),
            Entry::Special => Err(not_regular(rel)),
        }
    }
}
