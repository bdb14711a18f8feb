//! The prepared-snapshot cache: a micro-VM with the runtime started, the component loaded and
//! the prelude loaded, saved by hyperlight-host in a user-only directory keyed by everything
//! it depends on, with a seal beside it recording each file's digest and metadata. A snapshot
//! whose files changed since they were written is made again, never loaded — the same rule as
//! the `wasm` backend's compiled guest.
//!
//! It is made lazily, by the first run that needs it: making it needs a micro-VM that starts,
//! which `codeact guest install` may not have (it installs on any machine).

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use serde::{Deserialize, Serialize};

use super::HYPERLIGHT_VERSION;
use crate::atomic::{self, Access};
use crate::digest::{sha256_file_hex, sha256_hex};
use crate::dirs;
use crate::guest::seal::Seal;
use crate::guest::{Installed, loader};
use crate::platform;

/// The tag the snapshot is saved under in its directory.
pub(super) const TAG: &str = "prelude";

/// The snapshot directory for this guest and a guest heap of `heap` bytes (the heap is part
/// of a snapshot's memory layout).
pub(super) fn snapshot_dir(installed: &Installed, heap: u64) -> Result<PathBuf> {
    let dir = dirs::cache().context("cannot tell where to cache the guest's snapshot: set HOME or XDG_CACHE_HOME")?;
    let files = installed.hyperlight()?;
    let key = sha256_hex(
        format!(
            "{} {} {} {heap} {HYPERLIGHT_VERSION} {}",
            files.runtime_sha256,
            files.aot_sha256,
            loader::digest(),
            env!("CARGO_PKG_VERSION")
        )
        .as_bytes(),
    );
    Ok(dir.join("hyperlight").join(format!("snapshot-{}", &key[..16])))
}

/// What was recorded about one file of a snapshot when it was written: its path in the
/// snapshot's directory, and its [`Seal`].
#[derive(Debug, Serialize, Deserialize, PartialEq, Eq)]
struct FileSeal {
    path: String,
    #[serde(flatten)]
    seal: Seal,
}

fn seal_path(dir: &Path) -> PathBuf {
    dir.with_extension("seal")
}

/// Every regular file below `dir`, as (path relative to it, metadata), sorted; `None` when
/// something there is not a plain file or directory.
fn files_below(dir: &Path) -> Option<Vec<(String, PathBuf, std::fs::Metadata)>> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(next) = pending.pop() {
        for entry in std::fs::read_dir(&next).ok()? {
            let entry = entry.ok()?;
            let meta = std::fs::symlink_metadata(entry.path()).ok()?;
            if meta.is_dir() {
                pending.push(entry.path());
            } else if meta.is_file() {
                let relative = entry.path().strip_prefix(dir).ok()?.to_string_lossy().into_owned();
                found.push((relative, entry.path(), meta));
            } else {
                return None;
            }
        }
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    Some(found)
}

/// Files this large are made sparse after they are written.
const SPARSE_FROM: u64 = 1 << 20;

/// The unit of sparseness: a page.
const PAGE: usize = 4096;

/// Gives the zero pages of `path` back to the file system. A snapshot holds the guest's whole
/// heap, most of it never touched: hundreds of MB of zeros that need no disk. The contents
/// read the same, and the snapshot is mapped, not read, when it is loaded.
fn punch_zero_pages(path: &Path) -> std::io::Result<()> {
    use std::io::Read as _;
    let mut file = std::fs::OpenOptions::new().read(true).write(true).open(path)?;
    let mut buffer = vec![0_u8; 256 * PAGE];
    let mut offset: u64 = 0;
    let mut zeros: Option<(u64, u64)> = None;
    // A file system that cannot punch holes keeps the zeros: the snapshot is only larger.
    let mut unsupported = false;
    let mut punch = |file: &std::fs::File, (start, len): (u64, u64)| {
        if !unsupported {
            unsupported = !platform::punch_hole(file, start, len)?;
        }
        Ok::<_, std::io::Error>(())
    };
    loop {
        let read = file.read(&mut buffer)?;
        if read == 0 {
            break;
        }
        for page in buffer[..read].chunks(PAGE) {
            let len = page.len() as u64;
            if page.iter().all(|&b| b == 0) {
                zeros = Some(zeros.map_or((offset, len), |(start, run)| (start, run + len)));
            } else if let Some(run) = zeros.take() {
                punch(&file, run)?;
            }
            offset += len;
        }
    }
    if let Some(run) = zeros {
        punch(&file, run)?;
    }
    Ok(())
}

/// Whether the snapshot in `dir` is the one this program wrote: the same files, each with
/// its metadata unchanged since, or failing that its recorded digest.
pub(super) fn sealed(dir: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(seal_path(dir)) else { return false };
    let Ok(seals) = serde_json::from_str::<Vec<FileSeal>>(&text) else { return false };
    let Some(files) = files_below(dir) else { return false };
    if files.len() != seals.len() {
        return false;
    }
    let mut moved = false;
    let same = files.iter().zip(&seals).all(|((relative, path, _), seal)| {
        if *relative != seal.path {
            return false;
        }
        if seal.seal.unchanged(path) {
            return true;
        }
        moved = true;
        seal.seal.same_contents(path)
    });
    if same && moved {
        // Same contents, new metadata (copied, touched): record the new metadata.
        let resealed: std::io::Result<Vec<FileSeal>> = files
            .into_iter()
            .zip(seals)
            .map(|((relative, path, _), seal)| {
                Ok(FileSeal { path: relative, seal: Seal::of(&path, seal.seal.sha256)? })
            })
            .collect();
        if let Ok(resealed) = resealed {
            let _ = write_seal(dir, &resealed);
        }
    }
    same
}

