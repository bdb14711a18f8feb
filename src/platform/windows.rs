//! The Windows side of [`super`]: Job objects for process trees, console control events, exit
//! statuses by `NTSTATUS`, files opened without following reparse points, identity by volume
//! serial and file index, and owners by SID.
#![expect(unsafe_code, reason = "the Win32 calls that std does not wrap")]

use std::collections::BTreeMap;
use std::ffi::c_void;
use std::fs::File;
use std::io;
use std::os::windows::fs::OpenOptionsExt as _;
use std::os::windows::io::{AsRawHandle as _, RawHandle};
use std::path::Path;
use std::process::ExitStatus;
use std::sync::{Mutex, PoisonError};

use windows_sys::Win32::Foundation::{CloseHandle, FALSE, FILETIME, HANDLE, INVALID_HANDLE_VALUE, LocalFree, TRUE};
#[cfg(hyperlight)]
use windows_sys::Win32::Foundation::{ERROR_CANT_RESOLVE_FILENAME, ERROR_INVALID_FUNCTION, ERROR_STOPPED_ON_SYMLINK};
use windows_sys::Win32::Security::Authorization::{GetSecurityInfo, SE_FILE_OBJECT};
use windows_sys::Win32::Security::{
    EqualSid, GetTokenInformation, OWNER_SECURITY_INFORMATION, PSECURITY_DESCRIPTOR, PSID, TOKEN_QUERY, TOKEN_USER,
    TokenUser,
};
use windows_sys::Win32::Storage::FileSystem::{
    BY_HANDLE_FILE_INFORMATION, FILE_BASIC_INFO, FILE_FLAG_BACKUP_SEMANTICS, FILE_FLAG_OPEN_REPARSE_POINT,
    FileBasicInfo, GetFileInformationByHandle, GetFileInformationByHandleEx, READ_CONTROL,
};
use windows_sys::Win32::System::Console::{
    CTRL_BREAK_EVENT, CTRL_C_EVENT, CTRL_CLOSE_EVENT, GenerateConsoleCtrlEvent, SetConsoleCtrlHandler,
};
use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, TH32CS_SNAPTHREAD, THREADENTRY32, Thread32First, Thread32Next,
};
#[cfg(hyperlight)]
use windows_sys::Win32::System::IO::DeviceIoControl;
#[cfg(hyperlight)]
use windows_sys::Win32::System::Ioctl::{FILE_ZERO_DATA_INFORMATION, FSCTL_SET_SPARSE, FSCTL_SET_ZERO_DATA};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
    JOBOBJECT_BASIC_ACCOUNTING_INFORMATION, JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JobObjectBasicAccountingInformation,
    JobObjectExtendedLimitInformation, QueryInformationJobObject, SetInformationJobObject, TerminateJobObject,
};
#[cfg(hyperlight)]
use windows_sys::Win32::System::LibraryLoader::{LOAD_LIBRARY_SEARCH_SYSTEM32, LoadLibraryExW};
#[cfg(hyperlight)]
use windows_sys::Win32::System::SystemInformation::GetTickCount64;
use windows_sys::Win32::System::Threading::{
    CREATE_NEW_PROCESS_GROUP, CREATE_SUSPENDED, DETACHED_PROCESS, GetCurrentProcess, OpenProcess, OpenProcessToken,
    OpenThread, PROCESS_TERMINATE, ResumeThread, THREAD_SUSPEND_RESUME, TerminateProcess,
};

use super::{Follow, Identity, Stop};

/// The exit status of a process codeact ended, as Ctrl-C ends a console program.
const STATUS_CONTROL_C_EXIT: u32 = 0xC000_013A;

/// A kernel handle, closed when dropped.
#[derive(Debug)]
struct Owned(HANDLE);

// SAFETY: a kernel handle is a process-wide name; any thread may use or close it.
unsafe impl Send for Owned {}

impl Drop for Owned {
    fn drop(&mut self) {
        // SAFETY: the handle is ours and closed once.
        unsafe { CloseHandle(self.0) };
    }
}

