//! The tools bridge between a CPython guest and the [`Host`]: the guest's `tools.dispatch`
//! passes a tool name and `{"args": [...], "kwargs": {...}}` as JSON; the same catalogue,
//! argument binding and confinement as on Monty answer it. A tool error goes back as
//! `Type: message`, which the prelude raises as that exception type; a limit ends the run.

use serde_json::Value as Json;

use crate::sandbox::{Dispatch, Host, LimitHit};
use crate::tools::Value;

/// The name the prelude reports the program's end under (never a tool: names with leading
/// underscores are reserved).
pub(crate) const REPORT: &str = "__codeact_report";

/// The answer to one call from the guest.
#[derive(Debug)]
pub(crate) enum Reply {
    /// The tool's result as JSON.
    Return(String),
    /// `Type: message`, raised in the guest.
    Raise(String),
    /// A limit was hit: the run ends.
    Stop(LimitHit),
}

/// Calls tool `name` with the JSON-encoded arguments.
pub(crate) fn dispatch(host: &mut Host, name: &str, args_json: &str) -> Reply {
    let (positional, keywords) = match decode_args(args_json) {
        Ok(args) => args,
        Err(message) => return Reply::Raise(format!("TypeError: {name}(): {message}")),
    };
    match host.call(name, positional, keywords) {
        Dispatch::Return(value) => match serde_json::to_string(&value.to_json()) {
            Ok(json) => Reply::Return(json),
            Err(err) => Reply::Raise(format!("ValueError: {name}() returned a value that is not JSON: {err}")),
        },
        Dispatch::Raise(err) => Reply::Raise(format!("{}: {}", err.kind.python_name(), err.message)),
        Dispatch::Stop(hit) => Reply::Stop(hit),
    }
}

type Arguments = (Vec<Value>, Vec<(String, Value)>);

fn decode_args(args_json: &str) -> Result<Arguments, String> {
    let json: Json = serde_json::from_str(args_json).map_err(|err| format!("arguments are not JSON: {err}"))?;
    let positional = match json.get("args") {
        None | Some(Json::Null) => Vec::new(),
        Some(Json::Array(items)) => items.iter().map(Value::from_json).collect(),
        Some(_) => return Err("`args` must be a list".into()),
    };
    let keywords = match json.get("kwargs") {
        None | Some(Json::Null) => Vec::new(),
        Some(Json::Object(map)) => map.iter().map(|(k, v)| (k.clone(), Value::from_json(v))).collect(),
        Some(_) => return Err("`kwargs` must be a dict".into()),
    };
    Ok((positional, keywords))
}

/// What the prelude reports when the program ends.
#[derive(Debug, serde::Deserialize)]
pub(crate) struct Report {
    /// `repr()` of the last expression's value, when it was not `None`.
    #[serde(default)]
    pub(crate) repr: Option<String>,
    /// The value as JSON (tuples and sets as lists, big ints as strings, …).
    #[serde(default)]
    pub(crate) value: Option<Json>,
    /// The uncaught exception.
    #[serde(default)]
    pub(crate) error: Option<ReportedError>,
}

#[derive(Debug, serde::Deserialize)]
pub(crate) struct ReportedError {
    #[serde(rename = "type")]
    pub(crate) kind: String,
    pub(crate) message: String,
    pub(crate) line: Option<u32>,
    pub(crate) traceback: String,
}

/// The tool names the prelude defines functions for, as a JSON list.
#[must_use]
pub(crate) fn tool_names_json(host: &Host) -> String {
    serde_json::to_string(&host.catalog().names()).unwrap_or_else(|_| "[]".to_owned())
}

/// Whether MCP `server__tool` functions may be called (the prelude resolves them on use).
#[must_use]
pub(crate) fn mcp_functions(host: &Host) -> bool {
    host.catalog().offers_mcp()
}
