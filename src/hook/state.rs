//! Per-session hook state: one small file per session holding a [`Session`]: how many rounds of
//! direct calls in a row, the batch the last one belonged to, and what the session has done.
//! The directory is private (0700, owned by the user), file names are hashes of the session id
//! (a session id can never name a path), contents are parsed strictly as three numbers, and
//! updates are atomic (temp file + rename). Nothing lives in world-writable `/tmp`.
//!
//! Reads never block and never grow: a FIFO, device, socket or symlink in place of a state
//! file is opened without waiting (`O_NONBLOCK`), not followed (`O_NOFOLLOW`), checked with
//! `fstat` and read as a fresh session; a regular file is read only as far as a record can
//! reach.

use std::fs::{self, OpenOptions};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::platform::{self, Careful as _, Follow};
use crate::{atomic, digest, dirs};

/// Files older than this are removed at session start.
const STALE_AFTER: Duration = Duration::from_hours(7 * 24);

/// What the hook remembers of one session.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Session {
    /// Rounds of read-only calls in a row (nudge), or direct calls since the last codeact run
    /// (exclusive).
    pub(crate) rounds: u32,
    /// The payload timestamp of the last round counted: every call of one parallel batch
    /// carries the same one.
    pub(crate) batch: u64,
    /// The model has run codeact in this session.
    pub(crate) used_codeact: bool,
    /// This streak's advice was given (nudge's gentle first step).
    pub(crate) advised: bool,
    /// The round of `batch` is being denied, every call of it.
    pub(crate) denying: bool,
}

impl Session {
    fn flags(self) -> u8 {
        u8::from(self.used_codeact) | u8::from(self.advised) << 1 | u8::from(self.denying) << 2
    }

    /// `rounds batch flags`.
    fn encode(self) -> String {
        format!("{} {} {}\n", self.rounds, self.batch, self.flags())
    }

    /// The strict inverse of [`Self::encode`]: 1–6 digits, 1–20 digits, one digit 0–7, single
    /// spaces, an optional final newline; nothing else.
    fn parse(text: &str) -> Option<Self> {
        let text = text.strip_suffix('\n').unwrap_or(text);
        let mut fields = text.split(' ');
        let (rounds, batch, flags) = (fields.next()?, fields.next()?, fields.next()?);
        let digits = |field: &str, max: usize| {
            !field.is_empty() && field.len() <= max && field.bytes().all(|b| b.is_ascii_digit())
        };
        if fields.next().is_some() || !digits(rounds, 6) || !digits(batch, 20) || !digits(flags, 1) {
            return None;
        }
        let flags: u8 = flags.parse().ok()?;
        if flags > 7 {
            return None;
        }
        Some(Self {
            rounds: rounds.parse().ok()?,
            batch: batch.parse().ok()?,
            used_codeact: flags & 1 != 0,
            advised: flags & 2 != 0,
            denying: flags & 4 != 0,
        })
    }
}

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
        platform::private_dir(path)?;
        Ok(Self { path: path.to_path_buf() })
    }

    fn file(&self, session: &str) -> PathBuf {
        let name = digest::hex(&digest::sha256(session.as_bytes())[..16]);
        self.path.join(format!("{name}.session"))
    }

    /// The stored session; a fresh one when there is none, it is not a regular file, or it is
    /// not exactly a record.
    #[must_use]
    pub(crate) fn read(&self, session: &str) -> Session {
        let Ok(file) = OpenOptions::new().read(true).careful(Follow::NoLinks).open(self.file(session)) else {
            return Session::default();
        };
        if !file.metadata().is_ok_and(|meta| meta.file_type().is_file()) {
            return Session::default();
        }
        let mut text = String::new();
        if file.take(MAX_RECORD).read_to_string(&mut text).is_err() {
            return Session::default();
        }
        Session::parse(&text).unwrap_or_default()
    }

    /// Stores `state` atomically.
    pub(crate) fn write(&self, session: &str, state: Session) -> io::Result<()> {
        atomic::write(&self.file(session), state.encode().as_bytes(), atomic::Access::Scratch)
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

/// The most of a state file ever read: more than the longest record [`Session::parse`] accepts.
const MAX_RECORD: u64 = 40;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_round_trip_each_in_its_own_file() {
        let temp = tempfile::tempdir().unwrap();
        let dir = StateDir::open(&temp.path().join("state")).unwrap();
        assert_eq!(dir.read("a"), Session::default());
        let state = Session { rounds: 2, batch: 1_795_981_537_987, used_codeact: true, advised: false, denying: true };
        dir.write("a", state).unwrap();
        assert_eq!(dir.read("a"), state);
        assert_eq!(dir.read("b"), Session::default());
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt as _;
            let mode = fs::metadata(temp.path().join("state")).map_or(0, |m| m.mode() & 0o777);
            assert_eq!(mode, 0o700);
        }
    }

    #[test]
    fn anything_but_an_exact_record_reads_as_a_fresh_session() {
        assert_eq!(
            Session::parse("3 17 1"),
            Some(Session { rounds: 3, batch: 17, used_codeact: true, ..Session::default() })
        );
        assert_eq!(Session::parse("3 17 6\n").map(|s| (s.advised, s.denying)), Some((true, true)));
        for bad in [
            "",
            "3",
            "-1 0 0",
            "3  17 1",
            "3 17 1 ",
            "1e3 0 0",
            "9999999 0 0",
            "3 17 8",
            "3 17 10",
            "3 123456789012345678901 0",
            "{\"deny\": 1}",
            "3 17 1\n4",
            " 3 17 1",
        ] {
            assert_eq!(Session::parse(bad), None, "{bad}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_or_a_symlink_in_place_of_a_record_reads_as_a_fresh_session_without_blocking() {
        let temp = tempfile::tempdir().unwrap();
        let dir = StateDir::open(&temp.path().join("state")).unwrap();
        let fifo = dir.file("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRUSR | nix::sys::stat::Mode::S_IWUSR).unwrap();
        assert_eq!(dir.read("fifo"), Session::default());
        let target = temp.path().join("target");
        fs::write(&target, "2 0 0").unwrap();
        std::os::unix::fs::symlink(&target, dir.file("link")).unwrap();
        assert_eq!(dir.read("link"), Session::default());
        std::os::unix::fs::symlink("/dev/zero", dir.file("zero")).unwrap();
        assert_eq!(dir.read("zero"), Session::default());
        fs::write(dir.file("long"), "1".repeat(1 << 20)).unwrap();
        assert_eq!(dir.read("long"), Session::default());
    }
}
