//! Running a child process for a tool: its own process group, stdin written from a buffer,
//! stdout and stderr read on their own threads into capped buffers, a timeout after which the
//! whole group is killed, and the child always reaped.

use std::fmt::Write as _;
use std::io::{self, Write};
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use super::error::{ErrorKind, ToolError};
use crate::spawn::Spawn as _;
use crate::{env, program};

/// Bytes kept of each of stdout and stderr.
const MAX_STREAM_BYTES: usize = 1024 * 1024;

/// Characters of a timed-out command's stdout quoted in the error.
const PARTIAL_STDOUT: usize = 2000;

/// How long to wait for the pipes to drain after the child has exited and its group was
/// killed: only a process that left the group can hold them longer, and a busy machine may
/// take a good part of a second to end the group and wake the reader.
const DRAIN_GRACE: Duration = Duration::from_secs(2);

/// A command that runs the program `name` for the tool `tool`, found by [`program::find`]:
/// from an absolute `PATH` entry, never from `workspace`.
pub(crate) fn command(tool: &str, name: &str, workspace: &Path) -> Result<Command, ToolError> {
    program::find(name, Some(workspace))
        .map(Command::new)
        .map_err(|err| ToolError::new(ErrorKind::Os, format!("{tool}() could not run `{name}`: {err}")))
}

/// Sets `command` to run in `workspace`, where the program can write, as a tool the user trusts
/// runs: no `python3` it starts imports from the working directory (`PYTHONSAFEPATH`), and
/// neither a name it runs nor a module an interpreter looks up is found in the workspace
/// ([`env::confined_search_paths`]).
pub(crate) fn in_workspace(command: &mut Command, workspace: &Path) {
    command.current_dir(workspace).env(env::PYTHON_SAFE_PATH, "1");
    for (name, value) in env::confined_search_paths(workspace) {
        match value {
            Some(value) => command.env(name, value),
            None => command.env_remove(name),
        };
    }
}

/// A single-threaded async runtime for one blocking tool call (`tool` names it in errors).
pub(crate) fn runtime(tool: &str) -> Result<tokio::runtime::Runtime, ToolError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| ToolError::runtime(format!("{tool}() could not start: {e}")))
}

/// What a finished child left.
#[derive(Debug)]
pub(crate) struct Finished {
    pub(crate) status: ExitStatus,
    /// Lossy UTF-8, with a marker when bytes were dropped.
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

/// How long a tool's child process may run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timeout {
    pub(crate) limit: Duration,
    /// The limit is what was left of the run, shorter than the tool's own.
    pub(crate) run_ends: bool,
}

impl Timeout {
    /// `asked`, cut to `remaining` (the run's time left).
    #[must_use]
    pub(crate) fn within(asked: Duration, remaining: Duration) -> Self {
        Self { limit: asked.min(remaining), run_ends: asked > remaining }
    }
}

/// Runs `command` for the tool `tool`: a program that cannot start is an `OSError`, one that
/// outlasts `timeout` a `TimeoutError` quoting the end of what it printed, its whole process
/// group killed either way.
pub(crate) fn run_for_tool(
    tool: &str,
    command: Command,
    stdin: &[u8],
    timeout: Timeout,
) -> Result<Finished, ToolError> {
    let program = command.get_program().to_string_lossy().into_owned();
    let (finished, timed_out) = run(command, stdin, timeout.limit)
        .map_err(|e| ToolError::new(ErrorKind::Os, format!("{tool}() could not run `{program}`: {e}")))?;
    if !timed_out {
        return Ok(finished);
    }
    let why = if timeout.run_ends {
        "the run's time limit was reached".to_owned()
    } else {
        format!("timeout={}s", timeout.limit.as_secs_f64())
    };
    let mut message = format!("{tool}() command timed out ({why}); its process group was killed");
    if !finished.stdout.is_empty() {
        let _ = write!(message, "\npartial stdout:\n{}", tail(&finished.stdout, PARTIAL_STDOUT));
    }
    Err(ToolError::new(ErrorKind::Timeout, message))
}

