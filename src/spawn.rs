//! Starting a child in a process group of its own, the one way codeact starts the processes a
//! tool, an MCP server or a served run may leave children behind: [`Spawn::spawn_in_group`]
//! makes the child the leader of a new group, started and noted through [`reap::start`] (which
//! ends every noted group if codeact is stopped early, and starts none once it is ending), and
//! returns a [`Group`] that kills it when dropped.
//!
//! `std` and `tokio` commands are both started here, the tokio child also killed when dropped.
//! What a caller does with the child's pipes, and how long it waits, stays with the caller.

use std::io;

use crate::platform::{self, Stop};
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
            platform::new_group(self);
            let child = self.spawn()?;
            let pid = child.id();
            #[cfg(windows)]
            platform::adopt(pid, std::os::windows::io::AsRawHandle::as_raw_handle(&child))?;
            Ok((child, pid))
        })?;
        Ok((child, Group::noted(pid)))
    }
}

impl Spawn for tokio::process::Command {
    type Child = tokio::process::Child;

    fn spawn_in_group(&mut self) -> io::Result<(Self::Child, Group)> {
        let (child, pid) = reap::start(|| {
            platform::new_group(self.as_std_mut());
            let child = self.kill_on_drop(true).spawn()?;
            // A child just started has its id until it is waited for.
            let pid = child.id().ok_or_else(|| io::Error::other("the process exited before it could be noted"))?;
            #[cfg(windows)]
            platform::adopt(pid, child.raw_handle().ok_or_else(|| io::Error::other("the process has no handle"))?)?;
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

    /// Asks every process of the group to end, or kills them.
    pub(crate) fn stop(&self, stop: Stop) {
        platform::stop_group(self.pid, stop);
    }

    /// Kills what is left of the group and forgets it: background processes the leader
    /// started end with it.
    pub(crate) fn kill(&mut self) {
        if !self.done {
            self.done = true;
            self.stop(Stop::Kill);
            platform::forget_group(self.pid);
            reap::forget(self.pid);
        }
    }

    /// Kills the group's leader by its pid (SIGKILL), wherever it is: a leader may have moved
    /// itself into another group, out of reach of [`Group::kill`]. Only for a leader not yet
    /// waited for, whose pid cannot have been taken by another process.
    pub(crate) fn kill_leader(&self) {
        platform::kill_leader(self.pid);
    }

    /// Forgets the group without signalling it: its leader has been waited for, and what it
    /// started is its own to end.
    pub(crate) fn release(mut self) {
        self.done = true;
        platform::release_group(self.pid);
        reap::forget(self.pid);
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.kill();
    }
}

#[cfg(test)]
#[cfg(unix)]
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
        platform::stop_group(pid, Stop::Kill);
        assert!(stops(&sleep));
    }
}

#[cfg(test)]
#[cfg(windows)]
mod windows_tests {
    use std::io::{BufRead as _, BufReader, Write as _};
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    use windows_sys::Win32::Foundation::{CloseHandle, WAIT_TIMEOUT};
    use windows_sys::Win32::System::Threading::{OpenProcess, PROCESS_SYNCHRONIZE, WaitForSingleObject};

    use super::*;

    /// This test binary started again as `role`: `sleep` sleeps a minute; `tree` starts a
    /// `sleep` of its own, prints `PID <its pid>` and sleeps.
    fn myself(role: &str) -> Command {
        let mut command = Command::new(std::env::current_exe().unwrap());
        command
            .args(["--exact", "spawn::windows_tests::child_process", "--ignored", "--nocapture", "--test-threads", "1"])
            .env("CODEACT_TEST_CHILD", role)
            .stdin(Stdio::null())
            .stdout(Stdio::piped());
        command
    }

    #[test]
    #[ignore = "the child process of the tests below, run by them"]
    fn child_process() {
        match std::env::var("CODEACT_TEST_CHILD").as_deref() {
            Ok("sleep") => std::thread::sleep(Duration::from_secs(60)),
            Ok("tree") => {
                let mut sleep = myself("sleep").stdout(Stdio::null()).spawn().unwrap();
                let mut out = std::io::stdout();
                writeln!(out, "PID {}", sleep.id()).unwrap();
                out.flush().unwrap();
                std::thread::sleep(Duration::from_secs(60));
                let _ = sleep.wait();
            }
            _ => {}
        }
    }

    /// The pid the child printed.
    fn said_pid(stdout: impl std::io::Read) -> u32 {
        // The test harness may print `test … ... ` before it on the same line.
        let line = BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
            .find_map(|line| line.split_once("PID ").map(|(_, pid)| pid.to_owned()))
            .unwrap();
        line.trim().parse().unwrap()
    }

    #[expect(unsafe_code, reason = "asking Windows whether a process runs")]
    fn running(pid: u32) -> bool {
        // SAFETY: a handle opened to wait on, closed below.
        let process = unsafe { OpenProcess(PROCESS_SYNCHRONIZE, 0, pid) };
        if process.is_null() {
            return false;
        }
        // SAFETY: the handle is open; a zero wait only polls.
        let waiting = unsafe { WaitForSingleObject(process, 0) } == WAIT_TIMEOUT;
        // SAFETY: closed once.
        unsafe { CloseHandle(process) };
        waiting
    }

    fn stops(pid: u32) -> bool {
        let until = Instant::now() + Duration::from_secs(20);
        while running(pid) {
            if Instant::now() > until {
                return false;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        true
    }

    #[test]
    fn a_dropped_group_ends_with_what_its_leader_left_running() {
        let (mut child, group) = myself("tree").spawn_in_group().unwrap();
        let sleep = said_pid(child.stdout.take().unwrap());
        assert!(running(sleep));
        drop(group);
        assert!(stops(sleep), "the grandchild outlived its job");
        let _ = child.wait();
    }

    #[test]
    fn a_released_group_is_left_running_and_a_killed_one_ends() {
        let (mut child, group) = myself("tree").spawn_in_group().unwrap();
        let pid = child.id();
        let sleep = said_pid(child.stdout.take().unwrap());
        platform::kill_leader(pid);
        let _ = child.wait();
        group.release();
        assert!(running(sleep), "a released group's processes go on");
        platform::kill_leader(sleep);
        assert!(stops(sleep));
    }

    #[tokio::test]
    async fn a_tokio_child_is_in_its_job_too() {
        let mut command = tokio::process::Command::from(myself("tree"));
        let (mut child, mut group) = command.spawn_in_group().unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let mut first = vec![0_u8; 4096];
        let mut read = 0;
        let said = |bytes: &[u8]| {
            let text = String::from_utf8_lossy(bytes);
            text.split_once("PID ").is_some_and(|(_, rest)| rest.contains('\n'))
        };
        while !said(&first[..read]) {
            let n = tokio::io::AsyncReadExt::read(&mut stdout, &mut first[read..]).await.unwrap();
            assert!(n > 0, "the child printed no pid");
            read += n;
        }
        let sleep = said_pid(&first[..read]);
        assert!(platform::group_alive(child.id().unwrap()));
        group.kill();
        assert!(stops(sleep));
        let _ = child.wait().await;
    }
}
