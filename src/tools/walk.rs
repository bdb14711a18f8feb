//! The directory walk `glob` and `grep` share: depth first, siblings in name order, every
//! directory opened through its parent's handle ([`WalkDir`]), so a directory swapped for a
//! symlink mid-walk is never entered and nothing outside the workspace is ever listed. Symlinks
//! are reported, never followed.
//!
//! With filters on (`grep`), it skips what ripgrep skips: hidden names, and what the ignore
//! files say — `.ignore`, `.gitignore` and `.git/info/exclude`, from the workspace root down to
//! each directory, read through the same handles. Nothing above the workspace is read: no
//! parent directory's ignore files and no global git excludes, which would let host files
//! outside decide what a search sees.

use std::ffi::{OsStr, OsString};
use std::path::Path;
use std::rc::Rc;
use std::time::Instant;

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

use super::context::check_deadline;
use super::error::ToolError;
use super::workspace::{Confined, Listed, WalkDir, Workspace};

/// Largest ignore file read; a larger one is left out.
const MAX_IGNORE_BYTES: u64 = 1024 * 1024;

/// Entries seen between two looks at the deadline.
const DEADLINE_EVERY: usize = 1024;

/// How to walk.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Options<'a> {
    /// Levels below the start to report (1: its entries only); `None` for no limit.
    pub(crate) max_depth: Option<usize>,
    /// Directory names not entered below the start.
    pub(crate) excludes: &'a [String],
    /// Skip hidden names and what ignore files exclude.
    pub(crate) filters: bool,
    /// When the run's time limit ends, and the tool to name when it does.
    pub(crate) deadline: Instant,
    pub(crate) tool: &'a str,
}

/// A file, symlink or special file the walk reached.
pub(crate) struct Found<'a> {
    /// Its path in the workspace.
    pub(crate) rel: Confined,
    pub(crate) kind: Listed,
    /// The directory it is in, to open it through.
    pub(crate) dir: &'a WalkDir,
    pub(crate) name: &'a OsStr,
}

/// Whether the walk goes on after a visit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    Continue,
    Stop,
}

/// An entry waiting to be visited.
struct Pending {
    parent: Rc<WalkDir>,
    name: OsString,
    kind: Listed,
    depth: usize,
    ignores: Option<Rc<Ignores>>,
}

