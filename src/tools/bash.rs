//! `bash`: a shell command in the workspace. Not confined — the one high-risk tool, documented
//! as such. Its process group is killed at the timeout, every stream is capped, and the child
//! is always reaped.

use std::os::unix::process::ExitStatusExt;
use std::time::Duration;

use super::args::Args;
use super::context::ToolContext;
use super::error::ToolError;
use super::handler::Builtin;
use super::process::{self, Timeout};
use super::spec::{Kind, Param, ParamDefault, ToolSpec};
use super::value::Value;

/// The longest `timeout` a call may ask for (one day).
const MAX_TIMEOUT_SECS: f64 = 86_400.0;

pub(crate) static BASH: Builtin = Builtin {
    spec: ToolSpec {
        name: "bash",
        description: "`sh -c` in the workspace; returns `{stdout, stderr, returncode}`.",
        params: &[
            Param::required("command", Kind::Str, "Shell command line"),
            Param::new(
                "timeout",
                Kind::Number,
                ParamDefault::Int(30),
                "Seconds before the command's process group is killed",
            ),
        ],
        returns: "dict",
        risk: Some("runs arbitrary commands outside the sandbox, with the user's privileges"),
    },
    handler: bash,
};

fn bash(ctx: &mut ToolContext, args: &Args<'_>) -> Result<Value, ToolError> {
    let command_line = args.str("command")?;
    let asked = args.number("timeout")?;
    if !(asked.is_finite() && asked > 0.0) {
        return Err(ToolError::value(format!("bash() timeout must be a positive number of seconds, got {asked}")));
    }
    ctx.check_deadline("bash")?;
    let timeout = Timeout::within(Duration::from_secs_f64(asked.min(MAX_TIMEOUT_SECS)), ctx.remaining());
    let mut command = process::command("bash", "sh", ctx.workspace.root())?;
    command.arg("-c").arg(command_line).current_dir(ctx.workspace.root());
    let finished = process::run_for_tool("bash", command, b"", timeout)?;
    let status = finished.status;
    let code = status.code().or_else(|| status.signal().map(|s| -s)).unwrap_or(-1);
    Ok(Value::dict([
        ("stdout", Value::Str(finished.stdout)),
        ("stderr", Value::Str(finished.stderr)),
        ("returncode", Value::Int(i64::from(code))),
    ]))
}
