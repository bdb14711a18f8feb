//! The write protection of a workspace: its rules, completed by one walk of its contents
//! before the first write ([`crate::tools::protected`]), and the check every write goes
//! through — the path as given, where it leads, and what is on its way, by what it is on disk.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::{Confined, Workspace};
use crate::platform::{self, Canonical as _};
use crate::tools::error::ToolError;
use crate::tools::protected::{Hit, Protected, scan};

impl Workspace {
    /// Write-protects the tools folders in `dirs` that lie in the workspace, and the packages
    /// their JavaScript tools load ([`Protected::add_tool_dir`]).
    pub(crate) fn protect_tool_dirs<'a>(&mut self, dirs: impl IntoIterator<Item = &'a Path>) {
        for dir in dirs {
            self.rules.add_tool_dir(&self.root, dir);
        }
        self.protected = OnceLock::new();
    }

    /// Every rule for this workspace: at the first call, the workspace is walked for what it
    /// adds ([`Protected::add_found`]), and each protected link's target is protected by what
    /// it is on disk as well.
    fn protected(&self) -> &Protected {
        self.protected.get_or_init(|| {
            let mut protected = self.rules.clone();
            let found = scan::scan(&self.dir, scan::BOUNDS);
            protected.add_found(&self.root, found, |rel| {
                let link = Confined::from_normal(rel.to_path_buf());
                let inside = self.resolve_names(&link, &link).ok().map(|target| target.as_path().to_path_buf());
                inside.or_else(|| coming_back(&self.root, rel))
            });
            for (target, hit) in protected.protected_targets() {
                if let Some(identity) = self.dir.metadata(&target).ok().and_then(|meta| identity(&meta)) {
                    protected.add_identity(identity, hit);
                }
            }
            protected
        })
    }

    /// Refuses a write to `given` (as the program named it, normalised) that lands on `real`
    /// when either is write-protected ([`crate::tools::protected`]).
    pub(crate) fn check_writable(&self, given: &Confined, real: &Confined) -> Result<(), ToolError> {
        let protected = self.protected();
        for (path, leads) in [(given, None), (real, Some(real))] {
            if let Some(hit) = protected.rule_for(path.as_path()) {
                return Err(refused(given, leads, &hit));
            }
        }
        // What the way to `real` is on disk, itself included when it exists.
        for on_way in real.as_path().ancestors() {
            let on_way = if on_way.as_os_str().is_empty() { Path::new(".") } else { on_way };
            let found = self.dir.metadata(on_way).ok().and_then(|meta| identity(&meta));
            if let Some(hit) = found.and_then(|identity| protected.rule_for_identity(identity)) {
                return Err(refused(given, Some(real), &hit));
            }
        }
        Ok(())
    }
}

/// Where the workspace's link `rel` leads when it leaves the workspace and comes back into it
/// (`../<the workspace's own name>/…`, an absolute path to it, through a link outside, or
/// `/proc/self/cwd/…`, which an agent working in the project reads as the project), relative to
/// `root` (canonical). The program's tools never follow such a link, but every other reader
/// does: its target is protected like any other's. A dangling target is resolved as far as it
/// exists.
fn coming_back(root: &Path, rel: &Path) -> Option<PathBuf> {
    let link = root.join(rel);
    let written = std::fs::read_link(&link).ok()?;
    let cwd = ["/proc/self/cwd", "/proc/thread-self/cwd"].iter().find_map(|at| written.strip_prefix(at).ok());
    let at = match cwd {
        Some(below) => root.join(below),
        None => link.parent()?.join(&written),
    };
    // The part that exists, where it really is, and the names below it as written.
    let mut existing = at.as_path();
    let mut rest = Vec::new();
    let base = loop {
        if let Ok(real) = existing.canonical() {
            break real;
        }
        rest.push(existing.file_name()?);
        existing = existing.parent()?;
    };
    let target = rest.iter().rev().fold(base, |path, name| path.join(name));
    platform::below(&target, root)
}

/// A write to `given`, which lands on `leads`, refused by `hit`.
fn refused(given: &Confined, leads: Option<&Confined>, hit: &Hit) -> ToolError {
    let shown = match leads {
        Some(real) if real != given => format!("'{}' leads to '{}', which", given.shown(), real.shown()),
        _ => format!("'{}'", given.shown()),
    };
    ToolError::permission(format!(
        "{shown} is write-protected by the rule {} ({}); tools may read it but never write it \
         (hint: if the change is wanted, make it outside codeact)",
        hit.rule, hit.why
    ))
}

/// What a file or folder is on disk: its device and inode.
#[cfg(unix)]
#[expect(clippy::unnecessary_wraps, reason = "the other systems' twin has no identity to give")]
fn identity(meta: &cap_std::fs::Metadata) -> Option<(u64, u64)> {
    use cap_std::fs::MetadataExt as _;
    Some((meta.dev(), meta.ino()))
}

/// Elsewhere, files are known by path only (SECURITY.md says what that leaves).
#[cfg(not(unix))]
fn identity(_meta: &cap_std::fs::Metadata) -> Option<(u64, u64)> {
    None
}
