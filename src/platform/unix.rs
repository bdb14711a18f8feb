//! The Unix side of [`super`]: process groups and signals, modes, `O_NOFOLLOW`, inodes, uids.

use std::fs::{File, Metadata};
use std::io;
use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _, OpenOptionsExt as _, PermissionsExt as _};
use std::os::unix::process::{CommandExt as _, ExitStatusExt as _};
use std::path::Path;
use std::process::ExitStatus;

use rustix::process::{Pid, Signal};

use super::{Follow, Identity, Stop};

/// Makes a command's child the leader of a new process group, which [`stop_group`] reaches.
pub(crate) fn new_group(command: &mut std::process::Command) {
    command.process_group(0);
}

/// Starts a command's child apart from codeact, to outlive it: in a process group of its own,
/// which a Ctrl-C at codeact's terminal does not reach.
pub(crate) fn detach(command: &mut std::process::Command) {
    command.process_group(0);
}

/// Signals the group led by `pid`; a group that is gone is no error.
pub(crate) fn stop_group(pid: u32, stop: Stop) {
    if let Some(pid) = pid_of(pid) {
        let _ = rustix::process::kill_process_group(pid, signal(stop));
    }
}

/// Whether any process of the group led by `pid` is still there.
#[must_use]
pub(crate) fn group_alive(pid: u32) -> bool {
    pid_of(pid).is_some_and(|pid| rustix::process::test_kill_process_group(pid).is_ok())
}

/// Kills the process `pid` alone, wherever its group now is.
pub(crate) fn kill_leader(pid: u32) {
    if let Some(pid) = pid_of(pid) {
        let _ = rustix::process::kill_process(pid, Signal::KILL);
    }
}

/// Leaves the group led by `pid` running: a process group needs nothing closed.
pub(crate) fn release_group(_pid: u32) {}

/// Forgets a group that was killed: a process group needs nothing closed.
pub(crate) fn forget_group(_pid: u32) {}

fn pid_of(pid: u32) -> Option<Pid> {
    i32::try_from(pid).ok().and_then(Pid::from_raw)
}

fn signal(stop: Stop) -> Signal {
    match stop {
        Stop::Ask => Signal::TERM,
        Stop::Kill => Signal::KILL,
    }
}

/// From now on, SIGTERM, SIGINT and SIGHUP run `ended`, then codeact dies of the signal as it
/// would have (its exit status still says which signal).
pub(crate) fn on_stop_signals(ended: fn()) {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGTERM, SIGINT, SIGHUP]) else { return };
    std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            ended();
            let _ = signal_hook::low_level::emulate_default_handler(signal);
            std::process::exit(128 + signal);
        }
    });
}

/// How a process ended, for a message: "exited with status 3", "was killed by signal 9".
#[must_use]
pub(crate) fn describe_exit(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(signal)) => format!("was killed by signal {signal}"),
        (None, None) => "exited".to_owned(),
    }
}

/// The return code a program sees, as Python's `subprocess` gives it: the exit status, or the
/// negated signal that ended the process.
#[must_use]
pub(crate) fn returncode(status: ExitStatus) -> i64 {
    status.code().or_else(|| status.signal().map(|signal| -signal)).map_or(-1, i64::from)
}

/// Sets Unix permission bits where a file or folder is made.
pub(crate) trait Modes {
    /// Creates with `mode` (less the umask).
    fn unix_mode(&mut self, mode: u32) -> &mut Self;
}

impl Modes for std::fs::DirBuilder {
    fn unix_mode(&mut self, mode: u32) -> &mut Self {
        self.mode(mode)
    }
}

impl Modes for std::fs::OpenOptions {
    fn unix_mode(&mut self, mode: u32) -> &mut Self {
        self.mode(mode)
    }
}

impl Modes for cap_std::fs::DirBuilder {
    fn unix_mode(&mut self, mode: u32) -> &mut Self {
        cap_std::fs::DirBuilderExt::mode(self, mode)
    }
}

impl Modes for cap_std::fs::OpenOptions {
    fn unix_mode(&mut self, mode: u32) -> &mut Self {
        cap_std::fs::OpenOptionsExt::mode(self, mode)
    }
}

/// Opens files that may not be what their names promise: without blocking on a FIFO's writer
/// or adopting a terminal (`O_NONBLOCK | O_NOCTTY`), and, with [`Follow::NoLinks`], not through
/// a symbolic link at the last name (`O_NOFOLLOW`). The caller checks what it opened.
pub(crate) trait Careful {
    fn careful(&mut self, follow: Follow) -> &mut Self;

