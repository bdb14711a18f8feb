//! The seal of a file a guest backend caches (the `wasm` backend's compiled guest, the
//! `hyperlight` backend's snapshot): its SHA-256 and its identity when it was written (length,
//! inode, modification and change times in nanoseconds). A file whose identity is unchanged is
//! the one that was written; one whose identity changed is that file only if its contents still
//! have the recorded digest.

use std::fs::Metadata;
use std::os::unix::fs::MetadataExt as _;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::digest::sha256_file_hex;

/// What was recorded about a file when it was written.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct Seal {
    pub(crate) sha256: String,
    len: u64,
    ino: u64,
    mtime_ns: i64,
    ctime_ns: i64,
}

impl Seal {
    /// The seal of a file with `meta` and the digest `sha256`.
    #[must_use]
    pub(crate) fn of(meta: &Metadata, sha256: String) -> Self {
        Self {
            sha256,
            len: meta.len(),
            ino: meta.ino(),
            mtime_ns: nanoseconds(meta.mtime(), meta.mtime_nsec()),
            ctime_ns: nanoseconds(meta.ctime(), meta.ctime_nsec()),
        }
    }

    /// Whether a file with `meta` has the identity recorded: nothing touched it since.
    #[must_use]
    pub(crate) fn unchanged(&self, meta: &Metadata) -> bool {
        Self::of(meta, self.sha256.clone()) == *self
    }

    /// Whether the file at `path` still has the recorded contents (read in full).
    #[must_use]
    pub(crate) fn same_contents(&self, path: &Path) -> bool {
        sha256_file_hex(path).is_ok_and(|digest| digest == self.sha256)
    }
}

/// A file time in nanoseconds since the epoch (in 64 bits until the year 2262; a time past
/// that saturates, and a change of it then goes by the digest).
fn nanoseconds(seconds: i64, nanoseconds: i64) -> i64 {
    seconds.saturating_mul(1_000_000_000).saturating_add(nanoseconds)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::digest::sha256_hex;

    #[test]
    fn a_seal_holds_until_the_file_changes() {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("cache");
        std::fs::write(&path, b"compiled").unwrap();
        let seal = Seal::of(&std::fs::metadata(&path).unwrap(), sha256_hex(b"compiled"));
        assert!(seal.unchanged(&std::fs::metadata(&path).unwrap()));
        assert!(seal.same_contents(&path));
        std::fs::write(&path, b"tampered").unwrap();
        assert!(!seal.unchanged(&std::fs::metadata(&path).unwrap()));
        assert!(!seal.same_contents(&path));
    }

    #[test]
    fn a_seal_is_stored_as_json_with_its_fields_named() {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("cache");
        std::fs::write(&path, b"x").unwrap();
        let seal = Seal::of(&std::fs::metadata(&path).unwrap(), "ab".into());
        let json: serde_json::Value = serde_json::to_value(&seal).unwrap();
        let keys: Vec<&str> = json.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["sha256", "len", "ino", "mtime_ns", "ctime_ns"]);
        assert_eq!(serde_json::from_value::<Seal>(json).unwrap(), seal);
    }
}
