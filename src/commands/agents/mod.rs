//! `codeact setup AGENT`: adds codeact's MCP server to an agent's configuration as that agent
//! needs it to work headless and interactive ([`plans`]), editing one key of one file and
//! keeping everything else in it as written ([`edit`]). Setting up again changes nothing;
//! `--dry-run` shows the change; `--undo` puts back what the key held before the first setup,
//! from a journal in codeact's state folder, unless the entry was edited since.

mod edit;
mod plans;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, anyhow, bail};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use self::edit::{Document, Format};
use self::plans::{Places, Plan, Reach};
use super::reach;
use crate::atomic::{self, Access};
use crate::cli::Scope;
use crate::cli::SetupArgs;
use crate::dirs;
use crate::exit;
use crate::hint;
use crate::output;
use crate::platform::{Canonical as _, Modes as _};
use crate::program;

pub(crate) fn run(args: &SetupArgs) -> Result<u8> {
    let project = match &args.workspace {
        Some(dir) => dir.canonical().with_context(|| format!("workspace `{}` is not accessible", dir.display()))?,
        None => {
            std::env::current_dir().and_then(|dir| dir.canonical()).context("the current folder is not accessible")?
        }
    };
    let home = dirs::home().ok_or_else(|| anyhow!("cannot tell the home folder: set HOME"))?;
    let config = dirs::config_base().unwrap_or_else(|| home.join(".config"));
    let scope = args.scope.unwrap_or_else(|| plans::default_scope(args.agent));
    let places = Places { project: &project, home: &home, config: &config };
    let reach = match &args.url {
        Some(url) => Reach::Url(server_url(url)?),
        None => Reach::Command(command()),
    };
    let plan = plans::plan(args.agent, scope, &places, &reach)?;
    let gateway = if args.gateway { Some(gateway(args.agent, scope, &project, &plan)?) } else { None };
    if scope == Scope::Project {
        inside_project(&plan.file, &project)?;
        if let Some(gateway) = &gateway {
            inside_project(&gateway.file, &project)?;
        }
    }
    let journal_path = dirs::state()
        .map(|dir| dir.join("setup.json"))
        .ok_or_else(|| anyhow!("cannot tell where codeact keeps its state: set HOME or XDG_STATE_HOME"))?;
    let name = plans::name(args.agent);
    let said = if args.undo {
        undo(&plan, (scope == Scope::Project).then_some(project.as_path()), &journal_path, args.dry_run)?
    } else {
        set_up(&plan, gateway.as_ref(), &journal_path, args.dry_run)?
    };
    output::text(&format!("codeact setup {name}: {said}\n"))?;
    if !args.undo && !args.dry_run {
        for note in &plan.notes {
            output::text(&format!("  note: {note}\n"))?;
        }
        if gateway.is_some() && scope == Scope::Project {
            output::text("  note: codeact starts a project's servers once you trust them: run `codeact trust`\n")?;
        }
    }
    Ok(exit::SUCCESS)
}

/// The program an agent starts: `codeact` when `PATH` finds this binary by that name, else
/// this binary's path (so that an agent started with another `PATH` finds it too).
fn command() -> String {
    let binary = reach::current_binary();
    let found = program::shell_would_run("codeact").and_then(|file| file.canonical().ok());
    if found.is_some_and(|file| file == Path::new(&binary)) { "codeact".to_owned() } else { binary }
}

/// Where `--gateway` moves the agent's other servers: a file of codeact's, in the agent's own
/// form, which codeact reads and the agent does not.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Gateway {
    file: PathBuf,
}

fn gateway(agent: crate::cli::SetupAgent, scope: Scope, project: &Path, plan: &Plan) -> Result<Gateway> {
    let (in_project, in_config) = crate::mcp::config::gateway_file(plans::id(agent))
        .ok_or_else(|| anyhow!("{} has no gateway file", plans::name(agent)))?;
    let file = match scope {
        Scope::Project => project.join(in_project),
        Scope::User => dirs::config()
            .ok_or_else(|| anyhow!("cannot tell codeact's config folder: set HOME or XDG_CONFIG_HOME"))?
            .join(in_config),
    };
    debug_assert_eq!(file.extension().is_some_and(|ext| ext == "toml"), plan.format == Format::Toml);
    Ok(Gateway { file })
}

