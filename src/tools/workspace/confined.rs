//! [`Confined`]: a path inside the workspace, as only the workspace makes one.

use std::path::{Component, Path, PathBuf};

use super::windows_names::name_problem;

/// A path inside the workspace, relative to its root and normalised (no `.`, no `..`, `.` for
/// the root itself). Only [`super::Workspace::confine`] and the methods below make one.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Confined(PathBuf);

impl Confined {
    pub(super) fn root() -> Self {
        Self(PathBuf::from("."))
    }

    /// `rel`, known to be normalised and inside.
    pub(super) fn from_normal(rel: PathBuf) -> Self {
        if rel.as_os_str().is_empty() { Self::root() } else { Self(rel) }
    }

    #[must_use]
    pub(crate) fn as_path(&self) -> &Path {
        &self.0
    }

    /// The path as programs see it: `/`-separated, no leading `./`.
    #[must_use]
    pub(crate) fn shown(&self) -> String {
        display(&self.0)
    }

    /// The directory this path is in (the root for a top-level name).
    #[must_use]
    pub(crate) fn parent(&self) -> Self {
        self.0.parent().map_or_else(Self::root, |parent| Self::from_normal(parent.to_path_buf()))
    }

    /// `below` inside this path, when `below` has only plain names (as a walker reports them):
    /// on Windows, also none that Windows would not take for the plain file it spells
    /// ([`name_problem`]), so a walk leaves out a file that no other path could open either.
    #[must_use]
    pub(crate) fn join(&self, below: &Path) -> Option<Self> {
        let plain = below.components().all(|c| match c {
            Component::Normal(name) => name_problem(name).is_none(),
            Component::CurDir => true,
            Component::RootDir | Component::Prefix(_) | Component::ParentDir => false,
        });
        let base = if self.0 == Path::new(".") { PathBuf::new() } else { self.0.clone() };
        let joined = base.join(below);
        plain.then(|| Self::from_normal(joined.components().filter(|c| *c != Component::CurDir).collect()))
    }

    /// The part of this path below `base`, if it is below it.
    #[must_use]
    pub(crate) fn below(&self, base: &Self) -> Option<&Path> {
        if base.0 == Path::new(".") { Some(&self.0) } else { self.0.strip_prefix(&base.0).ok() }
    }
}

/// A workspace-relative path as programs see it: `/`-separated, no leading `./`.
fn display(rel: &Path) -> String {
    let text = rel.to_string_lossy();
    let text = text.strip_prefix("./").unwrap_or(&text);
    if text.is_empty() { ".".to_owned() } else { text.replace('\\', "/") }
}
