//! `codeact trust`: show what a workspace would make codeact run, and approve that content.
//!
//! The items are the workspace's MCP config files (each server shown as configured, nothing
//! expanded: its command line or URL and every field that reaches it — headers, `env`, `cwd`,
//! `envFile` — and for each `envFile` inside the workspace the names of the variables it sets,
//! never their values; the approval covers their content), the files of every tools folder of
//! the workspace (each tool with the language it runs in, and where; links named as links) —
//! `.codeact/tools/`, an agent folder's `tools/`, the project config's `tool_dirs` and
//! `--tools` folders inside the workspace — and its `.codeact/config.json` when that has keys
//! that loosen the user's settings. `trust` records the digest of each as it is now, replacing
//! what was approved before; `--status` compares; `--revoke` forgets the workspace. A tools
//! folder reached through a symbolic link, or too large to survey, is never used, so nothing in
//! it is listed; `trust` says so, as it names each file no approval can cover.
//!
//! Everything printed that came from a file goes through [`quote`], so that the listing shows
//! what it approves and no line of it can be forged.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Result, anyhow};
use serde::Serialize;
use serde_json::json;

use crate::catalog::project_item;
use crate::cli::TrustArgs;
use crate::config::{self, Config, Overrides};
use crate::exit;
use crate::mcp;
use crate::output;
use crate::trust::quote::quote;
use crate::trust::{Approved, Standing, Store};
use crate::usertools::folders::Origin;
use crate::usertools::load::{self, Role};
use crate::usertools::markdown;

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
    let config = Config::load(&Overrides {
        workspace: args.workspace.clone(),
        tools: args.tools.clone(),
        ..Overrides::default()
    })?;
    let workspace = &config.workspace;
    let mut store = Store::open().map_err(|message| anyhow!(message))?;
    if args.revoke {
        let text = if store.remove(workspace) {
            store.save().map_err(|err| anyhow!("cannot write `{}`: {err}", store.path().display()))?;
            format!("codeact no longer trusts anything in {}\n", quote(&workspace.to_string_lossy()))
        } else {
            format!("nothing was trusted in {}\n", quote(&workspace.to_string_lossy()))
        };
        output::text(&text)?;
        return Ok(exit::SUCCESS);
    }
    let (items, links) = items(&config);
    for link in &links {
        output::warning(&format!(
            "`{}` is a symbolic link: codeact uses no tools folder reached through one; make it a real directory",
            quote(link)
        ));
    }
    if args.status {
        return status(workspace, &items, &store.approved(workspace), args.json);
    }
    if items.is_empty() {
        let text = format!(
            "nothing in {} needs trust: no MCP config files, no tool files in .codeact/tools/, an agent \
             folder's tools/ or another tools folder of the workspace, no .codeact/config.json keys that loosen \
             your settings\n",
            quote(&workspace.to_string_lossy())
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
    let mut text = format!("trusted in {}:\n", quote(&workspace.to_string_lossy()));
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
    let mut text = format!("{}\n", quote(&workspace.to_string_lossy()));
    if items.is_empty() {
        text.push_str("  nothing here needs trust\n");
    }
    for item in items {
        let _ = writeln!(text, "  {:<22} {} ({})", item.standing.name(), quote(&item.path), item.what);
    }
    for path in gone {
        let _ = writeln!(text, "  {:<22} {} (approved, no longer there)", "gone", quote(path));
    }
    if items.iter().any(|item| item.standing != Standing::Trusted) {
        text.push_str("codeact ignores what is not trusted; `codeact trust` shows it and approves it.\n");
    }
    output::text(&text)?;
    Ok(exit::SUCCESS)
}

/// One item as `codeact trust` lists it.
fn describe(text: &mut String, item: &Item) {
    let _ = writeln!(text, "  {} — {}", quote(&item.path), item.what);
    for detail in &item.details {
        let _ = writeln!(text, "      {detail}");
    }
}

/// Everything in the workspace that needs trust, in the order codeact reads it, and the
/// symbolic links on the way to a tools folder of the workspace (relative to it).
fn items(config: &Config) -> (Vec<Item>, Vec<String>) {
    let workspace = &config.workspace;
    let approved = &config.trust;
    let mut items = Vec::new();
    let mut push = |path: String, what: String, details: Vec<String>, content: Vec<u8>| {
        let standing = approved.standing(&path, &content);
        items.push(Item { path, what, details, standing, content });
    };
    let lookup = |name: &str| std::env::var(name).ok();
    for source in mcp::config::Source::workspace(workspace) {
        let Some(rel) = source.rel else { continue };
        // Another agent's file is shown and approved as its servers, not its other settings.
        let (content, unreadable) = match mcp::config::read_source(&source, workspace) {
            Ok(Some(content)) if mcp::config::only_codeact(&content, workspace) => continue,
            Ok(Some(content)) => (content, None),
            Ok(None) => continue,
            // What is approved is that it could not be read, never bytes read through a link.
            Err(fault) => (format!("unreadable: {}", fault.rule).into_bytes(), Some(fault.message)),
        };
        let syntax = source.dialect.syntax();
        let approval = mcp::config::approval(&content, workspace, &lookup, syntax);
        let previewed = match unreadable {
            Some(why) => Err(quote(&why).into_owned()),
            None => mcp::config::preview(&content, workspace, &approval, syntax),
        };
        let details = match previewed {
            Ok(servers) if servers.is_empty() => vec!["(no servers)".to_owned()],
            Ok(servers) => servers
                .into_iter()
                .flat_map(|server| match server.shown {
                    Ok(lines) => lines
                        .into_iter()
                        .enumerate()
                        .map(
                            |(at, line)| if at == 0 { format!("{}: {line}", server.name) } else { format!("  {line}") },
                        )
                        .collect(),
                    Err(why) => vec![format!("{}: cannot be used ({why})", server.name)],
                })
                .collect(),
            Err(why) => vec![format!("cannot be used: {why}")],
        };
        let what = "MCP servers, started or contacted from this machine".to_owned();
        push(rel.to_owned(), what, details, approval.content);
    }
    let mut links = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    for dir in config.tool_dirs_once_trusted().iter().filter(|dir| dir.origin == Origin::Workspace) {
        if let Some(link) = dir.link(workspace) {
            links.push(link);
            continue;
        }
        let folder = project_item(workspace, dir, &dir.path).unwrap_or_default();
        let entries = match load::survey(&dir.path) {
            Ok(entries) => entries,
            Err(too_big) => {
                output::warning(&format!(
                    "`{}` holds {too_big}: codeact uses no tools folder this large, so nothing in it is listed",
                    quote(&folder)
                ));
                continue;
            }
        };
        for entry in entries {
            let Some(rel) = project_item(workspace, dir, &entry.path).filter(|rel| !seen.contains(rel)) else {
                continue;
            };
            let content = match entry.content(dir) {
                Ok(content) => content,
                Err(why) => {
                    output::warning(&format!(
                        "`{}` cannot be trusted ({}): the tools of `{}` stay unused while it is there",
                        quote(&rel),
                        quote(&why),
                        quote(&folder)
                    ));
                    continue;
                }
            };
            let what = match &entry.role {
                Role::Tool => tool_kind(&entry.path, &content),
                Role::Support => "a file the tools may import or read".to_owned(),
                Role::Link(target) => format!(
                    "a symbolic link to `{}`, a file of the same tools folder",
                    quote(&target.to_string_lossy())
                ),
            };
            seen.push(rel.clone());
            push(rel, what, Vec::new(), content);
        }
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
    (items, links)
}

/// What a tool file is and where it runs.
fn tool_kind(path: &Path, content: &[u8]) -> String {
    if path.extension().is_some_and(|e| e == "py") {
        return "Python tool, runs on this machine with your permissions".to_owned();
    }
    let text = String::from_utf8_lossy(content);
    let language = match markdown::parse_file(path, &text).tool {
        Some(markdown::ToolFile::Custom(tool)) => tool.code.language,
        Some(markdown::ToolFile::Prebuilt(name)) => {
            let shown = quote(name);
            return match markdown::prebuilt_equivalent(name) {
                Some(ours) => format!("pre-built tool `{shown}`: codeact's own `{ours}`, nothing of its own runs"),
                None => format!("pre-built tool `{shown}`, which codeact does not have: nothing runs"),
            };
        }
        None => return "Markdown tool file with problems (see `codeact check`)".to_owned(),
    };
    match language {
        markdown::Language::Python => "Markdown tool in Python, runs in the sandbox".to_owned(),
        markdown::Language::Shell => "Markdown tool in sh, runs on this machine with your permissions".to_owned(),
        markdown::Language::JavaScript => {
            "Markdown tool in JavaScript, runs on this machine with your permissions".to_owned()
        }
    }
}

/// `key = value` for each loosening key, as written in the file.
fn loosening_values(content: &[u8], keys: &[&str]) -> Vec<String> {
    let parsed: serde_json::Value = serde_json::from_slice(content).unwrap_or_default();
    keys.iter()
        .map(|key| {
            let value = key.split('.').try_fold(&parsed, |value, part| value.get(part));
            match value {
                Some(value) => format!("{key} = {}", quote(&value.to_string())),
                None => (*key).to_owned(),
            }
        })
        .collect()
}
