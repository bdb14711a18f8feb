//! Names for the files of a directory held open, and the system calls that resolve them.
//!
//! `SQLite`'s unix VFS opens, stats and deletes its files by name, through a table of system
//! calls that a host may replace. Here the path-taking ones (`open`, `access`, `stat`, `lstat`,
//! `unlink`, `mkdir`, `rmdir`, `readlink`) are replaced: a name `/codeact-held/<fd>/<file>` is
//! `<file>` in the directory `<fd>`, which must be one [`HeldDir`] registered, and is reached
//! with the `*at` call on that descriptor, never through a symlink (`O_NOFOLLOW`,
//! `AT_SYMLINK_NOFOLLOW`). `<file>` is one component: no `/`, not `.` nor `..`. The name
//! `/codeact-held/<fd>` alone is the directory itself (what `SQLite` opens to sync it). Every
//! other name goes to the system call `SQLite` had, unchanged.
//!
//! No path of these names exists: a call that was not replaced gets `ENOENT` from the kernel,
//! so a name can only ever be resolved beneath its directory. This works the same on every
//! Unix, without `/proc`.

use std::collections::BTreeSet;
use std::ffi::{CStr, OsStr, OsString, c_char, c_int};
use std::os::fd::{AsRawFd as _, RawFd};
use std::sync::{Mutex, OnceLock, PoisonError};

use cap_std::fs::Dir;
use rusqlite::ffi;

/// Where every held name starts.
pub(super) const PREFIX: &[u8] = b"/codeact-held/";

/// The descriptors of the directories held now.
static HELD: Mutex<BTreeSet<RawFd>> = Mutex::new(BTreeSet::new());

/// A directory whose files `SQLite` may name, for as long as it is held.
#[derive(Debug)]
pub(super) struct HeldDir {
    dir: Dir,
}

impl HeldDir {
    pub(super) fn new(dir: Dir) -> Self {
        HELD.lock().unwrap_or_else(PoisonError::into_inner).insert(dir.as_raw_fd());
        Self { dir }
    }

    /// The name `SQLite` is given for `file` in this directory: its bytes as they are, since a
    /// lossy conversion would name another file.
    pub(super) fn name(&self, file: &OsStr) -> OsString {
        let mut name = OsString::from(format!("{}{}/", String::from_utf8_lossy(PREFIX), self.dir.as_raw_fd()));
        name.push(file);
        name
    }
}

impl HeldDir {
    /// Whether `other` is this directory (the same device and inode).
    pub(super) fn is(&self, other: &Dir) -> bool {
        let identity = |dir: &Dir| rustix::fs::fstat(dir).ok().map(|stat| (stat.st_dev, stat.st_ino));
        identity(&self.dir).is_some_and(|held| identity(other) == Some(held))
    }

    /// Whether `file` in this directory is a regular file that another hard link names too.
    pub(super) fn shared(&self, file: &OsStr) -> bool {
        rustix::fs::statat(&self.dir, file, rustix::fs::AtFlags::SYMLINK_NOFOLLOW).is_ok_and(|stat| is_shared(&stat))
    }
}

impl Drop for HeldDir {
    fn drop(&mut self) {
        // Unregistered before the descriptor closes, so a number reused later is not held.
        HELD.lock().unwrap_or_else(PoisonError::into_inner).remove(&self.dir.as_raw_fd());
    }
}

/// What a held name names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target<'a> {
    /// The held directory itself.
    Dir(RawFd),
    /// One entry of it.
    File(RawFd, &'a CStr),
}

/// `None` for a name that is not held; `Some(Err(errno))` for a held name that is malformed,
/// or whose directory is not held.
fn resolve(name: &CStr) -> Option<Result<Target<'_>, c_int>> {
    let rest = name.to_bytes().strip_prefix(PREFIX)?;
    let digits = rest.iter().take_while(|byte| byte.is_ascii_digit()).count();
    let fd = std::str::from_utf8(&rest[..digits]).ok().and_then(|digits| digits.parse::<RawFd>().ok());
    let Some(fd) = fd.filter(|fd| HELD.lock().unwrap_or_else(PoisonError::into_inner).contains(fd)) else {
        return Some(Err(libc::EACCES));
    };
    let after = &name[PREFIX.len() + digits..];
    Some(match after.to_bytes() {
        [] => Ok(Target::Dir(fd)),
        [b'/', file @ ..] if !file.is_empty() && !file.contains(&b'/') && file != b"." && file != b".." => {
            Ok(Target::File(fd, &after[1..]))
        }
        _ => Err(libc::EACCES),
    })
}