/// `url` when it can be a codeact server's: an `http` or `https` URL with a host.
fn server_url(url: &str) -> Result<String> {
    let parsed = url::Url::parse(url).map_err(|err| {
        hint::error(format!("`{url}` is not a URL: {err}"), "give the URL `codeact mcp serve --http ADDR` printed")
    })?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host().is_none() {
        return Err(hint::error(
            format!("`{url}` is not an HTTP URL"),
            "give the URL `codeact mcp serve --http ADDR` printed, e.g. `http://127.0.0.1:8765/mcp`",
        ));
    }
    Ok(url.to_owned())
}

/// What `codeact setup` changed in one file at one key, so that `--undo` can put it back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Change {
    /// What the key held before the first setup, `None` when it was not there.
    before: Option<Value>,
    /// What setup wrote.
    written: Value,
    /// How many objects on the way to the key setup made.
    made_parents: usize,
    /// Whether setup made the file.
    made_file: bool,
    /// The agent's other servers `--gateway` moved into codeact's file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    moved: Option<Moved>,
}

/// What `--gateway` moved, and where.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Moved {
    file: PathBuf,
    /// Each server's entry, by name, as it was in the agent's file.
    servers: Vec<(String, Value)>,
    /// Whether setup made the file.
    made_file: bool,
}

/// Every change, by file and key (`FILE#a.b`).
type Journal = BTreeMap<String, Change>;

fn journal_key(plan: &Plan) -> String {
    format!("{}#{}", plan.file.display(), plan.key.join("."))
}

fn read_journal(path: &Path) -> Result<Journal> {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text).with_context(|| format!("`{}` is damaged", path.display())),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(Journal::new()),
        Err(err) => Err(err).with_context(|| format!("failed to read `{}`", path.display())),
    }
}

fn write_journal(path: &Path, journal: &Journal) -> Result<()> {
    let text = serde_json::to_string_pretty(journal)?;
    atomic::write(path, text.as_bytes(), Access::Private)
        .with_context(|| format!("failed to write `{}`", path.display()))
}

/// The file's text, `None` when there is none; a link is refused (the agent would read what it
/// leads to, which setup does not edit).
fn read_file(path: &Path) -> Result<Option<String>> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => {
            bail!("`{}` is a symbolic link: edit the file it leads to by hand", path.display())
        }
        Ok(_) => {
            std::fs::read_to_string(path).map(Some).with_context(|| format!("failed to read `{}`", path.display()))
        }
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(err).with_context(|| format!("failed to read `{}`", path.display())),
    }
}

/// The text of `file` (none when there is no file) as `format`, or why not with a hint.
fn parse(file: &Path, format: Format, text: Option<&str>) -> Result<Document> {
    Document::parse(format, text.unwrap_or_default()).map_err(|err| {
        hint::error(
            format!("`{}` cannot be read as {}: {err:#}", file.display(), format_name(format)),
            "fix the file (or move it away), then run setup again; nothing was changed",
        )
    })
}

fn format_name(format: Format) -> &'static str {
    match format {
        Format::Json => "JSON",
        Format::Toml => "TOML",
    }
}

/// Writes `text` to `path` at once (a file beside it, renamed over it), keeping the file's
/// permissions; a new file is readable by all (0644 less the umask), as the agents make theirs.
fn write_file(path: &Path, text: &str) -> Result<()> {
    use std::io::Write as _;
    let failed = || format!("failed to write `{}`", path.display());
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).with_context(|| format!("failed to make `{}`", dir.display()))?;
    let previous = std::fs::metadata(path).ok().map(|meta| meta.permissions());
    let name = path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
    let staged = dir.join(format!(".{name}.codeact-setup"));
    // A file left by a setup that was stopped; a link there is removed, not followed.
    let _ = std::fs::remove_file(&staged);
    let mut file =
        std::fs::OpenOptions::new().write(true).create_new(true).unix_mode(0o644).open(&staged).with_context(failed)?;
    let written = file.write_all(text.as_bytes()).and_then(|()| file.sync_all());
    drop(file);
    let moved = written
        .and_then(|()| previous.map_or(Ok(()), |permissions| std::fs::set_permissions(&staged, permissions)))
        .and_then(|()| std::fs::rename(&staged, path));
    if moved.is_err() {
        let _ = std::fs::remove_file(&staged);
    }
    moved.with_context(failed)
}

