//! The Python drop-ins (`tools/*.py`): run on the host by one `python3` worker per run, started
//! on first use and reused for every call; JSON in and out over pipes. A call that outlasts its
//! time kills the worker (the next call starts a new one); the worker is always reaped.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use serde_json::{Value as Json, json};

use super::load;
use crate::tools::{ErrorKind, ToolError, Value};

/// The worker's source, embedded in the binary.
const WORKER: &str = include_str!("worker.py");

/// Longest one call may take (also cut to the run's remaining time).
pub const CALL_TIMEOUT: Duration = Duration::from_mins(1);

/// The drop-in files of `workspace`: `tools/*.py` of each config dir, not starting with `_`.
#[must_use]
pub fn files(workspace: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in load::tool_dirs(workspace) {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
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

/// A running worker.
pub struct Worker {
    child: Child,
    stdin: ChildStdin,
    answers: Receiver<String>,
    /// How many workers this run has started.
    pub started: usize,
}

impl std::fmt::Debug for Worker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worker").field("pid", &self.child.id()).finish_non_exhaustive()
    }
}

impl Worker {
    /// Starts `python3` on the drop-ins.
    pub fn start(files: &[PathBuf], cwd: &Path) -> Result<Self, ToolError> {
        let mut child = Command::new("python3")
            .arg("-u")
            .arg("-c")
            .arg(WORKER)
            .args(files)
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| ToolError::new(ErrorKind::Os, format!("could not start python3 for the Python tools: {e}")))?;
        let stdin = child.stdin.take().ok_or_else(|| ToolError::runtime("the Python worker has no stdin"))?;
        let stdout = child.stdout.take().ok_or_else(|| ToolError::runtime("the Python worker has no stdout"))?;
        let (tx, answers) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Ok(Self { child, stdin, answers, started: 1 })
    }

    /// Sends one request and waits for its answer.
    fn ask(&mut self, request: &Json, timeout: Duration) -> Result<Json, ToolError> {
        writeln!(self.stdin, "{request}").map_err(|e| ToolError::runtime(format!("the Python worker stopped: {e}")))?;
        let line = match self.answers.recv_timeout(timeout) {
            Ok(line) => line,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                return Err(ToolError::new(
                    ErrorKind::Timeout,
                    format!("did not finish within {}s", timeout.as_secs_f64()),
                ));
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => return Err(ToolError::runtime("the Python worker exited")),
        };
        serde_json::from_str(&line).map_err(|e| ToolError::runtime(format!("the Python worker sent a bad answer: {e}")))
    }

    /// Calls the drop-in `name` with `args` (a dict).
    pub fn call(&mut self, name: &str, args: &Value, timeout: Duration) -> Result<Value, ToolError> {
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

    /// Each drop-in's name, description and parameters, or its load error.
    pub fn describe(&mut self, timeout: Duration) -> Result<Vec<Json>, ToolError> {
        let answer = self.ask(&json!({"describe": true}), timeout)?;
        Ok(answer["ok"].as_array().cloned().unwrap_or_default())
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
