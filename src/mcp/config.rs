//! MCP server configuration, merged from the places editors and Copilot CLI keep it. Earlier
//! sources win on a name clash: `<workspace>/.mcp.json`, `<workspace>/.vscode/mcp.json`,
//! `<workspace>/.github/copilot/mcp.json`, then `$COPILOT_HOME/mcp-config.json`. Both the
//! `servers` and `mcpServers` spellings are read, and the keys these files share between tools:
//! VS Code's `envFile` and `disabled`, Copilot CLI's `tools` allow-list. Keys other tools use are
//! ignored here: these files are shared with them.
//!
//! Variables are expanded in `command`, `args`, `env`, `cwd`, `url`, `headers` and `envFile`:
//! `${env:NAME}`, `${NAME}` and `$NAME`; `${NAME:-default}` and `${env:NAME:-default}` as in sh;
//! VS Code's `${workspaceFolder}`, `${workspaceFolderBasename}` and `${userHome}`. VS Code's
//! `${input:ID}` cannot be honoured (codeact never prompts), so an entry using it is a problem
//! rather than a server that gets the placeholder as its secret.
//!
//! The workspace's files come with the repository: each is used only when the user trusts its
//! content (`codeact trust`), so an untrusted file's servers are never expanded or started (a
//! file never approved is not even parsed). What is approved is [`approval`]'s: the file, and
//! every `envFile` inside the workspace that its servers name, since a repository's `.env` can
//! set `LD_PRELOAD` or `NODE_OPTIONS` for a server as surely as its `env` can. No
//! message shows an expanded value: a server is shown as configured ([`Server::shown`]) and
//! every expanded value is taken out of quoted text ([`Server::redact`]).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};

use crate::bounded;
use crate::paths;
use crate::trust::quote::{quote, shell_word};
use crate::trust::{Approved, Standing};

/// Per-call timeout when a server does not set `timeout`.
pub(crate) const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_mins(1);

/// How to reach one server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Transport {
    /// A child process speaking MCP on stdin/stdout.
    Stdio { command: String, args: Vec<String>, env: BTreeMap<String, String>, cwd: Option<PathBuf> },
    /// Streamable HTTP.
    Http { url: String, headers: BTreeMap<String, String> },
}

/// One configured server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Server {
    pub(crate) name: String,
    pub(crate) transport: Transport,
    /// Longest one call may take (it is also cut to the run's remaining time).
    pub(crate) timeout: Duration,
    /// Where it was configured.
    pub(crate) source: PathBuf,
    /// Whether that is a workspace file (its HTTP URL obeys the network policy).
    pub(crate) from_workspace: bool,
    /// The command line or URL as configured, before expansion.
    pub(crate) shown: String,
    /// The tools it may offer (Copilot CLI's `tools`); `None` for every tool (no list, or `"*"`).
    pub(crate) tools: Option<Vec<String>>,
    /// Each expanded variable's value, with the text that names it.
    expanded: Vec<(String, String)>,
}

impl Server {
    /// `text` with every expanded value replaced by the variable that names it.
    #[must_use]
    pub(crate) fn redact(&self, text: &str) -> String {
        let mut out = text.to_owned();
        let mut values: Vec<&(String, String)> = self.expanded.iter().filter(|(_, value)| value.len() >= 4).collect();
        // Longer values first, so a value that contains another is replaced whole.
        values.sort_by_key(|(_, value)| std::cmp::Reverse(value.len()));
        for (name, value) in values {
            out = out.replace(value.as_str(), name);
        }
        out
    }
}

/// What the config files hold.
#[derive(Debug, Default)]
pub(crate) struct Loaded {
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
        if self.name.is_empty() {
            format!("`{path}`: its MCP servers cannot be used: {}", self.message)
        } else {
            format!("`{path}`: MCP server `{}` cannot be used: {}", self.name, self.message)
        }
    }
}

/// Why a config file or one of its entries cannot be used, as `codeact check` reports it: a
/// stable rule id and a message (which names variables, never their values).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fault {
    pub(crate) rule: &'static str,
    pub(crate) message: String,
}

impl Fault {
    fn new(rule: &'static str, message: impl Into<String>) -> Self {
        Self { rule, message: message.into() }
    }

