//! `codeact detect`: which backend `auto` picks here, and why.

use std::fmt::Write as _;

use anyhow::Result;
use serde_json::json;

use crate::backend;
use crate::cli::JsonArgs;
use crate::exit;
use crate::output;

pub(crate) fn run(args: &JsonArgs) -> Result<u8> {
    let statuses = backend::statuses();
    let picked = statuses.iter().find(|s| s.available).map_or("none", |s| s.backend.name());
    if args.json {
        output::json(&json!({"auto": picked, "backends": statuses}))?;
        return Ok(exit::SUCCESS);
    }
    let skipped: Vec<&str> = statuses.iter().take_while(|s| !s.available).map(|s| s.backend.name()).collect();
    let mut text = format!("auto picks {picked}");
    if !skipped.is_empty() {
        let _ = write!(text, " ({} unavailable)", skipped.join(" and "));
    }
    text.push('\n');
    for status in &statuses {
        let mark = if status.available { "yes" } else { "no" };
        let _ = writeln!(text, "  {:<11} {mark:<4} {}", status.backend.name(), status.reason);
    }
    output::text(&text)?;
    Ok(exit::SUCCESS)
}
