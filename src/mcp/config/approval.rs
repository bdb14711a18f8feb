//! What the user approves of a workspace config file (`codeact trust`) and what the loader checks
//! against it: the file, and every `envFile` inside the workspace that its servers name, since a
//! repository's `.env` can set `LD_PRELOAD` or `NODE_OPTIONS` for a server as surely as its
//! `env` can. [`preview`] shows each server as configured, nothing expanded and nothing read.

use std::path::Path;

use serde_json::Value;

use super::entry::{Transport, disabled, entries, server};
use super::env_file::{EnvFile, EnvState, Place, place};
use super::expand::{Purpose, Syntax, Vars, expand_into};
use crate::paths;
use crate::trust::quote::{quote, shell_word};

/// One server as `codeact trust` shows it: its name, and either every field of its entry that
/// reaches it (see [`preview`]) or why it cannot be used. All repository text in it is quoted
/// ([`quote`]), its name included.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Preview {
    pub(crate) name: String,
    pub(crate) shown: Result<Vec<String>, String>,
}

/// Each server in a config file, shown as configured (nothing expanded), or why it cannot be
/// used: what `codeact trust` asks the user to approve. The first line is the command line or
/// URL; then each header, each `env` variable, `cwd` and `envFile`, with its `${…}` templates,
/// since each reaches the server: a header or a variable can carry a secret of the user's
/// environment to it. An `envFile` inside the workspace is summed up as `approval` has it (the
/// names it sets); one outside is said to be read as it is. A disabled server is shown too,
/// since enabling it changes the file and asks again.
pub(crate) fn preview(
    content: &[u8],
    workspace: &Path,
    approval: &Approval,
    syntax: Syntax,
) -> Result<Vec<Preview>, String> {
    // Every variable "expands" to nothing: only the configured text is shown.
    let unexpanded = |_: &str| Some(String::new());
    let mut vars = Vars::new(workspace, &unexpanded, Purpose::Preview);
    vars.syntax = syntax;
    Ok(entries(content)
        .map_err(|fault| quote(&fault.message).into_owned())?
        .into_iter()
        .map(|(name, entry)| {
            let disabled = matches!(disabled(&entry), Ok(true));
            let shown = server(&name, &entry, Path::new(""), &vars)
                .map(|server| {
                    let line = if disabled { format!("{} (disabled)", server.shown) } else { server.shown.clone() };
                    let env_file = approval.env_files.iter().find(|file| file.server == name);
                    std::iter::once(line).chain(fields(&entry, &server.transport, env_file)).collect()
                })
                .map_err(|fault| quote(&fault.message).into_owned());
            Preview { name: quote(&name).into_owned(), shown }
        })
        .collect())
}

/// The lines for each field of a valid `entry` other than its command line or URL that reaches
/// the server, as configured: `header NAME: VALUE`, `env NAME=VALUE`, `cwd PATH`, `envFile PATH`.
fn fields(entry: &Value, transport: &Transport, env_file: Option<&EnvFile>) -> Vec<String> {
    let table = |key: &str| -> Vec<(String, String)> {
        let map = entry.get(key).and_then(Value::as_object);
        map.into_iter()
            .flatten()
            .map(|(name, value)| (quote(name).into_owned(), shell_word(value.as_str().unwrap_or_default())))
            .collect()
    };
    let text = |key: &str| entry.get(key).and_then(Value::as_str).map(shell_word);
    let mut lines = Vec::new();
    match transport {
        Transport::Http { .. } => {
            lines.extend(table("headers").into_iter().map(|(name, value)| format!("header {name}: {value}")));
        }
        Transport::Stdio { .. } => {
            lines.extend(table("env").into_iter().map(|(name, value)| format!("env {name}={value}")));
            lines.extend(text("cwd").map(|cwd| format!("cwd {cwd}")));
            lines.extend(text("envFile").map(|path| match env_file {
                Some(file) => format!("envFile {path}: {}", file.summary()),
                None => format!("envFile {path}: outside the workspace as the environment is now: your own file, read as it is when the server starts"),
            }));
        }
    }
    lines
}

