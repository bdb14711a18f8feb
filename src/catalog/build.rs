//! [`build`]: the one function that decides what a command offers. It reads the user's and the
//! project's tool files and MCP configuration, and keeps a tool only when configuration allows
//! it, its name is free (not reserved, not taken by an earlier tool) and it can work here —
//! nothing is advertised that would fail. A project's tool files and MCP config files count
//! only when the user trusts their content (`codeact trust`); the others are never read past
//! their digest, and are named in [`Built::untrusted`].

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::entry::{DropIn, McpFunction, Tool};
use super::filter::ToolFilter;
use super::index::Catalog;
use crate::bounded;
use crate::mcp::Mcp;
use crate::tools::builtin::{BUILTINS, is_reserved};
use crate::tools::github::GITHUB_API;
use crate::tools::network::NetworkPolicy;
use crate::trust::Approved;
use crate::usertools::dropin::{self, DropIns, Source};
use crate::usertools::is_identifier;
use crate::usertools::load;
use crate::usertools::markdown::Language;

/// What the command found out about this workspace and machine.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sources<'a> {
    /// The workspace whose tool files and MCP configuration count; none for the plugin's
    /// generated files, which describe the built-in tools only.
    pub(crate) workspace: Option<&'a Path>,
    /// The user's config directory, whose `tools/` come before the project's.
    pub(crate) user_config: Option<&'a Path>,
    /// Copilot CLI's home, whose `mcp-config.json` is the last MCP source.
    pub(crate) copilot_home: Option<&'a Path>,
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
    /// them, relative to the workspace.
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
        Some(workspace) => Mcp::load(workspace, sources.copilot_home, sources.trust, sources.network),
        None => Mcp::none(),
    };
    let listed = match discovery {
        _ if mcp.is_empty() => Some(Vec::new()),
        Discovery::Lazy => None,
        Discovery::Static => Some(Vec::new()),
        Discovery::Probe(_) if !sources.filter.allows("mcp_call") => Some(Vec::new()),
        Discovery::Probe(within) => {
            let (listed, failed) = mcp.catalog(Instant::now() + within);
            for (name, why) in failed {
                building.warnings.push(format!("MCP server `{name}` left out: {why}"));
            }
            Some(listed)
        }
    };
    // Lazily, the helpers are offered whenever a server is configured; probing, when one answered.
    if listed.as_ref().is_none_or(|servers| !servers.is_empty()) {
        building.offer(Tool::Mcp(Arc::new(McpFunction::Call)));
        building.offer(Tool::Mcp(Arc::new(McpFunction::List)));
    }

    let mut untrusted: Vec<String> = mcp.untrusted().to_vec();
    let dirs = sources.workspace.map(|workspace| load::tool_dirs(sources.user_config, workspace)).unwrap_or_default();
    // The project's tools count only when every file in their folder is trusted, helpers too
    // (a tool may import or read one), and the folder is the workspace's own, not a link to one
    // the program could write.
    let blocked = sources.workspace.map(|ws| project_tools_blocked(ws, sources.trust)).unwrap_or_default();
    let trusted = |path: &Path, content: &[u8]| match sources.workspace.and_then(|ws| project_item(ws, path)) {
        Some(rel) => blocked.is_empty() && sources.trust.trusts(&rel, content),
        None => true,
    };
    untrusted.extend(blocked.iter().cloned());
    let markdown = load::load(&dirs, &trusted);
    building.warnings.extend(markdown.warnings);
    untrusted
        .extend(markdown.untrusted.iter().filter_map(|path| sources.workspace.and_then(|ws| project_item(ws, path))));
    for tool in markdown.tools {
        let name = tool.tool.name.clone();
        if !building.name_is_free(&name, &tool.path) {
            continue;
        }
        if tool.tool.language == Language::JavaScript && !(sources.node)() {
            building.warnings.push(format!("tool `{name}` needs `node`, which is not on PATH"));
        } else {
            building.offer(Tool::Markdown(Arc::new(tool)));
        }
    }

    let mut offered = Vec::new();
    if let Some(workspace) = sources.workspace {
        let sources_read = trusted_dropins(workspace, &dirs, &trusted, &mut untrusted, &mut building.warnings);
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

/// `path` relative to `workspace`, `/`-separated, when it is one of the project's own tool
/// files (under `.codeact/`), whose trust the user decides.
#[must_use]
pub(crate) fn project_item(workspace: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(workspace).ok()?;
    rel.starts_with(".codeact").then(|| rel.to_string_lossy().replace('\\', "/"))
}

/// Why the project's tools may not be used, whatever their own trust: a support file the user
/// does not trust, or a `.codeact` or `.codeact/tools` that is a symbolic link.
fn project_tools_blocked(workspace: &Path, trust: &Approved) -> Vec<String> {
    let codeact = workspace.join(".codeact");
    let tools = codeact.join("tools");
    for dir in [&codeact, &tools] {
        if std::fs::symlink_metadata(dir).is_ok_and(|meta| meta.file_type().is_symlink()) {
            let rel = project_item(workspace, dir).unwrap_or_default();
            return vec![format!("{rel} (a symbolic link: make it a real directory)")];
        }
    }
    load::support_files(&tools)
        .into_iter()
        .filter(|path| {
            let content = bounded::read(path, bounded::MAX_FILE_BYTES).ok().flatten();
            let rel = project_item(workspace, path).unwrap_or_default();
            !content.is_some_and(|content| trust.trusts(&rel, &content))
        })
        .filter_map(|path| project_item(workspace, &path))
        .collect()
}

/// The drop-in files in `dirs` that `trusted` accepts; the project's others are named in
/// `untrusted`.
fn trusted_dropins(
    workspace: &Path,
    dirs: &[PathBuf],
    trusted: &dyn Fn(&Path, &[u8]) -> bool,
    untrusted: &mut Vec<String>,
    warnings: &mut Vec<String>,
) -> Vec<Source> {
    let mut kept = Vec::new();
    for path in dropin::files(dirs) {
        match bounded::read(&path, bounded::MAX_FILE_BYTES) {
            Ok(Some(content)) if trusted(&path, &content) => {
                kept.push(Source { text: String::from_utf8_lossy(&content).into_owned(), path });
            }
            Ok(Some(_)) => untrusted.extend(project_item(workspace, &path)),
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
fn dropins_of(workspace: &Path, found: &[Source], discovery: Discovery, warnings: &mut Vec<String>) -> Vec<DropIn> {
    let by_name = |path: &Path| DropIn {
        name: path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default(),
        description: String::new(),
        path: path.to_path_buf(),
        parameters: None,
    };
    let mut files: Vec<Source> = Vec::new();
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
            user_config: None,
            copilot_home: None,
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
