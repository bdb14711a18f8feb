//! Opening a `SQLite` database through a directory held open beneath the workspace.
//!
//! The database is named `/codeact-held/<dir>/<name>` ([`held`]): `SQLite`'s system calls
//! resolve such a name as `<name>` in the held directory itself, not in whatever path names it
//! now, and the journal, WAL and shared-memory files beside it, which `SQLite` names by appending
//! to the database's name, resolve the same way. `SQLite`'s own unix VFS would turn the name into
//! a full path first (its full-pathname step resolves every component), so the connection uses a
//! VFS that is the default one in every respect but that: held names are kept as they are.

use std::ffi::{CStr, OsStr, c_char, c_int};
use std::sync::OnceLock;

use rusqlite::{Connection, OpenFlags, ffi};

use super::held::{self, HeldDir, PREFIX};

/// The name the VFS is registered under.
const NAME: &CStr = c"codeact-beneath";

/// The default VFS's full-pathname function, which every other name is handed to.
type FullPathname = unsafe extern "C" fn(*mut ffi::sqlite3_vfs, *const c_char, c_int, *mut c_char) -> c_int;

static DEFAULT_FULL_PATHNAME: OnceLock<Result<FullPathname, String>> = OnceLock::new();

/// Opens `name` in `dir` (read-write, created when missing, never through a symlink).
pub(super) fn open(dir: &HeldDir, name: &OsStr) -> rusqlite::Result<Connection> {
    register()
        .map_err(|message| rusqlite::Error::SqliteFailure(ffi::Error::new(ffi::SQLITE_ERROR), Some(message.clone())))?;
    Connection::open_with_flags_and_vfs(dir.name(name), OpenFlags::default() | OpenFlags::SQLITE_OPEN_NOFOLLOW, NAME)
}

/// Registers the VFS once per process.
fn register() -> Result<(), &'static String> {
    DEFAULT_FULL_PATHNAME.get_or_init(register_vfs).as_ref().map(|_| ())
}

#[expect(unsafe_code, reason = "a SQLite VFS is registered through its C API")]
fn register_vfs() -> Result<FullPathname, String> {
    // SAFETY: `sqlite3_vfs_find(NULL)` returns the default VFS, which SQLite keeps for the life
    // of the process; it is only read here, to copy it.
    let default = unsafe { ffi::sqlite3_vfs_find(std::ptr::null()) };
    if default.is_null() {
        return Err("SQLite has no default VFS".into());
    }
    // SAFETY: `default` is non-null and points to a live `sqlite3_vfs` (see above). Its `pNext`
    // changes only while a VFS is registered, which nothing else in codeact does, and this runs
    // once (in a `OnceLock`).
    let mut vfs = unsafe { *default };
    held::install(default)?;
    let full_pathname = vfs.xFullPathname.ok_or("SQLite's default VFS has no full-pathname function")?;
    vfs.zName = NAME.as_ptr();
    vfs.pNext = std::ptr::null_mut();
    vfs.xFullPathname = Some(keep_descriptor_names);
    // The copy keeps the default's `pAppData` (its file-locking finder) and every other method.
    let vfs: &'static mut ffi::sqlite3_vfs = Box::leak(Box::new(vfs));
    // SAFETY: `vfs` is a complete VFS that lives for the rest of the process, as SQLite requires
    // of a registered VFS; `0` registers it without making it the default.
    let rc = unsafe { ffi::sqlite3_vfs_register(vfs, 0) };
    if rc == ffi::SQLITE_OK { Ok(full_pathname) } else { Err(format!("registering SQLite's VFS failed ({rc})")) }
}

/// `xFullPathname`: a held name is copied as it is; any other goes to the default VFS.
#[expect(unsafe_code, reason = "a SQLite VFS method is a C callback")]
unsafe extern "C" fn keep_descriptor_names(
    vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    out_len: c_int,
    out: *mut c_char,
) -> c_int {
    // SAFETY: SQLite passes a NUL-terminated name.
    let bytes = unsafe { CStr::from_ptr(name) }.to_bytes_with_nul();
    if bytes.starts_with(PREFIX) {
        if usize::try_from(out_len).is_ok_and(|room| bytes.len() <= room) {
            // SAFETY: `out` has room for `out_len` bytes (SQLite's contract), checked above to
            // hold the name and its NUL; the two buffers are SQLite's and do not overlap.
            unsafe { std::ptr::copy_nonoverlapping(name, out, bytes.len()) };
            return ffi::SQLITE_OK;
        }
        return ffi::SQLITE_CANTOPEN;
    }
    match DEFAULT_FULL_PATHNAME.get() {
        // SAFETY: the default VFS's own method, called with the arguments SQLite gave this one;
        // the copy it was taken from shares its `pAppData`.
        Some(Ok(default)) => unsafe { default(vfs, name, out_len, out) },
        _ => ffi::SQLITE_ERROR,
    }
}
