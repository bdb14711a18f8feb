//! Starting a child in a process group of its own, the one way codeact starts the processes a
//! tool, an MCP server or a served run may leave children behind: [`Spawn::spawn_in_group`]
//! makes the child the leader of a new group, started and noted through [`reap::start`] (which
//! ends every noted group if codeact is stopped early, and starts none once it is ending), and
//! returns a [`Group`] that kills it when dropped.
//!
//! `std` and `tokio` commands are both started here, the tokio child also killed when dropped.
//! What a caller does with the child's pipes, and how long it waits, stays with the caller.

use std::io;
use std::os::unix::process::CommandExt as _;

use rustix::process::Signal;

use crate::reap;

/// A command that can start its child in a process group of its own.
pub(crate) trait Spawn {
    /// The started child.
    type Child;

    /// Starts the child as the leader of a new process group, noted with [`reap`] until the
    /// returned [`Group`] is done with.
    fn spawn_in_group(&mut self) -> io::Result<(Self::Child, Group)>;
}

impl Spawn for std::process::Command {
    type Child = std::process::Child;

    fn spawn_in_group(&mut self) -> io::Result<(Self::Child, Group)> {
        let (child, pid) = reap::start(|| {
            let child = self.process_group(0).spawn()?;
            let pid = child.id();
            Ok((child, pid))
        })?;
        Ok((child, Group::noted(pid)))
    }
}

impl Spawn for tokio::process::Command {
    type Child = tokio::process::Child;

    fn spawn_in_group(&mut self) -> io::Result<(Self::Child, Group)> {
        let (child, pid) = reap::start(|| {
            let child = self.process_group(0).kill_on_drop(true).spawn()?;
            // A child just started has its id until it is waited for.
            let pid = child.id().ok_or_else(|| io::Error::other("the process exited before it could be noted"))?;
            Ok((child, pid))
        })?;
        Ok((child, Group::noted(pid)))
    }
}

/// A process group codeact started and noted with [`reap`]. Dropped, it kills what is left of
/// the group and forgets it, unless [`Group::kill`] or [`Group::release`] already has.
#[derive(Debug)]
pub(crate) struct Group {
    pid: u32,
    done: bool,
}

impl Group {
    /// The group led by `pid`, which [`reap::start`] noted.
    fn noted(pid: u32) -> Self {
        Self { pid, done: false }
    }

    /// Sends `signal` to every process of the group.
    pub(crate) fn signal(&self, signal: Signal) {
        reap::signal_group(self.pid, signal);
    }

    /// Kills what is left of the group (SIGKILL) and forgets it: background processes the
    /// leader started end with it.
    pub(crate) fn kill(&mut self) {
        if !self.done {
            self.done = true;
            self.signal(Signal::KILL);
            reap::forget(self.pid);
        }
    }

    /// Kills the group's leader by its pid (SIGKILL), wherever it is: a leader may have moved
    /// itself into another group, out of reach of [`Group::kill`]. Only for a leader not yet
    /// waited for, whose pid cannot have been taken by another process.
    pub(crate) fn kill_leader(&self) {
        if let Some(pid) = i32::try_from(self.pid).ok().and_then(rustix::process::Pid::from_raw) {
            let _ = rustix::process::kill_process(pid, Signal::KILL);
        }
    }

    /// Forgets the group without signalling it: its leader has been waited for, and what it
    /// started is its own to end.
    pub(crate) fn release(mut self) {
        self.done = true;
        reap::forget(self.pid);
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.kill();
    }
}

#[cfg(test)]
mod tests {
    use std::io::{BufRead as _, BufReader};
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    use super::*;

    /// A `/bin/sh` that starts `sleep 60` in the background, says its pid and then runs `rest`.
    fn leaving_a_sleep(rest: &str) -> std::process::Command {
        let mut command = Command::new("/bin/sh");
        command
            .args(["-c", &format!("sleep 60 >/dev/null & echo $!; {rest}")])
            .stdin(Stdio::null())
            .stdout(Stdio::piped());
        command
    }

    /// The pid the shell printed.
    fn said_pid(stdout: impl std::io::Read) -> String {
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).unwrap();
        line.trim().to_owned()
    }

    /// Whether `pid` runs (a zombie, killed and not yet reaped, does not).
    #[cfg(target_os = "linux")]
    fn running(pid: &str) -> bool {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().next()).is_some_and(|state| state != "Z")
    }

    /// Whether `pid` runs (a zombie, killed and not yet reaped, does not), as `ps` shows it
    /// where there is no `/proc`.
    #[cfg(not(target_os = "linux"))]
    fn running(pid: &str) -> bool {
        let out = Command::new("/bin/ps").args(["-o", "stat=", "-p", pid]).output().unwrap();
        String::from_utf8_lossy(&out.stdout).trim().get(..1).is_some_and(|state| state != "Z")
    }

    /// Whether `pid` stops running within a generous while.
    fn stops(pid: &str) -> bool {
        let until = Instant::now() + Duration::from_secs(10);
        while running(pid) {
            if Instant::now() > until {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        true
    }

    #[test]
    fn a_dropped_group_ends_with_what_its_leader_left_running() {
        let (mut child, group) = leaving_a_sleep("wait").spawn_in_group().unwrap();
        let sleep = said_pid(child.stdout.take().unwrap());
        assert!(running(&sleep));
        drop(group);
        assert!(stops(&sleep));
        let _ = child.wait();
    }

    #[tokio::test]
    async fn a_released_group_is_left_running() {
        let mut command = tokio::process::Command::from(leaving_a_sleep("exit 0"));
        let (mut child, group) = command.spawn_in_group().unwrap();
        let pid = child.id().unwrap();
        child.wait().await.unwrap();
        let mut stdout = Vec::new();
        tokio::io::AsyncReadExt::read_to_end(&mut child.stdout.take().unwrap(), &mut stdout).await.unwrap();
        let sleep = said_pid(stdout.as_slice());
        group.release();
        assert!(running(&sleep));
        reap::signal_group(pid, Signal::KILL);
        assert!(stops(&sleep));
    }
}
