//! One `run` call: a `codeact run --mcp-result` process of its own, handed the program on stdin
//! ([`super::handoff`]).
//!
//! A process per call is what makes calls independent: the run's limits (the watchdog that ends
//! a run past its deadline, the memory ceiling of its interpreter), its tool-call budget, its
//! MCP connections and its crash, if it crashes, are its own, and the server outlives them all.
//! The run is exactly `codeact run` with the server's workspace, backend and tools folders, so
//! trust, confinement and limits are those of the command line.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use std::sync::{Arc, Mutex};

use serde_json::Value as Json;
use tokio::io::{AsyncBufRead, AsyncBufReadExt as _, AsyncRead, AsyncReadExt as _, AsyncWriteExt as _};
use tokio::process::Command;
use tokio_util::sync::CancellationToken;

use super::sessions::Turn;
use crate::platform::Stop;
use crate::sandbox::Capture;
use crate::spawn::{Group, Spawn as _};

/// How long a run gets to end on SIGTERM, once cancelled, before its process group is killed.
const TERM_GRACE: Duration = Duration::from_secs(2);

/// How long past its own timeout a run may take before the server kills it: the run's watchdog
/// ends it a second after its deadline, and a guest backend may first compile.
pub(super) const OVERDUE: Duration = Duration::from_mins(2);

/// The most of a run's stderr (codeact's own warnings) kept for the text a model reads.
pub(super) const STDERR_KEPT: usize = 8 * 1024;

/// How to start a run: this binary and the arguments every call shares.
#[derive(Debug, Clone)]
pub(crate) struct Launch {
    pub(crate) program: PathBuf,
    /// `--workspace`, `--backend`, `--tools`: as the server was started.
    pub(crate) args: Vec<OsString>,
    /// The most bytes a run's report may take; a longer one is refused, not read.
    pub(crate) max_report: usize,
}

/// What a finished run reported.
#[derive(Debug)]
pub(crate) struct RunEnded {
    /// The `codeact run --json` object.
    pub(crate) result: Json,
    /// What a model reads: stdout and the last expression, then the program's stderr and its
    /// traceback, then codeact's own warnings.
    pub(crate) text: String,
    /// What `text` has after the program's output: for a run whose output was shown as it was
    /// printed.
    pub(crate) after: String,
    pub(crate) success: bool,
}

/// Why a run has no report.
#[derive(Debug)]
pub(crate) enum Failed {
    /// The client cancelled the call; the run was stopped.
    Cancelled,
    /// The run could not start, or ended without a report (a usage error, an invalid config, a
    /// crash): what it said on stderr.
    NoReport(String),
}

impl Failed {
    /// A run the server killed [`OVERDUE`] past its deadline.
    pub(super) fn overdue() -> Self {
        Self::NoReport(format!("the run did not end {} s past its deadline and was killed", OVERDUE.as_secs()))
    }

    /// A run whose report passed `max` bytes.
    pub(super) fn report_over(max: usize) -> Self {
        Self::NoReport(format!("the run's report was over {} and was not read", crate::limits::format_size(max)))
    }
}

/// What one call asks to run.
#[derive(Debug)]
pub(crate) struct Request {
    pub(crate) code: String,
    /// Checked already.
    pub(crate) timeout: Duration,
    pub(crate) read_only: bool,
}

/// Runs `request` until it ends, in the call's share of its session `turn` if it has one,
/// adding what its program prints, as it prints it, to `printed`; `cancel` stops it.
pub(crate) async fn run(
    launch: &Launch,
    request: &Request,
    turn: Option<&mut Turn>,
    cancel: &CancellationToken,
    printed: Arc<Mutex<Capture>>,
) -> Result<RunEnded, Failed> {
    let session = turn.as_deref().map(Turn::arguments).unwrap_or_default();
    // The call that holds its session's turn runs in the session's worker.
    if let Some(worker) = turn.and_then(Turn::worker) {
        return super::worker::run(launch, request, &session, worker, cancel, printed).await;
    }
    let mut command = command(launch);
    let Request { ref code, timeout, read_only, .. } = *request;
    command.arg("--mcp-result").args(&session);
    command.arg("--timeout").arg(timeout.as_secs_f64().to_string());
    // The server's own `--read-only` is among the shared arguments already.
    if read_only && !launch.args.iter().any(|arg| arg == "--read-only") {
        command.arg("--read-only");
    }
    command.arg("-").stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let (mut child, group) = command
        .spawn_in_group()
        .map_err(|err| Failed::NoReport(format!("could not start `{}`: {err}", launch.program.display())))?;

    let (Some(mut stdin), Some(stdout), Some(stderr)) = (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err(Failed::NoReport("the run's pipes could not be opened".into()));
    };
    let framed = super::handoff::frame(code);
    // A program larger than the pipe's buffer is written while the run reads it; the pipe then
    // stays open until the run has ended, which tells it that the server still runs.
    let feed = tokio::spawn(async move {
        let _ = stdin.write_all(&framed).await;
        stdin
    });
    let max_report = launch.max_report;
    let report = tokio::spawn(async move {
        let mut stdout = tokio::io::BufReader::new(stdout);
        let report = read_report(&mut stdout, max_report, &printed).await;
        // What follows is drained, so that the run is never blocked on a full pipe.
        let _ = tokio::io::copy(&mut stdout, &mut tokio::io::sink()).await;
        report
    });
    let warnings = tokio::spawn(async move { read_tail(stderr, STDERR_KEPT).await });

    let status = tokio::select! {
        status = child.wait() => status,
        () = cancel.cancelled() => {
            stop(&mut child, group).await;
            feed.abort();
            return Err(Failed::Cancelled);
        }
        () = tokio::time::sleep(timeout + OVERDUE) => {
            stop(&mut child, group).await;
            return Err(Failed::overdue());
        }
    };
    // The run has ended: what it started is its own to end (it ends its tools' groups itself).
    group.release();
    let _ = feed.await;
    let report = report.await.unwrap_or(Ok(Vec::new()));
    let warnings = warnings.await.unwrap_or_default();
    let status = status.map_err(|err| Failed::NoReport(format!("the run could not be waited for: {err}")))?;
    let report = report.map_err(|()| Failed::report_over(max_report))?;
    ended_run(&report, &warnings, || format!("the run ended ({status}) without a report"))
}