/// A Job object holding one child and everything it starts, killed whole when the last handle
/// to it closes: codeact's death (however it comes) ends the tree.
#[derive(Debug)]
struct Job(Owned);

impl Job {
    fn new() -> io::Result<Self> {
        // SAFETY: no name and default security: a fresh, unnamed job.
        let handle = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
        if handle.is_null() {
            return Err(io::Error::last_os_error());
        }
        let job = Self(Owned(handle));
        job.kill_on_close(true)?;
        Ok(job)
    }

    fn kill_on_close(&self, kill: bool) -> io::Result<()> {
        // SAFETY: a plain-data struct, all zeroes valid.
        let mut limits: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = unsafe { std::mem::zeroed() };
        limits.BasicLimitInformation.LimitFlags = if kill { JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE } else { 0 };
        // SAFETY: the job is open; the struct is the one this information class names.
        let set = unsafe {
            SetInformationJobObject(
                self.0.0,
                JobObjectExtendedLimitInformation,
                (&raw const limits).cast::<c_void>(),
                size_of_u32::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>(),
            )
        };
        if set == FALSE { Err(io::Error::last_os_error()) } else { Ok(()) }
    }

    fn active_processes(&self) -> u32 {
        // SAFETY: a plain-data struct, all zeroes valid.
        let mut info: JOBOBJECT_BASIC_ACCOUNTING_INFORMATION = unsafe { std::mem::zeroed() };
        // SAFETY: the job is open; the struct is the one this information class names.
        let queried = unsafe {
            QueryInformationJobObject(
                self.0.0,
                JobObjectBasicAccountingInformation,
                (&raw mut info).cast::<c_void>(),
                size_of_u32::<JOBOBJECT_BASIC_ACCOUNTING_INFORMATION>(),
                std::ptr::null_mut(),
            )
        };
        if queried == FALSE { 0 } else { info.ActiveProcesses }
    }

    fn terminate(&self) {
        // SAFETY: the job is open.
        unsafe { TerminateJobObject(self.0.0, STATUS_CONTROL_C_EXIT) };
    }
}

fn size_of_u32<T>() -> u32 {
    u32::try_from(size_of::<T>()).unwrap_or(u32::MAX)
}

/// The jobs of the trees codeact started, by the pid of the process each began with.
static JOBS: Mutex<BTreeMap<u32, Job>> = Mutex::new(BTreeMap::new());

fn with_job<T>(pid: u32, act: impl FnOnce(&Job) -> T) -> Option<T> {
    JOBS.lock().unwrap_or_else(PoisonError::into_inner).get(&pid).map(act)
}

fn take_job(pid: u32) -> Option<Job> {
    JOBS.lock().unwrap_or_else(PoisonError::into_inner).remove(&pid)
}

/// Starts a command's child suspended, in a console process group of its own (which
/// Ctrl-Break reaches): [`adopt`] puts it in its Job object before it runs an instruction, so
/// nothing it starts can be outside the job.
pub(crate) fn new_group(command: &mut std::process::Command) {
    std::os::windows::process::CommandExt::creation_flags(command, CREATE_SUSPENDED | CREATE_NEW_PROCESS_GROUP);
}

/// Starts a command's child apart from codeact, to outlive it: in a console process group of
/// its own and without a console: a Ctrl-C at codeact's console does not reach it.
pub(crate) fn detach(command: &mut std::process::Command) {
    std::os::windows::process::CommandExt::creation_flags(command, CREATE_NEW_PROCESS_GROUP | DETACHED_PROCESS);
}

