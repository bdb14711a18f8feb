//! `codeact session list` and `codeact session rm`: the sessions `codeact run --session NAME`
//! keeps in codeact's state folder (`crate::session`).

use std::fmt::Write as _;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context as _, Result};
use serde_json::json;

use crate::cli::SessionCommand;
use crate::exit::{self, UsageError};
use crate::hint::Hint;
use crate::limits::format_size;
use crate::output;
use crate::session;

pub(crate) fn run(command: &SessionCommand) -> Result<u8> {
    match command {
        SessionCommand::List(args) => list(args.json),
        SessionCommand::Rm { names, all } => remove(names, *all),
    }
}

fn list(as_json: bool) -> Result<u8> {
    let saved = session::list().context("failed to list the saved sessions")?;
    if as_json {
        let sessions: Vec<_> = saved
            .iter()
            .map(|saved| {
                let modified = saved.modified.and_then(|time| time.duration_since(UNIX_EPOCH).ok());
                json!({"name": saved.name, "bytes": saved.bytes, "modified": modified.map(|time| time.as_secs())})
            })
            .collect();
        output::json(&json!({"sessions": sessions}))?;
        return Ok(exit::SUCCESS);
    }
    if saved.is_empty() {
        output::diagnostic("no saved sessions (`codeact run --session NAME` keeps one)");
        return Ok(exit::SUCCESS);
    }
    let width = saved.iter().map(|saved| saved.name.len()).max().unwrap_or(0);
    let mut text = String::new();
    for saved in &saved {
        let size = format_size(usize::try_from(saved.bytes).unwrap_or(usize::MAX));
        let _ = writeln!(text, "{:width$}  {size:>10}  {}", saved.name, ago(saved.modified));
    }
    output::text(&text)?;
    Ok(exit::SUCCESS)
}

/// When a session last ran, as "3 min ago".
fn ago(modified: Option<SystemTime>) -> String {
    let Some(elapsed) = modified.and_then(|time| time.elapsed().ok()) else { return "just now".into() };
    match elapsed.as_secs() {
        0..60 => "just now".into(),
        seconds @ 60..3600 => format!("{} min ago", seconds / 60),
        seconds @ 3600..86_400 => format!("{} h ago", seconds / 3600),
        seconds => format!("{} days ago", seconds / 86_400),
    }
}

fn remove(names: &[String], all: bool) -> Result<u8> {
    let names: Vec<String> = if all {
        session::list().context("failed to list the saved sessions")?.into_iter().map(|saved| saved.name).collect()
    } else {
        for name in names {
            session::check_name(name)?;
        }
        names.to_vec()
    };
    let mut missing = Vec::new();
    for name in &names {
        if session::remove(name).with_context(|| format!("failed to remove the session `{name}`"))? {
            output::diagnostic(&format!("removed the session `{name}`"));
        } else {
            missing.push(name.as_str());
        }
    }
    if missing.is_empty() {
        return Ok(exit::SUCCESS);
    }
    Err(UsageError {
        message: format!(
            "no saved session named {}",
            missing.iter().map(|name| format!("`{name}`")).collect::<Vec<_>>().join(", ")
        ),
        hint: Some(Hint::new("`codeact session list` shows the saved sessions")),
    }
    .into())
}