    /// An entry whose keys are not what they must be.
    fn invalid(message: impl Into<String>) -> Self {
        Self::new("mcp-entry-invalid", message)
    }
}

/// The workspace's config files, relative to it, highest precedence first.
pub(crate) const WORKSPACE_FILES: [&str; 3] = [".mcp.json", ".vscode/mcp.json", ".github/copilot/mcp.json"];

/// What an entry is read for, which decides what happens to what is not there yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// To start it: an unset `${env:NAME}` or a missing `envFile` makes it a problem.
    Run,
    /// To show it as configured (`codeact trust`): no `envFile` is read, and what is missing is
    /// no problem (the text shown is the configured one).
    Preview,
    /// To check it (`codeact check`): an unset `${env:NAME}` or a missing `envFile` is a note,
    /// since either may be there where codeact runs.
    Check,
}

/// What variables expand to, and what an entry is read for.
pub(crate) struct Vars<'a> {
    /// `${workspaceFolder}`, and what a relative `cwd` or `envFile` is relative to.
    workspace: &'a Path,
    /// The environment.
    lookup: &'a dyn Fn(&str) -> Option<String>,
    mode: Mode,
    /// In [`Mode::Check`], what would be missing at run time, noted instead of failing.
    notes: RefCell<Vec<Fault>>,
    /// For a workspace config file the user trusts, its env files in the workspace as they were
    /// approved: read from here, never again from disk, so what runs is what was approved.
    approved_env_files: Option<Vec<EnvFile>>,
}

impl<'a> Vars<'a> {
    #[must_use]
    pub(crate) fn new(workspace: &'a Path, lookup: &'a dyn Fn(&str) -> Option<String>, mode: Mode) -> Self {
        Self { workspace, lookup, mode, notes: RefCell::new(Vec::new()), approved_env_files: None }
    }

    /// The notes made since the last call (see [`Mode::Check`]).
    pub(crate) fn take_notes(&self) -> Vec<Fault> {
        self.notes.take()
    }

    /// `fault` about something missing: an error to start a server, a note to check one.
    fn missing(&self, fault: Fault) -> Result<(), Fault> {
        if self.mode == Mode::Run {
            return Err(fault);
        }
        self.notes.borrow_mut().push(fault);
        Ok(())
    }
}

/// One entry of a config file, as far as it can be used.
#[derive(Debug)]
pub(crate) enum Entry {
    Server(Box<Server>),
    /// `"disabled": true`: not started, though it takes its name.
    Disabled,
}

/// Reads every source: the workspace's files the user trusts, then Copilot CLI's;
/// `lookup` resolves environment variables.
pub(crate) fn load(
    workspace: &Path,
    copilot_home: Option<&Path>,
    trust: &Approved,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Loaded {
    let mut loaded = Loaded::default();
    let mut sources: Vec<(PathBuf, Option<&str>)> =
        WORKSPACE_FILES.iter().map(|rel| (workspace.join(rel), Some(*rel))).collect();
    if let Some(home) = copilot_home {
        sources.push((home.join("mcp-config.json"), None));
    }
    for (path, rel) in sources {
        let content = match bounded::read(&path, bounded::MAX_FILE_BYTES) {
            Ok(Some(content)) => content,
            Ok(None) => continue,
            Err(err) => {
                loaded.problems.push(BadEntry {
                    name: String::new(),
                    source: path,
                    message: format!("cannot be read: {err}"),
                });
                continue;
            }
        };
        let mut vars = Vars::new(workspace, lookup, Mode::Run);
        if let Some(rel) = rel {
            // `standing` of no content is `Untrusted` only when nothing was ever approved at
            // `rel`: such a file is not even parsed for its env files.
            let approval = (trust.standing(rel, &[]) != Standing::Untrusted)
                .then(|| approval(&content, workspace, lookup))
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
                loaded.problems.push(BadEntry { name: String::new(), source: path, message: fault.message });
                continue;
            }
        };
        for (name, entry) in entries {
            if loaded.servers.iter().any(|s| s.name == name) || loaded.disabled.contains(&name) {
                continue;
            }
            match self::entry(&name, &entry, &path, &vars) {
                Ok(Entry::Server(server)) => loaded.servers.push(Server { from_workspace: rel.is_some(), ..*server }),
                Ok(Entry::Disabled) => loaded.disabled.push(name),
                Err(fault) => loaded.problems.push(BadEntry { name, source: path.clone(), message: fault.message }),
            }
        }
    }
    loaded
}

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
pub(crate) fn preview(content: &[u8], workspace: &Path, approval: &Approval) -> Result<Vec<Preview>, String> {
    // Every variable "expands" to nothing: only the configured text is shown.
    let unexpanded = |_: &str| Some(String::new());
    let vars = Vars::new(workspace, &unexpanded, Mode::Preview);
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

/// What the user approves of a workspace config file, and what [`load`] checks against it: one
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

/// An `envFile` inside the workspace, named by a workspace config file's entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EnvFile {
    /// The server whose entry names it.
    pub(crate) server: String,
    /// Relative to the workspace, `/`-separated.
    pub(crate) path: String,
    /// Where it is, with no `.` or `..` left.
    full: PathBuf,
    state: EnvState,
}