/// Puts the child `pid` (started by a command [`new_group`] prepared, whose process handle is
/// `process`) in a Job object of its own and lets it run. On failure the child is killed.
pub(crate) fn adopt(pid: u32, process: RawHandle) -> io::Result<()> {
    let adopted = Job::new().and_then(|job| {
        // SAFETY: the job is open and `process` is the child's handle, open until it is waited for.
        if unsafe { AssignProcessToJobObject(job.0.0, process) } == FALSE {
            return Err(io::Error::last_os_error());
        }
        resume_threads(pid)?;
        Ok(job)
    });
    match adopted {
        Ok(job) => {
            JOBS.lock().unwrap_or_else(PoisonError::into_inner).insert(pid, job);
            Ok(())
        }
        Err(err) => {
            // SAFETY: as above; a child that never ran is ended.
            unsafe { TerminateProcess(process, STATUS_CONTROL_C_EXIT) };
            Err(err)
        }
    }
}

/// Resumes the threads of the suspended process `pid` (its first one: nothing else has run).
fn resume_threads(pid: u32) -> io::Result<()> {
    // SAFETY: a snapshot of the system's threads, closed by `Owned`.
    let snapshot = unsafe { CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0) };
    if snapshot == INVALID_HANDLE_VALUE {
        return Err(io::Error::last_os_error());
    }
    let snapshot = Owned(snapshot);
    // SAFETY: a plain-data struct, all zeroes valid; its size is set as the API asks.
    let mut entry: THREADENTRY32 = unsafe { std::mem::zeroed() };
    entry.dwSize = size_of_u32::<THREADENTRY32>();
    let mut resumed = 0;
    // SAFETY: the snapshot is open and `entry` sized.
    let mut more = unsafe { Thread32First(snapshot.0, &raw mut entry) } != FALSE;
    while more {
        if entry.th32OwnerProcessID == pid {
            // SAFETY: opening a thread by id; the handle is closed by `Owned`.
            let thread = unsafe { OpenThread(THREAD_SUSPEND_RESUME, FALSE, entry.th32ThreadID) };
            if !thread.is_null() {
                let thread = Owned(thread);
                // SAFETY: the thread is open with the right to resume it.
                if unsafe { ResumeThread(thread.0) } != u32::MAX {
                    resumed += 1;
                }
            }
        }
        // SAFETY: as for `Thread32First`.
        more = unsafe { Thread32Next(snapshot.0, &raw mut entry) } != FALSE;
    }
    if resumed == 0 {
        return Err(io::Error::other(format!("the process {pid} could not be resumed")));
    }
    Ok(())
}

/// Asks the tree begun by `pid` to end (Ctrl-Break, which reaches its console process group
/// when codeact has a console), or kills it (`TerminateJobObject`).
pub(crate) fn stop_group(pid: u32, stop: Stop) {
    match stop {
        Stop::Ask => {
            // SAFETY: a console event to a process group; none reached is no error.
            unsafe { GenerateConsoleCtrlEvent(CTRL_BREAK_EVENT, pid) };
        }
        Stop::Kill => {
            with_job(pid, Job::terminate);
        }
    }
}

/// Whether any process of the tree begun by `pid` is still there.
#[must_use]
pub(crate) fn group_alive(pid: u32) -> bool {
    with_job(pid, Job::active_processes).is_some_and(|active| active > 0)
}

/// Kills the process `pid` alone.
pub(crate) fn kill_leader(pid: u32) {
    // SAFETY: opening a process by id for termination; the handle is closed by `Owned`.
    let process = unsafe { OpenProcess(PROCESS_TERMINATE, FALSE, pid) };
    if !process.is_null() {
        let process = Owned(process);
        // SAFETY: the process is open with the right to terminate it.
        unsafe { TerminateProcess(process.0, STATUS_CONTROL_C_EXIT) };
    }
}

/// Leaves the tree begun by `pid` running: its job stops killing on close, then is closed;
/// a job killed already ([`stop_group`]) is just closed.
pub(crate) fn release_group(pid: u32) {
    if let Some(job) = take_job(pid) {
        let _ = job.kill_on_close(false);
    }
}

/// Forgets a tree that was killed: closing its job kills what is left of it.
pub(crate) fn forget_group(pid: u32) {
    drop(take_job(pid));
}

/// The function [`on_stop_signals`] runs: set once.
static ENDED: Mutex<Option<fn()>> = Mutex::new(None);

