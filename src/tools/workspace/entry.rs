//! What a path inside the workspace names ([`Entry`]), what opening one gives ([`Opened`]),
//! reading a regular file under a cap, and the errors every operation reports.

use std::io::{self, Read};

use cap_std::fs::File;

use super::Confined;
use crate::tools::error::ToolError;

/// A path opened by [`super::Workspace::open_entry`].
#[derive(Debug)]
pub(crate) enum Opened {
    File(File, u64),
    Dir,
}

/// What a path names inside the workspace, following symlinks that stay inside.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Entry {
    File,
    Dir,
    /// A device, FIFO or socket: never read.
    Special,
}

/// Reads an opened regular file of `len` bytes, refusing anything larger than `max_bytes`.
pub(crate) fn read_capped(file: File, len: u64, rel: &Confined, max_bytes: u64) -> Result<Vec<u8>, ToolError> {
    if len > max_bytes {
        return Err(ToolError::value(format!(
            "'{}' is {len} bytes, over the {max_bytes}-byte limit for one read; pass view_range to read part of it",
            rel.shown()
        )));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.take(max_bytes + 1).read_to_end(&mut bytes).map_err(|e| io_error(&e, rel))?;
    if bytes.len() as u64 > max_bytes {
        return Err(ToolError::value(format!("'{}' grew past {max_bytes} bytes while being read", rel.shown())));
    }
    Ok(bytes)
}

pub(super) fn classify(meta: &cap_std::fs::Metadata) -> Entry {
    if meta.is_file() {
        Entry::File
    } else if meta.is_dir() {
        Entry::Dir
    } else {
        Entry::Special
    }
}

/// An I/O error on `rel` as the Python exception of the same kind.
pub(crate) fn io_error(err: &io::Error, rel: &Confined) -> ToolError {
    ToolError::io(err, &rel.shown())
}

pub(super) fn outside(path: &str) -> ToolError {
    ToolError::permission(format!("'{path}' is outside the workspace"))
}

pub(super) fn not_regular(rel: &Confined) -> ToolError {
    ToolError::permission(format!(
        "'{}' is not a regular file (devices, FIFOs and sockets are never read)",
        rel.shown()
    ))
}
