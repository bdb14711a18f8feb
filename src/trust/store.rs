//! The trust store: each workspace's approvals ([`Approved`]), keyed by its canonical path, in
//! `$XDG_STATE_HOME/codeact/trust.json`, and how one item stands against them ([`Standing`]).
//! It is only read here and written by `codeact trust`; a store that cannot be read approves
//! nothing.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::atomic::{self, Access};
use crate::{bounded, digest, dirs};

/// The store's file name in the state directory.
const FILE_NAME: &str = "trust.json";

/// The store's format version.
const VERSION: u32 = 1;

/// The most the store may be.
const MAX_STORE_BYTES: u64 = 16 * 1024 * 1024;

/// How one workspace item stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Standing {
    /// Approved, and unchanged since.
    Trusted,
    /// Never approved.
    Untrusted,
    /// Approved, then changed.
    Changed,
}

impl Standing {
    #[must_use]
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Trusted => "trusted",
            Self::Untrusted => "untrusted",
            Self::Changed => "changed since trusted",
        }
    }
}

/// What the user approved in one workspace: each item's path, relative to the workspace and
/// `/`-separated, with the SHA-256 of the content approved.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Approved {
    items: BTreeMap<String, String>,
}

impl Approved {
    /// How the item at `rel` with `content` stands.
    #[must_use]
    pub(crate) fn standing(&self, rel: &str, content: &[u8]) -> Standing {
        match self.items.get(rel) {
            Some(approved) if *approved == digest::sha256_hex(content) => Standing::Trusted,
            Some(_) => Standing::Changed,
            None => Standing::Untrusted,
        }
    }

    /// Whether the item at `rel` with `content` is approved.
    #[must_use]
    pub(crate) fn trusts(&self, rel: &str, content: &[u8]) -> bool {
        self.standing(rel, content) == Standing::Trusted
    }

    /// Approves `content` at `rel`.
    pub(crate) fn approve(&mut self, rel: &str, content: &[u8]) {
        self.items.insert(rel.to_owned(), digest::sha256_hex(content));
    }

    /// The approved items' paths.
    pub(crate) fn paths(&self) -> impl Iterator<Item = &str> {
        self.items.keys().map(String::as_str)
    }
}

/// The file as stored.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct StoreFile {
    version: u32,
    /// By canonical workspace path.
    workspaces: BTreeMap<String, Approved>,
}

/// Every workspace's approvals, as `codeact trust` reads and rewrites them.
#[derive(Debug)]
pub(crate) struct Store {
    path: PathBuf,
    file: StoreFile,
}

impl Store {
    /// Opens the store; a missing one is empty.
    pub(crate) fn open() -> Result<Self, String> {
        let dir = dirs::state().ok_or("no state directory: set HOME or XDG_STATE_HOME")?;
        let path = dir.join(FILE_NAME);
        let file = match bounded::read(&path, MAX_STORE_BYTES) {
            Ok(None) => StoreFile { version: VERSION, workspaces: BTreeMap::new() },
            Ok(Some(bytes)) => serde_json::from_slice::<StoreFile>(&bytes)
                .ok()
                .filter(|file| file.version == VERSION)
                .ok_or_else(|| format!("`{}` is not a trust store codeact can read", path.display()))?,
            Err(err) => return Err(format!("cannot read `{}`: {err}", path.display())),
        };
        Ok(Self { path, file })
    }

    /// Where the store is.
    #[must_use]
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// What the user approved in `workspace` (canonical).
    #[must_use]
    pub(crate) fn approved(&self, workspace: &Path) -> Approved {
        self.file.workspaces.get(&key(workspace)).cloned().unwrap_or_default()
    }

    /// Replaces what is approved in `workspace`.
    pub(crate) fn set(&mut self, workspace: &Path, approved: Approved) {
        self.file.workspaces.insert(key(workspace), approved);
    }

    /// Forgets `workspace`; whether anything was approved there.
    pub(crate) fn remove(&mut self, workspace: &Path) -> bool {
        self.file.workspaces.remove(&key(workspace)).is_some()
    }

    /// Writes the store (0600 in a 0700 directory).
    pub(crate) fn save(&self) -> io::Result<()> {
        let text = serde_json::to_string_pretty(&self.file).map_err(io::Error::other)?;
        atomic::write(&self.path, format!("{text}\n").as_bytes(), Access::Private)
    }
}

/// What the user approved in `workspace`; nothing when the store is missing or unreadable.
#[must_use]
pub(crate) fn approved(workspace: &Path) -> Approved {
    Store::open().map(|store| store.approved(workspace)).unwrap_or_default()
}

fn key(workspace: &Path) -> String {
    workspace.to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_approved_item_is_trusted_until_its_content_changes() {
        let mut approved = Approved::default();
        assert_eq!(approved.standing(".mcp.json", b"{}"), Standing::Untrusted);
        approved.approve(".mcp.json", b"{}");
        assert_eq!(approved.standing(".mcp.json", b"{}"), Standing::Trusted);
        assert_eq!(approved.standing(".mcp.json", b"{ }"), Standing::Changed);
        assert_eq!(approved.standing(".codeact/tools/x.md", b"{}"), Standing::Untrusted);
    }
}
