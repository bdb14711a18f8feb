//! Per-session hook state: one small file per session holding a count of consecutive read-only
//! calls. The directory is private (0700, owned by the user), file names are hashes of the
//! session id (a session id can never name a path), contents are parsed strictly as a number,
//! and updates are atomic (temp file + rename). Nothing lives in world-writable `/tmp`.
//!
//! Reads never block and never grow: a FIFO, device, socket or symlink in place of a count
//! file is opened without waiting (`O_NONBLOCK`), not followed (`O_NOFOLLOW`), checked with
//! `fstat` and read as 0; a regular file is read only as far as a count can reach.

use std::fs::{self, DirBuilder, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::{atomic, bounded, digest, dirs};

/// Files older than this are removed at session start.
const STALE_AFTER: Duration = Duration::from_hours(7 * 24);

/// The private directory holding session files.
#[derive(Debug)]
pub(crate) struct StateDir {
    path: PathBuf,
}

/// Where state lives: `hook-state/` in the private runtime directory ([`dirs::runtime`]).
#[must_use]
pub(crate) fn default_dir() -> Option<PathBuf> {
    dirs::runtime().map(|base| base.join("hook-state"))
}

impl StateDir {
    /// Opens (creating) the directory and makes sure it is a private directory of this user.
    pub(crate) fn open(path: &Path) -> io::Result<Self> {
        DirBuilder::new().recursive(true).mode(0o700).create(path)?;
        let meta = fs::symlink_metadata(path)?;
        if !meta.is_dir() {
            return Err(io::Error::other(format!("`{}` is not a directory", path.display())));
        }
        if meta.uid() != rustix::process::getuid().as_raw() {
            return Err(io::Error::other(format!("`{}` belongs to another user", path.display())));
        }
        if meta.mode() & 0o077 != 0 {
            fs::set_permissions(path, fs::Permissions::from_mode(0o700))?;
        }
        Ok(Self { path: path.to_path_buf() })
    }

    fn file(&self, session: &str) -> PathBuf {
        let name = digest::hex(&digest::sha256(session.as_bytes())[..16]);
        self.path.join(format!("{name}.count"))
    }

    /// The stored count; 0 when there is none, it is not a regular file, or it is not a plain
    /// number.
    #[must_use]
    pub(crate) fn read(&self, session: &str) -> u32 {
        let Ok(file) = OpenOptions::new().read(true).custom_flags(open_flags()).open(self.file(session)) else {
            return 0;
        };
        if !file.metadata().is_ok_and(|meta| meta.file_type().is_file()) {
            return 0;
        }
        let mut text = String::new();
        if file.take(MAX_COUNT_FILE).read_to_string(&mut text).is_err() {
            return 0;
        }
        parse_count(&text).unwrap_or(0)
    }

    /// Stores `count` atomically.
    pub(crate) fn write(&self, session: &str, count: u32) -> io::Result<()> {
        atomic::write(&self.file(session), count.to_string().as_bytes(), atomic::Access::Scratch)
    }

    /// Removes session files not touched for a week.
    pub(crate) fn prune(&self) {
        let Ok(entries) = fs::read_dir(&self.path) else { return };
        let now = SystemTime::now();
        for entry in entries.flatten() {
            let stale = entry
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|modified| now.duration_since(modified).unwrap_or_default() > STALE_AFTER);
            if stale {
                let _ = fs::remove_file(entry.path());
            }
        }
    }
}

/// A count is 1 to 6 ASCII digits, optionally followed by a newline; nothing else is accepted.
fn parse_count(text: &str) -> Option<u32> {
    let digits = text.strip_suffix('\n').unwrap_or(text);
    if digits.is_empty() || digits.len() > 6 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The most of a count file ever read: more than the longest count [`parse_count`] accepts.
const MAX_COUNT_FILE: u64 = 16;

/// Flags for opening a count file: not through a symlink, and without waiting for a FIFO's
/// writer or a device; never as a controlling terminal.
fn open_flags() -> i32 {
    bounded::nonblocking() | rustix::fs::OFlags::NOFOLLOW.bits().cast_signed()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_round_trip_per_session() {
        let temp = tempfile::tempdir().unwrap();
        let dir = StateDir::open(&temp.path().join("state")).unwrap();
        assert_eq!(dir.read("a"), 0);
        dir.write("a", 2).unwrap();
        assert_eq!(dir.read("a"), 2);
        assert_eq!(dir.read("b"), 0);
        let mode = fs::metadata(temp.path().join("state")).map_or(0, |m| m.mode() & 0o777);
        assert_eq!(mode, 0o700);
    }

    #[test]
    fn anything_but_a_plain_number_reads_as_zero() {
        assert_eq!(parse_count("3"), Some(3));
        assert_eq!(parse_count("3\n"), Some(3));
        for bad in ["", "-1", "3 ", "1e3", "9999999", "{\"deny\": 1}", "3\n4"] {
            assert_eq!(parse_count(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_fifo_or_a_symlink_in_place_of_a_count_reads_as_zero_without_blocking() {
        let temp = tempfile::tempdir().unwrap();
        let dir = StateDir::open(&temp.path().join("state")).unwrap();
        let fifo = dir.file("fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
            0,
        )
        .unwrap();
        assert_eq!(dir.read("fifo"), 0);
        let target = temp.path().join("target");
        fs::write(&target, "2").unwrap();
        std::os::unix::fs::symlink(&target, dir.file("link")).unwrap();
        assert_eq!(dir.read("link"), 0);
        std::os::unix::fs::symlink("/dev/zero", dir.file("zero")).unwrap();
        assert_eq!(dir.read("zero"), 0);
        fs::write(dir.file("long"), "1".repeat(1 << 20)).unwrap();
        assert_eq!(dir.read("long"), 0);
    }
}