/// What the user approves of a workspace config file, and what [`load`](super::load::load) checks against it: one
/// function for both, so `codeact trust` and the loader cannot disagree.
#[derive(Debug)]
pub(crate) struct Approval {
    /// What the digest is taken of: the file's bytes, then, for each env file, its path and
    /// what it holds (framed by lengths, after a NUL that valid JSON cannot hold). With no env
    /// file it is the file's bytes alone.
    pub(crate) content: Vec<u8>,
    /// Each `envFile` inside the workspace that an entry names, in entry order.
    pub(crate) env_files: Vec<EnvFile>,
}

/// What the user approves of the workspace config file `content`: the file, and every
/// `envFile` its entries name that lies inside the workspace, as each is now (a missing one
/// too, so adding it asks again). `lookup` resolves the environment as the run does, so the
/// path is the one the server would read; one that names a variable which is not set is a
/// problem when the server starts and reads nothing, so it adds nothing here.
///
/// An `envFile` outside the workspace is the user's own file, as their Copilot CLI config is:
/// it is read as it is and approved by nobody. Whose a path is follows where it is written,
/// `.` and `..` taken as written: a symbolic link inside the workspace on the way to it, or one
/// outside that leads into the workspace, makes it a file that is never read (see [`place`]).
/// Disabled entries read nothing and add nothing: enabling one changes the file.
pub(crate) fn approval(
    content: &[u8],
    workspace: &Path,
    lookup: &dyn Fn(&str) -> Option<String>,
    syntax: Syntax,
) -> Approval {
    let mut env_files = Vec::new();
    let mut vars = Vars::new(workspace, lookup, Purpose::Run);
    vars.syntax = syntax;
    for (name, entry) in entries(content).unwrap_or_default() {
        let Some(Value::String(configured)) = entry.get("envFile").filter(|_| matches!(disabled(&entry), Ok(false)))
        else {
            continue;
        };
        let Ok(path) = expand_into(configured, &vars, &mut Vec::new()) else { continue };
        let (full, state) = match place(workspace, &path) {
            Place::Outside(_) => continue,
            Place::Link(full) => (full, EnvState::Link),
            Place::Workspace(full) => {
                let state = EnvState::of(&full);
                (full, state)
            }
        };
        let shown = full.strip_prefix(paths::lexical(workspace)).map_or_else(
            |_| configured.clone(),
            |rel| rel.components().map(|part| part.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/"),
        );
        env_files.push(EnvFile { server: name, path: shown, full, state });
    }
    let mut framed = content.to_vec();
    for file in &env_files {
        framed
            .extend_from_slice(format!("\0envFile {}:{} {} ", file.path.len(), file.path, file.state.tag()).as_bytes());
        if let EnvState::Read(bytes) = &file.state {
            framed.extend_from_slice(format!("{}:", bytes.len()).as_bytes());
            framed.extend_from_slice(bytes);
        }
    }
    Approval { content: framed, env_files }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::super::entry::Transport;
    use super::super::fixtures::{env, env_files_of, found, load_servers, only_server, trusting};
    use super::super::load::load;
    use super::*;
    use crate::trust::Approved;

    #[test]
    fn the_approval_covers_each_env_file_in_the_workspace_and_no_other() {
        let temp = tempfile::tempdir().unwrap();
        let ws = temp.path().join("ws");
        std::fs::create_dir_all(ws.join("conf")).unwrap();
        std::fs::write(ws.join(".env"), "A=secret-a\nexport B='b'\n").unwrap();
        std::fs::write(temp.path().join("outside.env"), "O=1\n").unwrap();
        let outside = temp.path().join("outside.env").display().to_string();
        let servers = json!({
            "a": {"command": "x", "envFile": ".env"},
            "b": {"command": "x", "envFile": "${workspaceFolder}/conf/../conf/./later.env"},
            "c": {"command": "x", "envFile": outside},
            "d": {"command": "x", "envFile": "../outside.env"},
            "e": {"command": "x", "envFile": "${env:UNSET}/.env"},
            "f": {"command": "x", "envFile": ".env", "disabled": true},
            "g": {"command": "x"},
        });
        let (content, files) = env_files_of(&ws, &servers);
        assert_eq!(
            files,
            [
                found("a", ".env", "`.env` sets A, B"),
                found("b", "conf/later.env", "`conf/later.env` is not there yet (adding it asks for trust again)"),
            ]
        );
        // The same files give the same bytes; a change to one, or a new one, gives others.
        assert_eq!(env_files_of(&ws, &servers).0, content);
        std::fs::write(temp.path().join("outside.env"), "O=2\n").unwrap();
        assert_eq!(env_files_of(&ws, &servers).0, content);
        std::fs::write(ws.join("conf/later.env"), "").unwrap();
        let (added, _) = env_files_of(&ws, &servers);
        assert_ne!(added, content);
        std::fs::write(ws.join(".env"), "A=secret-a\nexport B='c'\n").unwrap();
        assert_ne!(env_files_of(&ws, &servers).0, added);
        // A file without env files is approved as it is, as before.
        let plain = json!({"mcpServers": {"g": {"command": "x"}}}).to_string();
        assert_eq!(approval(plain.as_bytes(), &ws, &env, Syntax::Editor).content, plain.as_bytes());
    }

    #[test]
    fn a_changed_env_file_untrusts_its_config_and_what_runs_is_what_was_approved() {
        let (temp, loaded) = load_servers(&json!({"s": {"command": "x", "envFile": ".env"}}), &[(".env", "A=1\n")]);
        let ws = temp.path();
        let Transport::Stdio { env: vars, .. } = &only_server(&loaded).transport else { panic!("not stdio") };
        assert_eq!(vars["A"], "1");
        let trust = trusting(ws);
        std::fs::write(ws.join(".env"), "A=1\nNODE_OPTIONS=--require=/tmp/x.js\n").unwrap();
        let loaded = load(ws, &[], &trust, &env);
        assert_eq!((loaded.servers.len(), loaded.untrusted), (0, vec![".mcp.json".to_owned()]));
        // Never approved: left unread.
        let loaded = load(ws, &[], &Approved::default(), &env);
        assert_eq!(loaded.untrusted, [".mcp.json"]);
    }

    #[test]
    fn the_preview_shows_servers_as_configured_without_reading_anything() {
        let content = json!({"servers": {
            "a": {"command": "run", "args": ["${env:UNSET}", "${workspaceFolder}"], "envFile": "missing.env"},
            "b": {"command": "x", "env": {"T": "${input:tok}"}},
            "c": {"url": "https://${HOST}/mcp", "disabled": true, "headers": {"H": "${env:TOKEN}"}},
        }})
        .to_string();
        let nothing = Approval { content: Vec::new(), env_files: Vec::new() };
        let shown = preview(content.as_bytes(), Path::new("/nowhere"), &nothing, Syntax::Editor).unwrap();
        let preview = |name: &str, shown: Result<&[&str], &str>| Preview {
            name: name.to_owned(),
            shown: shown.map(|lines| lines.iter().map(|line| (*line).to_owned()).collect()).map_err(str::to_owned),
        };
        assert_eq!(
            shown,
            [
                preview(
                    "a",
                    Ok(&[
                        "run ${env:UNSET} ${workspaceFolder}",
                        "envFile missing.env: outside the workspace as the environment is now: your own file, read as \
                         it is when the server starts",
                    ])
                ),
                preview(
                    "b",
                    Err("VS Code input variables (`${input:tok}`) are not supported: codeact cannot prompt; put the \
                         value in an environment variable and write `${env:NAME}`")
                ),
                preview("c", Ok(&["https://${HOST}/mcp (disabled)", "header H: ${env:TOKEN}"])),
            ]
        );
    }
}
