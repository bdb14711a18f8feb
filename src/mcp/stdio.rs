//! A stdio MCP server as a child process: started in a process group of its own (so a `sh -c`
//! or `npx` wrapper's children end with it), with a small allow-listed environment, its
//! stderr kept in a bounded buffer, and its stdout watched for messages too large to take
//! (refused at once, naming the size) and for lines that are not MCP at all (counted, for the
//! error a server that never answers gets). It is closed the way MCP's stdio transport says:
//! stdin closed, a moment to exit, SIGTERM, then SIGKILL for the whole group.

use std::io;
use std::path::Path;
use std::pin::Pin;
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, ReadBuf};
use tokio::process::{Child, ChildStdin, ChildStdout};

use crate::env;
use crate::limits::format_size;
use crate::platform::{self, Stop};
use crate::program;
use crate::spawn::{Group, Spawn as _};

/// How long a server has to exit once its stdin is closed, and again after SIGTERM.
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// Bytes of a server's stderr kept (the end matters most).
const MAX_STDERR: usize = 16 * 1024;

/// What the program and the error messages learn about a server's own output.
#[derive(Debug, Default)]
pub(super) struct Notes {
    /// The end of its stderr.
    pub(super) stderr: String,
    /// Why its stdout was cut off: a message over the size limit.
    pub(super) oversized: Option<String>,
    /// Lines on stdout that are not JSON, and the first of them.
    pub(super) stray_lines: usize,
    pub(super) first_stray: Option<String>,
}

pub(super) type SharedNotes = Arc<Mutex<Notes>>;

pub(super) fn lock(notes: &SharedNotes) -> std::sync::MutexGuard<'_, Notes> {
    notes.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A started server: its pipes for the transport, and the process itself.
pub(super) struct Started {
    pub(super) stdout: Watched,
    pub(super) stdin: ChildStdin,
    pub(super) process: Process,
}

/// Starts `command` with `args` in `cwd`: the inherited allow-list of variables, then `vars`.
/// A bare command name is found by [`program::find`], never in `workspace`, and the server's
/// `PATH` keeps no entry there either.
pub(super) fn start(
    command: &str,
    args: &[String],
    vars: &std::collections::BTreeMap<String, String>,
    cwd: &Path,
    workspace: &Path,
    max_message: usize,
    notes: &SharedNotes,
) -> io::Result<Started> {
    let program =
        program::find(command, Some(workspace)).map_err(|err| io::Error::new(io::ErrorKind::NotFound, err))?;
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(args).env_clear().current_dir(cwd).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    cmd.envs(env::inherited(Some(workspace)));
    // A server runs in the workspace, where the program can write: a `python3 -m` server
    // must not import a module the program planted there (its own `env` may say otherwise).
    cmd.env(env::PYTHON_SAFE_PATH, "1");
    cmd.envs(vars);
    cmd.env(env::NESTED, "1");
    let (mut child, group) = cmd.spawn_in_group()?;
    let (Some(stdin), Some(stdout), Some(mut stderr)) = (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err(io::Error::other("the server's pipes could not be opened"));
    };
    let kept = notes.clone();
    tokio::spawn(async move {
        let mut buf = vec![0u8; 8192];
        while let Ok(n) = stderr.read(&mut buf).await {
            if n == 0 {
                break;
            }
            let mut notes = lock(&kept);
            notes.stderr.push_str(&String::from_utf8_lossy(&buf[..n]));
            if notes.stderr.len() > MAX_STDERR * 2 {
                let cut = notes.stderr.len() - MAX_STDERR;
                let cut = (cut..notes.stderr.len()).find(|i| notes.stderr.is_char_boundary(*i)).unwrap_or(cut);
                notes.stderr.drain(..cut);
            }
        }
    });
    let stdout = Watched {
        inner: stdout,
        limit: max_message,
        line: 0,
        starts_line: true,
        stray: None,
        discarding: None,
        notes: notes.clone(),
    };
    Ok(Started { stdout, stdin, process: Process { child, group } })
}

/// The server's process, whose group ends when this is closed or dropped.
pub(super) struct Process {
    child: Child,
    group: Group,
}