/// What an env file's path holds.
#[derive(Debug, Clone, PartialEq, Eq)]
enum EnvState {
    Read(Vec<u8>),
    Missing,
    Unreadable(String),
    /// A symbolic link inside the workspace is on its way: never read.
    Link,
}

impl EnvState {
    fn of(path: &Path) -> Self {
        match bounded::read(path, bounded::MAX_FILE_BYTES) {
            Ok(Some(bytes)) => Self::Read(bytes),
            Ok(None) => Self::Missing,
            Err(err) => Self::Unreadable(err.to_string()),
        }
    }

    /// Its tag in [`Approval::content`].
    fn tag(&self) -> &'static str {
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
pub(crate) fn approval(content: &[u8], workspace: &Path, lookup: &dyn Fn(&str) -> Option<String>) -> Approval {
    let mut env_files = Vec::new();
    let vars = Vars::new(workspace, lookup, Mode::Run);
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

/// Where an expanded `envFile` lies, which decides whose it is.
#[derive(Debug, PartialEq, Eq)]
enum Place {
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
fn place(workspace: &Path, path: &str) -> Place {
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
    let real_workspace = workspace.canonicalize().unwrap_or_else(|_| workspace.clone());
    match full.canonicalize() {
        Ok(real) if real.starts_with(&real_workspace) => Place::Link(full),
        _ => Place::Outside(full),
    }
}

/// The server entries of a config file, by name, in file order.
fn entries(content: &[u8]) -> Result<Vec<(String, Value)>, Fault> {
    let parsed: Value = serde_json::from_slice(content)
        .map_err(|err| Fault::new("mcp-json-invalid", format!("invalid JSON: {err}")))?;
    Ok(servers_of(&parsed)?.map(|(_, entries)| entries).unwrap_or_default())
}

/// The key that holds a config file's server entries, and the entries by name in file order.
pub(crate) type Servers = (&'static str, Vec<(String, Value)>);

/// The server entries of a parsed config file, under `mcpServers`, else `servers`; `None` when
/// there is neither key.
pub(crate) fn servers_of(parsed: &Value) -> Result<Option<Servers>, Fault> {
    let top = parsed.as_object().ok_or_else(|| Fault::new("mcp-not-object", "the file is not a JSON object"))?;
    let Some((key, entries)) = ["mcpServers", "servers"].into_iter().find_map(|key| Some((key, top.get(key)?))) else {
        return Ok(None);
    };
    let entries = entries
        .as_object()
        .ok_or_else(|| Fault::new("mcp-servers-invalid", format!("`{key}` must be an object of servers by name")))?;
    Ok(Some((key, entries.iter().map(|(name, entry)| (name.clone(), entry.clone())).collect())))
}

/// One entry, read for `vars`' mode.
pub(crate) fn entry(name: &str, entry: &Value, source: &Path, vars: &Vars<'_>) -> Result<Entry, Fault> {
    if disabled(entry)? {
        return Ok(Entry::Disabled);
    }
    server(name, entry, source, vars).map(|server| Entry::Server(Box::new(server)))
}

/// Whether an entry says `"disabled": true`.
fn disabled(entry: &Value) -> Result<bool, Fault> {
    match entry.get("disabled") {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(disabled)) => Ok(*disabled),
        Some(_) => Err(Fault::invalid("`disabled` must be `true` or `false`")),
    }
}

fn server(name: &str, entry: &Value, source: &Path, vars: &Vars<'_>) -> Result<Server, Fault> {
    let entry = entry.as_object().ok_or_else(|| Fault::invalid("the entry is not an object"))?;
    let expanded = RefCell::new(Vec::new());
    let expand = |text: &str| expand_into(text, vars, &mut expanded.borrow_mut());
    let string = |key: &str| -> Result<Option<&str>, Fault> {
        match entry.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => Ok(Some(text)),
            Some(_) => Err(Fault::invalid(format!("`{key}` must be a string"))),
        }
    };
    let strings = |key: &str| -> Result<Option<Vec<&str>>, Fault> {
        let wrong = || Fault::invalid(format!("`{key}` must be a list of strings"));
        match entry.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Array(items)) => {
                items.iter().map(|v| v.as_str().ok_or_else(wrong)).collect::<Result<_, _>>().map(Some)
            }
            Some(_) => Err(wrong()),
        }
    };
    let table = |key: &str| -> Result<BTreeMap<String, String>, Fault> {
        match entry.get(key) {
            None | Some(Value::Null) => Ok(BTreeMap::new()),
            Some(Value::Object(map)) => map_strings(map, key, &expand),
            Some(_) => Err(Fault::invalid(format!("`{key}` must be an object of strings"))),
        }
    };
    let timeout = match entry.get("timeout") {
        None | Some(Value::Null) => DEFAULT_CALL_TIMEOUT,
        Some(value) => value
            .as_f64()
            .filter(|s| *s > 0.0 && *s <= 86_400.0)
            .map(Duration::from_secs_f64)
            .ok_or_else(|| Fault::invalid("`timeout` must be a number of seconds"))?,
    };
    let tools = strings("tools")
        .map_err(|_| Fault::invalid("`tools` must be a list of tool names (`[\"*\"]` for all)"))?
        .filter(|names| !names.contains(&"*"))
        .map(|names| names.into_iter().map(str::to_owned).collect());
    let stdio = match string("type")?.unwrap_or("") {
        "stdio" | "local" => true,
        "http" | "streamable-http" => false,
        "sse" => {
            return Err(Fault::new(
                "mcp-transport-unsupported",
                "the legacy SSE transport (`\"type\": \"sse\"`) is not supported; use streamable HTTP \
                 (`\"type\": \"http\"`)",
            ));
        }
        "" if entry.contains_key("command") => true,
        "" if entry.contains_key("url") => false,
        "" => return Err(Fault::invalid("needs `command` (stdio) or `url` (http)")),
        other => {
            return Err(Fault::new(
                "mcp-type-unknown",
                format!("unknown `type` `{other}`: expected `stdio` (or `local`) or `http` (or `streamable-http`)"),
            ));
        }
    };
    let (transport, shown) = if stdio {
        let command = string("command")?.ok_or_else(|| Fault::invalid("a stdio server needs `command`"))?;
        let args = strings("args")?.unwrap_or_default();
        let shown = std::iter::once(command).chain(args.iter().copied()).map(shell_word).collect::<Vec<_>>();
        let command = expand(command)?;
        let args = args.into_iter().map(&expand).collect::<Result<_, _>>()?;
        // The file's variables first, so `env` wins.
        let mut env = match string("envFile")? {
            Some(path) => env_file(path, &expand(path)?, vars, &mut expanded.borrow_mut())?,
            None => BTreeMap::new(),
        };
        env.extend(table("env")?);
        let cwd = string("cwd")?.map(expand).transpose()?.map(|cwd| vars.workspace.join(cwd));
        (Transport::Stdio { command, args, env, cwd }, shown.join(" "))
    } else {
        let url = string("url")?.ok_or_else(|| Fault::invalid("an http server needs `url`"))?;
        (Transport::Http { url: expand(url)?, headers: table("headers")? }, quote(url).into_owned())
    };
    Ok(Server {
        name: name.to_owned(),
        transport,
        timeout,
        source: source.to_path_buf(),
        from_workspace: false,
        shown,
        tools,
        expanded: expanded.into_inner(),
    })
}

