//! An entry's `envFile`: where it lies ([`place`]), which decides whose it is, and the
//! `KEY=VALUE` lines it holds. One inside the workspace is the repository's and is approved with
//! the config file ([`approval`](mod@super::approval)); one outside is the user's own and is read as it is;
//! one reached through a symbolic link inside the workspace is never read.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::entry::Fault;
use super::expand::{Purpose, Vars};
use crate::bounded;
use crate::paths;
use crate::platform::{self, Canonical as _};
use crate::trust::quote::quote;

/// An `envFile` inside the workspace, named by a workspace config file's entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EnvFile {
    /// The server whose entry names it.
    pub(crate) server: String,
    /// Relative to the workspace, `/`-separated.
    pub(crate) path: String,
    /// Where it is, with no `.` or `..` left.
    pub(super) full: PathBuf,
    pub(super) state: EnvState,
}

/// What an env file's path holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum EnvState {
    Read(Vec<u8>),
    Missing,
    Unreadable(String),
    /// A symbolic link inside the workspace is on its way: never read.
    Link,
}

impl EnvState {
    pub(super) fn of(path: &Path) -> Self {
        match bounded::read(path, bounded::MAX_FILE_BYTES) {
            Ok(Some(bytes)) => Self::Read(bytes),
            Ok(None) => Self::Missing,
            Err(err) => Self::Unreadable(err.to_string()),
        }
    }

    /// Its tag in [`Approval::content`](super::approval::Approval::content).
    pub(super) fn tag(&self) -> &'static str {
        match self {
            Self::Read(_) => "file",
            Self::Missing => "missing",
            Self::Unreadable(_) => "unreadable",
            Self::Link => "link",
        }
    }
}

impl EnvFile {
    /// The file as `codeact trust` shows it: its path and the names of the variables it sets,
    /// never their values, each [quoted](quote).
    #[must_use]
    pub(crate) fn summary(&self) -> String {
        let path = quote(&self.path);
        match &self.state {
            EnvState::Read(bytes) => match std::str::from_utf8(bytes) {
                Ok(text) => {
                    let names: Vec<String> = dotenv(text).into_keys().map(|name| quote(&name).into_owned()).collect();
                    if names.is_empty() {
                        format!("`{path}` sets no variables")
                    } else {
                        format!("`{path}` sets {}", names.join(", "))
                    }
                }
                Err(_) => format!("`{path}` cannot be used (not UTF-8 text)"),
            },
            EnvState::Missing => format!("`{path}` is not there yet (adding it asks for trust again)"),
            EnvState::Unreadable(why) => format!("`{path}` cannot be read ({why})"),
            EnvState::Link => format!("`{path}` is a symbolic link, never read (make it a regular file)"),
        }
    }
}

/// Where an expanded `envFile` lies, which decides whose it is.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Place {
    /// Inside the workspace, reached through no symbolic link: the repository's, approved with
    /// the config file.
    Workspace(PathBuf),
    /// Outside the workspace: the user's own.
    Outside(PathBuf),
    /// Inside the workspace through a symbolic link: never read, since trust cannot vouch for
    /// where it leads.
    Link(PathBuf),
}

/// Where `path` (relative to `workspace`, or absolute) lies, `.` and `..` taken as written and
/// never as a link would lead: the file read is then the one that was placed. A link inside
/// the workspace anywhere on the way (the file itself or a folder above it) makes it
/// [`Place::Link`], as does a path outside whose real location is inside.
pub(super) fn place(workspace: &Path, path: &str) -> Place {
    let workspace = paths::lexical(workspace);
    let full = paths::lexical(&workspace.join(path));
    if let Ok(rel) = full.strip_prefix(&workspace) {
        let mut at = workspace.clone();
        for part in rel.components() {
            at.push(part);
            match std::fs::symlink_metadata(&at) {
                Ok(meta) if meta.file_type().is_symlink() => return Place::Link(full),
                Ok(_) => {}
                Err(_) => break,
            }
        }
        return Place::Workspace(full);
    }
    let real_workspace = workspace.canonical().unwrap_or_else(|_| workspace.clone());
    match full.canonical() {
        Ok(real) if platform::is_within(&real, &real_workspace) => Place::Link(full),
        _ => Place::Outside(full),
    }
}

