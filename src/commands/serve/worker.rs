//! A session's worker, as the server drives it: a `codeact run --mcp-worker` process that keeps
//! the session's interpreter in memory from one call to the next (`crate::commands::worker`).
//!
//! The worker is started at its session's first call and handed each program the call holding
//! the session's turn runs ([`super::handoff::frame_for_worker`]). At the end of each run it
//! writes the run's end line on stderr (what came on stderr before it is codeact's warnings
//! for that run), then reports the run as a `--mcp-result` run does, on stdout. Then it saves
//! the state beside the session's file and says so on stdout, `{"saved": true}`; the call is
//! answered first, and still holds the session's turn until the server has put that state in
//! place ([`settle`]).
//! So nothing ends the worker, and no other call loads the state, between a run's answer and
//! its save; and a run stopped before its report was read never has its state put in place,
//! whatever the worker saved.
//!
//! A worker that ended (its run crashed, passed its deadline or its memory limit, or was
//! stopped) is started again at the next call, and loads what the last run that ended saved. A
//! worker that does not say a run ended, or that sends more than a report may take, is stopped.

use std::ffi::OsString;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt as _, AsyncRead, AsyncReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::child::{self, Failed, Launch, OVERDUE, Request, RunEnded, STDERR_KEPT};
use super::handoff::{self, Settings};
use crate::sandbox::Capture;
use crate::spawn::{Group, Spawn as _};

/// How long a worker's end line may come after its report: it comes before it, unless the
/// report was its watchdog's, after which the worker ends.
const END_LINE_WAIT: Duration = Duration::from_secs(10);

/// How long a worker may take to save a run's state: a state near the largest that loads
/// again (1 GiB) takes seconds.
const SAVE_WAIT: Duration = Duration::from_mins(1);

/// A session's worker process.
#[derive(Debug)]
pub(crate) struct Worker {
    child: Child,
    /// Its process group: dropped, it is killed.
    group: Group,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    stderr: Arc<Stderr>,
    /// Whether it is saving the state of a run it reported, which [`settle`] puts in place.
    saving: bool,
}

/// What a worker wrote on stderr that no run has taken.
#[derive(Debug, Default)]
struct Stderr {
    said: Mutex<Said>,
    changed: Notify,
}

#[derive(Debug, Default)]
struct Said {
    text: Vec<u8>,
    /// Whether stderr has closed: nothing more comes.
    closed: bool,
}

impl Worker {
    /// Starts a worker for the session `session` names (`--session ID --sessions-dir DIR`).
    fn start(launch: &Launch, session: &[OsString]) -> Result<Self, Failed> {
        let mut command = child::command(launch);
        command.arg("--mcp-worker").args(session).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        command.kill_on_drop(true);
        let (mut process, group) = command
            .spawn_in_group()
            .map_err(|err| Failed::NoReport(format!("could not start `{}`: {err}", launch.program.display())))?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (process.stdin.take(), process.stdout.take(), process.stderr.take())
        else {
            return Err(Failed::NoReport("the session's pipes could not be opened".into()));
        };
        let kept = Arc::new(Stderr::default());
        tokio::spawn(read_stderr(stderr, Arc::clone(&kept)));
        Ok(Self { child: process, group, stdin, stdout: BufReader::new(stdout), stderr: kept, saving: false })
    }

    /// Whether the process has ended.
    pub(super) fn ended(&mut self) -> bool {
        !matches!(self.child.try_wait(), Ok(None))
    }

    /// Whether it is saving the state of a run it reported.
    pub(super) fn saving(&self) -> bool {
        self.saving
    }
}

