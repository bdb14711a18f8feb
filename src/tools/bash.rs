//! `bash`: a shell command in the workspace. Not confined — the one high-risk tool, documented
//! as such. Its process group is killed at the timeout, every stream is capped, and the child
//! is always reaped.
//!
//! The tool keeps its name on every system, so that a program runs unchanged: on Windows it runs
//! Git for Windows' `sh` where one is on `PATH`, else PowerShell (`pwsh`, else Windows
//! PowerShell), never the workspace's ([`shell`]).

use std::time::Duration;

use super::args::Args;
use super::context::ToolContext;
use super::error::ToolError;
use super::handler::Builtin;
use super::process::{self, Timeout};
use super::spec::{Kind, Param, ParamDefault, ToolSpec};
use super::value::Value;
use crate::platform;

/// The longest `timeout` a call may ask for (one day).
const MAX_TIMEOUT_SECS: f64 = 86_400.0;

#[cfg(not(windows))]
const DESCRIPTION: &str = "`sh -c` in the workspace; returns `{stdout, stderr, returncode}`.";
#[cfg(windows)]
const DESCRIPTION: &str =
    "`sh -c` (Git Bash), else PowerShell `-Command`, in the workspace; returns `{stdout, stderr, returncode}`.";

pub(crate) static BASH: Builtin = Builtin {
    spec: ToolSpec {
        name: "bash",
        description: DESCRIPTION,
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
    let mut command = shell(ctx.workspace.root(), command_line)?;
    command.current_dir(ctx.workspace.root());
    let finished = process::run_for_tool("bash", command, b"", timeout)?;
    let code = platform::returncode(finished.status);
    Ok(Value::dict([
        ("stdout", Value::Str(finished.stdout)),
        ("stderr", Value::Str(finished.stderr)),
        ("returncode", Value::Int(code)),
    ]))
}
/// The shell that runs `command_line`: `sh -c` found on `PATH` outside the workspace.
#[cfg(not(windows))]
fn shell(workspace: &std::path::Path, command_line: &str) -> Result<std::process::Command, ToolError> {
    let mut command = process::command("bash", "sh", workspace)?;
    command.arg("-c").arg(command_line);
    Ok(command)
}

/// The shell that runs `command_line` on Windows, found on `PATH` outside the workspace: Git for
/// Windows' `sh` (or `bash`, but not the one in the system folder, which starts WSL), else
/// PowerShell 7 (`pwsh`), else Windows PowerShell, without profiles or prompts.
#[cfg(windows)]
fn shell(workspace: &std::path::Path, command_line: &str) -> Result<std::process::Command, ToolError> {
    use std::process::Command;
    let system = std::env::var_os("SystemRoot").map(std::path::PathBuf::from);
    let outside_system = |path: &std::path::PathBuf| system.as_ref().is_none_or(|system| !path.starts_with(system));
    let posix = ["sh", "bash"].into_iter().filter_map(|name| crate::program::find(name, Some(workspace)).ok());
    if let Some(sh) = posix.into_iter().find(outside_system) {
        let mut command = Command::new(sh);
        command.arg("-c").arg(command_line);
        return Ok(command);
    }
    for name in ["pwsh", "powershell"] {
        if let Ok(powershell) = crate::program::find(name, Some(workspace)) {
            let mut command = Command::new(powershell);
            command.args(["-NoProfile", "-NonInteractive", "-Command"]).arg(command_line);
            return Ok(command);
        }
    }
    Err(ToolError::new(
        super::error::ErrorKind::Os,
        "bash() found no shell: neither Git for Windows' `sh` nor PowerShell is on PATH",
    ))
}