/// From now on, Ctrl-C, Ctrl-Break and the closing of codeact's console run `ended`, then
/// codeact exits as a console program that Ctrl-C ends (`STATUS_CONTROL_C_EXIT`).
pub(crate) fn on_stop_signals(ended: fn()) {
    *ENDED.lock().unwrap_or_else(PoisonError::into_inner) = Some(ended);
    // SAFETY: `on_control` is a valid handler for the life of the process.
    unsafe { SetConsoleCtrlHandler(Some(on_control), TRUE) };
}

/// Runs on a thread of its own for each console event.
unsafe extern "system" fn on_control(event: u32) -> i32 {
    if !matches!(event, CTRL_C_EVENT | CTRL_BREAK_EVENT | CTRL_CLOSE_EVENT) {
        return FALSE;
    }
    let ended = *ENDED.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(ended) = ended {
        ended();
    }
    exit_stopped()
}

/// Exits as a console program that Ctrl-C ends (`STATUS_CONTROL_C_EXIT`).
pub(crate) fn exit_stopped() -> ! {
    std::process::exit(STATUS_CONTROL_C_EXIT.cast_signed())
}

/// How a process ended, for a message: "exited with status 3", or for an `NTSTATUS` (a crash,
/// or an end by codeact or Ctrl-C) "ended with 0xC0000005 (an access violation)".
#[must_use]
pub(crate) fn describe_exit(status: ExitStatus) -> String {
    let Some(code) = status.code() else { return "exited".to_owned() };
    let bits = code.cast_unsigned();
    if bits & 0xC000_0000 != 0xC000_0000 {
        return format!("exited with status {code}");
    }
    match ntstatus_name(bits) {
        Some(name) => format!("ended with {bits:#010X} ({name})"),
        None => format!("ended with {bits:#010X}"),
    }
}

/// What the `NTSTATUS` values a crashed or ended program most often has mean.
fn ntstatus_name(status: u32) -> Option<&'static str> {
    Some(match status {
        0xC000_0005 => "an access violation",
        0xC000_0017 => "out of memory",
        0xC000_001D => "an illegal instruction",
        0xC000_0094 => "an integer division by zero",
        0xC000_00FD => "a stack overflow",
        0xC000_0135 => "a DLL was not found",
        0xC000_0139 => "an entry point was not found",
        0xC000_0142 => "a DLL failed to initialise",
        STATUS_CONTROL_C_EXIT => "ended by Ctrl-C or by codeact",
        0xC000_0409 => "a fast fail: the program aborted",
        _ => return None,
    })
}

/// The return code a program sees, as Python's `subprocess` gives it on Windows: the exit code
/// as an unsigned number.
#[must_use]
pub(crate) fn returncode(status: ExitStatus) -> i64 {
    status.code().map_or(-1, |code| i64::from(code.cast_unsigned()))
}

/// Windows has no mode bits: a file or folder gets the ACL its parent passes on, which beneath
/// the user's profile (`%LOCALAPPDATA%`, `%APPDATA%`) admits the user, the administrators and
/// the system alone. The mode asked for is not applied.
pub(crate) trait Modes {
    fn unix_mode(&mut self, mode: u32) -> &mut Self;
}

impl Modes for std::fs::DirBuilder {
    fn unix_mode(&mut self, _mode: u32) -> &mut Self {
        self
    }
}

impl Modes for std::fs::OpenOptions {
    fn unix_mode(&mut self, _mode: u32) -> &mut Self {
        self
    }
}

impl Modes for cap_std::fs::DirBuilder {
    fn unix_mode(&mut self, _mode: u32) -> &mut Self {
        self
    }
}

impl Modes for cap_std::fs::OpenOptions {
    fn unix_mode(&mut self, _mode: u32) -> &mut Self {
        self
    }
}