/// The variables of the dotenv file an entry's `envFile` names (`configured`, which expanded to
/// `path`, relative to the workspace), noting each value in `expanded`: they are as secret as
/// the environment's. Messages name the path as configured. One inside the workspace is taken
/// from what the user approved when there is an approval ([`approval`](fn@super::approval::approval)); one reached through a
/// symbolic link inside the workspace is refused.
pub(super) fn env_file(
    configured: &str,
    path: &str,
    vars: &Vars<'_>,
    expanded: &mut Vec<(String, String)>,
) -> Result<BTreeMap<String, String>, Fault> {
    if vars.mode == Purpose::Preview {
        return Ok(BTreeMap::new());
    }
    let unreadable = |why: &str| Fault::new("mcp-env-file", format!("`envFile` `{configured}` cannot be read: {why}"));
    let state = match place(vars.workspace, path) {
        Place::Outside(full) => EnvState::of(&full),
        Place::Link(_) => EnvState::Link,
        Place::Workspace(full) => match &vars.approved_env_files {
            Some(approved) => approved
                .iter()
                .find(|file| file.full == full)
                .map(|file| file.state.clone())
                .ok_or_else(|| unreadable("it is not part of what was trusted"))?,
            None => EnvState::of(&full),
        },
    };
    let text = match state {
        EnvState::Read(bytes) => String::from_utf8(bytes).map_err(|_| unreadable("not UTF-8 text"))?,
        EnvState::Missing => {
            vars.missing(unreadable("no such file"))?;
            return Ok(BTreeMap::new());
        }
        EnvState::Unreadable(why) => return Err(unreadable(&why)),
        EnvState::Link => {
            return Err(unreadable(
                "a symbolic link in the workspace is on its way, and codeact reads no env file through one",
            ));
        }
    };
    let variables = dotenv(&text);
    for (key, value) in &variables {
        expanded.push((format!("${key}"), value.clone()));
    }
    Ok(variables)
}