/// Walks the directory `start` (symlinks inside the workspace followed to reach it), calling
/// `visit` for every entry that is not a directory, in order.
pub(crate) fn walk(
    ws: &Workspace,
    start: &Confined,
    options: &Options<'_>,
    mut visit: impl FnMut(Found<'_>) -> Result<Flow, ToolError>,
) -> Result<(), ToolError> {
    if options.max_depth == Some(0) {
        return Ok(());
    }
    let top = Rc::new(ws.open_walk(start)?);
    let ignores = if options.filters { Some(Ignores::down_to(ws, start, &top)) } else { None };
    let mut stack = Vec::new();
    push_entries(&mut stack, &top, 1, ignores.as_ref())?;
    let mut seen = 0usize;
    while let Some(entry) = stack.pop() {
        seen += 1;
        if seen.is_multiple_of(DEADLINE_EVERY) {
            check_deadline(options.deadline, options.tool)?;
        }
        let Some(rel) = entry.parent.rel().join(Path::new(&entry.name)) else { continue };
        let is_dir = entry.kind == Listed::Dir;
        if let Some(ignores) = &entry.ignores {
            match ignores.matched(&rel, is_dir) {
                Match::Ignore(()) => continue,
                Match::None if entry.name.as_encoded_bytes().starts_with(b".") => continue,
                Match::None | Match::Whitelist(()) => {}
            }
        }
        if !is_dir {
            let found = Found { rel, kind: entry.kind, dir: &entry.parent, name: &entry.name };
            if visit(found)? == Flow::Stop {
                return Ok(());
            }
            continue;
        }
        if options.excludes.iter().any(|excluded| entry.name == excluded.as_str())
            || options.max_depth.is_some_and(|max| entry.depth >= max)
        {
            continue;
        }
        // A directory that became a symlink, or went away, since it was listed is left out.
        let Ok(child) = entry.parent.child(&entry.name) else { continue };
        let child = Rc::new(child);
        let ignores = entry.ignores.as_ref().map(|parent| Rc::new(Ignores::load(&child, Some(parent.clone()))));
        push_entries(&mut stack, &child, entry.depth + 1, ignores.as_ref())?;
    }
    Ok(())
}

/// Puts `dir`'s entries on the stack so that the first name comes off first.
fn push_entries(
    stack: &mut Vec<Pending>,
    dir: &Rc<WalkDir>,
    depth: usize,
    ignores: Option<&Rc<Ignores>>,
) -> Result<(), ToolError> {
    let entries = dir.entries()?;
    stack.extend(entries.into_iter().rev().map(|(name, kind)| Pending {
        parent: dir.clone(),
        name,
        kind,
        depth,
        ignores: ignores.cloned(),
    }));
    Ok(())
}

/// The ignore files of one directory, and those of the directories above it in the workspace.
struct Ignores {
    parent: Option<Rc<Ignores>>,
    ignore: Option<Gitignore>,
    gitignore: Option<Gitignore>,
    exclude: Option<Gitignore>,
    /// The directory holds `.git`: git's own rules from above do not reach into it.
    has_git: bool,
}

impl Ignores {
    /// The chain from the workspace root down to `start`, whose handle is `top`. Directories on
    /// the way that cannot be opened add nothing.
    fn down_to(ws: &Workspace, start: &Confined, top: &WalkDir) -> Rc<Self> {
        let mut above: Vec<Confined> = Vec::new();
        let mut at = start.clone();
        while at.as_path() != Path::new(".") {
            at = at.parent();
            above.push(at.clone());
        }
        let mut chain = None;
        for dir in above.iter().rev() {
            if let Ok(opened) = ws.open_walk(dir) {
                chain = Some(Rc::new(Self::load(&opened, chain)));
            }
        }
        Rc::new(Self::load(top, chain))
    }

    fn load(dir: &WalkDir, parent: Option<Rc<Self>>) -> Self {
        let has_git = dir.has(".git");
        let read = |name: &str| matcher(dir.rel(), dir.read_small(Path::new(name), MAX_IGNORE_BYTES));
        Self {
            parent,
            ignore: read(".ignore"),
            gitignore: read(".gitignore"),
            exclude: if has_git { read(".git/info/exclude") } else { None },
            has_git,
        }
    }

    /// What the ignore files say about `rel`, as ripgrep decides it: for each kind of file the
    /// deepest one with an opinion wins, `.ignore` over `.gitignore` over git's excludes, and
    /// git's rules stop at the first directory that is a repository of its own.
    fn matched(&self, rel: &Confined, is_dir: bool) -> Match<()> {
        let (mut ignore, mut gitignore, mut exclude) = (Match::None, Match::None, Match::None);
        let mut saw_git = false;
        let mut at = Some(self);
        while let Some(level) = at {
            let check = |matcher: &Option<Gitignore>| match matcher {
                Some(matcher) => matcher.matched(rel.as_path(), is_dir).map(|_| ()),
                None => Match::None,
            };
            if ignore.is_none() {
                ignore = check(&level.ignore);
            }
            if !saw_git {
                if gitignore.is_none() {
                    gitignore = check(&level.gitignore);
                }
                if exclude.is_none() {
                    exclude = check(&level.exclude);
                }
            }
            saw_git = saw_git || level.has_git;
            at = level.parent.as_deref();
        }
        ignore.or(gitignore).or(exclude)
    }
}

/// A matcher for the lines of an ignore file in `dir`.
fn matcher(dir: &Confined, bytes: Option<Vec<u8>>) -> Option<Gitignore> {
    let bytes = bytes?;
    let text = String::from_utf8_lossy(&bytes);
    let mut builder = GitignoreBuilder::new(dir.as_path());
    for line in text.trim_start_matches('\u{feff}').lines() {
        // A line that is not a valid glob is left out, as git does.
        let _ = builder.add_line(None, line);
    }
    builder.build().ok()
}
