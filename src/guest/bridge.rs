//! The tools bridge between a CPython guest and the [`Host`]: the guest's `tools.dispatch`
//! passes a tool name and `{"args": [...], "kwargs": {...}}` as JSON; the same catalogue,
//! argument binding and confinement as on Monty answer it. A tool error goes back as
//! `Type: message`, which the prelude raises as that exception type; a limit ends the run.
//!
//! The prelude reports how the program ended through the same import, under [`REPORT`]. The
//! program can call that import too, so a report is taken only as [`Reports`] says: it must
//! carry the run's [nonce] (passed to the prelude's entry point, never to the program), only
//! one is accepted, and any other call under that name marks the run as tampered with. This
//! stops a program from sending a report of its own; one that digs the nonce out of the
//! interpreter's frames, or rewrites the interpreter's own modules, can still shape what the
//! prelude reports — the report is the program's account of itself, while the limits and the
//! output budget are the host's.

use serde_json::Value as Json;

use crate::sandbox::{Dispatch, Host, LimitHit, memory};
use crate::tools::Value;

/// The name the prelude reports the program's end under (never a tool: names with leading
/// underscores are reserved). Its argument is the run's nonce, a newline, and the report as
/// JSON.
pub(crate) const REPORT: &str = "__codeact_report";

/// The reports a guest sent under [`REPORT`].
#[derive(Debug, Default)]
pub(crate) struct Reports {
    /// The run's nonce; `None` when no report is expected (the snapshot's initialisation).
    nonce: Option<String>,
    accepted: Option<String>,
    /// A report without the nonce, or a second one, arrived.
    tampered: bool,
}

/// How the reports of a run stand once it ends.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Reported {
    /// The prelude's report, as JSON.
    Report(String),
    /// None arrived.
    Missing,
    /// The program sent a report of its own, or more than one arrived.
    Tampered,
}

impl Reports {
    /// Expects one report carrying `nonce`.
    #[must_use]
    pub(crate) fn expecting(nonce: String) -> Self {
        Self { nonce: Some(nonce), accepted: None, tampered: false }
    }

    /// Takes the argument of one call under [`REPORT`].
    pub(crate) fn receive(&mut self, argument: &str) {
        let genuine = match (&self.nonce, argument.split_once('\n')) {
            (Some(nonce), Some((sent, report))) if sent == nonce && self.accepted.is_none() => Some(report),
            _ => None,
        };
        match genuine {
            Some(report) => self.accepted = Some(report.to_owned()),
            None => self.tampered = true,
        }
    }

    /// How the run's reports stand, leaving none.
    pub(crate) fn take(&mut self) -> Reported {
        let accepted = self.accepted.take();
        if std::mem::take(&mut self.tampered) {
            return Reported::Tampered;
        }
        accepted.map_or(Reported::Missing, Reported::Report)
    }
}

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

/// Calls tool `name` with the JSON-encoded arguments. A result that needs more than `room`, the
/// guest memory left, ends the run at the memory limit before it is encoded: it could not be
/// held, and encoding it would only grow the host.
pub(crate) fn dispatch(host: &mut Host, name: &str, args_json: &str, room: usize) -> Reply {
    let (positional, keywords) = match decode_args(args_json) {
        Ok(args) => args,
        Err(message) => return Reply::Raise(format!("TypeError: {name}(): {message}")),
    };
    match host.call(name, positional, keywords) {
        Dispatch::Return(value) if memory::estimate_in_guest(&value) > room => Reply::Stop(LimitHit::Memory),
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
    /// The value as JSON text (tuples and sets as lists, big ints as strings, …), read apart
    /// from the report so that a deeply nested value cannot make the whole report unreadable.
    #[serde(default)]
    pub(crate) value: Option<String>,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_one_report_with_the_nonce_is_accepted() {
        let mut reports = Reports::expecting("n1".into());
        reports.receive("n1\n{\"repr\": \"1\"}");
        assert_eq!(reports.take(), Reported::Report("{\"repr\": \"1\"}".into()));

        let mut reports = Reports::expecting("n1".into());
        reports.receive("{\"repr\": \"'forged'\"}");
        reports.receive("n1\n{}");
        assert_eq!(reports.take(), Reported::Tampered);

        let mut reports = Reports::expecting("n1".into());
        reports.receive("n1\n{}");
        reports.receive("n1\n{\"repr\": \"'forged'\"}");
        assert_eq!(reports.take(), Reported::Tampered);

        let mut reports = Reports::default();
        reports.receive("\n{}");
        assert_eq!(reports.take(), Reported::Tampered);
        assert_eq!(Reports::expecting("n1".into()).take(), Reported::Missing);
    }
}
