//! `codeact detect`: what `auto` runs here, and why: Monty first, and the CPython backend that
//! runs a program Monty cannot.

use std::fmt::Write as _;

use anyhow::Result;
use serde_json::json;

use crate::backend::{self, Choice};
use crate::cli::JsonArgs;
use crate::exit;
use crate::output;

pub(crate) fn run(args: &JsonArgs) -> Result<u8> {
    let statuses = backend::statuses();
    let cpython: Vec<&backend::Status> = statuses.iter().filter(|s| s.backend != Choice::Monty).collect();
    let fallback = cpython.iter().find(|s| s.available).map(|s| s.backend.name());
    if args.json {
        output::json(&json!({"auto": "monty", "fallback": fallback, "backends": statuses}))?;
        return Ok(exit::SUCCESS);
    }
    let mut text = String::from("auto runs monty");
    if let Some(name) = fallback {
        let _ = write!(text, ", and {name} where Monty cannot");
    } else {
        let names: Vec<&str> = cpython.iter().map(|s| s.backend.name()).collect();
        let _ = write!(text, " only ({} unavailable)", names.join(" and "));
    }
    text.push('\n');
    for status in &statuses {
        let mark = if status.available { "yes" } else { "no" };
        let _ = writeln!(text, "  {:<11} {mark:<4} {}", status.backend.name(), status.reason);
    }
    output::text(&text)?;
    Ok(exit::SUCCESS)
}