/// What a replaced call returns on failure: -1, with `errno` set.
fn fail(errno: c_int) -> c_int {
    errno::set_errno(errno::Errno(errno));
    -1
}

type Open = unsafe extern "C" fn(*const c_char, c_int, c_int) -> c_int;
type Access = unsafe extern "C" fn(*const c_char, c_int) -> c_int;
type Stat = unsafe extern "C" fn(*const c_char, *mut libc::stat) -> c_int;
type Unlink = unsafe extern "C" fn(*const c_char) -> c_int;
type Mkdir = unsafe extern "C" fn(*const c_char, libc::mode_t) -> c_int;
type Readlink = unsafe extern "C" fn(*const c_char, *mut c_char, libc::size_t) -> libc::ssize_t;

/// The system calls `SQLite` had before these, for every other name.
struct Originals {
    open: Open,
    access: Access,
    stat: Stat,
    lstat: Stat,
    unlink: Unlink,
    mkdir: Mkdir,
    rmdir: Unlink,
    readlink: Readlink,
}

static ORIGINALS: OnceLock<Originals> = OnceLock::new();

/// Replaces the path-taking system calls of `SQLite`'s unix VFS (`vfs`, the default one). Runs
/// once per process, before any held name is used.
#[expect(unsafe_code, reason = "SQLite's system calls are replaced through its C API")]
pub(super) fn install(vfs: *mut ffi::sqlite3_vfs) -> Result<(), String> {
    // SAFETY: `vfs` is SQLite's default VFS, which lives for the process.
    let vfs_ref = unsafe { &*vfs };
    let name = if vfs_ref.zName.is_null() {
        std::borrow::Cow::default()
    } else {
        // SAFETY: a registered VFS's name is a NUL-terminated string it keeps.
        unsafe { CStr::from_ptr(vfs_ref.zName) }.to_string_lossy()
    };
    if !name.starts_with("unix") {
        return Err(format!("SQLite's default VFS is `{name}`, not its unix one"));
    }
    let (Some(get), Some(set)) = (vfs_ref.xGetSystemCall, vfs_ref.xSetSystemCall) else {
        return Err("SQLite's VFS does not let its system calls be replaced".into());
    };
    let original = |call: &CStr| {
        // SAFETY: the VFS's own method, with a NUL-terminated name.
        unsafe { get(vfs, call.as_ptr()) }
            .ok_or_else(|| format!("SQLite's VFS has no `{}` system call", call.to_string_lossy()))
    };
    // SAFETY: SQLite keeps each system call as a generic function pointer; its real type is the
    // one SQLite calls it with (`osOpen`, `osStat`… in its source), which these aliases spell.
    let originals = unsafe {
        Originals {
            open: std::mem::transmute::<unsafe extern "C" fn(), Open>(original(c"open")?),
            access: std::mem::transmute::<unsafe extern "C" fn(), Access>(original(c"access")?),
            stat: std::mem::transmute::<unsafe extern "C" fn(), Stat>(original(c"stat")?),
            lstat: std::mem::transmute::<unsafe extern "C" fn(), Stat>(original(c"lstat")?),
            unlink: std::mem::transmute::<unsafe extern "C" fn(), Unlink>(original(c"unlink")?),
            mkdir: std::mem::transmute::<unsafe extern "C" fn(), Mkdir>(original(c"mkdir")?),
            rmdir: std::mem::transmute::<unsafe extern "C" fn(), Unlink>(original(c"rmdir")?),
            readlink: std::mem::transmute::<unsafe extern "C" fn(), Readlink>(original(c"readlink")?),
        }
    };
    if ORIGINALS.set(originals).is_err() {
        return Err("SQLite's system calls were already replaced".into());
    }
    // SAFETY: each replacement has the type of the call it replaces (see above).
    let replacements = unsafe {
        [
            (c"open", std::mem::transmute::<Open, unsafe extern "C" fn()>(open)),
            (c"access", std::mem::transmute::<Access, unsafe extern "C" fn()>(access)),
            (c"stat", std::mem::transmute::<Stat, unsafe extern "C" fn()>(stat)),
            (c"lstat", std::mem::transmute::<Stat, unsafe extern "C" fn()>(lstat)),
            (c"unlink", std::mem::transmute::<Unlink, unsafe extern "C" fn()>(unlink)),
            (c"mkdir", std::mem::transmute::<Mkdir, unsafe extern "C" fn()>(mkdir)),
            (c"rmdir", std::mem::transmute::<Unlink, unsafe extern "C" fn()>(rmdir)),
            (c"readlink", std::mem::transmute::<Readlink, unsafe extern "C" fn()>(readlink)),
        ]
    };
    for (call, replacement) in replacements {
        // SAFETY: the VFS's own method, with a NUL-terminated name and a function of the type
        // SQLite calls it with.
        let rc = unsafe { set(vfs, call.as_ptr(), Some(replacement)) };
        if rc != ffi::SQLITE_OK {
            return Err(format!("replacing SQLite's `{}` failed ({rc})", call.to_string_lossy()));
        }
    }
    Ok(())
}

