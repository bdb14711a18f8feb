//! Python drop-ins (`tools/*.py`): run on the host by one `python3` worker per run, started
//! on first use and reused for every call; JSON in and out over pipes. A call that outlasts its
//! time kills the worker (the next call starts a new one); the worker is always reaped.
//!
//! The program can write files in the workspace, so nothing there may reach the worker's
//! imports: its `python3` is never one of the workspace's ([`program::find`]: a virtualenv
//! there would run the `.pth` files and import the modules of its `site-packages`), it runs
//! isolated (`python3 -I`: neither the working directory nor the script's is on `sys.path`, no
//! `PYTHON*` variable is read, no user site), in the root directory rather than the workspace,
//! with the allow-listed environment MCP servers get plus `CODEACT_WORKSPACE`, the workspace's
//! path, for tools that work on its files. Each drop-in runs from the source codeact read and
//! the user trusted (never the file as it is by then), and the worker writes no `.pyc` files
//! (`-B`), which would change the folder the user trusted. An answer is read only up to the
//! run's memory limit: a longer one is a `MemoryError` and ends the worker.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use serde_json::{Value as Json, json};

use crate::limits::format_size;
use crate::spawn::{Group, Spawn as _};
use crate::tools::{ErrorKind, ToolError, Value};
use crate::{env, program};

/// The variable that tells a drop-in where the workspace is.
pub(crate) const WORKSPACE_VAR: &str = "CODEACT_WORKSPACE";

/// The worker's source, embedded in the binary.
const WORKER: &str = include_str!("dropin.py");

/// Longest one call may take (also cut to the run's remaining time).
pub(crate) const CALL_TIMEOUT: Duration = Duration::from_mins(1);

/// The longest answer read from the worker before the run sets its memory limit.
const DEFAULT_MAX_ANSWER: usize = 64 << 20;

/// The drop-in files in `dirs`: `*.py` not starting with `_` (or `.`), sorted in each folder.
#[must_use]
pub(crate) fn files(dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(dir) else { continue };
        let mut found: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "py"))
            .filter(|p| p.file_name().is_some_and(|n| !n.to_string_lossy().starts_with(['_', '.'])))
            .collect();
        found.sort();
        files.extend(found);
    }
    files
}

/// A drop-in as it was read: its file, and the source that runs (what the user trusted, not
/// whatever the file holds by the time the worker starts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DropInFile {
    pub(crate) path: PathBuf,
    pub(crate) text: String,
}

/// The run's drop-ins: their sources and, once a call needs it, the one worker serving them.
#[derive(Debug)]
pub(crate) struct DropIns {
    files: Vec<DropInFile>,
    /// The workspace, which the worker is told of.
    workspace: PathBuf,
    /// The longest answer taken from the worker, in bytes.
    max_answer: usize,
    worker: Option<Worker>,
}

impl Default for DropIns {
    fn default() -> Self {
        Self::new(Vec::new(), Path::new(""))
    }
}

/// What a worker says about one drop-in.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Described {
    pub(crate) name: String,
    /// Why the file could not be loaded.
    pub(crate) error: Option<String>,
    pub(crate) description: String,
    /// The `parameters` of its `TOOL` dict, when it gives them.
    pub(crate) parameters: Option<Json>,
}

impl DropIns {
    #[must_use]
    pub(crate) fn new(files: Vec<DropInFile>, workspace: &Path) -> Self {
        Self { files, workspace: workspace.to_path_buf(), max_answer: DEFAULT_MAX_ANSWER, worker: None }
    }

    /// Takes answers no longer than `bytes` from the worker (a run's memory limit).
    pub(crate) fn set_max_answer(&mut self, bytes: usize) {
        self.max_answer = bytes;
    }

    /// Calls the drop-in `name` with `args` (a dict), starting the worker on first use. A call
    /// that times out kills the worker; the next call starts another.
    pub(crate) fn call(&mut self, name: &str, args: &Value, timeout: Duration) -> Result<Value, ToolError> {
        let worker = match &mut self.worker {
            Some(worker) => worker,
            slot @ None => slot.insert(Worker::start(&self.files, &self.workspace, self.max_answer)?),
        };
        let result = worker.call(name, args, timeout);
        if result.as_ref().is_err_and(|err| matches!(err.kind, ErrorKind::Timeout | ErrorKind::Memory)) {
            self.worker = None;
        }
        result
    }

