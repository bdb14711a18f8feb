//! The workspace: the only door from the sandbox to the file system.
//!
//! [`Workspace::confine`] turns whatever path a program passes into a [`Confined`] path,
//! relative to the workspace root, refusing absolute paths elsewhere and `..` that climbs out
//! (and, on Windows, every spelling that reaches something other than the plain file it names:
//! other drives and shares, streams, devices, short names, [`windows_names`]); it is the only
//! way to make one, and every file operation here takes one. Each operation then
//! goes through a `cap_std::fs::Dir` opened on the root, which resolves the path beneath it in
//! the kernel (`openat2(RESOLVE_BENEATH)` where available): a symlink, at any level, that leads
//! outside is refused at open time, so there is no check-then-open race. Only regular files are
//! ever read; devices, FIFOs and sockets are refused after opening without blocking.
//!
//! On Windows, cap-std opens one name at a time relative to the directory handle before it
//! (`NtCreateFile`), never letting the system follow a reparse point. Symbolic links and
//! junctions (every name-surrogate reparse point) it follows itself, and only when the target
//! is relative and stays beneath the root: an absolute target, which every junction has, is
//! refused even when it leads back into the workspace. Other reparse points (cloud files,
//! deduplicated files) are opened as themselves.
//!
//! Writes are refused, as part of the same confinement, for the write-protected paths
//! ([`crate::tools::protected`]): [`Workspace::check_writable`] looks at the path as the program gave
//! it, at where it really leads, at the other names the workspace's links give it, and at the
//! files and folders on its way as they are on disk (a protected link's target, by device and
//! inode); [`Workspace::create_new`] and [`Workspace::replace`] ask it before anything is
//! written. The rules that depend on the workspace's contents are found once, before the
//! first write. No operation here makes a symbolic link.
//!
//! Two kinds of callers get more than a path. Walkers (`glob`, `grep`) get a [`WalkDir`]: a
//! directory opened beneath the root, whose subdirectories and files are opened through it
//! without following symlinks, so a directory swapped for a symlink mid-walk is never entered.
//! `SQLite` gets a directory opened beneath the root ([`Workspace::open_dir`]) and names its
//! files through that open directory.

mod confined;
mod entry;
mod protection;
mod root;
mod walk_dir;
mod windows_names;
#[cfg(test)]
mod windows_tests;
mod write;

pub(crate) use confined::Confined;
pub(crate) use entry::{Entry, Opened, io_error, read_capped};
pub(crate) use root::Workspace;
pub(crate) use walk_dir::{Listed, WalkDir};
