//! Saved sessions: the interpreter state that `codeact run --session NAME` keeps between
//! processes, in codeact's state folder (`sessions/NAME.session`), never in the workspace.
//!
//! A saved state is a dump of the interpreter's memory, which the interpreter would load
//! whatever it held: a file changed by a program, or by anyone else, could make it misbehave.
//! So each file is sealed with an HMAC-SHA256 under a key of its own folder (`sessions/key`,
//! 32 random bytes, mode 0600), over the codeact version, the session's name and the state. A
//! file whose seal does not match, that another name's seal was moved onto, or that another
//! codeact version wrote is refused, and never read further.

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
    let dir = folder;
    let Ok(workspace) = workspace.canonical() else { return false };
    // The folder may not exist yet: its nearest existing folder says where it would be.
    let mut existing = dir;
    loop {
        if let Ok(real) = existing.canonical() {
            let Ok(rest) = dir.strip_prefix(existing) else { return false };
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

/// The state saved for the session `name` in `dir`, when there is one; `None` for a new
/// session.
pub(crate) fn load(dir: &Path, name: &str) -> Result<Option<Vec<u8>>, Refused> {
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
    let (version, state) = unseal(&key, name, &sealed).ok_or_else(tampered)?;
    if version != env!("CARGO_PKG_VERSION") {
        return Err(Refused::OtherVersion { path, version });
    }
    Ok(Some(state))
}

/// Saves `state` as the session `name` in `dir`, sealed.
pub(crate) fn save(dir: &Path, name: &str, state: &[u8]) -> io::Result<PathBuf> {
    let key = key(dir, true)?.ok_or_else(|| io::Error::other("the sessions' key could not be made"))?;
    let path = file(dir, name);
    atomic::write(&path, &seal(&key, env!("CARGO_PKG_VERSION"), name, state), Access::Private)?;
    Ok(path)
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
            match crate::dirs::create_new_private(&path) {
                Ok(mut file) => file.write_all(&bytes)?,
                // Another codeact made it first: use that one.
                Err(err) if err.kind() == io::ErrorKind::AlreadyExists => return key(dir, false),
                Err(err) => return Err(err),
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

/// Opens a regular file for reading, refusing a link or anything else.
fn open_regular(path: &Path) -> io::Result<std::fs::File> {
    let metadata = std::fs::symlink_metadata(path)?;
    if !metadata.is_file() {
        return Err(io::Error::other(format!("`{}` is not a regular file", path.display())));
    }
    std::fs::File::open(path)
}

/// `MAGIC`, the seal, the version's length and the version, then the state.
fn seal(key: &hmac::Key, version: &str, name: &str, state: &[u8]) -> Vec<u8> {
    let tag = tag(key, version, name, state);
    let mut sealed = Vec::with_capacity(MAGIC.len() + KEY_BYTES + 1 + version.len() + state.len());
    sealed.extend_from_slice(MAGIC);
    sealed.extend_from_slice(tag.as_ref());
    sealed.push(u8::try_from(version.len()).unwrap_or(u8::MAX));
    sealed.extend_from_slice(version.as_bytes());
    sealed.extend_from_slice(state);
    sealed
}

/// The version and the state in `sealed`, when its seal is `name`'s under `key`.
fn unseal(key: &hmac::Key, name: &str, sealed: &[u8]) -> Option<(String, Vec<u8>)> {
    let rest = sealed.strip_prefix(MAGIC)?;
    let (seal, rest) = rest.split_at_checked(KEY_BYTES)?;
    let (&length, rest) = rest.split_first()?;
    let (version, state) = rest.split_at_checked(usize::from(length))?;
    let version = std::str::from_utf8(version).ok()?;
    let expected = tag(key, version, name, state);
    bool::from(expected.as_ref().ct_eq(seal)).then(|| (version.to_owned(), state.to_vec()))
}

/// The seal of `state` as the session `name`, saved by codeact `version`: each part with its
/// length first, so that no two different triples read alike.
fn tag(key: &hmac::Key, version: &str, name: &str, state: &[u8]) -> hmac::Tag {
    let mut context = hmac::Context::with_key(key);
    for part in [version.as_bytes(), name.as_bytes(), state] {
        context.update(&(part.len() as u64).to_le_bytes());
        context.update(part);
    }
    context.sign()
}
