//! Paths read as written: `.` and `..` taken out by name, never by asking the file system.
//!
//! Confinement itself never relies on this (`tools::workspace` resolves beneath a held folder).
//! It is for placing and naming paths a user or a config file wrote: which tools folder a path
//! names, where an `envFile` lies, which protected rule a path falls under.

use std::path::{Component, Path, PathBuf};

/// `path` with `.` and `..` taken out as written. A `..` at the root, or past the start of a
/// relative path, is dropped, as the root's own `..` is the root.
#[must_use]
pub(crate) fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dots_are_taken_out_as_written() {
        assert_eq!(lexical(Path::new("/a/./b/../c/")), PathBuf::from("/a/c"));
        assert_eq!(lexical(Path::new("/../a")), PathBuf::from("/a"));
        assert_eq!(lexical(Path::new("a/b/../../..")), PathBuf::new());
        assert_eq!(lexical(Path::new("./a//b/.")), PathBuf::from("a/b"));
    }
}
