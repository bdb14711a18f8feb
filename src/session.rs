//! Saved sessions: the interpreter state that `codeact run --session NAME` keeps between
//! processes, in codeact's state folder (`sessions/NAME.session`), never in the workspace.
//!
//! A saved state is a dump of the interpreter's memory, which the interpreter would load
//! whatever it held: a file changed by a program, or by anyone else, could make it misbehave.
//! So each file is sealed with an HMAC-SHA256 under a key of its own folder (`sessions/key`,
//! 32 random bytes, mode 0600), over the codeact version, the session's name, its workspace and
//! the state. A file whose seal does not match, that another name's seal was moved onto, or that
//! another codeact version or another workspace's runs wrote is refused, and never read further.

use std::io::{self, Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use ring::hmac;
use subtle::ConstantTimeEq as _;

use crate::atomic::{self, Access};
use crate::exit::UsageError;
use crate::hint::Hint;
use crate::platform::Canonical as _;

/// What a sealed file starts with.
const MAGIC: &[u8; 16] = b"codeact session\n";

/// The length of the key and of a seal.
const KEY_BYTES: usize = 32;

/// The longest name a session may have.
const MAX_NAME: usize = 64;

/// The most a saved state may take; a larger file is refused unread.
const MAX_STATE: u64 = 1 << 30;

/// The file name of a session's state, in [`dir`].
const SUFFIX: &str = ".session";

/// The folder that holds the saved sessions and their key: `sessions` in codeact's state folder.
#[must_use]
pub(crate) fn dir() -> Option<PathBuf> {
    crate::dirs::state().map(|state| state.join("sessions"))
}

/// Whether the sessions' `folder` lies in `workspace`: there a program could read its key with
/// `view`, so sessions are not kept there.
#[must_use]
pub(crate) fn folder_in(folder: &Path, workspace: &Path) -> bool {
    let Ok(workspace) = workspace.canonical() else { return false };
    // The folder may not exist yet: its nearest existing folder says where it would be.
    let mut existing = folder;
    loop {
        if let Ok(real) = existing.canonical() {
            let Ok(rest) = folder.strip_prefix(existing) else { return false };
            // Below a folder that does not exist yet, `..` cannot be resolved: such a folder is
            // taken to be anywhere, the workspace included.
            if rest.components().any(|part| matches!(part, std::path::Component::ParentDir)) {
                return true;
            }
            return crate::platform::is_within(&real.join(rest), &workspace);
        }
        let Some(parent) = existing.parent() else { return false };
        existing = parent;
    }
}

/// Checks that `name` can name a session: 1 to 64 letters, digits, `-`, `_` or `.`, not
/// starting with `.`.
pub(crate) fn check_name(name: &str) -> Result<(), UsageError> {
    let fine = !name.is_empty()
        && name.len() <= MAX_NAME
        && !name.starts_with('.')
        && name.bytes().all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.'));
    if fine {
        return Ok(());
    }
    Err(UsageError {
        message: format!("`{}` cannot name a session", name.escape_debug()),
        hint: Some(Hint::new(format!(
            "a session's name has 1 to {MAX_NAME} letters, digits, `-`, `_` or `.`, and does not start with `.`"
        ))),
    })
}

/// Why a saved session was not loaded.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Refused {
    #[error("`{}` could not be read: {err}", path.display())]
    Unreadable { path: PathBuf, err: io::Error },
    #[error("`{}` is not a session codeact saved, or was changed since; it was not loaded", path.display())]
    Tampered { path: PathBuf },
    #[error("`{}` was saved by codeact {version}, and this is codeact {}; it was not loaded", path.display(), env!("CARGO_PKG_VERSION"))]
    OtherVersion { path: PathBuf, version: String },
    #[error("`{}` is a session of the workspace `{workspace}`, not of this one; it was not loaded", path.display())]
    OtherWorkspace { path: PathBuf, workspace: String },
}

/// The file that holds the session `name` in `folder`.
#[must_use]
pub(crate) fn file(folder: &Path, name: &str) -> PathBuf {
    folder.join(format!("{name}{SUFFIX}"))
}

/// A saved session, as `codeact session list` shows it.
#[derive(Debug)]
pub(crate) struct Saved {
    pub(crate) name: String,
    pub(crate) bytes: u64,
    pub(crate) modified: Option<SystemTime>,
}

/// The saved sessions, by name.
pub(crate) fn list() -> io::Result<Vec<Saved>> {
    let Some(dir) = dir() else { return Ok(Vec::new()) };
    list_in(&dir)
}

/// Removes the session `name`; false when there was none.
pub(crate) fn remove(name: &str) -> io::Result<bool> {
    let Some(dir) = dir() else { return Ok(false) };
    match std::fs::remove_file(file(&dir, name)) {
        Ok(()) => Ok(true),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(err) => Err(err),
    }
}

