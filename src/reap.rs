//! The process groups codeact started (MCP servers, `bash` commands, served runs), so that none
//! outlives codeact: `spawn`, which starts every group, registers it and forgets it once it is
//! gone, and [`terminate_all`] ends every group still registered — on SIGTERM, SIGINT or SIGHUP
//! to codeact ([`on_signals`]), and before the watchdog ends a run that cannot be stopped.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process_group, test_kill_process_group};

/// How long a group gets to end on SIGTERM before it is killed.
pub(crate) const TERM_GRACE: Duration = Duration::from_secs(1);

/// The grace [`terminate_all`] gives, in milliseconds: [`TERM_GRACE`] unless [`set_grace`]
/// changed it.
static GRACE_MS: AtomicU64 = AtomicU64::new(1000);

static GROUPS: Mutex<Vec<i32>> = Mutex::new(Vec::new());

/// Set once a signal [`on_signals`] handles has come: codeact is to die of it.
static SIGNALLED: AtomicBool = AtomicBool::new(false);

/// Set once [`terminate_all`] has begun: codeact is ending, and a group started from then on
/// (the program goes on running while the groups get their grace) is killed as it is noted.
static ENDING: AtomicBool = AtomicBool::new(false);

fn groups() -> std::sync::MutexGuard<'static, Vec<i32>> {
    GROUPS.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Notes the process group led by `pid`, to end it if codeact has to stop early.
pub(crate) fn register(pid: u32) {
    let Ok(id) = i32::try_from(pid) else { return };
    let mut groups = groups();
    if ENDING.load(Ordering::SeqCst) {
        drop(groups);
        signal_group(pid, Signal::KILL);
    } else {
        groups.push(id);
    }
}

/// Stops noting the group led by `pid`: it has been ended.
pub(crate) fn forget(pid: u32) {
    if let Ok(pid) = i32::try_from(pid) {
        groups().retain(|group| *group != pid);
    }
}

/// Sends `signal` to the group led by `pid`; a group that is gone is no error.
pub(crate) fn signal_group(pid: u32, signal: Signal) {
    if let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) {
        let _ = kill_process_group(pid, signal);
    }
}

/// Whether any process of the group led by `pid` is still there.
#[must_use]
pub(crate) fn group_alive(pid: u32) -> bool {
    i32::try_from(pid).ok().and_then(Pid::from_raw).is_some_and(|pid| test_kill_process_group(pid).is_ok())
}

/// Ends every registered group: SIGTERM, a moment to exit, then SIGKILL for what is left. Only
/// called as codeact ends: any group noted after it has begun is killed at once.
pub(crate) fn terminate_all() {
    let pids: Vec<u32> = {
        let mut groups = groups();
        ENDING.store(true, Ordering::SeqCst);
        groups.drain(..).filter_map(|pid| u32::try_from(pid).ok()).collect()
    };
    for &pid in &pids {
        signal_group(pid, Signal::TERM);
    }
    let until = Instant::now() + Duration::from_millis(GRACE_MS.load(Ordering::SeqCst));
    while Instant::now() < until && pids.iter().any(|&pid| group_alive(pid)) {
        std::thread::sleep(Duration::from_millis(20));
    }
    for &pid in &pids {
        signal_group(pid, Signal::KILL);
    }
}

/// Gives the groups `grace` to end on SIGTERM from now on: longer for groups that end groups of
/// their own (a served run needs its [`TERM_GRACE`] to end its tools' groups first).
pub(crate) fn set_grace(grace: Duration) {
    GRACE_MS.store(u64::try_from(grace.as_millis()).unwrap_or(u64::MAX), Ordering::SeqCst);
}

/// From now on, SIGTERM, SIGINT and SIGHUP end every registered group before codeact dies of
/// the signal as it would have (its exit status still says which signal).
pub(crate) fn on_signals() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGTERM, SIGINT, SIGHUP]) else { return };
    std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            SIGNALLED.store(true, Ordering::SeqCst);
            terminate_all();
            let _ = signal_hook::low_level::emulate_default_handler(signal);
            std::process::exit(128 + signal);
        }
    });
}

/// Once codeact has been signalled, waits for [`on_signals`] to end the process with the
/// signal's status, so that a program that went on after its commands were ended does not
/// exit as if nothing had happened; returns at once otherwise.
pub(crate) fn wait_for_signal_exit() {
    while SIGNALLED.load(Ordering::SeqCst) {
        std::thread::park_timeout(Duration::from_secs(1));
    }
}