/// Opens files that may not be what their names promise. The file system holds no FIFOs or
/// terminals on Windows (pipes and devices have names of their own, which confinement
/// refuses), so an open never blocks; with [`Follow::NoLinks`] a reparse point at the last
/// name (a symbolic link, a junction) is opened itself (`FILE_FLAG_OPEN_REPARSE_POINT`), which
/// the caller refuses as not a regular file.
pub(crate) trait Careful {
    fn careful(&mut self, follow: Follow) -> &mut Self;

    /// [`Self::careful`], for a read that may open a folder: Windows opens one only with
    /// `FILE_FLAG_BACKUP_SEMANTICS`.
    fn careful_entry(&mut self, follow: Follow) -> &mut Self;
}

fn careful_flags(follow: Follow) -> u32 {
    if follow == Follow::NoLinks { FILE_FLAG_OPEN_REPARSE_POINT } else { 0 }
}

impl Careful for std::fs::OpenOptions {
    fn careful(&mut self, follow: Follow) -> &mut Self {
        self.custom_flags(careful_flags(follow))
    }

    fn careful_entry(&mut self, follow: Follow) -> &mut Self {
        self.custom_flags(careful_flags(follow) | FILE_FLAG_BACKUP_SEMANTICS)
    }
}

impl Careful for cap_std::fs::OpenOptions {
    fn careful(&mut self, follow: Follow) -> &mut Self {
        // cap-std opens the last name without following it itself when told not to follow;
        // what it follows, it follows beneath its directory.
        cap_std::fs::OpenOptionsExt::custom_flags(self, careful_flags(follow))
    }

    fn careful_entry(&mut self, follow: Follow) -> &mut Self {
        cap_std::fs::OpenOptionsExt::custom_flags(self, careful_flags(follow) | FILE_FLAG_BACKUP_SEMANTICS)
    }
}

/// The information Windows keeps about an open file, by its handle.
fn by_handle(file: &File) -> io::Result<BY_HANDLE_FILE_INFORMATION> {
    // SAFETY: a plain-data struct, all zeroes valid.
    let mut info: BY_HANDLE_FILE_INFORMATION = unsafe { std::mem::zeroed() };
    // SAFETY: the file is open for the life of the call.
    if unsafe { GetFileInformationByHandle(file.as_raw_handle(), &raw mut info) } == FALSE {
        return Err(io::Error::last_os_error());
    }
    Ok(info)
}

/// The identity of the file at `path` (after links): volume serial, file index, length, last
/// write and change times.
pub(crate) fn identity(path: &Path) -> io::Result<Identity> {
    let file = File::open(path)?;
    let info = by_handle(&file)?;
    // SAFETY: a plain-data struct, all zeroes valid.
    let mut basic: FILE_BASIC_INFO = unsafe { std::mem::zeroed() };
    // SAFETY: the file is open; the struct is the one this information class names.
    let got = unsafe {
        GetFileInformationByHandleEx(
            file.as_raw_handle(),
            FileBasicInfo,
            (&raw mut basic).cast::<c_void>(),
            size_of_u32::<FILE_BASIC_INFO>(),
        )
    };
    if got == FALSE {
        return Err(io::Error::last_os_error());
    }
    Ok(Identity {
        volume: u64::from(info.dwVolumeSerialNumber),
        index: u64::from(info.nFileIndexHigh) << 32 | u64::from(info.nFileIndexLow),
        len: u64::from(info.nFileSizeHigh) << 32 | u64::from(info.nFileSizeLow),
        modified_ns: unix_nanoseconds(filetime(info.ftLastWriteTime)),
        changed_ns: unix_nanoseconds(basic.ChangeTime),
    })
}

fn filetime(time: FILETIME) -> i64 {
    (u64::from(time.dwHighDateTime) << 32 | u64::from(time.dwLowDateTime)).cast_signed()
}

/// A Windows file time (100 ns since 1601) in nanoseconds since the Unix epoch, saturating.
fn unix_nanoseconds(ticks: i64) -> i64 {
    /// 100 ns ticks from 1601-01-01 to 1970-01-01.
    const UNIX_EPOCH_TICKS: i64 = 116_444_736_000_000_000;
    ticks.saturating_sub(UNIX_EPOCH_TICKS).saturating_mul(100)
}

