//! [`build`]: the one function that decides what a command offers. It reads the tool files of
//! every tools folder (`usertools::folders` says which, in which order, and whose) and the MCP
//! configuration, and keeps a tool only when configuration allows it, its name is free (not
//! reserved, not taken by an earlier tool) and it can work here — nothing is advertised that
//! would fail. The workspace's tool files and MCP config files count only when the user trusts
//! their content (`codeact trust`); the others are never read past their digest, and are named
//! in [`Built::untrusted`].

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::entry::{DropIn, McpFunction, Tool};
use super::filter::ToolFilter;
use super::index::Catalog;
use crate::mcp::{Mcp, McpHelper};
use crate::tools::builtin::{BUILTINS, is_reserved};
use crate::tools::github::GITHUB_API;
use crate::tools::network::NetworkPolicy;
use crate::trust::Approved;
use crate::usertools::dropin::{self, DropInFile, DropIns};
use crate::usertools::folders::{Origin, ToolDir, workspace_item};
use crate::usertools::is_identifier;
use crate::usertools::load;
use crate::usertools::markdown::Language;

/// What the command found out about this workspace and machine.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sources<'a> {
    /// The workspace whose tool files and MCP configuration count; none for the plugin's
    /// generated files, which describe the built-in tools only.
    pub(crate) workspace: Option<&'a Path>,
    /// The folders of tool files, in the order they count (`usertools::folders::tool_dirs`); a
    /// workspace folder counts only with a workspace.
    pub(crate) tool_dirs: &'a [ToolDir],
    /// The user's own MCP config files, every agent's, read after the workspace's.
    pub(crate) user_mcp: &'a [crate::mcp::config::Source],
    pub(crate) filter: &'a ToolFilter,
    /// What the user approved in the workspace.
    pub(crate) trust: &'a Approved,
    /// Where a workspace's HTTP MCP server may be.
    pub(crate) network: &'a NetworkPolicy,
    /// Whether `github_api` can reach GitHub here (`gh` installed, or a token).
    pub(crate) github: bool,
    /// Whether `node` is there for JavaScript tools (asked only when there is one).
    pub(crate) node: fn() -> bool,
}

/// How much a command may start to find out what works.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Discovery {
    /// Start nothing: drop-ins are known by their file names, MCP servers by their
    /// configuration, and their tools resolve on use (`run`).
    Lazy,
    /// Start nothing, and offer only what is known without starting anything: no MCP helpers
    /// and no drop-ins, which only a started server or worker can describe (the session-start
    /// hook, the plugin's files).
    Static,
    /// Start each MCP server and a drop-in worker, within this long, to list what answers
    /// (`discover`, `instructions`, `install`).
    Probe(Duration),
}

/// A built catalogue, with the run-time state its tools need and what was left out, and why.
#[derive(Debug)]
pub(crate) struct Built {
    pub(crate) catalog: Catalog,
    /// The MCP servers, with the connections probing opened.
    pub(crate) mcp: Mcp,
    pub(crate) dropins: DropIns,
    /// One line for each tool file or server left out.
    pub(crate) warnings: Vec<String>,
    /// The workspace's tool files and MCP config files left out because the user does not trust
    /// them, relative to the workspace, and the workspace's tools folders that count for
    /// nothing, with why.
    pub(crate) untrusted: Vec<String>,
}

