//! Running a Markdown tool whose code runs on the host: JavaScript under `node`, shell under
//! `sh`, in the workspace, with the input as JSON on stdin and the answer read from stdout.
//! (Python tools run inside the sandbox, by the backend.)

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use super::load::UserTool;
use super::markdown::Language;
use crate::env;
use crate::tools::process::{self, Timeout};
use crate::tools::{ErrorKind, ToolError, Value};

/// Longest a host-side user tool may run (also cut to the run's remaining time).
const HOST_TIMEOUT: Duration = Duration::from_mins(1);

/// `node` runs the `CommonJS` module named by its first argument on the JSON from stdin.
const NODE_RUNNER: &str = "const run = require(process.argv[1]); let data = '';\
process.stdin.on('data', c => data += c).on('end', async () => { try { const r = await run(JSON.parse(data || '{}'));\
process.stdout.write(JSON.stringify(r === undefined ? null : r)); } catch (e) { process.stderr.write(String(e && e.stack || e));\
process.exit(1); } });";

/// Runs a host-side tool (JavaScript or shell) on `input` in `workspace`, within `remaining`.
pub(crate) fn run_on_host(
    tool: &UserTool,
    input: &Value,
    workspace: &Path,
    remaining: Duration,
) -> Result<Value, ToolError> {
    let name = &tool.tool.name;
    let json = input.to_json().to_string();
    let temp;
    let mut command = match tool.tool.language {
        Language::Shell => {
            let mut command = Command::new("sh");
            command.arg("-c").arg(&tool.tool.code);
            command
        }
        Language::JavaScript => {
            temp = tempfile::Builder::new()
                .prefix("codeact-tool-")
                .tempdir()
                .map_err(|e| ToolError::new(ErrorKind::Os, format!("{name}(): {e}")))?;
            let file = temp.path().join(format!("{name}.js"));
            std::fs::write(&file, &tool.tool.code)
                .map_err(|e| ToolError::new(ErrorKind::Os, format!("{name}(): {e}")))?;
            let mut command = Command::new("node");
            command.arg("-e").arg(NODE_RUNNER).arg(file);
            command
        }
        Language::Python => return Err(ToolError::runtime(format!("{name}() runs inside the sandbox"))),
    };
    // The tool runs in the workspace, where the program can write: a `python3 -c` or `-m` in it
    // must not import a module the program planted there.
    command.current_dir(workspace).env(env::PYTHON_SAFE_PATH, "1");
    let finished = process::run_for_tool(name, command, json.as_bytes(), Timeout::within(HOST_TIMEOUT, remaining))?;
    if !finished.status.success() {
        let code = finished.status.code().unwrap_or(-1);
        return Err(ToolError::runtime(format!("{name}() failed (exit {code}): {}", finished.stderr.trim())));
    }
    let out = finished.stdout.strip_suffix('\n').unwrap_or(&finished.stdout);
    Ok(serde_json::from_str::<serde_json::Value>(out)
        .map_or_else(|_| Value::Str(out.to_owned()), |json| Value::from_json(&json)))
}
