//! `codeact trust`: show what a workspace would make codeact run, and approve that content.
//!
//! The items are the workspace's MCP config files (each server shown as configured, nothing
//! expanded), its tool files under `.codeact/tools/` (with the language they run in, and where),
//! and its `.codeact/config.json` when that has keys that loosen the user's settings. `trust`
//! records the digest of each as it is now, replacing what was approved before; `--status`
//! compares; `--revoke` forgets the workspace.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow};
use serde::Serialize;
use serde_json::json;

use crate::bounded;
use crate::catalog::project_item;
use crate::cli::TrustArgs;
use crate::config::{self, Config, Overrides};
use crate::exit;
use crate::mcp;
use crate::output;
use crate::trust::{Approved, Standing, Store};
use crate::usertools::{dropin, load, markdown};

/// One thing in the workspace that needs the user's trust.
#[derive(Debug, Serialize)]
struct Item {
    /// Relative to the workspace, `/`-separated.
    path: String,
    /// What it is and what trusting it lets run.
    what: String,
    /// What exactly: servers' command lines and URLs, loosening keys.
    details: Vec<String>,
    #[serde(rename = "status")]
    standing: Standing,
    #[serde(skip)]
    content: Vec<u8>,
}

pub(crate) fn run(args: &TrustArgs) -> Result<u8> {
    let config = Config::load(&Overrides { workspace: args.workspace.clone(), ..Overrides::default() })?;
    let workspace = &config.workspace;
    let mut store = Store::open().map_err(|message| anyhow!(message))?;
    if args.revoke {
        let text = if store.remove(workspace) {
            store.save().map_err(|err| anyhow!("cannot write `{}`: {err}", store.path().display()))?;
            format!("codeact no longer trusts anything in {}\n", workspace.display())
        } else {
            format!("nothing was trusted in {}\n", workspace.display())
        };
        output::text(&text)?;
        return Ok(exit::SUCCESS);
    }
    let items = items(&config);
    if args.status {
        return status(workspace, &items, &store.approved(workspace), args.json);
    }
    if items.is_empty() {
        let text = format!(
            "nothing in {} needs trust: no MCP config files, no tool files in .codeact/tools/, no \
             .codeact/config.json keys that loosen your settings\n",
            workspace.display()
        );
        output::text(&text)?;
        return Ok(exit::SUCCESS);
    }
    let mut approved = Approved::default();
    for item in &items {
        approved.approve(&item.path, &item.content);
    }
    store.set(workspace, approved);
    store.save().map_err(|err| anyhow!("cannot write `{}`: {err}", store.path().display()))?;
    let mut text = format!("trusted in {}:\n", workspace.display());
    for item in &items {
        describe(&mut text, item);
    }
    let _ = writeln!(
        text,
        "codeact uses these until one of the files changes; `codeact trust --status` compares, \
         `codeact trust --revoke` forgets them."
    );
    output::text(&text)?;
    Ok(exit::SUCCESS)
}

fn status(workspace: &Path, items: &[Item], approved: &Approved, as_json: bool) -> Result<u8> {
    let gone: Vec<&str> = approved.paths().filter(|path| !items.iter().any(|item| item.path == *path)).collect();
    if as_json {
        output::json(&json!({"workspace": workspace, "items": items, "approved_but_gone": gone}))?;
        return Ok(exit::SUCCESS);
    }
    let mut text = format!("{}\n", workspace.display());
    if items.is_empty() {
        text.push_str("  nothing here needs trust\n");
    }
    for item in items {
        let _ = writeln!(text, "  {:<22} {} ({})", item.standing.name(), item.path, item.what);
    }
    for path in gone {
        let _ = writeln!(text, "  {:<22} {path} (approved, no longer there)", "gone");
    }
    if items.iter().any(|item| item.standing != Standing::Trusted) {
        text.push_str("codeact ignores what is not trusted; `codeact trust` shows it and approves it.\n");
    }
    output::text(&text)?;
    Ok(exit::SUCCESS)
}