/// The last `chars` characters of `text`.
fn tail(text: &str, chars: usize) -> &str {
    let count = text.chars().count();
    if count <= chars {
        return text;
    }
    let skip = text.char_indices().nth(count - chars).map_or(0, |(i, _)| i);
    &text[skip..]
}

/// Runs `command` with `stdin`, killing its process group after `timeout` and, in any case,
/// once it exits (background children must not outlive the call). Says whether the timeout
/// struck.
fn run(mut command: Command, stdin: &[u8], timeout: Duration) -> std::io::Result<(Finished, bool)> {
    let stdin_mode = if stdin.is_empty() { Stdio::null() } else { Stdio::piped() };
    let (mut child, mut group) =
        command.stdin(stdin_mode).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn_in_group()?;
    if let Some(mut pipe) = child.stdin.take() {
        let input = stdin.to_vec();
        thread::spawn(move || {
            let _ = pipe.write_all(&input);
        });
    }
    let stdout = child.stdout.take().map(capture);
    let stderr = child.stderr.take().map(capture);
    let (done_tx, done_rx) = mpsc::channel();
    let waiter = thread::spawn(move || {
        let status = child.wait();
        let _ = done_tx.send(());
        status
    });
    let timed_out = done_rx.recv_timeout(timeout).is_err();
    group.kill();
    if timed_out {
        // Not yet waited for, so still ours: a leader that moved itself out of its group is
        // not reached by the group's kill.
        group.kill_leader();
    }
    let status = waiter.join().map_err(|_| std::io::Error::other("lost the child process"))??;
    // Both streams share one grace: a background process holding them costs it once.
    let until = Instant::now() + DRAIN_GRACE;
    let finished = Finished {
        status,
        stdout: stdout.map(|s| s.finish("stdout", until)).unwrap_or_default(),
        stderr: stderr.map(|s| s.finish("stderr", until)).unwrap_or_default(),
    };
    Ok((finished, timed_out))
}

/// A stream being read on its own thread into a capped buffer.
struct StreamReader {
    read: Arc<Mutex<Kept>>,
    done: mpsc::Receiver<()>,
}

/// What a [`StreamReader`] has read so far: the bytes kept, and how many more were dropped.
#[derive(Default)]
struct Kept {
    kept: Vec<u8>,
    dropped: u64,
}

fn capture(mut stream: impl io::Read + Send + 'static) -> StreamReader {
    let (tx, done) = mpsc::channel();
    let read = Arc::new(Mutex::new(Kept::default()));
    let into = Arc::clone(&read);
    thread::spawn(move || {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match stream.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let mut read = lock(&into);
                    let room = MAX_STREAM_BYTES.saturating_sub(read.kept.len()).min(n);
                    read.kept.extend_from_slice(&buf[..room]);
                    read.dropped += (n - room) as u64;
                }
            }
        }
        let _ = tx.send(());
    });
    StreamReader { read, done }
}

fn lock(read: &Mutex<Kept>) -> std::sync::MutexGuard<'_, Kept> {
    read.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl StreamReader {
    /// The captured text (lossy UTF-8), with a marker when bytes were dropped, waiting for the
    /// stream's end until `until`. A stream a background process still holds open gives what
    /// was read by then, and says so.
    fn finish(self, name: &str, until: Instant) -> String {
        let ended = self.done.recv_timeout(until.saturating_duration_since(Instant::now())).is_ok();
        let read = lock(&self.read);
        let mut text = String::from_utf8_lossy(&read.kept).into_owned();
        if read.dropped > 0 {
            let _ =
                writeln!(text, "\n[… {} more bytes of {name} dropped: streams are capped at 1 MiB …]", read.dropped);
        }
        if !ended {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            let _ = write!(text, "[the rest of {name} not collected: a background process kept it open]");
        }
        text
    }
}