fn map_strings(
    map: &Map<String, Value>,
    key: &str,
    expand: &dyn Fn(&str) -> Result<String, Fault>,
) -> Result<BTreeMap<String, String>, Fault> {
    map.iter()
        .map(|(k, v)| match v {
            Value::String(s) => Ok((k.clone(), expand(s)?)),
            _ => Err(Fault::invalid(format!("`{key}.{k}` must be a string"))),
        })
        .collect()
}

/// The variables of the dotenv file an entry's `envFile` names (`configured`, which expanded to
/// `path`, relative to the workspace), noting each value in `expanded`: they are as secret as
/// the environment's. Messages name the path as configured. One inside the workspace is taken
/// from what the user approved when there is an approval ([`approval`]); one reached through a
/// symbolic link inside the workspace is refused.
fn env_file(
    configured: &str,
    path: &str,
    vars: &Vars<'_>,
    expanded: &mut Vec<(String, String)>,
) -> Result<BTreeMap<String, String>, Fault> {
    if vars.mode == Mode::Preview {
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

/// Expands `text` for `vars` (see the module's doc). An unset `${env:NAME}` is an error naming
/// it (never a value: no secret is echoed); an unset `$NAME` or `${NAME}` stays as written, so
/// shell text such as `sh -c 'echo $$'` passes through.
#[cfg(test)]
pub(crate) fn expand(text: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let vars = Vars::new(Path::new("/work/proj"), lookup, Mode::Run);
    expand_into(text, &vars, &mut Vec::new()).map_err(|fault| fault.message)
}

/// [`expand`], noting in `expanded` each value put in, with the text that named it.
fn expand_into(text: &str, vars: &Vars<'_>, expanded: &mut Vec<(String, String)>) -> Result<String, Fault> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(inner) = after.strip_prefix('{') {
            let end = inner
                .find('}')
                .ok_or_else(|| Fault::new("mcp-variable-invalid", format!("unclosed `${{` in `{text}`")))?;
            let written = &rest[at..at + end + 3];
            out.push_str(&braced(&inner[..end], written, vars, expanded)?);
            rest = &inner[end + 1..];
        } else {
            let end = after.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(after.len());
            let name = &after[..end];
            let written = &rest[at..=at + end];
            match (vars.lookup)(name).filter(|_| !name.is_empty()) {
                Some(value) => {
                    out.push_str(&value);
                    expanded.push((written.to_owned(), value));
                }
                None => out.push_str(written),
            }
            rest = &after[end..];
        }
    }
    out.push_str(rest);
    Ok(out)
}

/// The value of `${inner}`, which is `written` in the text.
fn braced(inner: &str, written: &str, vars: &Vars<'_>, expanded: &mut Vec<(String, String)>) -> Result<String, Fault> {
    if inner.starts_with("input:") {
        return Err(Fault::new(
            "mcp-input-variable",
            format!(
                "VS Code input variables (`{written}`) are not supported: codeact cannot prompt; put the value in \
                 an environment variable and write `${{env:NAME}}`"
            ),
        ));
    }
    let mut noted = |value: String| {
        expanded.push((written.to_owned(), value.clone()));
        value
    };
    let folder = match inner {
        "workspaceFolder" => Some(vars.workspace.display().to_string()),
        "workspaceFolderBasename" => {
            Some(vars.workspace.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default())
        }
        _ => None,
    };
    if let Some(folder) = folder {
        return Ok(noted(folder));
    }
    if inner == "userHome" {
        let Some(home) = (vars.lookup)("HOME") else {
            vars.missing(Fault::new("mcp-env-unset", "`${userHome}` needs `HOME`, which is not set"))?;
            return Ok(String::new());
        };
        return Ok(noted(home));
    }
    let (name, required) = inner.strip_prefix("env:").map_or((inner, false), |name| (name, true));
    let (name, default) = name.split_once(":-").map_or((name, None), |(name, default)| (name, Some(default)));
    let value = (vars.lookup)(name).filter(|_| !name.is_empty());
    match (value, default) {
        // As in sh, an empty value takes the default too; the default is as written.
        (Some(value), Some(_)) if !value.is_empty() => Ok(noted(value)),
        (_, Some(default)) => Ok(default.to_owned()),
        (Some(value), None) => Ok(noted(value)),
        (None, None) if required => {
            vars.missing(Fault::new("mcp-env-unset", format!("environment variable `{name}` is not set")))?;
            Ok(String::new())
        }
        (None, None) => Ok(written.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "TOKEN" => Some("t0k".into()),
            "HOME" => Some("/home/u".into()),
            "EMPTY" => Some(String::new()),
            "SECRET" => Some("s3cret-value".into()),
            _ => None,
        }
    }

    #[test]
    fn every_variable_spelling_expands() {
        assert_eq!(expand("Bearer ${env:TOKEN}", &env), Ok("Bearer t0k".into()));
        assert_eq!(expand("${HOME}/x:$HOME", &env), Ok("/home/u/x:/home/u".into()));
        assert_eq!(expand("echo $$ $0 ${MISSING} $", &env), Ok("echo $$ $0 ${MISSING} $".into()));
        assert_eq!(expand("a $ b", &env), Ok("a $ b".into()));
        assert_eq!(expand("${env:MISSING}", &env), Err("environment variable `MISSING` is not set".into()));
        assert_eq!(expand("${MISSING", &env), Err("unclosed `${` in `${MISSING`".into()));
    }

    #[test]
    fn defaults_apply_when_a_variable_is_unset_or_empty_and_are_not_expanded() {
        assert_eq!(expand("${MISSING:-fallback}", &env), Ok("fallback".into()));
        assert_eq!(expand("${env:MISSING:-fallback}", &env), Ok("fallback".into()));
        assert_eq!(expand("${EMPTY:-fallback} ${env:EMPTY:-x}", &env), Ok("fallback x".into()));
        assert_eq!(expand("${TOKEN:-fallback} ${env:TOKEN:-x}", &env), Ok("t0k t0k".into()));
        assert_eq!(expand("${MISSING:-}", &env), Ok(String::new()));
        assert_eq!(expand("${MISSING:-$TOKEN}", &env), Ok("$TOKEN".into()));
        // Without a default, an empty value is a value.
        assert_eq!(expand("[${env:EMPTY}]", &env), Ok("[]".into()));
    }

    #[test]
    fn vs_code_variables_name_the_workspace_and_the_home() {
        assert_eq!(
            expand("${workspaceFolder}/bin:${workspaceFolderBasename}:${userHome}", &env),
            Ok("/work/proj/bin:proj:/home/u".into())
        );
        assert_eq!(expand("${userHome}", &|_| None), Err("`${userHome}` needs `HOME`, which is not set".into()));
    }

    #[test]
    fn input_variables_are_refused_with_what_to_write_instead() {
        assert_eq!(
            expand("Bearer ${input:tok}", &env),
            Err("VS Code input variables (`${input:tok}`) are not supported: codeact cannot prompt; put the value in \
                 an environment variable and write `${env:NAME}`"
                .into())
        );
    }

    /// Approves every workspace config file as it is now.
    fn trusting(ws: &Path) -> Approved {
        let mut approved = Approved::default();
        for rel in WORKSPACE_FILES {
            if let Ok(content) = std::fs::read(ws.join(rel)) {
                approved.approve(rel, &approval(&content, ws, &env).content);
            }
        }
        approved
    }

    /// A workspace with `.mcp.json` holding `servers` (and `files`, relative to it), loaded trusted.
    fn load_servers(servers: &Value, files: &[(&str, &str)]) -> (tempfile::TempDir, Loaded) {
        let temp = tempfile::tempdir().unwrap();
        let ws = temp.path();
        std::fs::write(ws.join(".mcp.json"), json!({"mcpServers": servers}).to_string()).unwrap();
        for (path, text) in files {
            std::fs::create_dir_all(ws.join(path).parent().unwrap()).unwrap();
            std::fs::write(ws.join(path), text).unwrap();
        }
        let loaded = load(ws, None, &trusting(ws), &env);
        (temp, loaded)
    }

    /// The one server of a load, which must have no problem.
    fn only_server(loaded: &Loaded) -> &Server {
        assert_eq!(loaded.problems, []);
        assert_eq!(loaded.servers.len(), 1);
        &loaded.servers[0]
    }

    /// The message of each problem of a load, by server name.
    fn messages(loaded: &Loaded) -> Vec<(&str, &str)> {
        loaded.problems.iter().map(|p| (p.name.as_str(), p.message.as_str())).collect()
    }

    /// The env files `approval` finds for `.mcp.json` holding `servers` in `ws`: (server, path,
    /// summary).
    fn env_files_of(ws: &Path, servers: &Value) -> (Vec<u8>, Vec<(String, String, String)>) {
        let content = json!({"mcpServers": servers}).to_string();
        let approval = approval(content.as_bytes(), ws, &env);
        let files = approval.env_files.iter().map(|f| (f.server.clone(), f.path.clone(), f.summary())).collect();
        (approval.content, files)
    }

    fn found(server: &str, path: &str, summary: &str) -> (String, String, String) {
        (server.to_owned(), path.to_owned(), summary.to_owned())
    }

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
        assert_eq!(approval(plain.as_bytes(), &ws, &env).content, plain.as_bytes());
    }

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
        let loaded = load(&ws, None, &trusting(&ws), &env);
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
    fn a_changed_env_file_untrusts_its_config_and_what_runs_is_what_was_approved() {
        let (temp, loaded) = load_servers(&json!({"s": {"command": "x", "envFile": ".env"}}), &[(".env", "A=1\n")]);
        let ws = temp.path();
        let Transport::Stdio { env: vars, .. } = &only_server(&loaded).transport else { panic!("not stdio") };
        assert_eq!(vars["A"], "1");
        let trust = trusting(ws);
        std::fs::write(ws.join(".env"), "A=1\nNODE_OPTIONS=--require=/tmp/x.js\n").unwrap();
        let loaded = load(ws, None, &trust, &env);
        assert_eq!((loaded.servers.len(), loaded.untrusted), (0, vec![".mcp.json".to_owned()]));
        // Never approved: left unread.
        let loaded = load(ws, None, &Approved::default(), &env);
        assert_eq!(loaded.untrusted, [".mcp.json"]);
    }

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
        let Loaded { servers, problems, .. } = load(ws, None, &trust, &env);
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
    fn every_field_with_variables_is_expanded() {
        let (temp, loaded) = load_servers(
            &json!({"s": {
                "command": "${workspaceFolder}/bin/server",
                "args": ["--home", "${userHome}", "--mode", "${MODE:-fast}"],
                "env": {"TOKEN": "${env:TOKEN}", "NAME": "${workspaceFolderBasename}"},
                "cwd": "${workspaceFolder}/sub",
            }}),
            &[],
        );
        let ws = temp.path();
        let base = ws.file_name().unwrap().to_string_lossy().into_owned();
        let expected = Transport::Stdio {
            command: format!("{}/bin/server", ws.display()),
            args: ["--home", "/home/u", "--mode", "fast"].map(String::from).to_vec(),
            env: BTreeMap::from([("NAME".into(), base), ("TOKEN".into(), "t0k".into())]),
            cwd: Some(ws.join("sub")),
        };
        let server = only_server(&loaded);
        assert_eq!(server.transport, expected);
        assert_eq!(server.shown, "${workspaceFolder}/bin/server --home ${userHome} --mode ${MODE:-fast}");
        let (_, loaded) = load_servers(
            &json!({"h": {"url": "https://${HOST:-example.com}/mcp", "headers": {"X-Token": "${env:SECRET}"}}}),
            &[],
        );
        let expected = Transport::Http {
            url: "https://example.com/mcp".into(),
            headers: BTreeMap::from([("X-Token".into(), "s3cret-value".into())]),
        };
        assert_eq!(only_server(&loaded).transport, expected);
    }

    #[test]
    fn an_input_variable_makes_the_entry_a_problem() {
        let (_temp, loaded) =
            load_servers(&json!({"a": {"command": "x", "env": {"TOKEN": "${input:tok}"}}, "b": {"command": "y"}}), &[]);
        let names: Vec<&str> = loaded.servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["b"]);
        assert_eq!(
            messages(&loaded),
            [(
                "a",
                "VS Code input variables (`${input:tok}`) are not supported: codeact cannot prompt; put the value in \
                 an environment variable and write `${env:NAME}`"
            )]
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
        let loaded = load(ws, None, &trusting(ws), &env);
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
    fn the_tools_list_is_kept_and_a_star_means_every_tool() {
        let (_temp, loaded) = load_servers(
            &json!({
                "some": {"command": "x", "tools": ["get_time", "convert"]},
                "all": {"command": "x", "tools": ["*"]},
                "unset": {"command": "x"},
                "bad": {"command": "x", "tools": "get_time"},
                "bad2": {"command": "x", "tools": [1]},
            }),
            &[],
        );
        let tools: Vec<(&str, Option<Vec<String>>)> =
            loaded.servers.iter().map(|s| (s.name.as_str(), s.tools.clone())).collect();
        assert_eq!(tools, [("some", Some(vec!["get_time".into(), "convert".into()])), ("all", None), ("unset", None)]);
        let wrong = "`tools` must be a list of tool names (`[\"*\"]` for all)";
        assert_eq!(messages(&loaded), [("bad", wrong), ("bad2", wrong)]);
    }

    #[test]
    fn an_unknown_or_unsupported_type_is_a_problem_naming_it() {
        let (_temp, loaded) = load_servers(
            &json!({
                "ws": {"type": "websocket", "url": "ws://x"},
                "sse": {"type": "sse", "url": "http://x/sse"},
                "num": {"type": 3, "command": "x"},
                "none": {"args": ["x"]},
                "stdio": {"type": "stdio", "url": "http://x"},
                "local": {"type": "local", "command": "x"},
                "http": {"type": "streamable-http", "url": "http://x"},
            }),
            &[],
        );
        let names: Vec<&str> = loaded.servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["local", "http"]);
        assert_eq!(
            messages(&loaded),
            [
                ("ws", "unknown `type` `websocket`: expected `stdio` (or `local`) or `http` (or `streamable-http`)"),
                (
                    "sse",
                    "the legacy SSE transport (`\"type\": \"sse\"`) is not supported; use streamable HTTP \
                     (`\"type\": \"http\"`)"
                ),
                ("num", "`type` must be a string"),
                ("none", "needs `command` (stdio) or `url` (http)"),
                ("stdio", "a stdio server needs `command`"),
            ]
        );
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
            let loaded = load(temp.path(), None, &trusting(temp.path()), &env);
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

    #[test]
    fn expanded_values_are_redacted_longest_first() {
        let (_temp, loaded) = load_servers(
            &json!({"s": {"command": "x", "args": ["${env:SECRET}", "${userHome}", "${workspaceFolder}"]}}),
            &[],
        );
        let server = only_server(&loaded);
        let Transport::Stdio { args, .. } = &server.transport else { panic!("not stdio") };
        let text = format!("failed: {} in {} at {}/x", args[0], args[1], args[2]);
        assert_eq!(server.redact(&text), "failed: ${env:SECRET} in ${userHome} at ${workspaceFolder}/x");
    }

    #[test]
    fn a_wrong_cwd_is_a_problem_and_a_relative_one_is_in_the_workspace() {
        let (temp, loaded) = load_servers(&json!({"s": {"command": "x", "cwd": "sub"}}), &[]);
        let Transport::Stdio { cwd, .. } = &only_server(&loaded).transport else { panic!("not stdio") };
        assert_eq!(cwd.as_deref(), Some(temp.path().join("sub").as_path()));
        let (_temp, loaded) = load_servers(&json!({"s": {"command": "x", "cwd": 1}}), &[]);
        assert_eq!(messages(&loaded), [("s", "`cwd` must be a string")]);
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
        let shown = preview(content.as_bytes(), Path::new("/nowhere"), &nothing).unwrap();
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

    #[test]
    fn checking_notes_what_may_be_there_at_run_time_instead_of_failing() {
        let vars = Vars::new(Path::new("/nowhere"), &env, Mode::Check);
        let value = json!({"command": "x", "args": ["${env:UNSET}"], "envFile": ".env"});
        assert!(matches!(entry("s", &value, Path::new(""), &vars), Ok(Entry::Server(_))));
        assert_eq!(
            vars.take_notes(),
            [
                Fault::new("mcp-env-unset", "environment variable `UNSET` is not set"),
                Fault::new("mcp-env-file", "`envFile` `.env` cannot be read: no such file"),
            ]
        );
        assert_eq!(vars.take_notes(), []);
    }
}