    /// Each drop-in's name and description, from a worker started for the purpose.
    pub(crate) fn describe(
        files: &[DropInFile],
        workspace: &Path,
        timeout: Duration,
    ) -> Result<Vec<Described>, ToolError> {
        let answer = Worker::start(files, workspace, DEFAULT_MAX_ANSWER)?.ask(&json!({"describe": true}), timeout)?;
        let listed = answer["ok"].as_array().cloned().unwrap_or_default();
        Ok(listed
            .iter()
            .filter_map(|tool| {
                Some(Described {
                    name: tool["name"].as_str()?.to_owned(),
                    error: tool["error"].as_str().map(str::to_owned),
                    description: tool["description"].as_str().unwrap_or_default().to_owned(),
                    parameters: tool
                        .get("parameters")
                        .filter(|p| p.as_object().is_some_and(|m| !m.is_empty()))
                        .cloned(),
                })
            })
            .collect())
    }
}

/// A running worker.
struct Worker {
    child: Child,
    /// The worker's process group: what a drop-in starts is ended with it, and with the run if
    /// codeact is stopped early ([`crate::reap`]).
    group: Group,
    stdin: ChildStdin,
    answers: Receiver<Answer>,
}

/// One line the worker wrote, or what stopped it being read.
enum Answer {
    Line(Vec<u8>),
    /// Longer than the bytes the run may hold: nothing more is read.
    TooLong(usize),
}

impl std::fmt::Debug for Worker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worker").field("pid", &self.child.id()).finish_non_exhaustive()
    }
}

/// The Python 3 that runs the drop-ins, with the arguments that pick it: `python3`; on Windows,
/// where `python3` is often only the Store's placeholder, the Python launcher `py -3` first,
/// then `python`, then `python3`. Never one of the workspace's ([`program::find`]).
fn python(workspace: &Path) -> Result<(PathBuf, &'static [&'static str]), ToolError> {
    const WINDOWS: [(&str, &[&str]); 3] = [("py", &["-3"]), ("python", &[]), ("python3", &[])];
    const UNIX: [(&str, &[&str]); 1] = [("python3", &[])];
    let candidates: &[(&str, &[&str])] = if cfg!(windows) { &WINDOWS } else { &UNIX };
    let mut why = Vec::new();
    for (name, picks) in candidates {
        match program::find(name, Some(workspace)) {
            Ok(path) => return Ok((path, picks)),
            Err(err) => why.push(err.to_string()),
        }
    }
    Err(ToolError::new(ErrorKind::Os, format!("could not start Python 3 for the Python tools: {}", why.join("; "))))
}

impl Worker {
    /// Starts Python 3 ([`python`]), isolated, on the drop-ins; it may answer up to
    /// `max_answer` bytes.
    fn start(files: &[DropInFile], workspace: &Path, max_answer: usize) -> Result<Self, ToolError> {
        let (python, picks) = python(workspace)?;
        let mut command = Command::new(python);
        command
            .args(picks)
            .args(["-I", "-B", "-u", "-c", WORKER])
            .current_dir("/")
            .env_clear()
            .envs(env::inherited(Some(workspace)));
        let (mut child, group) = command
            .env(WORKSPACE_VAR, workspace)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn_in_group()
            .map_err(|e| {
                ToolError::new(ErrorKind::Os, format!("could not start Python 3 for the Python tools: {e}"))
            })?;
        let mut stdin = child.stdin.take().ok_or_else(|| ToolError::runtime("the Python worker has no stdin"))?;
        let load: Vec<(&Path, &str)> = files.iter().map(|file| (file.path.as_path(), file.text.as_str())).collect();
        writeln!(stdin, "{}", json!({"load": load}))
            .map_err(|e| ToolError::runtime(format!("the Python worker stopped: {e}")))?;
        let stdout = child.stdout.take().ok_or_else(|| ToolError::runtime("the Python worker has no stdout"))?;
        let (tx, answers) = mpsc::channel();
        std::thread::spawn(move || read_answers(stdout, max_answer, &tx));
        Ok(Self { child, group, stdin, answers })
    }