/// The state saved for the session `name` in `dir` by a run in `workspace`, when there is one;
/// `None` for a new session.
pub(crate) fn load(dir: &Path, name: &str, workspace: &Path) -> Result<Option<Vec<u8>>, Refused> {
    let path = file(dir, name);
    let unreadable = |err| Refused::Unreadable { path: path.clone(), err };
    let mut file = match open_regular(&path) {
        Ok(file) => file,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(unreadable(err)),
    };
    let mut sealed = Vec::new();
    io::Read::by_ref(&mut file).take(MAX_STATE + 1).read_to_end(&mut sealed).map_err(unreadable)?;
    let tampered = || Refused::Tampered { path: path.clone() };
    if sealed.len() as u64 > MAX_STATE {
        return Err(tampered());
    }
    let key = key(dir, false).map_err(unreadable)?.ok_or_else(tampered)?;
    let unsealed = unseal(&key, name, &sealed).ok_or_else(tampered)?;
    if unsealed.version != env!("CARGO_PKG_VERSION") {
        return Err(Refused::OtherVersion { path, version: unsealed.version.to_owned() });
    }
    if unsealed.workspace != workspace_key(workspace) {
        return Err(Refused::OtherWorkspace { path, workspace: unsealed.workspace.to_owned() });
    }
    // The state is the end of the file: the rest is dropped, not copied.
    let header = sealed.len() - unsealed.state.len();
    sealed.drain(..header);
    Ok(Some(sealed))
}

/// Saves `state` as the session `name` of a run in `workspace`, in `dir`, sealed; synced to
/// disk unless `scratch` (a server's sessions, which end with it).
pub(crate) fn save(dir: &Path, name: &str, workspace: &Path, state: &[u8], scratch: bool) -> io::Result<PathBuf> {
    let path = file(dir, name);
    let access = if scratch { Access::Scratch } else { Access::Private };
    write_sealed(dir, name, &path, workspace, state, access)?;
    Ok(path)
}

/// Saves `state` as [`save`] does a server's session, but beside its file ([`pending`]), where
/// no run loads it until the server puts it in place ([`commit`]): a server's worker saves after
/// it reported its run, and the server decides whether that run ended (it may stop the worker
/// first).
pub(crate) fn save_pending(dir: &Path, name: &str, workspace: &Path, state: &[u8]) -> io::Result<()> {
    write_sealed(dir, name, &pending(dir, name), workspace, state, Access::Scratch)
}

/// Where [`save_pending`] saves the session `name` in `folder`.
#[must_use]
pub(crate) fn pending(folder: &Path, name: &str) -> PathBuf {
    folder.join(format!("{name}{SUFFIX}.pending"))
}

/// Puts the state [`save_pending`] saved for the session `name` in `dir` in place of its last.
pub(crate) fn commit(dir: &Path, name: &str) -> io::Result<()> {
    std::fs::rename(pending(dir, name), file(dir, name))
}

fn write_sealed(dir: &Path, name: &str, path: &Path, workspace: &Path, state: &[u8], access: Access) -> io::Result<()> {
    let key = key(dir, true)?.ok_or_else(|| io::Error::other("the sessions' key could not be made"))?;
    let workspace = workspace_key(workspace);
    let sealed = Unsealed { version: env!("CARGO_PKG_VERSION"), workspace: &workspace, state };
    atomic::write(path, &seal(&key, name, &sealed), access)
}

/// How a session file names its workspace: the canonical path.
fn workspace_key(workspace: &Path) -> String {
    workspace.canonical().unwrap_or_else(|_| workspace.to_owned()).to_string_lossy().into_owned()
}

fn list_in(dir: &Path) -> io::Result<Vec<Saved>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(err) => return Err(err),
    };
    let mut saved = Vec::new();
    for entry in entries {
        let entry = entry?;
        let Some(name) = entry.file_name().to_str().and_then(|file| file.strip_suffix(SUFFIX)).map(str::to_owned)
        else {
            continue;
        };
        if check_name(&name).is_err() {
            continue;
        }
        let metadata = entry.metadata()?;
        saved.push(Saved { name, bytes: metadata.len(), modified: metadata.modified().ok() });
    }
    saved.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(saved)
}

/// The sessions' key in `dir`, made (with its folder) when `make` and missing.
fn key(dir: &Path, make: bool) -> io::Result<Option<hmac::Key>> {
    let path = dir.join("key");
    let mut bytes = Vec::new();
    match open_regular(&path) {
        Ok(file) => {
            file.take(KEY_BYTES as u64 + 1).read_to_end(&mut bytes)?;
        }
        Err(err) if err.kind() == io::ErrorKind::NotFound && make => {
            bytes = vec![0; KEY_BYTES];
            getrandom::fill(&mut bytes).map_err(|err| io::Error::other(err.to_string()))?;
            // Written whole beside it, then put in place unless another codeact did first: no
            // reader ever sees a key half written.
            crate::dirs::make_private_dir(dir)?;
            let mut written = tempfile::Builder::new().prefix(".key").tempfile_in(dir)?;
            written.write_all(&bytes)?;
            written.as_file().sync_all()?;
            match written.persist_noclobber(&path) {
                Ok(_) => {}
                Err(err) if err.error.kind() == io::ErrorKind::AlreadyExists => return key(dir, false),
                Err(err) => return Err(err.error),
            }
        }
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(err),
    }
    if bytes.len() != KEY_BYTES {
        return Err(io::Error::other(format!("`{}` is not a key codeact made", path.display())));
    }
    Ok(Some(hmac::Key::new(hmac::HMAC_SHA256, &bytes)))
}

