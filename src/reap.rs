//! The process groups codeact started (MCP servers, `bash` commands, served runs), so that none
//! outlives codeact: `spawn` starts every group through [`start`], which notes it, and forgets
//! it once it is gone, and [`terminate_all`] ends every group still noted — on SIGTERM, SIGINT or
//! SIGHUP to codeact ([`on_signals`]), and before the watchdog ends a run that cannot be stopped.
//!
//! A group being started while codeact begins to end is waited for and ended with the others,
//! and none starts after that: codeact cannot exit between a child's start and its noting.

use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError, RwLock};
use std::time::{Duration, Instant};

use crate::platform::{self, Stop};

/// How long a group gets to end on SIGTERM before it is killed.
pub(crate) const TERM_GRACE: Duration = Duration::from_secs(1);

/// The grace [`terminate_all`] gives, in milliseconds: [`TERM_GRACE`] unless [`set_grace`]
/// changed it.
static GRACE_MS: AtomicU64 = AtomicU64::new(1000);

/// The groups codeact started and has not yet seen ended.
static REGISTRY: Registry = Registry::new();

/// Set once a signal [`on_signals`] handles has come: codeact is to die of it.
static SIGNALLED: AtomicBool = AtomicBool::new(false);

/// Noted process groups, and whether codeact has begun to end them all.
struct Registry {
    /// Whether [`Registry::terminate_all`] has begun (no group is started from then on): read
    /// while a group is started and noted, written to begin ending, so that no group is
    /// between its start and its noting when the groups are collected to be ended.
    ending: RwLock<bool>,
    /// Held through a whole [`Registry::terminate_all`]: a second caller (the watchdog and a
    /// signal, both ending codeact) returns only once the groups the first took are killed.
    ends: Mutex<()>,
    leaders: Mutex<Vec<u32>>,
}

impl Registry {
    const fn new() -> Self {
        Self { ending: RwLock::new(false), ends: Mutex::new(()), leaders: Mutex::new(Vec::new()) }
    }

    fn leaders(&self) -> MutexGuard<'_, Vec<u32>> {
        self.leaders.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn start<C>(&self, start: impl FnOnce() -> io::Result<(C, u32)>) -> io::Result<(C, u32)> {
        let ending = self.ending.read().unwrap_or_else(PoisonError::into_inner);
        if *ending {
            return Err(io::Error::other("codeact is ending: no new command is started"));
        }
        let (child, pid) = start()?;
        self.leaders().push(pid);
        Ok((child, pid))
    }

    fn forget(&self, pid: u32) {
        self.leaders().retain(|leader| *leader != pid);
    }

    fn terminate_all(&self, grace: Duration) {
        let _one_end = self.ends.lock().unwrap_or_else(PoisonError::into_inner);
        let pids: Vec<u32> = {
            *self.ending.write().unwrap_or_else(PoisonError::into_inner) = true;
            self.leaders().drain(..).collect()
        };
        for &pid in &pids {
            platform::stop_group(pid, Stop::Ask);
        }
        let until = Instant::now() + grace;
        while Instant::now() < until && pids.iter().any(|&pid| platform::group_alive(pid)) {
            std::thread::sleep(Duration::from_millis(20));
        }
        for &pid in &pids {
            platform::stop_group(pid, Stop::Kill);
        }
    }
}

/// Starts a process group with `start`, which gives the started child and the pid of the
/// group's leader, and notes the group to end it if codeact has to stop early. Once codeact has
/// begun to end ([`terminate_all`]), nothing is started and this is an error.
pub(crate) fn start<C>(start: impl FnOnce() -> io::Result<(C, u32)>) -> io::Result<(C, u32)> {
    REGISTRY.start(start)
}

/// Stops noting the group led by `pid`: it has been ended.
pub(crate) fn forget(pid: u32) {
    REGISTRY.forget(pid);
}

/// Ends every noted group: SIGTERM, a moment to exit, then SIGKILL for what is left. Only
/// called as codeact ends: a group being started is waited for, and none is started after.
/// Where a signal is ending codeact already, this waits for it to (codeact dies of the signal,
/// as [`wait_for_signal_exit`] says), so that the caller's own exit does not cut it short.
pub(crate) fn terminate_all() {
    end_groups();
    wait_for_signal_exit();
}

fn end_groups() {
    REGISTRY.terminate_all(Duration::from_millis(GRACE_MS.load(Ordering::SeqCst)));
}

/// Gives the groups `grace` to end on SIGTERM from now on: longer for groups that end groups of
/// their own (a served run needs its [`TERM_GRACE`] to end its tools' groups first).
pub(crate) fn set_grace(grace: Duration) {
    GRACE_MS.store(u64::try_from(grace.as_millis()).unwrap_or(u64::MAX), Ordering::SeqCst);
}