/// The catalogue for `sources`.
#[must_use]
pub(crate) fn build(sources: &Sources<'_>, discovery: Discovery) -> Built {
    let mut building = Building { filter: sources.filter, catalog: Catalog::default(), warnings: Vec::new() };
    for builtin in BUILTINS {
        building.offer(Tool::Builtin(builtin));
    }
    if sources.github {
        building.offer(Tool::Builtin(&GITHUB_API));
    }

    let mut mcp = match sources.workspace {
        Some(workspace) => Mcp::load(workspace, sources.user_mcp, sources.trust, sources.network),
        None => Mcp::none(),
    };
    let listed = match discovery {
        _ if mcp.is_empty() => Some(Vec::new()),
        Discovery::Lazy => None,
        Discovery::Static => Some(Vec::new()),
        Discovery::Probe(_) if !sources.filter.allows("mcp_call") => Some(Vec::new()),
        Discovery::Probe(within) => {
            building.warnings.extend(mcp.problems());
            let (listed, failed) = mcp.catalog(Instant::now() + within);
            for (name, why) in failed {
                building.warnings.push(format!("MCP server `{name}` left out: {why}"));
            }
            building.warnings.extend(mcp.take_warnings());
            Some(listed)
        }
    };
    // Lazily, the helpers are offered whenever a server is configured; probing, when one answered.
    if listed.as_ref().is_none_or(|servers| !servers.is_empty()) {
        for helper in McpHelper::ALL {
            building.offer(Tool::Mcp(Arc::new(McpFunction::Helper(helper))));
        }
    }

    let mut untrusted: Vec<String> = mcp.untrusted().to_vec();
    // A workspace folder counts only when every file in it is trusted, helpers too (a tool may
    // import or read one), and no symbolic link is on the way to it.
    let gates: Vec<Gate> = sources.tool_dirs.iter().map(|dir| gate(sources.workspace, dir, sources.trust)).collect();
    for gate in &gates {
        if let Gate::Shut { why, .. } = gate {
            untrusted.extend(why.iter().cloned());
        }
    }
    let folders: Vec<(&ToolDir, &Gate)> = sources
        .tool_dirs
        .iter()
        .zip(&gates)
        .filter(|(_, gate)| !matches!(gate, Gate::Shut { read: false, .. }))
        .collect();
    let trusted = |dir: &ToolDir, gate: &Gate, path: &Path, content: &[u8]| match gate {
        Gate::User => true,
        Gate::Shut { .. } => false,
        Gate::Trust => sources
            .workspace
            .and_then(|ws| project_item(ws, dir, path))
            .is_some_and(|rel| sources.trust.trusts(&rel, content)),
    };
    for &(dir, gate) in &folders {
        let markdown = load::load(dir, &|path, content| trusted(dir, gate, path, content));
        building.warnings.extend(markdown.warnings);
        untrusted.extend(
            markdown.untrusted.iter().filter_map(|path| sources.workspace.and_then(|ws| project_item(ws, dir, path))),
        );
        for tool in markdown.tools {
            let name = tool.tool.name.clone();
            if !building.name_is_free(&name, &tool.path) {
                continue;
            }
            if tool.tool.code.language == Language::JavaScript && !(sources.node)() {
                building.warnings.push(format!("tool `{name}` needs `node`, which is not on PATH"));
            } else {
                building.offer(Tool::Markdown(Arc::new(tool)));
            }
        }
    }

    let mut offered = Vec::new();
    if let Some(workspace) = sources.workspace {
        let mut sources_read = Vec::new();
        for &(dir, gate) in &folders {
            let trusted = |path: &Path, content: &[u8]| trusted(dir, gate, path, content);
            sources_read.extend(trusted_dropins(workspace, dir, &trusted, &mut untrusted, &mut building.warnings));
        }
        for dropin in dropins_of(workspace, &sources_read, discovery, &mut building.warnings) {
            if building.name_is_free(&dropin.name, &dropin.path) && is_identifier(&dropin.name) {
                offered.extend(sources_read.iter().find(|source| source.path == dropin.path).cloned());
                building.offer(Tool::DropIn(Arc::new(dropin)));
            }
        }
    }
    // The worker loads only the drop-ins offered.
    let dropins = sources.workspace.map(|workspace| DropIns::new(offered, workspace)).unwrap_or_default();

    let Building { mut catalog, warnings, .. } = building;
    if catalog.offers_mcp() {
        for (server, tools) in listed.unwrap_or_default() {
            catalog.add_server(&server, &tools);
        }
    }
    Built { catalog, mcp, dropins, warnings, untrusted }
}