impl Stderr {
    fn said(&self) -> std::sync::MutexGuard<'_, Said> {
        self.said.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits for the end line `end` on stderr; the last [`STDERR_KEPT`] bytes of what came
    /// before it, as a run that is a process of its own keeps them, and whether it came (it does
    /// not when the worker ends).
    async fn until_end_line(&self, end: &str) -> (String, bool) {
        let line = format!("\n{end}\n");
        let wait = tokio::time::sleep(END_LINE_WAIT);
        tokio::pin!(wait);
        loop {
            let notified = self.changed.notified();
            {
                let Said { text, closed } = &mut *self.said();
                if let Some(at) = text.windows(line.len()).position(|window| window == line.as_bytes()) {
                    let said = child::tail_of(&text[..at], STDERR_KEPT);
                    text.drain(..at + line.len());
                    return (said, true);
                }
                if *closed {
                    return (child::tail_of(&std::mem::take(text), STDERR_KEPT), false);
                }
            }
            tokio::select! {
                () = notified => {}
                () = &mut wait => return (child::tail_of(&std::mem::take(&mut self.said().text), STDERR_KEPT), false),
            }
        }
    }
}

/// Keeps what `stderr` gives, its last [`STDERR_KEPT`] bytes and more, until it closes.
async fn read_stderr(mut stderr: impl AsyncRead + Unpin, kept: Arc<Stderr>) {
    let mut buffer = vec![0_u8; 8 * 1024];
    loop {
        let read = stderr.read(&mut buffer).await.unwrap_or(0);
        {
            let mut said = kept.said();
            if read == 0 {
                said.closed = true;
            } else {
                said.text.extend_from_slice(&buffer[..read]);
                // Room for the end line after a run's last warnings.
                let most = 4 * STDERR_KEPT;
                if said.text.len() > most {
                    let cut = said.text.len() - most;
                    said.text.drain(..cut);
                }
            }
        }
        kept.changed.notify_one();
        if read == 0 {
            return;
        }
    }
}

/// Runs `request` in the session's worker in `slot`, started first when there is none or it has
/// ended; `session` names the session for a worker that starts. What the program prints is
/// added to `printed` as it prints it; `cancel` stops it, and the worker with it.
pub(super) async fn run(
    launch: &Launch,
    request: &Request,
    session: &[OsString],
    slot: &mut Option<Worker>,
    cancel: &CancellationToken,
    printed: Arc<Mutex<Capture>>,
) -> Result<RunEnded, Failed> {
    if slot.as_mut().is_some_and(Worker::ended) {
        *slot = None;
    }
    let worker = match slot {
        Some(worker) => worker,
        None => slot.insert(Worker::start(launch, session)?),
    };
    let end = crate::digest::nonce();
    let settings = Settings { timeout: request.timeout.as_secs_f64(), read_only: request.read_only, end: end.clone() };
    let framed = handoff::frame_for_worker(&settings, &request.code);
    let exchanged = {
        let exchange = async {
            // A worker that cannot be handed the program has ended: it sends no report.
            if worker.stdin.write_all(&framed).await.is_err() {
                return Ok(Vec::new());
            }
            child::read_report(&mut worker.stdout, launch.max_report, &printed).await
        };
        tokio::select! {
            report = exchange => Exchanged::Report(report),
            // Stopped before its report was read, the run did not end: what its worker may
            // have saved since is never put in place.
            () = cancel.cancelled() => Exchanged::Cancelled,
            () = tokio::time::sleep(request.timeout + OVERDUE) => Exchanged::Overdue,
        }
    };
    let report = match exchanged {
        Exchanged::Report(report) => report,
        Exchanged::Cancelled => {
            stop(slot).await;
            return Err(Failed::Cancelled);
        }
        Exchanged::Overdue => {
            stop(slot).await;
            return Err(Failed::overdue());
        }
    };
    let report = match report {
        Ok(report) if !report.is_empty() => report,
        Ok(_) => {
            // The worker ended without a report: it crashed, or could not start.
            let (said, _) = worker.stderr.until_end_line(&end).await;
            let status = worker.child.wait().await.map_or_else(|err| err.to_string(), |status| status.to_string());
            *slot = None;
            let said = said.trim();
            return Err(Failed::NoReport(if said.is_empty() {
                format!("the session ended ({status}) without a report; its next call starts it again")
            } else {
                said.to_owned()
            }));
        }
        Err(()) => {
            stop(slot).await;
            return Err(Failed::report_over(launch.max_report));
        }
    };
    let (warnings, goes_on) = worker.stderr.until_end_line(&end).await;
    if !goes_on {
        // Its watchdog reported the run and ends it.
        stop(slot).await;
    }
    let ended = child::ended_run(&report, &warnings, || "the session sent what is not a report".to_owned());
    match slot {
        Some(worker) if ended.is_ok() => worker.saving = true,
        _ => stop(slot).await,
    }
    ended
}