impl Process {
    /// Waits for the server to exit on its own (its stdin is closed by now), then asks its group
    /// to end, then kills it.
    pub(super) async fn close(mut self) {
        if tokio::time::timeout(EXIT_GRACE, self.child.wait()).await.is_err() {
            self.group.stop(Stop::Ask);
            let _ = tokio::time::timeout(EXIT_GRACE, self.child.wait()).await;
        }
        self.group.kill();
        let _ = self.child.wait().await;
    }

    /// How the server ended, when it has: "exited with status 3", "was killed by signal 9".
    pub(super) async fn how_it_ended(&mut self) -> Option<String> {
        let status = tokio::time::timeout(Duration::from_millis(300), self.child.wait()).await.ok()?.ok()?;
        Some(platform::describe_exit(status))
    }
}

/// A server's stdout as the transport reads it, refusing a message over `limit` bytes at once
/// (rmcp would drop it and leave the request waiting) and counting lines that are not JSON.
pub(super) struct Watched {
    inner: ChildStdout,
    limit: usize,
    /// Bytes of the current line so far.
    line: usize,
    /// Whether the next byte starts a line.
    starts_line: bool,
    /// The start of the current line, while it may be a stray one.
    stray: Option<Vec<u8>>,
    /// An oversized message being skipped: its bytes so far, and whether its end was seen.
    discarding: Option<(usize, bool)>,
    notes: SharedNotes,
}

impl Watched {
    /// Notes `bytes`, just read, and returns how many of them to pass on: all of them, or only
    /// those before a message grown past the limit (then [`Self::discarding`] is set).
    fn scan(&mut self, bytes: &[u8]) -> usize {
        for (at, &byte) in bytes.iter().enumerate() {
            if self.starts_line {
                self.starts_line = false;
                self.stray = (!matches!(byte, b'{' | b'[' | b'\n' | b'\r' | b' ' | b'\t')).then(Vec::new);
            }
            if byte == b'\n' {
                self.end_line();
                continue;
            }
            self.line += 1;
            if let Some(stray) = &mut self.stray
                && stray.len() < 200
            {
                stray.push(byte);
            }
            if self.line > self.limit {
                let rest = &bytes[at + 1..];
                self.discarding = Some(match rest.iter().position(|&b| b == b'\n') {
                    Some(end) => (self.line + end, true),
                    None => (self.line + rest.len(), false),
                });
                // Pass on what came before this message.
                return (at + 1).saturating_sub(self.line);
            }
        }
        bytes.len()
    }

    fn end_line(&mut self) {
        if let Some(stray) = self.stray.take() {
            let mut notes = lock(&self.notes);
            notes.stray_lines += 1;
            if notes.first_stray.is_none() {
                notes.first_stray = Some(String::from_utf8_lossy(&stray).trim().to_owned());
            }
        }
        self.line = 0;
        self.starts_line = true;
    }

    /// Reads on past an oversized message to its end, to name its size, then fails the stream.
    fn poll_discard(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let mut scratch = [0u8; 8 * 1024];
        loop {
            let Some((seen, complete)) = self.discarding else { return Poll::Ready(Ok(())) };
            if complete {
                let message = format!(
                    "its reply of {} is over the limit of {} for one message (the run's memory limit; raise it with --max-memory)",
                    format_size(seen),
                    format_size(self.limit)
                );
                lock(&self.notes).oversized = Some(message.clone());
                return Poll::Ready(Err(io::Error::other(message)));
            }
            let mut buf = ReadBuf::new(&mut scratch);
            match Pin::new(&mut self.inner).poll_read(cx, &mut buf) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(err)) => return Poll::Ready(Err(err)),
                Poll::Ready(Ok(())) => {
                    let read = buf.filled();
                    self.discarding = Some(match read.iter().position(|&b| b == b'\n') {
                        Some(end) => (seen + end, true),
                        None => (seen + read.len(), read.is_empty()),
                    });
                }
            }
        }
    }
}

impl AsyncRead for Watched {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if this.discarding.is_some() {
            return this.poll_discard(cx);
        }
        let before = buf.filled().len();
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {}
            other => return other,
        }
        let keep = this.scan(&buf.filled()[before..]);
        buf.set_filled(before + keep);
        if this.discarding.is_some() && keep == 0 {
            // Nothing of this read may go on: report the message now rather than an empty read,
            // which would look like the end of the stream.
            return this.poll_discard(cx);
        }
        Poll::Ready(Ok(()))
    }
}
