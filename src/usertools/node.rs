//! JavaScript tools under `node`, run and parsed as agentschema 0.2 runs and parses them: the
//! code wrapped as a `CommonJS` module of its own `.md` file (so `require()` resolves from it),
//! `module.exports` called with the input. `runner.js` does the Node side of both.
//!
//! A call's answer comes back in a file of its own, never on stdout: nothing the tool prints —
//! `console.log`, `process.stdout.write`, even `fs.writeSync(1, …)` — can change it. What it
//! prints is relayed to codeact's stderr, capped. A call runs in the workspace, with codeact's
//! environment (as agentschema's tools run in its process) and the code codeact read and the
//! user trusted, never the file as it is by then.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde::Deserialize;
use serde_json::json;

use super::load::UserTool;
use crate::platform::Canonical as _;
use crate::tools::process::{self, Finished, Timeout};
use crate::tools::{ErrorKind, ToolError, Value};
use crate::{bounded, env, platform, program, terminal};

/// The Node side, run with `node -e`: one JSON request on stdin.
const RUNNER: &str = include_str!("runner.js");

/// Most bytes of a result read back.
const MAX_RESULT_BYTES: u64 = 16 * 1024 * 1024;

/// Most bytes of a thrown error's message kept.
const MAX_MESSAGE_BYTES: usize = 4 * 1024;

/// Most bytes of what one call printed relayed to stderr.
const MAX_PRINTED_BYTES: usize = 8 * 1024;

/// Lines of node's stderr quoted when it ends without an answer.
const FAILURE_LINES: usize = 10;

/// Most bytes of those lines.
const MAX_FAILURE_BYTES: usize = 2 * 1024;

/// Longest a syntax check of a whole batch may take.
const CHECK_TIMEOUT: Duration = Duration::from_secs(20);

/// What the runner wrote for one call.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Answer {
    /// A string result, or one `JSON.stringify` turns into nothing (`undefined`, a function).
    Text(String),
    /// The JSON text of any other result.
    Json(String),
    /// `err?.message ?? err` of what was thrown, a syntax error in the code included.
    Error(String),
}

/// Calls the JavaScript tool `tool` with `input` (a dict) in `workspace`: a string result is a
/// `str`, any other the value of its JSON; what it throws a `RuntimeError` with its message.
pub(crate) fn run(tool: &UserTool, input: &Value, workspace: &Path, timeout: Timeout) -> Result<Value, ToolError> {
    let name = &tool.tool.name;
    let os_error = |err: std::io::Error| ToolError::new(ErrorKind::Os, format!("{name}(): {err}"));
    let temp = tempfile::Builder::new().prefix("codeact-js-").tempdir().map_err(os_error)?;
    let reply = temp.path().join("answer.json");
    // Absolute before the child moves to the workspace: a path found relative to codeact's
    // working directory (a relative config dir) must still name the file.
    let filename = std::path::absolute(&tool.path).map_err(os_error)?;
    let folder = std::path::absolute(&tool.folder).map_err(os_error)?;
    let request = json!({"run": {
        "code": tool.tool.code.source,
        "filename": filename.to_string_lossy(),
        "folder": folder.to_string_lossy(),
        "workspace": std::path::absolute(workspace).map_err(os_error)?.to_string_lossy(),
        "file": shown(&filename, workspace),
        "input": input.to_json(),
        "reply": reply.to_string_lossy(),
    }});
    let mut command = process::command(name, "node", workspace)?;
    if loads_es_modules_unseen(Path::new(command.get_program())) {
        command.arg("--no-experimental-require-module");
    }
    command.arg("-e").arg(RUNNER);
    process::in_workspace(&mut command, workspace);
    let finished = process::run_for_tool(name, command, request.to_string().as_bytes(), timeout)?;
    relay(name, &finished);
    let bytes = match bounded::read(&reply, MAX_RESULT_BYTES) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => return Err(failed(name, &finished)),
        Err(err) => return Err(ToolError::runtime(format!("{name}() answered, but codeact cannot read it: {err}"))),
    };
    let bad =
        |err: serde_json::Error| ToolError::runtime(format!("{name}() sent an answer codeact cannot read: {err}"));
    match serde_json::from_slice(&bytes).map_err(bad)? {
        Answer::Text(text) => Ok(Value::Str(text)),
        Answer::Json(json) => Ok(Value::from_json(&serde_json::from_str(&json).map_err(bad)?)),
        Answer::Error(message) => Err(ToolError::runtime(cut(message.trim(), MAX_MESSAGE_BYTES))),
    }
}

