//! What differs between the systems codeact runs on, behind one interface chosen once here:
//! Unix ([`unix`]: Linux and macOS) and Windows ([`windows`]). Each mechanism has its
//! counterpart on the other side, beside it; SECURITY.md's per-system table says what each
//! one holds.
//!
//! - **Process trees** ([`new_group`], [`adopt`], [`stop_group`]): a child and whatever it
//!   starts are one unit that codeact can ask to end and then kill. Unix: a process group of
//!   its own, SIGTERM then SIGKILL. Windows: a Job object that kills every process in it when
//!   its last handle closes (so codeact's own death ends the tree), a console Ctrl-Break to
//!   ask, `TerminateJobObject` to kill.
//! - **Stop signals** ([`on_stop_signals`]): SIGTERM, SIGINT and SIGHUP on Unix; Ctrl-C,
//!   Ctrl-Break and the console's close on Windows.
//! - **Exit statuses** ([`describe_exit`], [`returncode`]): a signal's number on Unix, an
//!   `NTSTATUS` by name on Windows.
//! - **Files** ([`Modes`], [`Careful`], [`identity`], [`link_count`], [`private_dir`]): modes
//!   on Unix, the ACL a file inherits from its folder on Windows; no following of links
//!   (`O_NOFOLLOW`, `FILE_FLAG_OPEN_REPARSE_POINT`); a file's identity (device and inode,
//!   volume serial and file index); the owner of a private folder (uid, SID); reads at an
//!   offset ([`read_at`]); giving a run of zeros back to the file system ([`punch_hole`]:
//!   `fallocate` on Linux, a sparse file's zeroed range on Windows).
//! - **This boot** ([`boot_id`]): the kernel's boot id on Linux, the time Windows started.

#[cfg(unix)]
mod unix;
#[cfg(unix)]
use unix as imp;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
use windows as imp;

#[cfg(all(windows, hyperlight))]
pub(crate) use imp::has_system_library;
pub(crate) use imp::{
    Careful, Modes, describe_exit, detach, forget_group, group_alive, identity, kill_leader, link_count, new_group,
    on_stop_signals, private_dir, release_group, returncode, stop_group,
};
#[cfg(windows)]
pub(crate) use imp::{adopt, exit_stopped};
#[cfg(hyperlight)]
pub(crate) use imp::{boot_id, is_link_loop, punch_hole, read_at};

/// A path's canonical form, the one codeact compares and shows: absolute, with every link
/// resolved; on Windows without the `\\?\` prefix wherever the path means the same without
/// it (drive paths of at most 260 characters with no device names or names Win32 trims), so
/// that the workspace's path reads as users write it and works for every program it is given
/// to (a `cwd`, `${workspaceFolder}`, a `file://` root). Every canonical path is made here, so
/// any two compare alike.
pub(crate) trait Canonical {
    fn canonical(&self) -> std::io::Result<std::path::PathBuf>;
}

impl Canonical for std::path::Path {
    fn canonical(&self) -> std::io::Result<std::path::PathBuf> {
        dunce::canonicalize(self)
    }
}

/// What lies between the folder `dir` and `path` beneath it (empty for `dir` itself), or
/// `None` when `path` is not beneath it; both canonical ([`Canonical`]). On Windows one folder has
/// more than one canonical spelling: with or without the `\\?\` prefix (kept for a path over
/// 260 characters or with a name Win32 cannot write, dropped elsewhere), with a drive letter in
/// either case. Drives and shares compare as the volume they name there, and names without
/// case, as NTFS compares them.
#[must_use]
pub(crate) fn below(path: &std::path::Path, dir: &std::path::Path) -> Option<std::path::PathBuf> {
    imp::below(path, dir)
}

/// Whether `path` is `dir` or lies beneath it ([`below`]).
#[must_use]
pub(crate) fn is_within(path: &std::path::Path, dir: &std::path::Path) -> bool {
    below(path, dir).is_some()
}

/// How a process tree is told to end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// Asked to end, with time to clean up: SIGTERM; Ctrl-Break on Windows.
    Ask,
    /// Ended at once: SIGKILL; `TerminateJobObject` on Windows.
    Kill,
}

/// Whether opening a file may follow a link at its last name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Follow {
    Links,
    NoLinks,
}

/// What identifies a file's contents as the ones written: where it lies on disk (device and
/// inode; volume serial and file index), its length, and when it was last modified and
/// changed (its metadata), in nanoseconds since the Unix epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Identity {
    pub(crate) volume: u64,
    pub(crate) index: u64,
    pub(crate) len: u64,
    pub(crate) modified_ns: i64,
    pub(crate) changed_ns: i64,
}
