//! Running a Markdown tool whose code runs on the host: JavaScript under `node` (as agentschema
//! runs it: see `node`), shell under `sh` with the input as JSON on stdin and the answer read
//! from stdout; both in the workspace. (Python tools run inside the sandbox, by the backend.)

use std::path::Path;
use std::time::Duration;

use super::load::UserTool;
use super::markdown::Language;
use super::node;
use crate::tools::process::{self, Timeout};
use crate::tools::{ToolError, Value};

/// Longest a host-side user tool may run (also cut to the run's remaining time).
const HOST_TIMEOUT: Duration = Duration::from_mins(1);

/// Runs a host-side tool (JavaScript or shell) on `input` in `workspace`, within `remaining`.
pub(crate) fn run_on_host(
    tool: &UserTool,
    input: &Value,
    workspace: &Path,
    remaining: Duration,
) -> Result<Value, ToolError> {
    let name = &tool.tool.name;
    let timeout = Timeout::within(HOST_TIMEOUT, remaining);
    match tool.tool.code.language {
        Language::Shell => run_shell(name, &tool.tool.code.source, input, workspace, timeout),
        Language::JavaScript => node::run(tool, input, workspace, timeout),
        Language::Python => Err(ToolError::runtime(format!("{name}() runs inside the sandbox"))),
    }
}

/// Runs the shell tool `name` (`code`) with `input` as JSON on stdin: its stdout, less one
/// trailing newline, is the result — the value of its JSON when it is JSON, else the text.
fn run_shell(name: &str, code: &str, input: &Value, workspace: &Path, timeout: Timeout) -> Result<Value, ToolError> {
    let mut command = process::command(name, "sh", workspace)?;
    command.arg("-c").arg(code);
    process::in_workspace(&mut command, workspace);
    let json = input.to_json().to_string();
    let finished = process::run_for_tool(name, command, json.as_bytes(), timeout)?;
    if !finished.status.success() {
        let code = finished.status.code().unwrap_or(-1);
        return Err(ToolError::runtime(format!("{name}() failed (exit {code}): {}", finished.stderr.trim())));
    }
    let out = finished.stdout.strip_suffix('\n').unwrap_or(&finished.stdout);
    Ok(serde_json::from_str::<serde_json::Value>(out)
        .map_or_else(|_| Value::Str(out.to_owned()), |json| Value::from_json(&json)))
}