/// Whether the `node` at `path` loads ES modules through `require()` without the module hooks
/// that show the runner what they import (Node 20.17 to 22.14, and 23.0 to 23.4): it is then
/// told not to, since a package's `import` of a file the program wrote would go unchecked. Its
/// version is asked once a run.
fn loads_es_modules_unseen(path: &Path) -> bool {
    static ANSWER: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ANSWER.get_or_init(|| {
        let Ok(out) = Command::new(path).arg("--version").env_clear().output() else { return false };
        let text = String::from_utf8_lossy(&out.stdout);
        let mut parts = text.trim().trim_start_matches('v').split('.').map(|part| part.parse::<u32>().ok());
        match (parts.next().flatten(), parts.next().flatten()) {
            (Some(20), Some(minor)) => minor >= 17,
            (Some(22), Some(minor)) => minor < 15,
            (Some(23), Some(minor)) => minor < 5,
            _ => false,
        }
    })
}

/// For each of `sources`, `None` when it parses as agentschema's `check` parses a tool's code,
/// else the line in it (1-based) and V8's message, as `Unexpected token 'export'`; `None` for
/// the whole batch when `node` cannot be run or gives no answer in time. An error in the
/// wrapper's closing line (`Unexpected end of input`) is put on the code's last line.
#[must_use]
pub(crate) fn syntax_errors(sources: &[&str], project: &Path) -> Option<Vec<Option<(usize, String)>>> {
    let mut command = Command::new(program::find("node", Some(project)).ok()?);
    command.arg("-e").arg(RUNNER).env("PATH", env::child_path(project));
    let request = json!({"check": sources}).to_string();
    let timeout = Timeout::within(CHECK_TIMEOUT, CHECK_TIMEOUT);
    let finished = process::run_for_tool("check", command, request.as_bytes(), timeout).ok()?;
    if !finished.status.success() {
        return None;
    }
    let answers: Vec<Option<(usize, String)>> = serde_json::from_str(&finished.stdout).ok()?;
    if answers.len() != sources.len() {
        return None;
    }
    let located = answers.into_iter().zip(sources);
    Some(located.map(|(answer, source)| answer.map(|(line, message)| (source_line(source, line), message))).collect())
}

/// The line of `source`, counted as [`str::lines`] counts them, where V8's line `line` starts.
/// V8 also ends a line at a lone `\r`, U+2028 and U+2029; a line past the end (the wrapper's)
/// is the last.
fn source_line(source: &str, line: usize) -> usize {
    let (mut v8, mut ours) = (1, 1);
    let mut chars = source.chars().peekable();
    while v8 < line {
        match chars.next() {
            None => break,
            Some('\n') => (v8, ours) = (v8 + 1, ours + 1),
            Some('\r') if chars.peek() == Some(&'\n') => {
                chars.next();
                (v8, ours) = (v8 + 1, ours + 1);
            }
            Some('\r' | '\u{2028}' | '\u{2029}') => v8 += 1,
            Some(_) => {}
        }
    }
    ours.min(source.lines().count().max(1))
}

/// `file` as agentschema names a tool in `module.exports must be a function`: relative to the
/// workspace when it is inside it, else whole.
fn shown(file: &Path, workspace: &Path) -> String {
    let relative = |file: &Path, workspace: &Path| file.strip_prefix(workspace).ok().map(Path::to_path_buf);
    let canonical = |path: &Path| path.canonical().unwrap_or_else(|_| path.to_path_buf());
    let inside: Option<PathBuf> =
        relative(file, workspace).or_else(|| relative(&canonical(file), &canonical(workspace)));
    inside.unwrap_or_else(|| file.to_path_buf()).display().to_string()
}

/// Writes what the call printed (stderr, then anything written to fd 1 directly) to codeact's
/// stderr, at most [`MAX_PRINTED_BYTES`] of it.
fn relay(name: &str, finished: &Finished) {
    let mut printed = finished.stderr.clone();
    if !printed.is_empty() && !printed.ends_with('\n') && !finished.stdout.is_empty() {
        printed.push('\n');
    }
    printed.push_str(&finished.stdout);
    if printed.is_empty() {
        return;
    }
    let kept = printed.floor_char_boundary(MAX_PRINTED_BYTES);
    if kept < printed.len() {
        let dropped = printed.len() - kept;
        printed.truncate(kept);
        let _ = write!(printed, "\n[… {dropped} more bytes {name}() printed were dropped …]");
    }
    terminal::diagnostic(&printed);
}