    /// [`Self::careful`], for a read that may open a folder: Windows opens one only with
    /// `FILE_FLAG_BACKUP_SEMANTICS`.
    fn careful_entry(&mut self, follow: Follow) -> &mut Self;
}

fn careful_flags(follow: Follow) -> i32 {
    use rustix::fs::OFlags;
    let mut flags = OFlags::NONBLOCK | OFlags::NOCTTY;
    if follow == Follow::NoLinks {
        flags |= OFlags::NOFOLLOW;
    }
    flags.bits().cast_signed()
}

impl Careful for std::fs::OpenOptions {
    fn careful(&mut self, follow: Follow) -> &mut Self {
        self.custom_flags(careful_flags(follow))
    }

    fn careful_entry(&mut self, follow: Follow) -> &mut Self {
        self.careful(follow)
    }
}

impl Careful for cap_std::fs::OpenOptions {
    fn careful(&mut self, follow: Follow) -> &mut Self {
        cap_std::fs::OpenOptionsExt::custom_flags(self, careful_flags(follow))
    }

    fn careful_entry(&mut self, follow: Follow) -> &mut Self {
        self.careful(follow)
    }
}

/// The identity of the file at `path` (after links): device, inode, length, and its
/// modification and change times.
pub(crate) fn identity(path: &Path) -> io::Result<Identity> {
    let meta = std::fs::metadata(path)?;
    Ok(Identity {
        volume: meta.dev(),
        index: meta.ino(),
        len: meta.len(),
        modified_ns: nanoseconds(meta.mtime(), meta.mtime_nsec()),
        changed_ns: nanoseconds(meta.ctime(), meta.ctime_nsec()),
    })
}

/// A file time in nanoseconds since the epoch (in 64 bits until the year 2262; a time past
/// that saturates).
fn nanoseconds(seconds: i64, nanoseconds: i64) -> i64 {
    seconds.saturating_mul(1_000_000_000).saturating_add(nanoseconds)
}

/// Reads into `buffer` from the file at `offset`, leaving its position where it was.
#[cfg(hyperlight)]
pub(crate) fn read_at(file: &File, buffer: &mut [u8], offset: u64) -> io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buffer, offset)
}

/// Gives the `len` bytes of zeros at `start` back to the file system, the file's length
/// unchanged; `false` where the file system cannot.
#[cfg(hyperlight)]
pub(crate) fn punch_hole(file: &File, start: u64, len: u64) -> io::Result<bool> {
    use rustix::fs::FallocateFlags;
    match rustix::fs::fallocate(file, FallocateFlags::PUNCH_HOLE | FallocateFlags::KEEP_SIZE, start, len) {
        Ok(()) => Ok(true),
        Err(rustix::io::Errno::OPNOTSUPP | rustix::io::Errno::NOSYS) => Ok(false),
        Err(err) => Err(err.into()),
    }
}

/// Whether an open failed because of a link: a loop, or a link where none may be followed.
#[cfg(hyperlight)]
pub(crate) fn is_link_loop(err: &io::Error) -> bool {
    err.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error())
}

/// What names this boot of the system, the same for every process until the next one.
#[cfg(hyperlight)]
pub(crate) fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id").map(|id| id.trim().to_owned()).unwrap_or_default()
}

/// [`super::below`]: one spelling per folder, compared as it is.
pub(crate) fn below(path: &Path, dir: &Path) -> Option<std::path::PathBuf> {
    path.strip_prefix(dir).ok().map(Path::to_path_buf)
}

/// How many names the open file has.
pub(crate) fn link_count(file: &File) -> io::Result<u64> {
    Ok(file.metadata()?.nlink())
}

/// Makes the folder `path` (and its parents) when missing, and makes sure it is a private
/// folder of this user: owned by this uid, and readable by no one else (mode 0700, set again
/// when it was wider).
pub(crate) fn private_dir(path: &Path) -> io::Result<()> {
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(path)?;
    let meta: Metadata = std::fs::symlink_metadata(path)?;
    if !meta.is_dir() {
        return Err(io::Error::other(format!("`{}` is not a directory", path.display())));
    }
    if meta.uid() != rustix::process::getuid().as_raw() {
        return Err(io::Error::other(format!("`{}` belongs to another user", path.display())));
    }
    if meta.mode() & 0o077 != 0 {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}
