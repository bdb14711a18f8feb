//! Calling a user tool: arguments checked against its input table (a `TypeError` naming the bad
//! argument), then its code run where its language says — Python inside the sandbox, JavaScript
//! under `node` and shell under `sh` on the host, with the input as JSON.

use std::process::Command;
use std::time::Duration;

use super::load::UserTool;
use super::markdown::{Input, Language};
use crate::tools::process;
use crate::tools::{ErrorKind, ToolContext, ToolError, Value};

/// Longest a host-side user tool may run (also cut to the run's remaining time).
const HOST_TIMEOUT: Duration = Duration::from_mins(1);

/// `node` runs the `CommonJS` module named by `CODEACT_TOOL_FILE` on the JSON from stdin.
const NODE_RUNNER: &str = "const run = require(process.env.CODEACT_TOOL_FILE); let data = '';\
process.stdin.on('data', c => data += c).on('end', async () => { try { const r = await run(JSON.parse(data || '{}'));\
process.stdout.write(JSON.stringify(r === undefined ? null : r)); } catch (e) { process.stderr.write(String(e && e.stack || e));\
process.exit(1); } });";

/// Binds positional and keyword arguments to the tool's inputs: a dict of the given ones.
pub fn bind(tool: &UserTool, positional: Vec<Value>, keywords: Vec<(String, Value)>) -> Result<Value, ToolError> {
    let name = &tool.tool.name;
    let inputs = &tool.tool.inputs;
    if positional.len() > inputs.len() {
        return Err(ToolError::type_error(format!(
            "{name}() takes at most {} arguments ({} given)",
            inputs.len(),
            positional.len()
        )));
    }
    let mut given: Vec<(String, Value)> = inputs.iter().map(|i| i.name.clone()).zip(positional).collect();
    for (key, value) in keywords {
        if !inputs.iter().any(|i| i.name == key) {
            let accepted: Vec<&str> = inputs.iter().map(|i| i.name.as_str()).collect();
            return Err(ToolError::type_error(format!(
                "{name}() got an unexpected keyword argument '{key}' (accepted: {})",
                accepted.join(", ")
            )));
        }
        if given.iter().any(|(k, _)| *k == key) {
            return Err(ToolError::type_error(format!("{name}() got multiple values for argument '{key}'")));
        }
        given.push((key, value));
    }
    for input in inputs {
        match given.iter().find(|(k, _)| *k == input.name) {
            None if input.required => {
                return Err(ToolError::type_error(format!("{name}() missing required argument '{}'", input.name)));
            }
            Some((_, value)) if !accepts(input, value) => {
                return Err(ToolError::type_error(format!(
                    "{name}() argument '{}' must be {}, not {}",
                    input.name,
                    input.ty,
                    value.type_name()
                )));
            }
            _ => {}
        }
    }
    Ok(Value::Dict(given.into_iter().map(|(k, v)| (Value::Str(k), v)).collect()))
}

fn accepts(input: &Input, value: &Value) -> bool {
    fn base(ty: &str, value: &Value) -> bool {
        match ty {
            "string" => matches!(value, Value::Str(_)),
            "number" => matches!(value, Value::Int(_) | Value::Float(_)),
            "integer" => matches!(value, Value::Int(_)),
            "boolean" => matches!(value, Value::Bool(_)),
            "object" => matches!(value, Value::Dict(_)),
            "array" => matches!(value, Value::List(_) | Value::Tuple(_)),
            _ => false,
        }
    }
    match input.ty.strip_suffix("[]") {
        Some(item) => match value {
            Value::List(items) | Value::Tuple(items) => items.iter().all(|v| base(item, v)),
            _ => false,
        },
        None => (value == &Value::None && !input.required) || base(&input.ty, value),
    }
}

/// Runs a host-side tool (JavaScript or shell) on `input`.
pub fn run_on_host(ctx: &ToolContext, tool: &UserTool, input: &Value) -> Result<Value, ToolError> {
    let name = &tool.tool.name;
    let json = input.to_json().to_string();
    let timeout = HOST_TIMEOUT.min(ctx.remaining());
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
            command.arg("-e").arg(NODE_RUNNER).env("CODEACT_TOOL_FILE", file);
            command
        }
        Language::Python => return Err(ToolError::runtime(format!("{name}() runs inside the sandbox"))),
    };
    command.current_dir(ctx.workspace.root());
    let finished = process::run(command, json.as_bytes(), timeout)
        .map_err(|e| ToolError::new(ErrorKind::Os, format!("{name}() could not start: {e}")))?;
    if finished.timed_out {
        return Err(ToolError::new(
            ErrorKind::Timeout,
            format!("{name}() did not finish within {}s", timeout.as_secs_f64()),
        ));
    }
    if !finished.status.success() {
        let code = finished.status.code().unwrap_or(-1);
        return Err(ToolError::runtime(format!("{name}() failed (exit {code}): {}", finished.stderr.trim())));
    }
    let out = finished.stdout.strip_suffix('\n').unwrap_or(&finished.stdout);
    Ok(serde_json::from_str::<serde_json::Value>(out)
        .map_or_else(|_| Value::Str(out.to_owned()), |json| Value::from_json(&json)))
}
