//! The seal of a file a guest backend caches (the `wasm` backend's compiled guest, the
//! `hyperlight` backend's snapshot): its SHA-256 and its identity when it was written (length,
//! where it lies on disk, modification and change times in nanoseconds; see
//! [`platform::identity`]). A file whose identity is unchanged is the one that was written; one
//! whose identity changed is that file only if its contents still have the recorded digest.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::digest::sha256_file_hex;
use crate::platform::{self, Identity};

/// What was recorded about a file when it was written.
///
/// A seal an earlier codeact wrote (`ino`, `mtime_ns`, `ctime_ns`, no volume) still reads: its
/// identity no longer matches, so the file is checked by its digest once and sealed again.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct Seal {
    pub(crate) sha256: String,
    len: u64,
    #[serde(default)]
    volume: u64,
    #[serde(alias = "ino")]
    index: u64,
    #[serde(alias = "mtime_ns")]
    modified_ns: i64,
    #[serde(alias = "ctime_ns")]
    changed_ns: i64,
}

impl Seal {
    /// The seal of the file at `path`, whose digest is `sha256`.
    pub(crate) fn of(path: &Path, sha256: String) -> std::io::Result<Self> {
        let Identity { volume, index, len, modified_ns, changed_ns } = platform::identity(path)?;
        Ok(Self { sha256, len, volume, index, modified_ns, changed_ns })
    }

    /// Whether the file at `path` has the identity recorded: nothing touched it since.
    #[must_use]
    pub(crate) fn unchanged(&self, path: &Path) -> bool {
        Self::of(path, self.sha256.clone()).is_ok_and(|now| now == *self)
    }

    /// Whether the file at `path` still has the recorded contents (read in full).
    #[must_use]
    pub(crate) fn same_contents(&self, path: &Path) -> bool {
        sha256_file_hex(path).is_ok_and(|digest| digest == self.sha256)
    }
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
        let seal = Seal::of(&path, sha256_hex(b"compiled")).unwrap();
        assert!(seal.unchanged(&path));
        assert!(seal.same_contents(&path));
        std::fs::write(&path, b"tampered").unwrap();
        assert!(!seal.unchanged(&path));
        assert!(!seal.same_contents(&path));
    }

    #[test]
    fn a_seal_is_stored_as_json_with_its_fields_named() {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("cache");
        std::fs::write(&path, b"x").unwrap();
        let seal = Seal::of(&path, "ab".into()).unwrap();
        let json: serde_json::Value = serde_json::to_value(&seal).unwrap();
        let keys: Vec<&str> = json.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["sha256", "len", "volume", "index", "modified_ns", "changed_ns"]);
        assert_eq!(serde_json::from_value::<Seal>(json).unwrap(), seal);
    }
}