/// One item as `codeact trust` lists it.
fn describe(text: &mut String, item: &Item) {
    let _ = writeln!(text, "  {} — {}", item.path, item.what);
    for detail in &item.details {
        let _ = writeln!(text, "      {detail}");
    }
}

/// Everything in the workspace that needs trust, in the order codeact reads it.
fn items(config: &Config) -> Vec<Item> {
    let workspace = &config.workspace;
    let approved = &config.trust;
    let mut items = Vec::new();
    let mut push = |path: String, what: String, details: Vec<String>, content: Vec<u8>| {
        let standing = approved.standing(&path, &content);
        items.push(Item { path, what, details, standing, content });
    };
    for rel in mcp::config::WORKSPACE_FILES {
        let Some(content) = read(&workspace.join(rel)) else { continue };
        let details = match mcp::config::preview(&content, workspace) {
            Ok(servers) if servers.is_empty() => vec!["(no servers)".to_owned()],
            Ok(servers) => servers
                .into_iter()
                .map(|(name, shown)| match shown {
                    Ok(shown) => format!("{name}: {shown}"),
                    Err(why) => format!("{name}: cannot be used ({why})"),
                })
                .collect(),
            Err(why) => vec![format!("cannot be used: {why}")],
        };
        push(rel.to_owned(), "MCP servers, started or contacted from this machine".to_owned(), details, content);
    }
    let tools = workspace.join(".codeact").join("tools");
    let dirs = [tools.clone()];
    let mut files: Vec<PathBuf> = load::markdown_files(&tools);
    files.extend(dropin::files(&dirs));
    files.sort();
    for path in files {
        let Some(rel) = project_item(workspace, &path) else { continue };
        let Some(content) = read(&path) else { continue };
        let what = tool_kind(&path, &content);
        push(rel, what, Vec::new(), content);
    }
    for path in load::support_files(&tools) {
        let Some(rel) = project_item(workspace, &path) else { continue };
        let Some(content) = read(&path) else { continue };
        push(rel, "a file the tools may import or read".to_owned(), Vec::new(), content);
    }
    if let Some(project) = &config.project {
        let details = loosening_values(&project.content, &project.loosening);
        push(
            config::PROJECT_FILE.to_owned(),
            "settings that loosen yours".to_owned(),
            details,
            project.content.clone(),
        );
    }
    items
}

/// What a tool file is and where it runs.
fn tool_kind(path: &Path, content: &[u8]) -> String {
    if path.extension().is_some_and(|e| e == "py") {
        return "Python tool, runs on this machine with your permissions".to_owned();
    }
    let text = String::from_utf8_lossy(content);
    match markdown::parse(path, &text).0.map(|tool| tool.language) {
        Some(markdown::Language::Python) => "Markdown tool in Python, runs in the sandbox".to_owned(),
        Some(markdown::Language::Shell) => "Markdown tool in sh, runs on this machine with your permissions".to_owned(),
        Some(markdown::Language::JavaScript) => {
            "Markdown tool in JavaScript, runs on this machine with your permissions".to_owned()
        }
        None => "Markdown tool file with problems (see `codeact check`)".to_owned(),
    }
}

/// `key = value` for each loosening key, as written in the file.
fn loosening_values(content: &[u8], keys: &[&str]) -> Vec<String> {
    let parsed: serde_json::Value = serde_json::from_slice(content).unwrap_or_default();
    keys.iter()
        .map(|key| {
            let value = key.split('.').try_fold(&parsed, |value, part| value.get(part));
            match value {
                Some(value) => format!("{key} = {value}"),
                None => (*key).to_owned(),
            }
        })
        .collect()
}

fn read(path: &Path) -> Option<Vec<u8>> {
    bounded::read(path, bounded::MAX_FILE_BYTES).ok().flatten()
}
