//! `bash`: a shell command in the workspace. Not confined — the one high-risk tool, documented
//! as such. Its process group is killed at the timeout, every stream is capped, and the child
//! is always reaped.

use std::fmt::Write as _;
use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use super::args::Args;
use super::context::ToolContext;
use super::error::{ErrorKind, ToolError};
use super::spec::{Default, Kind, Param, ToolSpec};
use super::value::Value;

/// Bytes kept of each of stdout and stderr.
pub const MAX_STREAM_BYTES: usize = 1024 * 1024;

/// How long to wait for the pipes to drain after the shell has exited.
const DRAIN_GRACE: Duration = Duration::from_millis(500);

pub static BASH: ToolSpec = ToolSpec {
    name: "bash",
    description: "`sh -c` in the workspace; returns `{stdout, stderr, returncode}`.",
    params: &[
        Param { name: "command", kind: Kind::Str, default: Default::Required, doc: "Shell command line" },
        Param {
            name: "timeout",
            kind: Kind::Number,
            default: Default::Int(30),
            doc: "Seconds before the command's process group is killed",
        },
    ],
    returns: "dict",
    risk: Some("runs arbitrary commands outside the sandbox, with the user's privileges"),
    handler: bash,
};

fn bash(ctx: &mut ToolContext, args: &Args) -> Result<Value, ToolError> {
    let command = args.str("command")?;
    let asked = args.number("timeout")?;
    if !(asked.is_finite() && asked > 0.0) {
        return Err(ToolError::value(format!("bash() timeout must be a positive number of seconds, got {asked}")));
    }
    let remaining = ctx.remaining();
    let run_limited = Duration::from_secs_f64(asked.min(86_400.0)) > remaining;
    let timeout = Duration::from_secs_f64(asked.min(86_400.0)).min(remaining);
    ctx.check_deadline("bash")?;

    let mut child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir(ctx.workspace.root())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|e| ToolError::new(ErrorKind::Os, format!("bash() could not start `sh`: {e}")))?;
    let pid = child.id();
    let stdout = child.stdout.take().map(capture);
    let stderr = child.stderr.take().map(capture);

    let (done_tx, done_rx) = mpsc::channel();
    let waiter = thread::spawn(move || {
        let status = child.wait();
        let _ = done_tx.send(());
        status
    });
    let timed_out = done_rx.recv_timeout(timeout).is_err();
    // Kill the whole group either way: background children must not outlive the call.
    kill_group(pid);
    let status = waiter.join().map_err(|_| ToolError::runtime("bash() lost its child process"))?;
    let status =
        status.map_err(|e| ToolError::new(ErrorKind::Os, format!("bash() failed waiting for the command: {e}")))?;
    let stdout = stdout.map(|s| s.finish("stdout")).unwrap_or_default();
    let stderr = stderr.map(|s| s.finish("stderr")).unwrap_or_default();

    if timed_out {
        let why = if run_limited { "the run's time limit was reached".to_owned() } else { format!("timeout={asked}s") };
        let mut message = format!("bash() command timed out ({why}); its process group was killed");
        if !stdout.is_empty() {
            let _ = write!(message, "\npartial stdout:\n{}", tail(&stdout, 2000));
        }
        return Err(ToolError::new(ErrorKind::Timeout, message));
    }
    let code = status.code().or_else(|| status.signal().map(|s| -s)).unwrap_or(-1);
    Ok(Value::dict([
        ("stdout", Value::Str(stdout)),
        ("stderr", Value::Str(stderr)),
        ("returncode", Value::Int(i64::from(code))),
    ]))
}

/// A stream being read on its own thread into a capped buffer.
struct Capture {
    rx: mpsc::Receiver<(Vec<u8>, u64)>,
}

fn capture(mut stream: impl Read + Send + 'static) -> Capture {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut kept = Vec::new();
        let mut dropped: u64 = 0;
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match stream.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let room = MAX_STREAM_BYTES.saturating_sub(kept.len()).min(n);
                    kept.extend_from_slice(&buf[..room]);
                    dropped += (n - room) as u64;
                }
            }
        }
        let _ = tx.send((kept, dropped));
    });
    Capture { rx }
}

impl Capture {
    /// The captured text (lossy UTF-8), with a marker when bytes were dropped.
    fn finish(self, name: &str) -> String {
        let Ok((kept, dropped)) = self.rx.recv_timeout(DRAIN_GRACE) else {
            return format!("[{name} not collected: a background process kept it open]");
        };
        let mut text = String::from_utf8_lossy(&kept).into_owned();
        if dropped > 0 {
            let _ = writeln!(text, "\n[… {dropped} more bytes of {name} dropped: streams are capped at 1 MiB …]");
        }
        text
    }
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

fn kill_group(pid: u32) {
    if let Some(pid) = i32::try_from(pid).ok().and_then(rustix::process::Pid::from_raw) {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}
