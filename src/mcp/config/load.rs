//! Where MCP servers are configured and which wins: the workspace's files
//! ([`WORKSPACE_SOURCES`](super::sources::WORKSPACE_SOURCES): `.mcp.json`, `.vscode/mcp.json`,
//! `.github/copilot/mcp.json`, then those of Cursor, Gemini CLI, Qwen Code, Codex CLI and
//! OpenCode), then the user's own (every agent's, [`Source::user`]), earlier sources winning on a
//! name clash. A workspace file is
//! read only when the user trusts its content ([`approval`](mod@super::approval)); what cannot be read or
//! used is kept as a [`BadEntry`], and a disabled server takes its name without starting.

use std::path::{Path, PathBuf};

use super::approval::approval;
use super::entry::{Fault, Server, ServerEntry, Transport, entries};
use super::expand::{Purpose, Vars};
use super::sources::Source;
use crate::bounded;
use crate::env;
use crate::platform::{self, Canonical as _};
use crate::trust::quote::quote;
use crate::trust::{Approved, Standing};

/// What the config files hold.
#[derive(Debug, Default)]
pub(crate) struct Configured {
    pub(crate) servers: Vec<Server>,
    pub(crate) problems: Vec<BadEntry>,
    /// The workspace files left unread because the user does not trust their content.
    pub(crate) untrusted: Vec<String>,
    /// The servers configured with `"disabled": true`: not started, and not problems.
    pub(crate) disabled: Vec<String>,
}

/// A server entry that could not be understood, reported instead of used. A problem with the
/// whole file has no `name`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BadEntry {
    pub(crate) name: String,
    pub(crate) source: PathBuf,
    pub(crate) message: String,
}

impl BadEntry {
    /// The problem in one line for people, naming the file (relative to `workspace` when it is
    /// there) and the server: "`.vscode/mcp.json`: MCP server `y` cannot be used: …".
    #[must_use]
    pub(crate) fn describe(&self, workspace: &Path) -> String {
        let path = self.source.strip_prefix(workspace).unwrap_or(&self.source).display();
        // A name or a message may carry a file's text: quoted, so no line or escape is forged.
        let message = quote(&self.message);
        if self.name.is_empty() {
            format!("`{path}`: its MCP servers cannot be used: {message}")
        } else {
            format!("`{path}`: MCP server `{}` cannot be used: {message}", quote(&self.name))
        }
    }
}

/// The file at `source` in the editors' form ([`Dialect::canonical`](super::sources::Dialect::canonical)),
/// `None` when there is none or it names no server.
/// A workspace file is read only where it really is inside the workspace: a link out of it
/// (to a file of the user's, say) is refused unread.
pub(crate) fn read_source(source: &Source, workspace: &Path) -> Result<Option<Vec<u8>>, Fault> {
    if source.rel.is_some()
        && let Ok(real) = source.path.canonical()
        && !workspace.canonical().is_ok_and(|root| platform::is_within(&real, &root))
    {
        return Err(Fault::new("mcp-file-outside", "it leads out of the workspace (a symbolic link): not read"));
    }
    match bounded::read(&source.path, source.dialect.max_bytes()) {
        Ok(Some(content)) => source.dialect.canonical(&content, workspace),
        Ok(None) => Ok(None),
        Err(err) => Err(Fault::new("mcp-file-unreadable", format!("cannot be read: {err}"))),
    }
}