/// Reads into `buffer` from the file at `offset`. Windows moves the file's position too; the
/// files read this way are only ever read at an offset.
#[cfg(hyperlight)]
pub(crate) fn read_at(file: &File, buffer: &mut [u8], offset: u64) -> io::Result<usize> {
    std::os::windows::fs::FileExt::seek_read(file, buffer, offset)
}

/// Gives the `len` bytes of zeros at `start` back to the file system, the file's length
/// unchanged: the file is made sparse and the range zeroed, which deallocates it. `false`
/// where the volume has no sparse files (FAT).
#[cfg(hyperlight)]
pub(crate) fn punch_hole(file: &File, start: u64, len: u64) -> io::Result<bool> {
    let control = |code: u32, input: *const c_void, size: u32| {
        let mut returned = 0_u32;
        // SAFETY: the file is open for the life of the call; `input` points at `size` bytes
        // that outlive it; no output buffer.
        let done = unsafe {
            DeviceIoControl(
                file.as_raw_handle(),
                code,
                input,
                size,
                std::ptr::null_mut(),
                0,
                &raw mut returned,
                std::ptr::null_mut(),
            )
        };
        if done == FALSE { Err(io::Error::last_os_error()) } else { Ok(()) }
    };
    match control(FSCTL_SET_SPARSE, std::ptr::null(), 0) {
        Ok(()) => {}
        Err(err) if err.raw_os_error() == Some(ERROR_INVALID_FUNCTION.cast_signed()) => return Ok(false),
        Err(err) => return Err(err),
    }
    let end = start.saturating_add(len);
    let range = FILE_ZERO_DATA_INFORMATION { FileOffset: start.cast_signed(), BeyondFinalZero: end.cast_signed() };
    control(FSCTL_SET_ZERO_DATA, (&raw const range).cast(), size_of_u32::<FILE_ZERO_DATA_INFORMATION>())?;
    Ok(true)
}

/// Whether an open failed because of a link: a name that cannot be resolved (a loop of
/// reparse points), or a reparse point where none may be followed.
#[cfg(hyperlight)]
pub(crate) fn is_link_loop(err: &io::Error) -> bool {
    err.raw_os_error()
        .is_some_and(|code| [ERROR_CANT_RESOLVE_FILENAME, ERROR_STOPPED_ON_SYMLINK].contains(&code.cast_unsigned()))
}

/// What names this boot of Windows: when it started, in seconds since the Unix epoch, rounded
/// to a minute so that two processes reading the clock and the time since boot a moment apart
/// agree. A clock set far enough between two reads names another boot: what is kept for the
/// boot is only made again.
#[cfg(hyperlight)]
pub(crate) fn boot_id() -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    // SAFETY: no arguments; milliseconds since the system started.
    let up = std::time::Duration::from_millis(unsafe { GetTickCount64() });
    let started = now.saturating_sub(up).as_secs();
    format!("windows-{}", (started + 30) / 60 * 60)
}

/// Whether Windows has the library `name` in its system folder, which is then loaded (and
/// stays loaded): hyperlight-host's calls into `winhvplatform.dll` load it when first made,
/// and one made where it is missing ends the process.
#[cfg(hyperlight)]
pub(crate) fn has_system_library(name: &str) -> bool {
    let wide: Vec<u16> = name.encode_utf16().chain([0]).collect();
    // SAFETY: a NUL-terminated name; only the system folder is searched.
    let module = unsafe { LoadLibraryExW(wide.as_ptr(), std::ptr::null_mut(), LOAD_LIBRARY_SEARCH_SYSTEM32) };
    !module.is_null()
}

/// [`super::below`]: component by component, each compared by [`component_key`].
pub(crate) fn below(path: &Path, dir: &Path) -> Option<std::path::PathBuf> {
    let mut rest = path.components();
    for part in dir.components() {
        if component_key(rest.next()?) != component_key(part) {
            return None;
        }
    }
    Some(rest.as_path().to_path_buf())
}