fn write_seal(dir: &Path, seals: &[FileSeal]) -> Result<()> {
    atomic::write(&seal_path(dir), serde_json::to_string(seals)?.as_bytes(), Access::Private)
        .with_context(|| format!("failed to seal `{}`", dir.display()))
}

/// Writes a snapshot into `dir` with `save`, which writes into the empty directory it is
/// given: into a temporary sibling first, made sparse and sealed, and moved into place when
/// complete (a rename leaves what the seal records of the files as it is).
pub(super) fn store(dir: &Path, save: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    let mut seals = Vec::new();
    atomic::replace_dir(dir, |staging| {
        save(staging)?;
        let files = files_below(staging).context("the saved snapshot holds something that is not a file")?;
        for (relative, path, meta) in files {
            if meta.len() >= SPARSE_FROM {
                punch_zero_pages(&path).with_context(|| format!("failed to make `{}` sparse", path.display()))?;
            }
            // The snapshot's memory (hundreds of MB) is in blobs named after their SHA-256,
            // which hyperlight-host computed as it wrote them; the small files are hashed here.
            let digest = match relative.strip_prefix("blobs/sha256/") {
                Some(name) if name.len() == 64 && name.bytes().all(|b| b.is_ascii_hexdigit()) => name.to_owned(),
                _ => sha256_file_hex(&path).with_context(|| format!("failed to read `{}`", path.display()))?,
            };
            let seal = Seal::of(&path, digest).with_context(|| format!("failed to seal `{}`", path.display()))?;
            seals.push(FileSeal { path: relative, seal });
        }
        Ok(())
    })?;
    write_seal(dir, &seals)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_snapshot(staging: &Path, blob: &[u8]) -> Result<()> {
        std::fs::create_dir_all(staging.join("blobs/sha256"))?;
        std::fs::write(staging.join("blobs/sha256").join(sha256_hex(blob)), blob)?;
        std::fs::write(staging.join("index.json"), b"{}")?;
        Ok(())
    }

    /// Whether the file system under `dir` punches holes.
    #[cfg(target_os = "linux")]
    fn punches_holes(dir: &Path) -> bool {
        let file = std::fs::File::create(dir.join("probe")).unwrap();
        file.set_len(1 << 20).unwrap();
        platform::punch_hole(&file, 0, 1 << 20).unwrap_or(false)
    }

    #[test]
    fn a_stored_snapshot_is_sealed_sparse_and_unsealed_by_any_change() {
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path().join("snapshot-x");
        // Zeros around one page of data, as a snapshot's heap is.
        let mut blob = vec![0_u8; 4 << 20];
        blob[2 << 20..(2 << 20) + PAGE].fill(7);
        store(&dir, |staging| write_snapshot(staging, &blob)).unwrap();
        assert!(sealed(&dir));
        let path = dir.join("blobs/sha256").join(sha256_hex(&blob));
        assert_eq!(std::fs::read(&path).unwrap(), blob, "punching holes changed the contents");
        // The zeros take no blocks (of 512 bytes) any more; what a file takes on disk is asked
        // of Linux here (Windows punches through the same function, untested for its size).
        #[cfg(target_os = "linux")]
        if punches_holes(temp.path()) {
            use std::os::unix::fs::MetadataExt as _;
            assert!(std::fs::metadata(&path).unwrap().blocks() * 512 < 1 << 20);
        }
        // Touched with the same contents: still sealed.
        std::fs::write(dir.join("index.json"), b"{}").unwrap();
        assert!(sealed(&dir));
        // A changed byte, a file added, or a file gone: not sealed.
        let mut changed = blob.clone();
        changed[3 << 20] = 1;
        std::fs::write(&path, &changed).unwrap();
        assert!(!sealed(&dir));
        std::fs::write(&path, &blob).unwrap();
        assert!(sealed(&dir));
        std::fs::write(dir.join("extra"), b"x").unwrap();
        assert!(!sealed(&dir));
        std::fs::remove_file(dir.join("extra")).unwrap();
        std::fs::remove_file(dir.join("index.json")).unwrap();
        assert!(!sealed(&dir));
    }

    #[test]
    fn a_seal_written_before_reads_and_writes_the_same() {
        let written =
            r#"[{"path":"index.json","sha256":"ab","len":2,"volume":1,"index":3,"modified_ns":4,"changed_ns":5}]"#;
        let seals: Vec<FileSeal> = serde_json::from_str(written).unwrap();
        assert_eq!(serde_json::to_string(&seals).unwrap(), written);
        // As an earlier codeact wrote it: read, with no volume, so that it is checked by digest.
        let earlier = r#"[{"path":"index.json","sha256":"ab","len":2,"ino":3,"mtime_ns":4,"ctime_ns":5}]"#;
        let seals: Vec<FileSeal> = serde_json::from_str(earlier).unwrap();
        assert_eq!(
            serde_json::to_string(&seals).unwrap(),
            r#"[{"path":"index.json","sha256":"ab","len":2,"volume":0,"index":3,"modified_ns":4,"changed_ns":5}]"#
        );
    }

    #[test]
    fn storing_again_replaces_the_snapshot_and_a_failed_save_keeps_the_old_one() {
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path().join("snapshot-x");
        store(&dir, |staging| write_snapshot(staging, b"one")).unwrap();
        assert!(store(&dir, |_| Err(anyhow::anyhow!("no micro-VM"))).is_err());
        assert!(dir.join("blobs/sha256").join(sha256_hex(b"one")).is_file());
        store(&dir, |staging| write_snapshot(staging, b"two")).unwrap();
        assert!(sealed(&dir));
        assert!(!dir.join("blobs/sha256").join(sha256_hex(b"one")).exists());
    }
}