/// The error for a `node` that ended without an answer: how it ended and the end of its stderr.
fn failed(name: &str, finished: &Finished) -> ToolError {
    let how = platform::describe_exit(finished.status);
    let lines: Vec<&str> = finished.stderr.trim_end().lines().collect();
    let tail = lines[lines.len().saturating_sub(FAILURE_LINES)..].join("\n");
    let tail = &tail[tail.ceil_char_boundary(tail.len().saturating_sub(MAX_FAILURE_BYTES))..];
    if tail.trim().is_empty() {
        return ToolError::runtime(format!("{name}() failed ({how}): node ended without an answer"));
    }
    ToolError::runtime(format!("{name}() failed ({how}): node ended without an answer:\n{tail}"))
}

/// `text`, cut to at most `max` bytes (and a marker) at a character boundary.
fn cut(text: &str, max: usize) -> String {
    let kept = text.floor_char_boundary(max);
    if kept == text.len() { text.to_owned() } else { format!("{}… [cut at {max} bytes]", &text[..kept]) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The answers, or `None` (saying why) on a machine without node.
    #[expect(clippy::print_stderr, reason = "a test that cannot run here says why")]
    fn check(sources: &[&str]) -> Option<Vec<Option<(usize, String)>>> {
        if program::find("node", None).is_err() {
            eprintln!("skipping: `node` is not on PATH, so JavaScript cannot be parsed here");
            return None;
        }
        Some(
            syntax_errors(sources, &std::env::temp_dir().join("codeact-no-project"))
                .expect("node is on PATH, so it answers"),
        )
    }

    #[test]
    fn syntax_errors_are_v8s_messages_on_the_codes_lines() {
        let sources = [
            "module.exports = async () => 1;",
            "export default async () => 'esm';",
            "const p = await Promise.resolve('x');\nmodule.exports = async () => p;",
            "module.exports = async () => {",
            "const s = `\n\n",
            "const a = 1;\nconst b = 2 +;\n",
        ];
        let Some(answers) = check(&sources) else { return };
        let error = |line: usize, message: &str| Some((line, message.to_owned()));
        assert_eq!(
            answers,
            [
                None,
                error(1, "Unexpected token 'export'"),
                error(1, "await is only valid in async functions and the top level bodies of modules"),
                error(1, "Unexpected token ')'"),
                error(2, "Unexpected end of input"),
                error(2, "Unexpected token ';'"),
            ]
        );
    }

    #[test]
    fn a_batch_of_none_or_many_sources_gets_one_answer_each() {
        let Some(none) = check(&[]) else { return };
        assert_eq!(none, []);
        let sources: Vec<String> = (0..300).map(|i| format!("module.exports = () => {i};")).collect();
        let sources: Vec<&str> = sources.iter().map(String::as_str).collect();
        assert_eq!(check(&sources), Some(vec![None; 300]));
    }

    #[test]
    fn the_wrapper_is_agentschemas_so_code_that_closes_it_parses_as_there() {
        let Some(answers) = check(&["module.exports = 1;\n})\n(function () {"]) else { return };
        assert_eq!(answers, [None]);
    }

    #[test]
    fn v8_lines_become_the_lines_of_the_file() {
        assert_eq!(source_line("a\nb c", 2), 2);
        assert_eq!(source_line("const a = 'x\u{2028}y';\nb c", 3), 2);
        assert_eq!(source_line("a\rb\r\nc", 3), 2);
        assert_eq!(source_line("module.exports = () => {", 2), 1);
        assert_eq!(source_line("a\n", 3), 1);
        assert_eq!(source_line("", 2), 1);
    }

    #[test]
    fn a_tool_is_named_relative_to_the_workspace_when_inside_it() {
        let workspace = Path::new("/work/ws");
        assert_eq!(shown(Path::new("/work/ws/.codeact/tools/a.md"), workspace), ".codeact/tools/a.md");
        assert_eq!(
            shown(Path::new("/home/u/.config/codeact/tools/a.md"), workspace),
            "/home/u/.config/codeact/tools/a.md"
        );
    }

    #[test]
    fn long_messages_are_cut_at_a_character_boundary() {
        assert_eq!(cut("boom", 4), "boom");
        assert_eq!(cut("ééé", 3), "é… [cut at 3 bytes]");
    }
}
