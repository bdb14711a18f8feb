//! Opening a `SQLite` database on Windows through folders pinned in place beneath the workspace.
//!
//! Windows has no `*at` calls for `SQLite`'s win32 VFS to resolve names in, but it can pin a
//! path: every folder from the workspace root down to the database's is opened without
//! following a reparse point (`FILE_FLAG_OPEN_REPARSE_POINT`: a symbolic link or junction on
//! the way is refused, not followed) and held without `FILE_SHARE_DELETE`, so no other process
//! can rename, remove or replace any of them while the connection lives. The full path through
//! them then names the folder that was checked, for the database and for the journal, WAL and
//! shared-memory files `SQLite` makes beside it. An existing database file must be a regular
//! file with one name.

use std::ffi::OsStr;
use std::fs::File;
use std::io;
use std::os::windows::fs::{MetadataExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};
use windows_sys::Win32::Storage::FileSystem::{
    FILE_ATTRIBUTE_REPARSE_POINT, FILE_FLAG_BACKUP_SEMANTICS, FILE_FLAG_OPEN_REPARSE_POINT, FILE_READ_ATTRIBUTES,
    FILE_SHARE_READ, FILE_SHARE_WRITE,
};

use crate::platform;

/// The folders from the workspace root to a database's folder, held open and pinned.
#[derive(Debug)]
pub(super) struct PinnedDir {
    path: PathBuf,
    _held: Vec<File>,
}

impl PinnedDir {
    /// Pins `root` and each folder of `below` (plain names only) beneath it.
    pub(super) fn new(root: &Path, below: &Path) -> io::Result<Self> {
        let mut path = root.to_path_buf();
        let mut held = vec![pin(&path)?];
        for name in below.iter().filter(|name| *name != ".") {
            path.push(name);
            held.push(pin(&path)?);
        }
        Ok(Self { path, _held: held })
    }

    /// Whether the file `name` in the folder is another name of a file named elsewhere too
    /// (`SQLite` writes a database in place, so it would change that file as well), or not a
    /// regular file of its own name (a link or junction).
    pub(super) fn shared(&self, name: &OsStr) -> bool {
        let opened = std::fs::OpenOptions::new()
            .access_mode(FILE_READ_ATTRIBUTES)
            .share_mode(FILE_SHARE_READ | FILE_SHARE_WRITE)
            .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT)
            .open(self.path.join(name));
        match opened {
            Err(err) => err.kind() != io::ErrorKind::NotFound,
            Ok(file) => {
                let regular = file
                    .metadata()
                    .is_ok_and(|meta| meta.is_file() && meta.file_attributes() & FILE_ATTRIBUTE_REPARSE_POINT == 0);
                !regular || platform::link_count(&file).map_or(true, |links| links > 1)
            }
        }
    }

    /// Opens `name` in the pinned folder (read-write, created when missing).
    pub(super) fn open(&self, name: &OsStr) -> rusqlite::Result<Connection> {
        Connection::open_with_flags(self.path.join(name), OpenFlags::default())
    }
}

/// Opens the folder at `path` to hold it: not through a reparse point, and sharing read and
/// write but not delete, so that it cannot be renamed or removed while held.
fn pin(path: &Path) -> io::Result<File> {
    let folder = std::fs::OpenOptions::new()
        .access_mode(FILE_READ_ATTRIBUTES)
        .share_mode(FILE_SHARE_READ | FILE_SHARE_WRITE)
        .custom_flags(FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT)
        .open(path)?;
    let meta = folder.metadata()?;
    if !meta.is_dir() || meta.file_attributes() & FILE_ATTRIBUTE_REPARSE_POINT != 0 {
        return Err(io::Error::other(format!("`{}` is a link or not a folder", path.display())));
    }
    Ok(folder)
}