/// Reads every source: the workspace's files the user trusts, then `users` (the user's own,
/// [`Source::user`]); `lookup` resolves environment variables. A codeact started as another
/// codeact's MCP server reads none, and no entry that is codeact's own server is started.
pub(crate) fn load(
    workspace: &Path,
    users: &[Source],
    trust: &Approved,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Configured {
    let mut loaded = Configured::default();
    if lookup(env::NESTED).is_some() {
        return loaded;
    }
    let root = workspace.canonical().unwrap_or_else(|_| workspace.to_path_buf());
    for source in Source::workspace(workspace).iter().chain(users) {
        let path = &source.path;
        // A user's file that lies in the workspace (an agent's home variable pointing there)
        // is the repository's: only the workspace's own files, trusted, are read from there.
        let in_workspace = |path: &Path| platform::is_within(path, &root) || platform::is_within(path, workspace);
        if source.rel.is_none()
            && (!path.is_absolute() || in_workspace(path) || path.canonical().is_ok_and(|real| in_workspace(&real)))
        {
            continue;
        }
        // A workspace file at a path where nothing was ever approved is untrusted, broken or
        // not: nothing in it is looked at further, and no problem of it is shown.
        let never_approved = source.rel.filter(|rel| trust.standing(rel, &[]) == Standing::Untrusted);
        let content = match (read_source(source, workspace), never_approved) {
            (Ok(None), _) => continue,
            // Nothing to trust: all it starts is codeact itself, which is never started.
            (Ok(Some(content)), _) if source.rel.is_some() && only_codeact(&content, workspace) => continue,
            (Ok(Some(_)) | Err(_), Some(rel)) => {
                loaded.untrusted.push(rel.to_owned());
                continue;
            }
            (Ok(Some(content)), None) => content,
            (Err(fault), None) => {
                loaded.problems.push(BadEntry { name: String::new(), source: path.clone(), message: fault.message });
                continue;
            }
        };
        let mut vars = Vars::new(workspace, lookup, Purpose::Run);
        vars.syntax = source.dialect.syntax();
        if let Some(rel) = source.rel {
            let approval = Some(approval(&content, workspace, lookup, vars.syntax))
                .filter(|approval| trust.trusts(rel, &approval.content));
            let Some(approval) = approval else {
                loaded.untrusted.push(rel.to_owned());
                continue;
            };
            vars.approved_env_files = Some(approval.env_files);
        }
        let entries = match entries(&content) {
            Ok(entries) => entries,
            Err(fault) => {
                loaded.problems.push(BadEntry { name: String::new(), source: path.clone(), message: fault.message });
                continue;
            }
        };
        for (name, entry) in entries {
            if loaded.servers.iter().any(|s| s.name == name) || loaded.disabled.contains(&name) {
                continue;
            }
            match super::entry::entry(&name, &entry, path, &vars) {
                Ok(ServerEntry::Server(server)) if server.is_codeact() => {}
                Ok(ServerEntry::Server(server)) => {
                    loaded.servers.push(Server { from_workspace: source.rel.is_some(), ..*server });
                }
                Ok(ServerEntry::Disabled) => loaded.disabled.push(name),
                Err(fault) => loaded.problems.push(BadEntry { name, source: path.clone(), message: fault.message }),
            }
        }
    }
    loaded
}

/// Whether every server of a config file is codeact's own as `codeact setup` writes it into a
/// project: `codeact` (or an absolute path outside the workspace to a program of that name)
/// with `mcp serve`, or a URL on this machine. A file with nothing else needs no trust; any
/// other command, which another agent would run, does.
pub(crate) fn only_codeact(content: &[u8], workspace: &Path) -> bool {
    let Ok(entries) = entries(content) else { return false };
    let unexpanded = |_: &str| None;
    let vars = Vars::new(workspace, &unexpanded, Purpose::Preview);
    !entries.is_empty()
        && entries.iter().all(|(name, entry)| {
            let Ok(server) = super::entry::server(name, entry, Path::new(""), &vars) else { return false };
            match &server.transport {
                Transport::Stdio { command, args, .. } => {
                    let program = Path::new(command);
                    let ours = command == "codeact"
                        || (program.is_absolute()
                            && !platform::is_within(program, workspace)
                            && !workspace.canonical().is_ok_and(|root| platform::is_within(program, &root)));
                    ours && server.is_codeact() && args.starts_with(&["mcp".to_owned(), "serve".to_owned()])
                }
                Transport::Http { url, .. } => {
                    name == "codeact"
                        && url::Url::parse(url).is_ok_and(|url| match url.host() {
                            Some(url::Host::Domain(host)) => host == "localhost",
                            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
                            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
                            None => false,
                        })
                }
            }
        })
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::super::entry::Transport;
    use super::super::fixtures::{env, load_servers, messages, trusting};
    use super::*;

    #[test]
    fn earlier_sources_win_and_both_spellings_are_read() {
        let temp = tempfile::tempdir().unwrap();
        let ws = temp.path();
        std::fs::write(
            ws.join(".mcp.json"),
            r#"{"mcpServers": {"a": {"command": "one", "args": ["--token", "${env:TOKEN}"]}}}"#,
        )
        .unwrap();
        std::fs::create_dir_all(ws.join(".vscode")).unwrap();
        std::fs::write(
            ws.join(".vscode/mcp.json"),
            r#"{"servers": {"a": {"command": "two"}, "b": {"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer $TOKEN"}}, "c": {"type": "sse", "url": "x"}}}"#,
        )
        .unwrap();
        let trust = trusting(ws);
        let Configured { servers, problems, .. } = load(ws, &[], &trust, &env);
        let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert!(
            matches!(&servers[0].transport, Transport::Stdio { command, args, .. } if command == "one" && args[1] == "t0k")
        );
        assert!(
            matches!(&servers[1].transport, Transport::Http { headers, .. } if headers["Authorization"] == "Bearer t0k")
        );
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].name, "c");
    }

    #[test]
    fn a_disabled_server_is_not_loaded_and_hides_a_later_one_of_its_name() {
        let temp = tempfile::tempdir().unwrap();
        let ws = temp.path();
        std::fs::write(
            ws.join(".mcp.json"),
            r#"{"mcpServers": {"off": {"command": "x", "disabled": true}, "on": {"command": "y", "disabled": false}}}"#,
        )
        .unwrap();
        std::fs::create_dir_all(ws.join(".vscode")).unwrap();
        std::fs::write(ws.join(".vscode/mcp.json"), r#"{"servers": {"off": {"command": "z"}}}"#).unwrap();
        let loaded = load(ws, &[], &trusting(ws), &env);
        let names: Vec<&str> = loaded.servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["on"]);
        assert_eq!(loaded.disabled, ["off"]);
        assert_eq!(loaded.problems, []);
        // Not even its variables are looked at.
        let (_temp, loaded) = load_servers(&json!({"off": {"command": "${input:x}", "disabled": true}}), &[]);
        assert_eq!((loaded.servers.len(), loaded.problems.len(), loaded.disabled.len()), (0, 0, 1));
        let (_temp, loaded) = load_servers(&json!({"bad": {"command": "x", "disabled": "yes"}}), &[]);
        assert_eq!(messages(&loaded), [("bad", "`disabled` must be `true` or `false`")]);
    }

    #[test]
    fn a_file_that_is_not_a_config_is_one_problem_without_a_server_name() {
        for (text, message) in [
            ("{", "invalid JSON: EOF while parsing an object at line 1 column 1"),
            ("[]", "the file is not a JSON object"),
            (r#"{"mcpServers": []}"#, "`mcpServers` must be an object of servers by name"),
        ] {
            let temp = tempfile::tempdir().unwrap();
            std::fs::write(temp.path().join(".mcp.json"), text).unwrap();
            let loaded = load(temp.path(), &[], &trusting(temp.path()), &env);
            assert_eq!(messages(&loaded), [("", message)], "{text}");
            assert_eq!(
                loaded.problems[0].describe(temp.path()),
                format!("`.mcp.json`: its MCP servers cannot be used: {message}")
            );
        }
    }

    #[test]
    fn a_bad_entry_is_described_once_naming_its_file_and_server() {
        let entry = |source: &str| BadEntry {
            name: "y".into(),
            source: PathBuf::from(source),
            message: "needs `command` (stdio) or `url` (http)".into(),
        };
        assert_eq!(
            entry("/ws/.vscode/mcp.json").describe(Path::new("/ws")),
            "`.vscode/mcp.json`: MCP server `y` cannot be used: needs `command` (stdio) or `url` (http)"
        );
        assert_eq!(
            entry("/home/u/.copilot/mcp-config.json").describe(Path::new("/ws")),
            "`/home/u/.copilot/mcp-config.json`: MCP server `y` cannot be used: needs `command` (stdio) or `url` (http)"
        );
    }
}
