//! `bash`: a shell command in the workspace. Not confined — the one high-risk tool, documented
//! as such. Its process group is killed at the timeout, every stream is capped, and the child
//! is always reaped.

use std::fmt::Write as _;
use std::os::unix::process::ExitStatusExt;
use std::process::Command;
use std::time::Duration;

use super::args::Args;
use super::context::ToolContext;
use super::error::{ErrorKind, ToolError};
use super::process::{self, Finished};
use super::spec::{Default, Kind, Param, ToolSpec};
use super::value::Value;

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
    let command_line = args.str("command")?;
    let asked = args.number("timeout")?;
    if !(asked.is_finite() && asked > 0.0) {
        return Err(ToolError::value(format!("bash() timeout must be a positive number of seconds, got {asked}")));
    }
    let remaining = ctx.remaining();
    let run_limited = Duration::from_secs_f64(asked.min(86_400.0)) > remaining;
    let timeout = Duration::from_secs_f64(asked.min(86_400.0)).min(remaining);
    ctx.check_deadline("bash")?;

    let mut command = Command::new("sh");
    command.arg("-c").arg(command_line).current_dir(ctx.workspace.root());
    let finished = process::run(command, b"", timeout)
        .map_err(|e| ToolError::new(ErrorKind::Os, format!("bash() could not run `sh`: {e}")))?;
    let Finished { status, timed_out, stdout, stderr } = finished;

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

/// The last `chars` characters of `text`.
fn tail(text: &str, chars: usize) -> &str {
    let count = text.chars().count();
    if count <= chars {
        return text;
    }
    let skip = text.char_indices().nth(count - chars).map_or(0, |(i, _)| i);
    &text[skip..]
}