/// The run that reported `report` (a `codeact run --mcp-result` object), with codeact's
/// `warnings` after its text; without a report, what the warnings say, else `no_report`.
pub(super) fn ended_run(report: &[u8], warnings: &str, no_report: impl FnOnce() -> String) -> Result<RunEnded, Failed> {
    let Ok(Json::Object(mut object)) = serde_json::from_slice::<Json>(report) else {
        let said = warnings.trim();
        return Err(Failed::NoReport(if said.is_empty() { no_report() } else { said.to_owned() }));
    };
    let result = object.remove("result").unwrap_or_default();
    let mut text = match object.remove("text") {
        Some(Json::String(text)) => text,
        _ => String::new(),
    };
    let mut after = match object.remove("after") {
        Some(Json::String(after)) => after,
        _ => String::new(),
    };
    if !warnings.trim().is_empty() {
        text.push_str(warnings);
        after.push_str(warnings);
    }
    let success = result["success"].as_bool().unwrap_or(false);
    Ok(RunEnded { result, text, after, success })
}

/// `codeact run` with the arguments every run of the server shares.
pub(super) fn command(launch: &Launch) -> Command {
    let mut command = Command::new(&launch.program);
    command
        .arg("run")
        .args(&launch.args)
        // The runs' programs have no business with the token that guards the server, nor
        // with where it is kept.
        .env_remove(crate::env::MCP_TOKEN)
        .env_remove(crate::env::MCP_TOKEN_FILE);
    command
}

/// Ends a run: SIGTERM (which ends the commands and servers it started), a grace, then SIGKILL
/// to its process group.
pub(super) async fn stop(child: &mut tokio::process::Child, mut group: Group) {
    group.stop(Stop::Ask);
    if tokio::time::timeout(TERM_GRACE, child.wait()).await.is_err() {
        group.kill();
        let _ = child.wait().await;
    } else {
        group.release();
    }
}

/// The report `reader` gives: its lines are what the program printed as it ran
/// (`{"printed": TEXT}`, added to `printed`), and then the report, whose line is returned, empty
/// when `reader` ends first; `Err` when a line passes `limit` bytes, the rest of which is left
/// unread.
pub(super) async fn read_report(
    reader: &mut (impl AsyncBufRead + Unpin),
    limit: usize,
    printed: &Mutex<Capture>,
) -> Result<Vec<u8>, ()> {
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.take(limit as u64 + 1).read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return Ok(Vec::new()),
            Ok(read) if read > limit => return Err(()),
            Ok(_) => match serde_json::from_slice::<Json>(&line) {
                Ok(Json::Object(object)) if object.len() == 1 && object.contains_key("printed") => {
                    if let Some(Json::String(text)) = object.get("printed") {
                        crate::sandbox::live::lock(printed).push(text);
                    }
                }
                _ => return Ok(line),
            },
        }
    }
}

/// The last `keep` bytes `reader` gives, as text.
async fn read_tail(mut reader: impl AsyncRead + Unpin, keep: usize) -> String {
    let mut tail = Vec::new();
    let mut buffer = vec![0_u8; 8 * 1024];
    while let Ok(read) = reader.read(&mut buffer).await {
        if read == 0 {
            break;
        }
        tail.extend_from_slice(&buffer[..read]);
        if tail.len() > 2 * keep {
            tail.drain(..tail.len() - keep);
        }
    }
    tail_of(&tail, keep)
}

/// The last `keep` bytes of `text`, as text.
pub(super) fn tail_of(text: &[u8], keep: usize) -> String {
    String::from_utf8_lossy(&text[text.len().saturating_sub(keep)..]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_report_over_the_limit_is_refused() {
        let printed = Mutex::new(Capture::new(100));
        assert_eq!(read_report(&mut &b"0123456789"[..], 10, &printed).await, Ok(b"0123456789".to_vec()));
        assert_eq!(read_report(&mut &b"0123456789a"[..], 10, &printed).await, Err(()));
        assert_eq!(read_report(&mut &b"0123456789a\n{}\n"[..], 10, &printed).await, Err(()));
        assert_eq!(read_report(&mut &b""[..], 10, &printed).await, Ok(Vec::new()));
    }

    #[tokio::test]
    async fn what_was_printed_comes_before_the_report_and_is_kept_apart() {
        let printed = Mutex::new(Capture::new(100));
        printed.lock().unwrap().stream();
        let lines =
            b"{\"printed\":\"one\\n\"}\n{\"printed\":\"two\\n\"}\n{\"result\":1,\"text\":\"\"}\n{\"saved\":true}\n";
        let mut reader = &lines[..];
        let report = read_report(&mut reader, 1000, &printed).await.unwrap();
        assert_eq!(report, b"{\"result\":1,\"text\":\"\"}\n");
        // What a session's worker says after its report is left to be read.
        assert_eq!(reader, b"{\"saved\":true}\n");
        assert_eq!(printed.lock().unwrap().take_streamed().as_deref(), Some("one\ntwo\n"));
    }

    #[tokio::test]
    async fn stderr_keeps_its_tail() {
        let text = "x".repeat(100) + "end";
        assert_eq!(read_tail(text.as_bytes(), 5).await, "xxend");
    }
}