/// From now on, SIGTERM, SIGINT and SIGHUP (Ctrl-C, Ctrl-Break and the console's close on
/// Windows) end every noted group before codeact dies of the signal as it would have (its exit
/// status still says which signal).
pub(crate) fn on_signals() {
    platform::on_stop_signals(stopped);
}

/// Folders of codeact's own that a stop signal removes too ([`remove_on_stop`]).
static FOLDERS: Mutex<Vec<std::path::PathBuf>> = Mutex::new(Vec::new());

/// Has a stop signal remove `folder` before codeact dies of it (a folder it would have removed
/// as it ended).
pub(crate) fn remove_on_stop(folder: std::path::PathBuf) {
    FOLDERS.lock().unwrap_or_else(PoisonError::into_inner).push(folder);
}

/// What a stop signal does before codeact dies of it: notes that it came, ends every group,
/// and removes the folders noted.
fn stopped() {
    SIGNALLED.store(true, Ordering::SeqCst);
    end_groups();
    for folder in FOLDERS.lock().unwrap_or_else(PoisonError::into_inner).drain(..) {
        let _ = std::fs::remove_dir_all(folder);
    }
}

/// Ends codeact as a stop signal would (SIGTERM; Ctrl-Break on Windows): every noted group is
/// ended first, and codeact's exit status says it was stopped.
pub(crate) fn end_as_if_stopped() -> ! {
    #[cfg(unix)]
    {
        // The handler [`on_signals`] started ends the groups and the process.
        let _ = rustix::process::kill_process(rustix::process::getpid(), rustix::process::Signal::TERM);
        loop {
            std::thread::park();
        }
    }
    #[cfg(windows)]
    {
        stopped();
        platform::exit_stopped()
    }
}

/// Once codeact has been signalled, waits for [`on_signals`] to end the process with the
/// signal's status, so that a program that went on after its commands were ended does not
/// exit as if nothing had happened; returns at once otherwise.
pub(crate) fn wait_for_signal_exit() {
    while SIGNALLED.load(Ordering::SeqCst) {
        std::thread::park_timeout(Duration::from_secs(1));
    }
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use std::os::unix::process::CommandExt as _;
    use std::process::Command;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, mpsc};
    use std::time::Duration;

    use super::*;

    /// codeact may begin to end while a command is between its start and its noting: the end
    /// waits for it and ends it with the others, and nothing starts once the end has begun.
    #[test]
    fn ending_waits_for_a_group_being_started_ends_it_and_starts_no_other() {
        let registry = Arc::new(Registry::new());
        let (started, is_started) = mpsc::channel();
        let (go, may_go) = mpsc::channel::<()>();
        let starting = std::thread::spawn({
            let registry = Arc::clone(&registry);
            move || {
                registry.start(|| {
                    started.send(()).unwrap();
                    may_go.recv().unwrap();
                    let child = Command::new("/bin/sh").args(["-c", "exec sleep 60"]).process_group(0).spawn()?;
                    let pid = child.id();
                    Ok((child, pid))
                })
            }
        });
        is_started.recv().unwrap();
        let ended = Arc::new(AtomicBool::new(false));
        let ending = std::thread::spawn({
            let (registry, ended) = (Arc::clone(&registry), Arc::clone(&ended));
            move || {
                registry.terminate_all(Duration::from_secs(1));
                ended.store(true, Ordering::SeqCst);
            }
        });
        std::thread::sleep(Duration::from_millis(200));
        assert!(!ended.load(Ordering::SeqCst), "codeact ended while a command was being started");
        go.send(()).unwrap();
        let (mut child, _) = starting.join().unwrap().unwrap();
        ending.join().unwrap();
        assert!(!child.wait().unwrap().success(), "the command started as codeact ended was left running");
        let refused = registry.start(|| -> io::Result<((), u32)> { panic!("a command started as codeact ended") });
        assert!(refused.is_err());
    }

    /// The watchdog and a signal may both end codeact: the second to come returns only once
    /// the groups the first took are killed, not at once with none left to take.
    #[test]
    fn a_second_end_returns_only_once_the_first_has_killed_its_groups() {
        let registry = Arc::new(Registry::new());
        let (mut child, _) = registry
            .start(|| {
                let child =
                    Command::new("/bin/sh").args(["-c", "trap '' TERM; exec sleep 60"]).process_group(0).spawn()?;
                let pid = child.id();
                Ok((child, pid))
            })
            .unwrap();
        let first = std::thread::spawn({
            let registry = Arc::clone(&registry);
            move || registry.terminate_all(Duration::from_secs(3))
        });
        while !*registry.ending.read().unwrap() {
            std::thread::sleep(Duration::from_millis(5));
        }
        registry.terminate_all(Duration::from_secs(3));
        let until = std::time::Instant::now() + Duration::from_secs(2);
        while child.try_wait().unwrap().is_none() {
            assert!(std::time::Instant::now() < until, "the second end returned while the first's group ran");
            std::thread::sleep(Duration::from_millis(10));
        }
        first.join().unwrap();
    }
}