/// Puts in place the state the worker in `slot` saved after the run it last reported, if it is
/// saving one, as the session `id`'s in `folder`; a worker that does not say it saved in
/// [`SAVE_WAIT`], or says what is not that, is stopped, and the session goes on from its save
/// before. Called by the call that ran it, after its answer, while it holds the session's turn.
pub(super) async fn settle(slot: &mut Option<Worker>, folder: &Path, id: &str) {
    let Some(worker) = slot.as_mut().filter(|worker| worker.saving) else { return };
    worker.saving = false;
    let mut line = Vec::new();
    let mut said = (&mut worker.stdout).take(64);
    let saved = match tokio::time::timeout(SAVE_WAIT, said.read_until(b'\n', &mut line)).await {
        Ok(Ok(_)) => serde_json::from_slice::<serde_json::Value>(&line).ok().and_then(|said| said["saved"].as_bool()),
        Ok(Err(_)) | Err(_) => None,
    };
    match saved {
        Some(true) => {
            if let Err(err) = crate::session::commit(folder, id) {
                crate::output::warning(&format!("a session's state could not be put in place: {err}"));
            }
        }
        // The worker said why, with the next run's warnings.
        Some(false) => {
            let _ = std::fs::remove_file(crate::session::pending(folder, id));
        }
        None => stop(slot).await,
    }
}

/// How an exchange with a worker ended.
enum Exchanged {
    /// With its report ([`child::read_report`]): the report line, empty when the worker ended
    /// first; `Err` when it was too long.
    Report(Result<Vec<u8>, ()>),
    /// The call was cancelled before the run's report was read.
    Cancelled,
    /// The run passed its deadline by [`OVERDUE`].
    Overdue,
}

/// Stops the worker in `slot`, if any: SIGTERM, a grace, then SIGKILL to its process group.
async fn stop(slot: &mut Option<Worker>) {
    if let Some(Worker { mut child, group, stdin, .. }) = slot.take() {
        drop(stdin);
        child::stop(&mut child, group).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a worker that wrote `written` on stderr, then closed it, says a run's warnings are.
    async fn warnings_in(written: Vec<u8>, end: &str) -> (String, bool) {
        let stderr = Arc::new(Stderr::default());
        read_stderr(&written[..], Arc::clone(&stderr)).await;
        stderr.until_end_line(end).await
    }

    #[tokio::test]
    async fn a_runs_warnings_end_at_its_own_end_line_and_keep_their_last_bytes() {
        let end = "0123456789abcdef0123456789abcdef";
        let (said, came) = warnings_in(format!("warning: one\n\n{end}\nwarning: next run's\n").into_bytes(), end).await;
        assert_eq!((said.as_str(), came), ("warning: one\n", true));
        // Another run's end line, or one cut short, is text like any other.
        let other = format!("\nffffffffffffffffffffffffffffffff\n\n{}\n", &end[..31]);
        let (said, came) = warnings_in(other.clone().into_bytes(), end).await;
        assert_eq!((said, came), (other, false));
        // A flood of warnings keeps its end, as a run's own process keeps it.
        let mut flood = vec![b'x'; 10 * STDERR_KEPT];
        flood.extend_from_slice(format!("last\n\n{end}\n").as_bytes());
        let (said, came) = warnings_in(flood, end).await;
        assert!(came);
        assert_eq!(said.len(), STDERR_KEPT);
        assert!(said.ends_with("xlast\n"), "{}", &said[said.len() - 10..]);
    }
}