/// `path` relative to `workspace`, `/`-separated, when it is a file of the workspace's tools
/// folder `dir`: the key under which the user trusts it. `None` for the user's folders.
#[must_use]
pub(crate) fn project_item(workspace: &Path, dir: &ToolDir, path: &Path) -> Option<String> {
    (dir.origin == Origin::Workspace && path.starts_with(&dir.path)).then(|| workspace_item(workspace, path)).flatten()
}

/// Whether the files of one tools folder may count.
#[derive(Debug)]
enum Gate {
    /// The user's folder: its files count as they are.
    User,
    /// A workspace folder: each file counts when the user trusts its content.
    Trust,
    /// A workspace folder none of whose files count, and why (each named): a symbolic link on
    /// the way to it, whose files are not even read, or files in it the user does not trust.
    Shut { why: Vec<String>, read: bool },
}

/// The [`Gate`] of `dir`: the user's folders are open; a workspace folder is shut by a link on
/// the way to it, by more files than [`load::survey`] looks at, by a support file (a helper, a
/// cache, data) or a link the user does not trust or no approval can cover, and without a
/// workspace.
fn gate(workspace: Option<&Path>, dir: &ToolDir, trust: &Approved) -> Gate {
    let Some(workspace) = workspace.filter(|_| dir.origin == Origin::Workspace) else {
        return if dir.origin == Origin::User { Gate::User } else { Gate::Shut { why: Vec::new(), read: false } };
    };
    if let Some(link) = dir.link(workspace) {
        return Gate::Shut { why: vec![format!("{link} (a symbolic link: make it a real directory)")], read: false };
    }
    let entries = match load::survey(&dir.path) {
        Ok(entries) => entries,
        Err(too_big) => {
            let rel = workspace_item(workspace, &dir.path).unwrap_or_default();
            return Gate::Shut {
                why: vec![format!("{rel} ({too_big}: a tools folder this large is not used)")],
                read: false,
            };
        }
    };
    let why = folder_blocked(workspace, dir, &entries, trust);
    if why.is_empty() { Gate::Trust } else { Gate::Shut { why, read: true } }
}

/// The entries of the workspace folder `dir`, other than its regular tool files (each of which
/// the loader checks), that the user does not trust, relative to the workspace; one that no
/// approval can cover says why.
fn folder_blocked(workspace: &Path, dir: &ToolDir, entries: &[load::FolderEntry], trust: &Approved) -> Vec<String> {
    entries
        .iter()
        .filter(|entry| entry.role != load::Role::Tool)
        .filter_map(|entry| {
            let rel = project_item(workspace, dir, &entry.path)?;
            match entry.content(dir) {
                Ok(content) if trust.trusts(&rel, &content) => None,
                Ok(_) => Some(rel),
                Err(why) => Some(format!("{rel} ({why})")),
            }
        })
        .collect()
}

/// The drop-in files of `dir` that `trusted` accepts; the workspace's others are named in
/// `untrusted`.
fn trusted_dropins(
    workspace: &Path,
    dir: &ToolDir,
    trusted: &dyn Fn(&Path, &[u8]) -> bool,
    untrusted: &mut Vec<String>,
    warnings: &mut Vec<String>,
) -> Vec<DropInFile> {
    let mut kept = Vec::new();
    for path in dropin::files(std::slice::from_ref(&dir.path)) {
        match load::read_tool(dir, &path) {
            Ok(Some(content)) if trusted(&path, &content) => {
                kept.push(DropInFile { text: String::from_utf8_lossy(&content).into_owned(), path });
            }
            Ok(Some(_)) => untrusted.extend(project_item(workspace, dir, &path)),
            Ok(None) => {}
            Err(err) => warnings.push(format!("Python tool `{}` left out: {err}", path.display())),
        }
    }
    kept
}

/// A catalogue being built, and what was left out so far.
struct Building<'a> {
    filter: &'a ToolFilter,
    catalog: Catalog,
    warnings: Vec<String>,
}

