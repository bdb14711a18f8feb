//! Writing a file atomically: the bytes go to a fresh temporary file in the target's directory,
//! which is then renamed over the target, so a reader sees the old file or the new one, never
//! half of one. Every file codeact writes for itself (caches, hook state, the guest) goes through
//! [`write`]. The files `install` writes for Copilot do not: a repository's directories may be
//! links, so `copilot::Target::write` does the same inside a directory handle opened without
//! following them.

use std::io::{self, Write as _};
use std::path::Path;

use crate::platform::Modes as _;

/// Who may read the file, and how much a crash may lose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    /// 0600 in a 0700 directory, synced to disk: caches and installs.
    Private,
    /// 0600, not synced: small state rewritten often, where losing the last write is harmless.
    Scratch,
}

/// Writes `bytes` to `path` atomically, creating its directory when needed.
pub(crate) fn write(path: &Path, bytes: &[u8], access: Access) -> io::Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let prefix = format!(".{name}.");
    let temporary = || {
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix).suffix(".tmp");
        #[cfg(unix)]
        builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600));
        builder.tempfile_in(dir)
    };
    // The directory usually exists (the hook writes here on every call): make it only when not.
    let mut file = match temporary() {
        Err(err) if err.kind() == io::ErrorKind::NotFound => {
            std::fs::DirBuilder::new().recursive(true).unix_mode(0o700).create(dir)?;
            temporary()?
        }
        other => other?,
    };
    file.write_all(bytes)?;
    if access == Access::Private {
        file.as_file().sync_all()?;
    }
    persist(file, path)
}

/// Renames the written temporary file over `path`.
#[cfg(unix)]
fn persist(file: tempfile::NamedTempFile, path: &Path) -> io::Result<()> {
    file.persist(path).map(drop).map_err(|err| err.error)
}

/// Renames the written temporary file over `path`, trying again for a while when another
/// process holds `path` open without sharing its deletion (an editor, a virus scanner, another
/// codeact reading it): Windows refuses to replace such a file until it is closed.
#[cfg(windows)]
fn persist(mut file: tempfile::NamedTempFile, path: &Path) -> io::Result<()> {
    let mut wait = std::time::Duration::from_millis(5);
    let until = std::time::Instant::now() + std::time::Duration::from_secs(2);
    loop {
        match file.persist(path) {
            Ok(_) => return Ok(()),
            Err(err) if err.error.kind() == io::ErrorKind::PermissionDenied && std::time::Instant::now() < until => {
                file = err.file;
                std::thread::sleep(wait);
                wait = (wait * 2).min(std::time::Duration::from_millis(200));
            }
            Err(err) => return Err(err.error),
        }
    }
}

/// Puts a new directory at `dir`, replacing what was there: `fill` writes it as a temporary
/// sibling (mode 0700, its parents made as needed), which is renamed into place once `fill`
/// succeeds. A failure leaves `dir` as it was and removes the sibling.
pub(crate) fn replace_dir(dir: &Path, fill: impl FnOnce(&Path) -> anyhow::Result<()>) -> anyhow::Result<()> {
    use anyhow::Context as _;
    let parent = dir.parent().context("the directory has no parent")?;
    std::fs::DirBuilder::new()
        .recursive(true)
        .unix_mode(0o700)
        .create(parent)
        .with_context(|| format!("failed to create `{}`", parent.display()))?;
    let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let staging = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .tempdir_in(parent)
        .with_context(|| format!("failed to create a folder in `{}`", parent.display()))?;
    fill(staging.path())?;
    if dir.exists() {
        std::fs::remove_dir_all(dir).with_context(|| format!("failed to replace `{}`", dir.display()))?;
    }
    let staged = staging.keep();
    std::fs::rename(&staged, dir).with_context(|| format!("failed to move `{}` into place", dir.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Windows refuses to replace a file another process holds open without sharing its
    /// deletion: the write waits for it to be closed.
    #[cfg(windows)]
    #[test]
    fn a_write_waits_for_a_reader_that_holds_the_file() {
        use std::os::windows::fs::OpenOptionsExt as _;
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("state");
        write(&path, b"one", Access::Scratch).unwrap();
        // Read and write sharing only, as many Windows programs open a file.
        let held = std::fs::OpenOptions::new().read(true).share_mode(0x1 | 0x2).open(&path).unwrap();
        let reader = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(300));
            drop(held);
        });
        write(&path, b"two", Access::Scratch).unwrap();
        reader.join().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
    }

    #[test]
    fn a_write_replaces_the_file_whole_with_the_mode_asked_for() {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("sub/state");
        write(&path, b"one", Access::Private).unwrap();
        write(&path, b"two", Access::Private).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt as _;
            assert_eq!(std::fs::metadata(&path).unwrap().mode() & 0o777, 0o600);
            assert_eq!(std::fs::metadata(temp.path().join("sub")).unwrap().mode() & 0o777, 0o700);
        }
        let names: Vec<_> =
            std::fs::read_dir(temp.path().join("sub")).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, ["state"], "no temporary file is left behind");
    }
}