/// The `KEY=VALUE` lines of a dotenv file, in the common dialect: blank lines and `#` comments
/// skipped, an `export ` prefix allowed, one pair of quotes around the value taken off. A line
/// without `=` is skipped, as dotenv loaders do.
fn dotenv(text: &str) -> BTreeMap<String, String> {
    let mut variables = BTreeMap::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").map_or(line, str::trim_start);
        let Some((key, value)) = line.split_once('=') else { continue };
        let (key, value) = (key.trim(), value.trim());
        if key.is_empty() {
            continue;
        }
        let unquoted = ['"', '\'']
            .into_iter()
            .find_map(|quote| value.strip_prefix(quote)?.strip_suffix(quote))
            .filter(|_| value.len() >= 2);
        variables.insert(key.to_owned(), unquoted.unwrap_or(value).to_owned());
    }
    variables
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::super::entry::Transport;
    use super::super::fixtures::{env, env_files_of, found, load_servers, messages, only_server, trusting};
    use super::super::load::load;
    use super::*;

    #[test]
    fn an_env_file_reached_through_a_link_in_the_workspace_is_never_read() {
        let temp = tempfile::tempdir().unwrap();
        let ws = temp.path().join("ws");
        std::fs::create_dir_all(temp.path().join("elsewhere")).unwrap();
        std::fs::write(temp.path().join("elsewhere/.env"), "LD_PRELOAD=/tmp/evil.so\n").unwrap();
        std::fs::create_dir_all(&ws).unwrap();
        std::os::unix::fs::symlink(temp.path().join("elsewhere/.env"), ws.join(".env")).unwrap();
        std::os::unix::fs::symlink(temp.path().join("elsewhere"), ws.join("conf")).unwrap();
        // An outside link that leads into the workspace is the workspace's, through a link.
        std::fs::write(ws.join("real.env"), "A=1\n").unwrap();
        std::os::unix::fs::symlink(ws.join("real.env"), temp.path().join("into.env")).unwrap();
        let into = temp.path().join("into.env").display().to_string();
        let servers = json!({
            "file": {"command": "x", "envFile": ".env"},
            "folder": {"command": "x", "envFile": "conf/.env"},
            "into": {"command": "x", "envFile": into},
        });
        let link = "is a symbolic link, never read (make it a regular file)";
        let (_, files) = env_files_of(&ws, &servers);
        assert_eq!(
            files,
            [
                found("file", ".env", &format!("`.env` {link}")),
                found("folder", "conf/.env", &format!("`conf/.env` {link}")),
                found("into", &into, &format!("`{into}` {link}")),
            ]
        );
        std::fs::write(ws.join(".mcp.json"), json!({"mcpServers": servers}).to_string()).unwrap();
        let loaded = load(&ws, &[], &trusting(&ws), &env);
        assert!(loaded.servers.is_empty(), "{:?}", loaded.servers);
        let why = "cannot be read: a symbolic link in the workspace is on its way, and codeact reads no env file \
                   through one";
        assert_eq!(
            messages(&loaded),
            [
                ("file", format!("`envFile` `.env` {why}").as_str()),
                ("folder", format!("`envFile` `conf/.env` {why}").as_str()),
                ("into", format!("`envFile` `{into}` {why}").as_str()),
            ]
        );
    }

    #[test]
    fn env_file_variables_are_read_under_env_and_redacted() {
        let dotenv = "# comment\n\nexport FROM_FILE=\"quoted value\"\nSINGLE='one two'\nBARE = plain \nSHARED=file\n\
                      not a pair\n";
        let (_temp, loaded) = load_servers(
            &json!({"s": {"command": "x", "envFile": "${workspaceFolder}/conf/.env", "env": {"SHARED": "env"}}}),
            &[("conf/.env", dotenv)],
        );
        let server = only_server(&loaded);
        let Transport::Stdio { env, .. } = &server.transport else { panic!("not stdio: {server:?}") };
        let expected: BTreeMap<String, String> =
            [("BARE", "plain"), ("FROM_FILE", "quoted value"), ("SHARED", "env"), ("SINGLE", "one two")]
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect();
        assert_eq!(env, &expected);
        assert_eq!(server.redact("got quoted value and one two"), "got $FROM_FILE and $SINGLE");
        // Relative to the workspace, as written.
        let (_temp, loaded) = load_servers(&json!({"s": {"command": "x", "envFile": ".env"}}), &[(".env", "A=b\n")]);
        let Transport::Stdio { env, .. } = &only_server(&loaded).transport else { panic!("not stdio") };
        assert_eq!(env["A"], "b");
    }

    #[test]
    fn a_missing_or_unreadable_env_file_makes_the_entry_a_problem_naming_it() {
        let (temp, loaded) = load_servers(
            &json!({
                "gone": {"command": "x", "envFile": "${workspaceFolder}/.env"},
                "dir": {"command": "x", "envFile": "conf"},
            }),
            &[("conf/keep", "")],
        );
        assert_eq!(loaded.servers.len(), 0);
        let problems = messages(&loaded);
        assert_eq!(problems[0], ("gone", "`envFile` `${workspaceFolder}/.env` cannot be read: no such file"));
        assert_eq!(problems[1], ("dir", "`envFile` `conf` cannot be read: not a regular file"));
        assert!(!format!("{problems:?}").contains(&temp.path().display().to_string()), "{problems:?}");
    }
}