impl Building<'_> {
    /// Offers `tool` when configuration allows it; otherwise remembers it was switched off.
    fn offer(&mut self, tool: Tool) {
        if self.filter.allows(tool.name()) {
            self.catalog.offer(tool);
        } else {
            self.catalog.disable(tool.name());
        }
    }

    /// Whether a user tool from `path` may take `name`: not a reserved name, not one an
    /// earlier tool took. When it may not, says so.
    fn name_is_free(&mut self, name: &str, path: &Path) -> bool {
        if is_reserved(name) {
            self.warnings.push(format!("tool `{name}` in `{}` would shadow a built-in; rename it", path.display()));
        } else if self.catalog.get(name).is_some() || self.catalog.is_disabled(name) {
            self.warnings.push(defined_twice(name, path));
        } else {
            return true;
        }
        false
    }
}

/// The warning for a user tool whose name an earlier one took.
fn defined_twice(name: &str, path: &Path) -> String {
    format!("tool `{name}` in `{}` is defined twice; the first one is used", path.display())
}

/// The drop-ins in `dirs`, the first of two with one name winning: by file name, or as a worker
/// describes them (those that fail to load are left out with a warning).
fn dropins_of(workspace: &Path, found: &[DropInFile], discovery: Discovery, warnings: &mut Vec<String>) -> Vec<DropIn> {
    let by_name = |path: &Path| DropIn {
        name: path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default(),
        description: String::new(),
        path: path.to_path_buf(),
        parameters: None,
    };
    let mut files: Vec<DropInFile> = Vec::new();
    for source in found {
        if files.iter().any(|kept| kept.path.file_stem() == source.path.file_stem()) {
            warnings.push(defined_twice(&by_name(&source.path).name, &source.path));
        } else {
            files.push(source.clone());
        }
    }
    let within = match discovery {
        Discovery::Lazy => return files.iter().map(|source| by_name(&source.path)).collect(),
        Discovery::Static => return Vec::new(),
        Discovery::Probe(within) => within,
    };
    if files.is_empty() {
        return Vec::new();
    }
    let described = match DropIns::describe(&files, workspace, within) {
        Ok(described) => described,
        Err(err) => {
            warnings.push(format!("Python tools left out: {}", err.message));
            return Vec::new();
        }
    };
    described
        .into_iter()
        .filter_map(|tool| {
            if let Some(error) = &tool.error {
                warnings.push(format!("Python tool `{}` left out: {error}", tool.name));
                return None;
            }
            let source = files.iter().find(|f| f.path.file_stem().is_some_and(|s| *s == *tool.name))?;
            Some(DropIn { description: tool.description, parameters: tool.parameters, ..by_name(&source.path) })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sources<'a>(workspace: &'a Path, filter: &'a ToolFilter, github: bool) -> Sources<'a> {
        static NOTHING: std::sync::LazyLock<(Approved, NetworkPolicy)> = std::sync::LazyLock::new(Default::default);
        Sources {
            workspace: Some(workspace),
            tool_dirs: &[],
            user_mcp: &[],
            filter,
            trust: &NOTHING.0,
            network: &NOTHING.1,
            github,
            node: || true,
        }
    }

    #[test]
    fn allow_and_deny_lists_filter_the_catalogue() {
        let temp = tempfile::tempdir().unwrap();
        let filter = ToolFilter { allow: Some(vec!["view".into(), "bash".into()]), deny: vec!["bash".into()] };
        let built = build(&sources(temp.path(), &filter, false), Discovery::Lazy);
        assert_eq!(built.catalog.names(), ["view"]);
        assert!(built.catalog.is_disabled("bash"));
        assert!(built.catalog.is_disabled("grep"));
        assert!(!built.catalog.is_disabled("nonexistent"));
    }

    #[test]
    fn github_api_is_offered_only_when_the_command_found_a_way_to_reach_github() {
        let temp = tempfile::tempdir().unwrap();
        let filter = ToolFilter::default();
        let without = build(&sources(temp.path(), &filter, false), Discovery::Lazy);
        assert!(without.catalog.get("github_api").is_none());
        let with = build(&sources(temp.path(), &filter, true), Discovery::Lazy);
        assert!(with.catalog.get("github_api").is_some());
    }
}