/// Opens a regular file of the user's own for reading, refusing a link, anything else, and
/// (on Unix) a file another user owns or may write.
fn open_regular(path: &Path) -> io::Result<std::fs::File> {
    let metadata = std::fs::symlink_metadata(path)?;
    if !metadata.is_file() {
        return Err(io::Error::other(format!("`{}` is not a regular file", path.display())));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        if metadata.uid() != rustix::process::geteuid().as_raw() || metadata.mode() & 0o022 != 0 {
            return Err(io::Error::other(format!("`{}` is another user's, or others may write it", path.display())));
        }
    }
    std::fs::File::open(path)
}

/// What a sealed file holds, borrowed from it (or from what is to be sealed).
struct Unsealed<'a> {
    /// The codeact version that saved it.
    version: &'a str,
    /// The workspace of the runs that saved it ([`workspace_key`]).
    workspace: &'a str,
    state: &'a [u8],
}

/// `MAGIC`, the seal, then the version and the workspace, each after its length (two bytes,
/// little-endian), then the state.
fn seal(key: &hmac::Key, name: &str, unsealed: &Unsealed<'_>) -> Vec<u8> {
    let tag = tag(key, name, unsealed);
    let mut sealed = Vec::with_capacity(MAGIC.len() + KEY_BYTES + unsealed.workspace.len() + unsealed.state.len() + 64);
    sealed.extend_from_slice(MAGIC);
    sealed.extend_from_slice(tag.as_ref());
    for part in [unsealed.version, unsealed.workspace] {
        sealed.extend_from_slice(&u16::try_from(part.len()).unwrap_or(u16::MAX).to_le_bytes());
        sealed.extend_from_slice(part.as_bytes());
    }
    sealed.extend_from_slice(unsealed.state);
    sealed
}

/// What `sealed` holds, when its seal is `name`'s under `key`.
fn unseal<'a>(key: &hmac::Key, name: &str, sealed: &'a [u8]) -> Option<Unsealed<'a>> {
    let rest = sealed.strip_prefix(MAGIC)?;
    let (seal, mut rest) = rest.split_at_checked(KEY_BYTES)?;
    let mut text = || -> Option<&'a str> {
        let (length, after) = rest.split_at_checked(2)?;
        let (part, after) = after.split_at_checked(usize::from(u16::from_le_bytes([length[0], length[1]])))?;
        rest = after;
        std::str::from_utf8(part).ok()
    };
    let (version, workspace) = (text()?, text()?);
    let unsealed = Unsealed { version, workspace, state: rest };
    let expected = tag(key, name, &unsealed);
    bool::from(expected.as_ref().ct_eq(seal)).then_some(unsealed)
}

/// The seal of `unsealed` as the session `name`: each part with its length first, so that no
/// two different sets of parts read alike.
fn tag(key: &hmac::Key, name: &str, unsealed: &Unsealed<'_>) -> hmac::Tag {
    let mut context = hmac::Context::with_key(key);
    for part in [unsealed.version.as_bytes(), name.as_bytes(), unsealed.workspace.as_bytes(), unsealed.state] {
        context.update(&(part.len() as u64).to_le_bytes());
        context.update(part);
    }
    context.sign()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pending_save_is_loaded_only_once_it_is_put_in_place_and_is_never_listed() {
        let folder = tempfile::tempdir().unwrap();
        let workspace = tempfile::tempdir().unwrap();
        let (dir, space) = (folder.path(), workspace.path());
        save(dir, "one", space, b"first", true).unwrap();
        save_pending(dir, "one", space, b"second").unwrap();
        assert_eq!(load(dir, "one", space).unwrap().as_deref(), Some(&b"first"[..]));
        let names: Vec<String> = list_in(dir).unwrap().into_iter().map(|saved| saved.name).collect();
        assert_eq!(names, ["one"]);
        // A pending save of another session's name is not this one's.
        save_pending(dir, "two", space, b"other").unwrap();
        assert_eq!(load(dir, "one", space).unwrap().as_deref(), Some(&b"first"[..]));
        commit(dir, "one").unwrap();
        assert_eq!(load(dir, "one", space).unwrap().as_deref(), Some(&b"second"[..]));
        assert!(!pending(dir, "one").exists());
        // Nothing pending, nothing is put in place: the last state stays.
        assert!(commit(dir, "one").is_err());
        assert_eq!(load(dir, "one", space).unwrap().as_deref(), Some(&b"second"[..]));
        // A pending file moved to another name's place is refused as that name's.
        std::fs::rename(pending(dir, "two"), file(dir, "three")).unwrap();
        assert!(matches!(load(dir, "three", space), Err(Refused::Tampered { .. })));
    }
}
