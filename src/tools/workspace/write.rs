//! Writing in the workspace: a new file or a replaced one lands whole or not at all (written
//! beside its target, then linked or renamed into place), and only once the write protection
//! allows it.

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use cap_std::fs::{OpenOptions, OpenOptionsExt, Permissions};

use super::{Confined, Entry, Workspace, io_error};
use crate::tools::error::{ErrorKind, ToolError};

impl Workspace {
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
