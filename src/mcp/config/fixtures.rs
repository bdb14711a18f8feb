//! What the config modules' tests share: an environment, and workspaces loaded trusted.

use std::path::Path;

use serde_json::{Value, json};

use super::approval::approval;
use super::entry::Server;
use super::load::{Configured, load, read_source};
use super::sources::Source;
use crate::trust::Approved;

pub(super) fn env(name: &str) -> Option<String> {
    match name {
        "TOKEN" => Some("t0k".into()),
        "HOME" => Some("/home/u".into()),
        "EMPTY" => Some(String::new()),
        "SECRET" => Some("s3cret-value".into()),
        _ => None,
    }
}

/// Approves every workspace config file as it is now, as `codeact trust` does.
pub(super) fn trusting(ws: &Path) -> Approved {
    let mut approved = Approved::default();
    for source in Source::workspace(ws) {
        if let (Some(rel), Ok(Some(content))) = (source.rel, read_source(&source, ws)) {
            approved.approve(rel, &approval(&content, ws, &env, source.dialect.syntax()).content);
        }
    }
    approved
}

/// A workspace with `.mcp.json` holding `servers` (and `files`, relative to it), loaded trusted.
pub(super) fn load_servers(servers: &Value, files: &[(&str, &str)]) -> (tempfile::TempDir, Configured) {
    let temp = tempfile::tempdir().unwrap();
    let ws = temp.path();
    std::fs::write(ws.join(".mcp.json"), json!({"mcpServers": servers}).to_string()).unwrap();
    for (path, text) in files {
        std::fs::create_dir_all(ws.join(path).parent().unwrap()).unwrap();
        std::fs::write(ws.join(path), text).unwrap();
    }
    let loaded = load(ws, &[], &trusting(ws), &env);
    (temp, loaded)
}

/// The one server of a load, which must have no problem.
pub(super) fn only_server(loaded: &Configured) -> &Server {
    assert_eq!(loaded.problems, []);
    assert_eq!(loaded.servers.len(), 1);
    &loaded.servers[0]
}

/// The message of each problem of a load, by server name.
pub(super) fn messages(loaded: &Configured) -> Vec<(&str, &str)> {
    loaded.problems.iter().map(|p| (p.name.as_str(), p.message.as_str())).collect()
}

/// The env files `approval` finds for `.mcp.json` holding `servers` in `ws`: (server, path,
/// summary).
pub(super) fn env_files_of(ws: &Path, servers: &Value) -> (Vec<u8>, Vec<(String, String, String)>) {
    let content = json!({"mcpServers": servers}).to_string();
    let approval = approval(content.as_bytes(), ws, &env, super::expand::Syntax::Editor);
    let files = approval.env_files.iter().map(|f| (f.server.clone(), f.path.clone(), f.summary())).collect();
    (approval.content, files)
}

pub(super) fn found(server: &str, path: &str, summary: &str) -> (String, String, String) {
    (server.to_owned(), path.to_owned(), summary.to_owned())
}