/// What one component of a path compares by: a drive by its letter in upper case, with or
/// without `\\?\`; a share by server and share without case, with or without `\\?\UNC`; a
/// name without case (Unicode lower case; a name that is not Unicode as it is).
fn component_key(component: std::path::Component<'_>) -> std::ffi::OsString {
    use std::path::{Component, Prefix};
    let lower = |text: &std::ffi::OsStr| match text.to_str() {
        Some(text) => std::ffi::OsString::from(text.to_lowercase()),
        None => text.to_os_string(),
    };
    match component {
        Component::Prefix(prefix) => match prefix.kind() {
            Prefix::Disk(letter) | Prefix::VerbatimDisk(letter) => {
                std::ffi::OsString::from(format!("{}:", char::from(letter).to_ascii_uppercase()))
            }
            Prefix::UNC(server, share) | Prefix::VerbatimUNC(server, share) => {
                let mut key = std::ffi::OsString::from(r"\\");
                key.push(lower(server));
                key.push(r"\");
                key.push(lower(share));
                key
            }
            Prefix::Verbatim(_) | Prefix::DeviceNS(_) => lower(prefix.as_os_str()),
        },
        other => lower(other.as_os_str()),
    }
}

/// How many names the open file has.
pub(crate) fn link_count(file: &File) -> io::Result<u64> {
    Ok(u64::from(by_handle(file)?.nNumberOfLinks))
}

/// Makes the folder `path` (and its parents) when missing, and makes sure it is a folder of
/// this user, not a link: its owner is the SID this process runs as. Who else may read it is
/// what its ACL says, inherited from the user's profile.
pub(crate) fn private_dir(path: &Path) -> io::Result<()> {
    std::fs::DirBuilder::new().recursive(true).create(path)?;
    let meta = std::fs::symlink_metadata(path)?;
    if !meta.is_dir() || meta.file_type().is_symlink() {
        return Err(io::Error::other(format!("`{}` is not a directory", path.display())));
    }
    let dir = std::fs::OpenOptions::new()
        .access_mode(READ_CONTROL)
        .custom_flags(FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT)
        .open(path)?;
    if !owned_by_this_user(&dir)? {
        return Err(io::Error::other(format!("`{}` belongs to another user", path.display())));
    }
    Ok(())
}

/// Whether the open file's owner is the user this process runs as.
fn owned_by_this_user(file: &File) -> io::Result<bool> {
    let mut owner: PSID = std::ptr::null_mut();
    let mut descriptor: PSECURITY_DESCRIPTOR = std::ptr::null_mut();
    // SAFETY: the file is open with READ_CONTROL; the owner points into `descriptor`, which
    // is freed below.
    let status = unsafe {
        GetSecurityInfo(
            file.as_raw_handle(),
            SE_FILE_OBJECT,
            OWNER_SECURITY_INFORMATION,
            &raw mut owner,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            &raw mut descriptor,
        )
    };
    if status != 0 {
        return Err(io::Error::from_raw_os_error(status.cast_signed()));
    }
    let same = this_user(|user| {
        // SAFETY: both SIDs are valid while their buffers live.
        unsafe { EqualSid(owner, user) != FALSE }
    });
    // SAFETY: the descriptor was allocated by `GetSecurityInfo` for us to free.
    unsafe { LocalFree(descriptor) };
    same
}

/// Calls `with` on the SID of the user this process runs as.
fn this_user<T>(with: impl FnOnce(PSID) -> T) -> io::Result<T> {
    let mut token: HANDLE = std::ptr::null_mut();
    // SAFETY: the current process's pseudo-handle; the token is closed by `Owned`.
    if unsafe { OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &raw mut token) } == FALSE {
        return Err(io::Error::last_os_error());
    }
    let token = Owned(token);
    let mut needed = 0_u32;
    // SAFETY: asks for the size only.
    unsafe { GetTokenInformation(token.0, TokenUser, std::ptr::null_mut(), 0, &raw mut needed) };
    // A buffer of u64s, aligned for the TOKEN_USER at its start.
    let mut buffer = vec![0_u64; usize::try_from(needed).unwrap_or(0).div_ceil(8).max(1)];
    // SAFETY: the buffer holds `needed` bytes.
    let got = unsafe {
        GetTokenInformation(token.0, TokenUser, buffer.as_mut_ptr().cast::<c_void>(), needed, &raw mut needed)
    };
    if got == FALSE {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the buffer now starts with a TOKEN_USER whose SID points into the buffer.
    let user = unsafe { &*buffer.as_ptr().cast::<TOKEN_USER>() };
    Ok(with(user.User.Sid))
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    #[test]
    fn a_folder_holds_its_paths_in_every_canonical_spelling() {
        let below = |path: &str, dir: &str| super::below(Path::new(path), Path::new(dir));
        let dir = r"C:\Users\me\repo";
        for (path, rest) in [
            (r"C:\Users\me\repo\aux\sh.exe", r"aux\sh.exe"),
            (r"\\?\C:\Users\me\repo\aux\sh.exe", r"aux\sh.exe"),
            (r"\\?\c:\users\ME\Repo\bin", "bin"),
            (r"c:\USERS\me\REPO", ""),
            (r"C:/Users/me/repo/x", "x"),
        ] {
            assert_eq!(below(path, dir), Some(PathBuf::from(rest)), "{path}");
            assert_eq!(below(path, &format!(r"\\?\{dir}")), Some(PathBuf::from(rest)), "{path}, the folder verbatim");
        }
        for path in [r"C:\Users\me\repo2\x", r"D:\Users\me\repo\x", r"C:\Users\me", r"\\?\D:\Users\me\repo", "repo"] {
            assert_eq!(below(path, dir), None, "{path}");
        }
        let share = r"\\Server\Share\repo";
        assert_eq!(below(r"\\?\UNC\server\share\REPO\x", share), Some(PathBuf::from("x")));
        assert_eq!(below(r"\\server\other\repo\x", share), None);
    }

    #[test]
    fn an_ntstatus_is_named_and_a_plain_code_is_a_status() {
        use std::os::windows::process::ExitStatusExt as _;
        assert_eq!(describe_exit(ExitStatus::from_raw(3)), "exited with status 3");
        assert_eq!(describe_exit(ExitStatus::from_raw(0xC000_0005)), "ended with 0xC0000005 (an access violation)");
        assert_eq!(describe_exit(ExitStatus::from_raw(0xC000_0001)), "ended with 0xC0000001");
        assert_eq!(returncode(ExitStatus::from_raw(0xC000_013A)), 0xC000_013A);
    }

    #[test]
    fn file_times_count_from_the_unix_epoch() {
        assert_eq!(unix_nanoseconds(116_444_736_000_000_000), 0);
        assert_eq!(unix_nanoseconds(116_444_736_000_000_001), 100);
    }

    #[test]
    fn a_private_dir_is_made_and_owned_by_this_user() {
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path().join("a/b");
        private_dir(&dir).unwrap();
        assert!(dir.is_dir());
        std::fs::write(temp.path().join("file"), "x").unwrap();
        assert!(private_dir(&temp.path().join("file")).is_err());
    }

    #[test]
    fn a_file_identity_changes_with_its_contents_and_not_by_reading() {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("f");
        std::fs::write(&path, "one").unwrap();
        let first = identity(&path).unwrap();
        let _ = std::fs::read(&path).unwrap();
        assert_eq!(identity(&path).unwrap(), first);
        std::fs::write(temp.path().join("g"), "one").unwrap();
        let other = identity(&temp.path().join("g")).unwrap();
        assert_ne!((other.volume, other.index), (first.volume, first.index));
        assert_eq!(link_count(&File::open(&path).unwrap()).unwrap(), 1);
    }
}
