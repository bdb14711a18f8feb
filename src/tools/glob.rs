//! `glob`: workspace files whose path matches a pattern, sorted. The walk ([`super::walk`])
//! goes through directory handles opened beneath the root, so it never lists a name outside.

use std::collections::BTreeSet;
use std::path::Path;

use super::args::Args;
use super::context::ToolContext;
use super::error::{ErrorKind, ToolError};
use super::handler::Builtin;
use super::pattern;
use super::spec::{Kind, Param, ParamDefault, ToolSpec};
use super::value::Value;
use super::walk::{self, Flow};
use super::workspace::{Confined, Entry, Listed};

/// Most paths one call returns.
const MAX_MATCHES: usize = 10_000;

/// Directories skipped below the search root unless `exclude_dirs` says otherwise.
const DEFAULT_EXCLUDES: &[&str] = &[
    ".git",
    ".venv",
    "venv",
    "node_modules",
    "__pycache__",
    ".tox",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    "target",
    "dist",
    "build",
    ".next",
    ".nuxt",
];

pub(crate) static GLOB: Builtin = Builtin {
    spec: ToolSpec {
        name: "glob",
        description: "Files matching a glob (`**`, `{a,b}`), sorted; skips .git, node_modules and the like.",
        params: &[
            Param::required("pattern", Kind::Str, "Glob such as `src/**/*.{py,md}`, relative to each of paths"),
            Param::new("paths", Kind::Paths, ParamDefault::Str("."), "Directory or directories to search"),
            Param::optional(
                "exclude_dirs",
                Kind::StrList,
                "Directory names to skip below the search root; None skips .git, node_modules, target, … ; [] skips nothing",
            ),
        ],
        returns: "list[str]",
        risk: None,
    },
    handler: glob,
};

fn glob(ctx: &mut ToolContext, args: &Args<'_>) -> Result<Value, ToolError> {
    let raw = args.str("pattern")?;
    let pattern = raw.trim_start_matches("./");
    if pattern.is_empty() {
        return Err(ToolError::value("glob() pattern must not be empty; use '**/*' for every file"));
    }
    if Path::new(pattern).is_absolute() || pattern.split('/').any(|s| s == "..") {
        return Err(ToolError::value(format!(
            "glob() pattern {raw:?} must be relative to paths and must not contain '..'; pass the directory as paths=…"
        )));
    }
    let roots = args.str_list("paths")?.unwrap_or_else(|| vec![".".into()]);
    let excludes: Vec<String> = match args.str_list("exclude_dirs")? {
        Some(list) => list,
        None => DEFAULT_EXCLUDES.iter().map(|s| (*s).to_owned()).collect(),
    };
    let (matcher, alternatives) = pattern::compile(pattern)?;
    let mut found = BTreeSet::new();
    for root in &roots {
        let root_rel = ctx.workspace.resolve(root)?;
        // Walk only below the literal part of each alternative, and no deeper than it can match.
        let mut starts: Vec<(String, Option<usize>)> =
            alternatives.iter().map(|a| pattern::literal_prefix(a)).collect();
        starts.sort();
        starts.dedup();
        for (prefix, depth) in starts {
            // The prefix holds plain names only (the pattern may not hold `..`).
            let Some(start) = root_rel.join(Path::new(&prefix)) else { continue };
            let search = Search { root: &root_rel, matcher: &matcher, excludes: &excludes };
            search.walk(ctx, &start, depth, &mut found)?;
        }
    }
    if found.len() > MAX_MATCHES {
        ctx.warn(&format!(
            "glob({raw:?}): {} files matched; returning the first {MAX_MATCHES}. Narrow the pattern or paths.",
            found.len()
        ));
    }
    Ok(Value::str_list(found.into_iter().take(MAX_MATCHES)))
}

struct Search<'a> {
    /// The search root; patterns match paths relative to it.
    root: &'a Confined,
    matcher: &'a globset::GlobSet,
    excludes: &'a [String],
}

impl Search<'_> {
    fn walk(
        &self,
        ctx: &ToolContext,
        start: &Confined,
        depth: Option<usize>,
        found: &mut BTreeSet<String>,
    ) -> Result<(), ToolError> {
        let ws = &ctx.workspace;
        let start_entry = match ws.entry(start) {
            Ok(entry) => entry,
            // A literal prefix that does not exist simply matches nothing.
            Err(_) if start != self.root => return Ok(()),
            Err(err) => return Err(err),
        };
        if start_entry != Entry::Dir {
            return Err(ToolError::new(
                ErrorKind::NotADirectory,
                format!("glob() paths must be directories: '{}' is a file", start.shown()),
            ));
        }
        let options = walk::Options {
            max_depth: depth,
            excludes: self.excludes,
            filters: false,
            deadline: ctx.deadline,
            tool: "glob",
        };
        walk::walk(ws, start, &options, |entry| {
            let Some(under_root) = entry.rel.below(self.root) else { return Ok(Flow::Continue) };
            if !self.matcher.is_match(under_root) {
                return Ok(Flow::Continue);
            }
            // Symlinks count when they lead to a regular file inside the workspace.
            let is_file = entry.kind == Listed::File
                || (entry.kind == Listed::Symlink && ws.entry(&entry.rel) == Ok(Entry::File));
            if is_file {
                found.insert(entry.rel.shown());
            }
            Ok(Flow::Continue)
        })?;
        Ok(())
    }
}