    /// Sends one request and waits for its answer.
    fn ask(&mut self, request: &Json, timeout: Duration) -> Result<Json, ToolError> {
        writeln!(self.stdin, "{request}").map_err(|e| ToolError::runtime(format!("the Python worker stopped: {e}")))?;
        let line = match self.answers.recv_timeout(timeout) {
            Ok(Answer::Line(line)) => line,
            Ok(Answer::TooLong(limit)) => {
                return Err(ToolError::new(
                    ErrorKind::Memory,
                    format!("the answer is larger than the run's memory limit ({})", format_size(limit)),
                ));
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                return Err(ToolError::new(
                    ErrorKind::Timeout,
                    format!("did not finish within {}s", timeout.as_secs_f64()),
                ));
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => return Err(ToolError::runtime("the Python worker exited")),
        };
        serde_json::from_slice(&line)
            .map_err(|e| ToolError::runtime(format!("the Python worker sent a bad answer: {e}")))
    }

    /// Calls the drop-in `name` with `args` (a dict).
    fn call(&mut self, name: &str, args: &Value, timeout: Duration) -> Result<Value, ToolError> {
        let answer = self
            .ask(&json!({"tool": name, "args": args.to_json()}), timeout)
            .map_err(|e| ToolError::new(e.kind, format!("{name}(): {}", e.message)))?;
        if let Some(error) = answer.get("error") {
            let kind = error["type"].as_str().unwrap_or("RuntimeError");
            return Err(ToolError::new(
                ErrorKind::from_python_name(kind),
                format!("{name}(): {}", error["message"].as_str().unwrap_or_default()),
            ));
        }
        Ok(Value::from_json(&answer["ok"]))
    }
}

/// Sends each line of `stdout` to `answers` until the worker ends, or until a line is longer
/// than `limit` bytes: that one is never held whole.
fn read_answers(stdout: impl Read, limit: usize, answers: &mpsc::Sender<Answer>) {
    let mut reader = BufReader::new(stdout);
    loop {
        let mut line = Vec::new();
        let cap = u64::try_from(limit).unwrap_or(u64::MAX).saturating_add(1);
        match (&mut reader).take(cap).read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if line.last() == Some(&b'\n') {
            line.pop();
        }
        let answer =
            if line.len() > limit || cost(&line) > limit { Answer::TooLong(limit) } else { Answer::Line(line) };
        let stop = matches!(answer, Answer::TooLong(_));
        if answers.send(answer).is_err() || stop {
            return;
        }
    }
}

/// Bytes of memory one JSON value takes while an answer is parsed and turned into the
/// program's value (both forms are held at once, with room for their lists to grow).
const BYTES_PER_VALUE: usize = 96;

/// About how much memory taking in the JSON `text` needs: its bytes, and room for each value it
/// holds, counted by the commas, colons and brackets outside its strings (`[0,0,…]` is two
/// bytes a value, each of which is far larger in memory).
fn cost(text: &[u8]) -> usize {
    let (mut values, mut in_string, mut escaped) = (1usize, false, false);
    for &byte in text {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
        } else {
            match byte {
                b'"' => in_string = true,
                b',' | b':' | b'[' | b'{' => values += 1,
                _ => {}
            }
        }
    }
    text.len().saturating_add(values.saturating_mul(BYTES_PER_VALUE))
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.group.kill();
        // A worker that left its group is not waited for forever.
        self.group.kill_leader();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answers_cost_counts_the_values_outside_its_strings() {
        let bare = |text: &str| cost(text.as_bytes()) - text.len();
        assert_eq!(bare(r#"{"ok": "a, b: [c] {d}"}"#), 3 * BYTES_PER_VALUE);
        assert_eq!(bare(r#"{"ok": [0,0,0]}"#), 6 * BYTES_PER_VALUE);
        assert_eq!(bare(r#"{"ok": "\"[,]\\", "x": [[]]}"#), 7 * BYTES_PER_VALUE);
    }

    #[test]
    fn a_line_too_costly_to_take_in_is_refused_unread() {
        let (tx, rx) = mpsc::channel();
        let many = format!("{{\"ok\": [{}0]}}\n{{\"ok\": 1}}\n", "0,".repeat(1000));
        read_answers(many.as_bytes(), 64 * 1024, &tx);
        drop(tx);
        assert!(matches!(rx.recv(), Ok(Answer::TooLong(_))));
        // Nothing after it is read: the worker is ended.
        assert!(rx.recv().is_err());
        let (tx, rx) = mpsc::channel();
        read_answers("{\"ok\": [0,0]}\n{\"ok\": 1}\n".as_bytes(), 64 * 1024, &tx);
        drop(tx);
        assert!(matches!(rx.recv(), Ok(Answer::Line(line)) if line == b"{\"ok\": [0,0]}"));
        assert!(matches!(rx.recv(), Ok(Answer::Line(line)) if line == b"{\"ok\": 1}"));
    }
}