/// Runs `held` for a held name, or `other`, with the calls `SQLite` had, for any other.
///
/// # Safety
/// `name` is NUL-terminated, as `SQLite` passes it.
#[expect(unsafe_code, reason = "reads a C string SQLite passes")]
unsafe fn dispatch<T>(
    name: *const c_char,
    other: impl FnOnce(&Originals) -> T,
    held: impl FnOnce(Target<'_>) -> T,
    failed: impl FnOnce(c_int) -> T,
) -> T {
    // SAFETY: see the function's contract.
    let name = unsafe { CStr::from_ptr(name) };
    match resolve(name) {
        // The originals are kept before any replacement is made.
        None => ORIGINALS.get().map_or_else(|| failed(libc::ENOSYS), other),
        Some(Ok(target)) => held(target),
        Some(Err(errno)) => failed(errno),
    }
}

/// `open`: a held entry with `O_NOFOLLOW`, only a regular file, and only while no other path
/// names it (SQLite writes a database and its journals in place: through a device node or a
/// second hard link it would write whatever that is, outside the workspace or protected); the
/// directory itself read-only. The open does not block (a FIFO planted as a journal).
#[expect(unsafe_code, reason = "a system call SQLite calls")]
unsafe extern "C" fn open(name: *const c_char, flags: c_int, mode: c_int) -> c_int {
    let held_flags = flags | libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK;
    let held_mode = libc::c_uint::try_from(mode).unwrap_or_default();
    // SAFETY: SQLite's name and arguments; the directory is held, so open.
    unsafe {
        dispatch(
            name,
            |originals| (originals.open)(name, flags, mode),
            |target| match target {
                Target::Dir(_) if flags & (libc::O_CREAT | libc::O_WRONLY | libc::O_RDWR) != 0 => fail(libc::EISDIR),
                Target::Dir(fd) => libc::openat(fd, c".".as_ptr(), held_flags, held_mode),
                Target::File(fd, file) => only_link(libc::openat(fd, file.as_ptr(), held_flags, held_mode)),
            },
            fail,
        )
    }
}

/// `opened`, a descriptor `open` returned (non-blocking), made blocking again when it is a
/// regular file that no other hard link names; closed otherwise, with `EMLINK` for a shared
/// file and `ENODEV` for a device, FIFO or socket.
#[expect(unsafe_code, reason = "a descriptor SQLite's open returns")]
fn only_link(opened: c_int) -> c_int {
    use rustix::fs::{FileType, OFlags};
    if opened < 0 {
        return opened;
    }
    // SAFETY: `opened` is a descriptor just opened, owned here until it is returned.
    let file = unsafe { std::os::fd::BorrowedFd::borrow_raw(opened) };
    let refused = match rustix::fs::fstat(file) {
        Ok(stat) if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile => libc::ENODEV,
        Ok(stat) if is_shared(&stat) => libc::EMLINK,
        Ok(_) => match rustix::fs::fcntl_getfl(file)
            .and_then(|flags| rustix::fs::fcntl_setfl(file, flags - OFlags::NONBLOCK))
        {
            Ok(()) => return opened,
            Err(err) => err.raw_os_error(),
        },
        Err(err) => err.raw_os_error(),
    };
    // SAFETY: the descriptor is not returned, so nothing else closes it.
    unsafe { libc::close(opened) };
    fail(refused)
}

/// Whether `stat` is a regular file that another hard link names too.
pub(super) fn is_shared(stat: &rustix::fs::Stat) -> bool {
    rustix::fs::FileType::from_raw_mode(stat.st_mode) == rustix::fs::FileType::RegularFile && stat.st_nlink > 1
}

/// `access`: whether a held entry, never a symlink, allows `mode`.
#[expect(unsafe_code, reason = "a system call SQLite calls")]
unsafe extern "C" fn access(name: *const c_char, mode: c_int) -> c_int {
    // SAFETY: SQLite's name and arguments; the directory is held, so open.
    unsafe {
        dispatch(
            name,
            |originals| (originals.access)(name, mode),
            |target| {
                let mut stat = std::mem::zeroed::<libc::stat>();
                if stat_at(target, &raw mut stat) != 0 {
                    return -1;
                }
                if stat.st_mode & libc::S_IFMT == libc::S_IFLNK {
                    return fail(libc::ELOOP);
                }
                let (fd, file) = at(target);
                libc::faccessat(fd, file, mode, 0)
            },
            fail,
        )
    }
}

/// `stat`: a held entry's own status (a symlink is not followed).
#[expect(unsafe_code, reason = "a system call SQLite calls")]
unsafe extern "C" fn stat(name: *const c_char, out: *mut libc::stat) -> c_int {
    // SAFETY: SQLite's name and buffer.
    unsafe { dispatch(name, |originals| (originals.stat)(name, out), |target| stat_at(target, out), fail) }
}

/// `lstat`: as [`stat`].
#[expect(unsafe_code, reason = "a system call SQLite calls")]
unsafe extern "C" fn lstat(name: *const c_char, out: *mut libc::stat) -> c_int {
    // SAFETY: SQLite's name and buffer.
    unsafe { dispatch(name, |originals| (originals.lstat)(name, out), |target| stat_at(target, out), fail) }
}

/// `unlink`: removes a held entry.
#[expect(unsafe_code, reason = "a system call SQLite calls")]
unsafe extern "C" fn unlink(name: *const c_char) -> c_int {
    // SAFETY: SQLite's name; the directory is held, so open.
    unsafe {
        dispatch(
            name,
            |originals| (originals.unlink)(name),
            |target| match target {
                Target::Dir(_) => fail(libc::EISDIR),
                Target::File(fd, file) => libc::unlinkat(fd, file.as_ptr(), 0),
            },
            fail,
        )
    }
}

/// `mkdir`: a directory in a held one (`SQLite`'s dot-file locking).
#[expect(unsafe_code, reason = "a system call SQLite calls")]
unsafe extern "C" fn mkdir(name: *const c_char, mode: libc::mode_t) -> c_int {
    // SAFETY: SQLite's name and mode; the directory is held, so open.
    unsafe {
        dispatch(
            name,
            |originals| (originals.mkdir)(name, mode),
            |target| match target {
                Target::Dir(_) => fail(libc::EEXIST),
                Target::File(fd, file) => libc::mkdirat(fd, file.as_ptr(), mode),
            },
            fail,
        )
    }
}

/// `rmdir`: removes a directory in a held one.
#[expect(unsafe_code, reason = "a system call SQLite calls")]
unsafe extern "C" fn rmdir(name: *const c_char) -> c_int {
    // SAFETY: SQLite's name; the directory is held, so open.
    unsafe {
        dispatch(
            name,
            |originals| (originals.rmdir)(name),
            |target| match target {
                Target::Dir(_) => fail(libc::EBUSY),
                Target::File(fd, file) => libc::unlinkat(fd, file.as_ptr(), libc::AT_REMOVEDIR),
            },
            fail,
        )
    }
}

/// `readlink`: a held entry's link text.
#[expect(unsafe_code, reason = "a system call SQLite calls")]
unsafe extern "C" fn readlink(name: *const c_char, out: *mut c_char, len: libc::size_t) -> libc::ssize_t {
    // SAFETY: SQLite's name and buffer; the directory is held, so open.
    unsafe {
        dispatch(
            name,
            |originals| (originals.readlink)(name, out, len),
            |target| {
                let (fd, file) = at(target);
                libc::readlinkat(fd, file, out, len)
            },
            |errno| fail(errno) as libc::ssize_t,
        )
    }
}

/// The descriptor and name an `*at` call takes for `target`.
fn at(target: Target<'_>) -> (RawFd, *const c_char) {
    match target {
        Target::Dir(fd) => (fd, c".".as_ptr()),
        Target::File(fd, file) => (fd, file.as_ptr()),
    }
}

/// `fstatat` without following a symlink.
///
/// # Safety
/// `out` points to a `struct stat`; the target's directory is held, so open.
#[expect(unsafe_code, reason = "a system call")]
unsafe fn stat_at(target: Target<'_>, out: *mut libc::stat) -> c_int {
    let (fd, file) = at(target);
    // SAFETY: see the function's contract.
    unsafe { libc::fstatat(fd, file, out, libc::AT_SYMLINK_NOFOLLOW) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(temp: &tempfile::TempDir) -> HeldDir {
        HeldDir::new(Dir::open_ambient_dir(temp.path(), cap_std::ambient_authority()).unwrap())
    }

    fn c(name: &OsStr) -> std::ffi::CString {
        std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(name)).unwrap()
    }

    #[test]
    fn a_held_name_is_one_entry_of_a_registered_directory() {
        let temp = tempfile::tempdir().unwrap();
        let dir = held(&temp);
        let fd = dir.dir.as_raw_fd();
        let name = c(&dir.name(OsStr::new("data.db")));
        assert_eq!(resolve(&name), Some(Ok(Target::File(fd, c"data.db"))));
        let itself = std::ffi::CString::new(format!("/codeact-held/{fd}")).unwrap();
        assert_eq!(resolve(&itself), Some(Ok(Target::Dir(fd))));
        assert_eq!(resolve(c"/tmp/data.db"), None);
        assert_eq!(resolve(c"/codeact-held"), None);
    }

    #[test]
    fn a_held_name_that_leaves_its_directory_or_names_an_unheld_one_is_refused() {
        let temp = tempfile::tempdir().unwrap();
        let dir = held(&temp);
        let fd = dir.dir.as_raw_fd();
        for tail in ["/..", "/.", "/", "/sub/data.db", "/../data.db", "//data.db", "x", "0/data.db"] {
            let name = std::ffi::CString::new(format!("/codeact-held/{fd}{tail}")).unwrap();
            assert_eq!(resolve(&name), Some(Err(libc::EACCES)), "{tail}");
        }
        for name in [c"/codeact-held//data.db", c"/codeact-held/-1/data.db", c"/codeact-held/data.db"] {
            assert_eq!(resolve(name), Some(Err(libc::EACCES)), "{name:?}");
        }
        // Held by nothing: a descriptor this process has (stdin), and one it has not.
        for fd in [0, 1 << 30] {
            let name = std::ffi::CString::new(format!("/codeact-held/{fd}/data.db")).unwrap();
            assert_eq!(resolve(&name), Some(Err(libc::EACCES)), "{fd}");
        }
        // Released: no longer held, even before the number is reused.
        drop(dir);
        let name = std::ffi::CString::new(format!("/codeact-held/{fd}/data.db")).unwrap();
        assert_eq!(resolve(&name), Some(Err(libc::EACCES)));
    }
}
