//! Reading codeact's own files — config files, tool files, MCP configs — when they may come
//! from a repository: regular files only, opened without blocking, and never more than a cap.
//!
//! A repository can ship a symlink to `/dev/zero`, a FIFO, or a file of many gigabytes in any of
//! the places codeact reads. [`read`] opens with `O_NONBLOCK | O_NOCTTY` (a FIFO or terminal
//! neither blocks nor is adopted), checks the opened file is a regular one, and reads at most
//! `max_bytes`, so a hook that reads them stays fast and fails open.

use std::io::{self, Read as _};
use std::path::Path;

use crate::platform::{Careful as _, Follow};

/// The most codeact reads of one config or tool file.
pub(crate) const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// The contents of the regular file at `path`, or `None` when nothing is there. Anything else
/// (a directory, a device, a FIFO, a socket, a file over `max_bytes`) is an error saying so.
pub(crate) fn read(path: &Path, max_bytes: u64) -> io::Result<Option<Vec<u8>>> {
    read_with(path, max_bytes, Follow::Links, |_| Ok(()))
}

/// [`read`] opening `path` following a link at its last name or not, `accept` looking at the
/// opened regular file before anything is read: a caller's further conditions on it.
pub(crate) fn read_with(
    path: &Path,
    max_bytes: u64,
    follow: Follow,
    accept: impl Fn(&std::fs::File) -> io::Result<()>,
) -> io::Result<Option<Vec<u8>>> {
    let opened = std::fs::OpenOptions::new().read(true).careful(follow).open(path);
    let file = match opened {
        Ok(file) => file,
        Err(err) if matches!(err.kind(), io::ErrorKind::NotFound | io::ErrorKind::NotADirectory) => return Ok(None),
        // Windows refuses to open a folder as a file ("access denied"): say what it is.
        Err(_) if std::fs::symlink_metadata(path).is_ok_and(|meta| meta.is_dir()) => return Err(not_regular()),
        Err(err) => return Err(err),
    };
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(not_regular());
    }
    accept(&file)?;
    if meta.len() > max_bytes {
        return Err(too_large(max_bytes));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(max_bytes + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max_bytes {
        return Err(too_large(max_bytes));
    }
    Ok(Some(bytes))
}

/// [`read`] of a UTF-8 text file.
pub(crate) fn read_text(path: &Path, max_bytes: u64) -> io::Result<Option<String>> {
    match read(path, max_bytes)? {
        Some(bytes) => {
            String::from_utf8(bytes).map(Some).map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "not UTF-8 text"))
        }
        None => Ok(None),
    }
}

fn not_regular() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, "not a regular file")
}

fn too_large(max_bytes: u64) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("larger than {max_bytes} bytes"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_under_the_cap_are_read() {
        let temp = tempfile::tempdir().unwrap();
        let file = temp.path().join("a.json");
        std::fs::write(&file, "{}").unwrap();
        assert_eq!(read(&file, 10).unwrap(), Some(b"{}".to_vec()));
        assert_eq!(read(&temp.path().join("missing"), 10).unwrap(), None);
        assert!(read(&file, 1).unwrap_err().to_string().contains("larger than 1 bytes"));
        assert!(read(temp.path(), 10).unwrap_err().to_string().contains("not a regular file"));
    }

    #[cfg(unix)]
    #[test]
    fn devices_and_fifos_are_not_read() {
        let temp = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink("/dev/zero", temp.path().join("zero")).unwrap();
        assert!(read(&temp.path().join("zero"), 10).unwrap_err().to_string().contains("not a regular file"));
        let fifo = temp.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert!(read(&fifo, 10).unwrap_err().to_string().contains("not a regular file"));
    }
}