/// A project's file is written only inside the project: a folder on the way that is a link out
/// of it (`.vscode` → elsewhere, in a repository cloned with one) is refused.
fn inside_project(file: &Path, project: &Path) -> Result<()> {
    let existing = file.ancestors().skip(1).find(|dir| dir.exists());
    if let Some(dir) = existing
        && !dir.canonical().is_ok_and(|real| crate::platform::is_within(&real, project))
    {
        bail!("`{}` leads out of the project (a symbolic link on the way): nothing was changed", file.display());
    }
    Ok(())
}

/// The path of the server `name` beside codeact's entry at `key`.
fn beside<'a>(key: &[&'a str], name: &'a str) -> Vec<&'a str> {
    let mut path = key[..key.len() - 1].to_vec();
    path.push(name);
    path
}

/// The agent's servers other than codeact's, by name, in the file's order; those the agent
/// switched off (`"disabled": true`, `enabled = false`, Gemini CLI's and Qwen Code's excluded
/// or not allowed ones) stay where they are, off.
fn other_servers(plan: &Plan, doc: &Document) -> Vec<(String, Value)> {
    let Some((own, parent)) = plan.key.split_last() else { return Vec::new() };
    // The settings that name servers to leave out, read as codeact reads them from the file.
    let lists: serde_json::Map<String, Value> =
        crate::mcp::config::SERVER_LISTS.iter().filter_map(|key| Some(((*key).to_owned(), doc.get(&[key])?))).collect();
    let (allowed, excluded) = crate::mcp::config::gemini_lists(&lists);
    let off = |name: &str, entry: &Value| {
        entry.get("disabled") == Some(&Value::Bool(true))
            || entry.get("enabled") == Some(&Value::Bool(false))
            || excluded.iter().any(|n| n == name)
            || allowed.as_ref().is_some_and(|allowed| !allowed.iter().any(|n| n == name))
    };
    let servers = doc.get(parent);
    let servers = servers.as_ref().and_then(Value::as_object).into_iter().flatten();
    servers
        .filter(|(name, entry)| name != own && !off(name, entry))
        .map(|(name, entry)| (name.clone(), entry.clone()))
        .collect()
}

/// Moves `servers` out of `doc` into the gateway file's document, which it gives with whether
/// the file is new; a server of the same name there with another entry is refused.
fn move_out(
    plan: &Plan,
    gateway: &Gateway,
    doc: &mut Document,
    servers: &[(String, Value)],
) -> Result<(Document, bool)> {
    let text = read_file(&gateway.file)?;
    let mut moved_to = parse(&gateway.file, plan.format, text.as_deref())?;
    for (name, entry) in servers {
        let path = beside(plan.key, name);
        if let Some(there) = moved_to.get(&path)
            && &there != entry
        {
            return Err(hint::error(
                format!(
                    "MCP server `{name}` is in both `{}` and `{}`, set up differently",
                    plan.file.display(),
                    gateway.file.display()
                ),
                "keep one of the two by hand, then run setup again; nothing was changed",
            ));
        }
        moved_to.set(&path, entry);
        doc.remove(&path, 0);
    }
    Ok((moved_to, text.is_none()))
}

/// The key as the file spells it: `mcpServers.codeact` in JSON, `[mcp_servers.codeact]` in TOML.
fn shown_key(plan: &Plan) -> String {
    match plan.format {
        Format::Json => plan.key.join("."),
        Format::Toml => format!("[{}]", plan.key.join(".")),
    }
}

fn set_up(plan: &Plan, gateway: Option<&Gateway>, journal_path: &Path, dry_run: bool) -> Result<String> {
    let text = read_file(&plan.file)?;
    let mut doc = parse(&plan.file, plan.format, text.as_deref())?;
    let before = doc.get(plan.key);
    let (file, key) = (plan.file.display(), shown_key(plan));
    let servers = if gateway.is_some() { other_servers(plan, &doc) } else { Vec::new() };
    if before.as_ref() == Some(&plan.entry) && servers.is_empty() {
        return Ok(format!("already set up: {key} in {file}"));
    }
    let moved = match gateway {
        Some(gateway) if !servers.is_empty() => Some((gateway, move_out(plan, gateway, &mut doc, &servers)?)),
        _ => None,
    };
    let made_parents = doc.missing_parents(plan.key);
    doc.set(plan.key, &plan.entry);
    let written = doc.render();
    let verb = if before.as_ref() == Some(&plan.entry) {
        "kept"
    } else if before.is_some() {
        "replaced"
    } else {
        "added"
    };
    let names: Vec<&str> = servers.iter().map(|(name, _)| name.as_str()).collect();
    let moved_said = moved.as_ref().map(|(gateway, _)| {
        format!(
            "; moved {} to {}, where codeact serves them: {}",
            plural(names.len(), "server"),
            gateway.file.display(),
            names.join(", ")
        )
    });
    let moved_said = moved_said
        .unwrap_or_else(|| if gateway.is_some() { "; no other server to move".to_owned() } else { String::new() });
    if dry_run {
        let also = moved.as_ref().map_or_else(String::new, |(gateway, (moved_to, _))| {
            format!("and {} would read:\n{}", gateway.file.display(), moved_to.render())
        });
        return Ok(format!("would have {verb} {key} in {file}{moved_said}; the file would read:\n{written}{also}"));
    }
    let mut journal = read_journal(journal_path)?;
    let change = journal.entry(journal_key(plan)).or_insert_with(|| Change {
        before: before.clone(),
        written: plan.entry.clone(),
        made_parents,
        made_file: text.is_none(),
        moved: None,
    });
    change.written = plan.entry.clone();
    if let Some((gateway, (_, made_file))) = &moved {
        let record = change.moved.get_or_insert_with(|| Moved {
            file: gateway.file.clone(),
            servers: Vec::new(),
            made_file: *made_file,
        });
        record.servers.extend(servers.iter().cloned());
    }
    // Journal first: a file written but not journaled could not be undone. The servers reach
    // codeact's file before they leave the agent's.
    write_journal(journal_path, &journal)?;
    if let Some((gateway, (moved_to, _))) = &moved {
        write_file(&gateway.file, &moved_to.render())?;
    }
    write_file(&plan.file, &written)?;
    let old = if before.is_some() && verb == "replaced" { " (`--undo` puts the old one back)" } else { "" };
    Ok(format!("{verb} {key} in {file}{old}{moved_said}"))
}

fn plural(count: usize, noun: &str) -> String {
    if count == 1 { format!("1 {noun}") } else { format!("{count} {noun}s") }
}

/// Moves what `--gateway` moved back into `doc`, from the gateway file: each server still there
/// as it was moved, and not set in the agent's file again since. Gives the gateway file's new
/// text (`None` to remove it, which setup made and is now empty) and the servers moved back.
fn move_back(plan: &Plan, moved: &Moved, doc: &mut Document) -> Result<(Option<String>, Vec<String>)> {
    let text = read_file(&moved.file)?;
    let mut moved_to = parse(&moved.file, plan.format, text.as_deref())?;
    let mut back = Vec::new();
    for (name, entry) in &moved.servers {
        let path = beside(plan.key, name);
        if moved_to.get(&path).as_ref() == Some(entry) && doc.get(&path).is_none() {
            moved_to.remove(&path, 1);
            doc.set(&path, entry);
            back.push(name.clone());
        }
    }
    let gone = moved.made_file && moved_to.is_empty();
    Ok((if gone { None } else { Some(moved_to.render()) }, back))
}

/// Undoes setup's change to `plan`'s key; in a project (`project`), only inside it.
fn undo(plan: &Plan, project: Option<&Path>, journal_path: &Path, dry_run: bool) -> Result<String> {
    let mut journal = read_journal(journal_path)?;
    let (file, key) = (plan.file.display(), shown_key(plan));
    let Some(change) = journal.get(&journal_key(plan)).cloned() else {
        return Ok(format!("nothing to undo: setup did not change {key} in {file}"));
    };
    let text = read_file(&plan.file)?;
    let mut doc = parse(&plan.file, plan.format, text.as_deref())?;
    let now = doc.get(plan.key);
    if now.as_ref() != Some(&change.written) {
        if now == change.before {
            journal.remove(&journal_key(plan));
            if !dry_run {
                write_journal(journal_path, &journal)?;
            }
            return Ok(format!("nothing to undo: {key} in {file} is already as it was"));
        }
        return Err(hint::error(
            format!("{key} in {file} was edited since setup wrote it"),
            "edit it by hand; nothing was changed",
        ));
    }
    if let (Some(moved), Some(project)) = (&change.moved, project) {
        inside_project(&moved.file, project)?;
    }
    let moved_back = match &change.moved {
        Some(moved) => Some((moved, move_back(plan, moved, &mut doc)?)),
        None => None,
    };
    match &change.before {
        Some(before) => doc.set(plan.key, before),
        None => doc.remove(plan.key, change.made_parents),
    }
    let remove_file = change.made_file && doc.is_empty();
    let back_said = moved_back.as_ref().map_or_else(String::new, |(moved, (_, back))| {
        format!("; moved {} back from {}: {}", plural(back.len(), "server"), moved.file.display(), back.join(", "))
    });
    if dry_run {
        return Ok(if remove_file {
            format!("would remove {file}, which setup made{back_said}")
        } else {
            format!("would put back {key} in {file}{back_said}; the file would read:\n{}", doc.render())
        });
    }
    // The servers reach the agent's file again before they leave codeact's.
    if remove_file {
        std::fs::remove_file(&plan.file).with_context(|| format!("failed to remove `{file}`"))?;
    } else {
        write_file(&plan.file, &doc.render())?;
    }
    if let Some((moved, (text, _))) = &moved_back {
        match text {
            Some(text) => write_file(&moved.file, text)?,
            None => std::fs::remove_file(&moved.file)
                .with_context(|| format!("failed to remove `{}`", moved.file.display()))?,
        }
    }
    journal.remove(&journal_key(plan));
    write_journal(journal_path, &journal)?;
    Ok(if remove_file {
        format!("removed {file}, which setup made{back_said}")
    } else if change.before.is_some() {
        format!("put back the earlier {key} in {file}{back_said}")
    } else {
        format!("removed {key} from {file}{back_said}")
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::cli::SetupAgent;

    /// Where setup writes for `agent` in `scope`, for a project in `/p` and a home in `/h`.
    fn plan_file(agent: SetupAgent, scope: Scope) -> PathBuf {
        let places = Places { project: Path::new("/p"), home: Path::new("/h"), config: Path::new("/h/.config") };
        plans::plan(agent, scope, &places, &Reach::Command("codeact".into())).map(|plan| plan.file).unwrap_or_default()
    }

    fn plan_in(dir: &Path, format: Format) -> Plan {
        Plan {
            file: dir.join(if format == Format::Json { "settings.json" } else { "config.toml" }),
            format,
            key: if format == Format::Json { &["mcpServers", "codeact"] } else { &["mcp_servers", "codeact"] },
            entry: json!({"command": "codeact", "args": ["mcp", "serve"]}),
            notes: Vec::new(),
        }
    }

    #[test]
    fn setup_is_idempotent_and_undo_gives_back_the_file_byte_for_byte() {
        for format in [Format::Json, Format::Toml] {
            let temp = tempfile::tempdir().unwrap();
            let plan = plan_in(temp.path(), format);
            let journal = temp.path().join("state/setup.json");
            let original = if format == Format::Json {
                "{\n  // mine\n  \"theme\": \"dark\",\n}\n"
            } else {
                "# mine\nmodel = \"o3\"\n"
            };
            std::fs::write(&plan.file, original).unwrap();
            let said = set_up(&plan, None, &journal, false).unwrap();
            assert!(said.starts_with("added "), "{said}");
            let once = std::fs::read_to_string(&plan.file).unwrap();
            assert!(once.contains("mine"), "{once}");
            assert!(set_up(&plan, None, &journal, false).unwrap().starts_with("already set up"));
            assert_eq!(std::fs::read_to_string(&plan.file).unwrap(), once);
            let said = undo(&plan, None, &journal, false).unwrap();
            assert!(said.starts_with("removed "), "{said}");
            assert_eq!(std::fs::read_to_string(&plan.file).unwrap(), original, "{format:?}");
            assert!(undo(&plan, None, &journal, false).unwrap().starts_with("nothing to undo"));
        }
    }

    #[test]
    fn undo_puts_back_an_earlier_entry_removes_a_file_setup_made_and_refuses_after_an_edit() {
        let temp = tempfile::tempdir().unwrap();
        let plan = plan_in(temp.path(), Format::Json);
        let journal = temp.path().join("setup.json");
        // A file setup made is removed again.
        set_up(&plan, None, &journal, false).unwrap();
        assert!(plan.file.is_file());
        assert!(undo(&plan, None, &journal, false).unwrap().starts_with("removed "));
        assert!(!plan.file.exists());
        // An earlier entry comes back.
        std::fs::write(&plan.file, "{\"mcpServers\": {\"codeact\": {\"command\": \"old\"}}}").unwrap();
        assert!(set_up(&plan, None, &journal, false).unwrap().starts_with("replaced "));
        undo(&plan, None, &journal, false).unwrap();
        let doc = Document::parse(Format::Json, &std::fs::read_to_string(&plan.file).unwrap()).unwrap();
        assert_eq!(doc.get(plan.key), Some(json!({"command": "old"})));
        // An entry edited since setup is left alone.
        set_up(&plan, None, &journal, false).unwrap();
        std::fs::write(&plan.file, "{\"mcpServers\": {\"codeact\": {\"command\": \"mine\"}}}").unwrap();
        let err = undo(&plan, None, &journal, false).unwrap_err();
        assert!(format!("{err:#}").contains("was edited since setup wrote it"), "{err:#}");
        assert!(std::fs::read_to_string(&plan.file).unwrap().contains("mine"));
    }

    #[test]
    fn a_dry_run_changes_nothing_and_a_broken_file_is_left_alone() {
        let temp = tempfile::tempdir().unwrap();
        let plan = plan_in(temp.path(), Format::Json);
        let journal = temp.path().join("setup.json");
        let said = set_up(&plan, None, &journal, true).unwrap();
        assert!(said.contains("would have added") && said.contains("\"codeact\""), "{said}");
        assert!(!plan.file.exists() && !journal.exists());
        std::fs::write(&plan.file, "{ broken").unwrap();
        let err = set_up(&plan, None, &journal, false).unwrap_err();
        assert!(format!("{err:#}").contains("cannot be read as JSON"), "{err:#}");
        assert_eq!(std::fs::read_to_string(&plan.file).unwrap(), "{ broken");
    }

    #[test]
    fn each_agent_writes_where_it_reads() {
        let cases = [
            (SetupAgent::Claude, Scope::Project, "/p/.mcp.json"),
            (SetupAgent::Claude, Scope::User, "/h/.claude.json"),
            (SetupAgent::Gemini, Scope::Project, "/p/.gemini/settings.json"),
            (SetupAgent::Gemini, Scope::User, "/h/.gemini/settings.json"),
            (SetupAgent::Opencode, Scope::Project, "/p/opencode.json"),
            (SetupAgent::Opencode, Scope::User, "/h/.config/opencode/opencode.json"),
            (SetupAgent::Qwen, Scope::Project, "/p/.qwen/settings.json"),
            (SetupAgent::Qwen, plans::default_scope(SetupAgent::Qwen), "/h/.qwen/settings.json"),
            (SetupAgent::Qwen, Scope::User, "/h/.qwen/settings.json"),
            (SetupAgent::Cursor, Scope::Project, "/p/.cursor/mcp.json"),
            (SetupAgent::Cursor, Scope::User, "/h/.cursor/mcp.json"),
            (SetupAgent::Vscode, Scope::Project, "/p/.vscode/mcp.json"),
        ];
        for (agent, scope, file) in cases {
            assert_eq!(plan_file(agent, scope), PathBuf::from(file), "{agent:?} {scope:?}");
        }
        let places = Places { project: Path::new("/p"), home: Path::new("/h"), config: Path::new("/h/.config") };
        for agent in [SetupAgent::Codex, SetupAgent::Copilot] {
            let err = plans::plan(agent, Scope::Project, &places, &Reach::Command("codeact".into())).err().unwrap();
            assert!(err.to_string().contains("--scope user"), "{err}");
        }
        let codeact = Reach::Command("codeact".into());
        let codex = plans::plan(SetupAgent::Codex, Scope::User, &places, &codeact).unwrap();
        assert_eq!(codex.entry["default_tools_approval_mode"], "approve");
        // A codeact Codex starts as another codeact's server knows it, and starts none.
        assert!(codex.entry["env_vars"].as_array().unwrap().contains(&json!("CODEACT_NESTED")));
        assert!(codex.entry["args"].as_array().unwrap().contains(&json!("--text-only")));
        let gemini = plans::plan(SetupAgent::Gemini, Scope::Project, &places, &codeact).unwrap();
        assert_eq!(gemini.entry["trust"], true);
        let qwen = plans::plan(SetupAgent::Qwen, Scope::User, &places, &codeact).unwrap();
        assert_eq!((&qwen.entry["trust"], &qwen.entry["alwaysLoadTools"]), (&json!(true), &json!(true)));
    }

    #[test]
    fn over_http_each_agent_gets_the_url_in_its_own_key_with_the_same_settings() {
        let places = Places { project: Path::new("/p"), home: Path::new("/h"), config: Path::new("/h/.config") };
        let url = "http://127.0.0.1:8765/mcp";
        let at = Reach::Url(url.into());
        let cases = [
            (SetupAgent::Copilot, json!({"type": "http", "url": url, "tools": ["*"]})),
            (SetupAgent::Claude, json!({"type": "http", "url": url})),
            (SetupAgent::Codex, json!({"url": url, "default_tools_approval_mode": "approve"})),
            (SetupAgent::Gemini, json!({"httpUrl": url, "trust": true})),
            (SetupAgent::Qwen, json!({"httpUrl": url, "trust": true, "alwaysLoadTools": true})),
            (SetupAgent::Opencode, json!({"type": "remote", "url": url, "enabled": true})),
            (SetupAgent::Cursor, json!({"url": url})),
            (SetupAgent::Vscode, json!({"type": "http", "url": url})),
        ];
        for (agent, expected) in cases {
            let plan = plans::plan(agent, Scope::User, &places, &at).unwrap();
            assert_eq!(plan.entry, expected, "{agent:?}");
            assert!(plan.notes.iter().any(|note| note.contains("codeact mcp serve --http")), "{agent:?}");
        }
        for wrong in ["127.0.0.1:8765", "ftp://host/mcp", "http://", "file:///tmp/x"] {
            let err = server_url(wrong).unwrap_err();
            assert!(format!("{err:#}").contains("codeact mcp serve --http"), "{wrong}: {err:#}");
        }
        assert_eq!(server_url(url).unwrap(), url);
    }

    #[test]
    fn the_gateway_moves_the_other_servers_into_codeacts_file_and_undo_moves_them_back() {
        for format in [Format::Json, Format::Toml] {
            let temp = tempfile::tempdir().unwrap();
            let plan = plan_in(temp.path(), format);
            let journal = temp.path().join("state/setup.json");
            let gateway =
                Gateway { file: temp.path().join(if format == Format::Json { "gw.json" } else { "gw.toml" }) };
            let original = if format == Format::Json {
                "{\n  \"theme\": \"dark\",\n  \"mcpServers\": {\"a\": {\"command\": \"one\"}, \"b\": {\"url\": \"http://x/mcp\"}}\n}\n"
            } else {
                "model = \"o3\"\n[mcp_servers.a]\ncommand = \"one\"\n[mcp_servers.b]\nurl = \"http://x/mcp\"\n"
            };
            std::fs::write(&plan.file, original).unwrap();
            let said = set_up(&plan, Some(&gateway), &journal, false).unwrap();
            assert!(said.contains("moved 2 servers to") && said.ends_with(": a, b"), "{said}");
            let agent = Document::parse(format, &std::fs::read_to_string(&plan.file).unwrap()).unwrap();
            assert_eq!(agent.get(&plan.key[..1]), Some(json!({"codeact": plan.entry})), "{format:?}");
            let moved = Document::parse(format, &std::fs::read_to_string(&gateway.file).unwrap()).unwrap();
            let expected = json!({"a": {"command": "one"}, "b": {"url": "http://x/mcp"}});
            assert_eq!(moved.get(&plan.key[..1]), Some(expected.clone()), "{format:?}");
            // Again: nothing left to move.
            assert!(set_up(&plan, Some(&gateway), &journal, false).unwrap().starts_with("already set up"));
            let said = undo(&plan, None, &journal, false).unwrap();
            assert!(said.contains("moved 2 servers back"), "{said}");
            assert!(!gateway.file.exists(), "the file setup made is removed");
            let agent = Document::parse(format, &std::fs::read_to_string(&plan.file).unwrap()).unwrap();
            assert_eq!(agent.get(&plan.key[..1]), Some(expected), "{format:?}");
            assert!(agent.get(&["model"]).or_else(|| agent.get(&["theme"])).is_some());
        }
    }

    #[test]
    fn the_gateway_refuses_a_name_codeacts_file_holds_otherwise_and_keeps_its_other_servers() {
        let temp = tempfile::tempdir().unwrap();
        let plan = plan_in(temp.path(), Format::Json);
        let journal = temp.path().join("setup.json");
        let gateway = Gateway { file: temp.path().join("gw.json") };
        let agent = "{\"mcpServers\": {\"a\": {\"command\": \"mine\"}}}";
        std::fs::write(&plan.file, agent).unwrap();
        std::fs::write(
            &gateway.file,
            "{\"mcpServers\": {\"a\": {\"command\": \"other\"}, \"kept\": {\"command\": \"k\"}}}",
        )
        .unwrap();
        let err = set_up(&plan, Some(&gateway), &journal, false).unwrap_err();
        assert!(format!("{err:#}").contains("is in both"), "{err:#}");
        assert_eq!(std::fs::read_to_string(&plan.file).unwrap(), agent);
        std::fs::write(&gateway.file, "{\"mcpServers\": {\"kept\": {\"command\": \"k\"}}}").unwrap();
        set_up(&plan, Some(&gateway), &journal, false).unwrap();
        undo(&plan, None, &journal, false).unwrap();
        // The file was there before: it stays, with what it held.
        let left = Document::parse(Format::Json, &std::fs::read_to_string(&gateway.file).unwrap()).unwrap();
        assert_eq!(left.get(&["mcpServers"]), Some(json!({"kept": {"command": "k"}})));
        let back = Document::parse(Format::Json, &std::fs::read_to_string(&plan.file).unwrap()).unwrap();
        assert_eq!(back.get(&["mcpServers"]), Some(json!({"a": {"command": "mine"}})));
    }

    #[test]
    fn the_gateway_leaves_the_servers_the_agent_switched_off() {
        let temp = tempfile::tempdir().unwrap();
        let plan = plan_in(temp.path(), Format::Json);
        let text = json!({
            "mcp": {"excluded": ["excluded"], "allowed": ["on", "off", "excluded"]},
            "mcpServers": {
                "on": {"command": "a"},
                "off": {"command": "b", "disabled": true},
                "excluded": {"command": "c"},
                "not-allowed": {"command": "d"},
                "disabled-codex-style": {"command": "e", "enabled": false},
            },
        });
        let doc = Document::parse(Format::Json, &text.to_string()).unwrap();
        let names: Vec<String> = other_servers(&plan, &doc).into_iter().map(|(name, _)| name).collect();
        assert_eq!(names, ["on"]);
        let older = json!({"excludeMCPServers": ["x"], "mcpServers": {"x": {"command": "x"}, "y": {"command": "y"}}});
        let doc = Document::parse(Format::Json, &older.to_string()).unwrap();
        let names: Vec<String> = other_servers(&plan, &doc).into_iter().map(|(name, _)| name).collect();
        assert_eq!(names, ["y"]);
    }
}
