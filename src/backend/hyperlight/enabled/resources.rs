//! The host's side of the resources the guest holds handles to: pollables, streams, errors,
//! and the read-only descriptors of the standard library.

use std::fs::File;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::bindings::r#wasi::r#filesystem::r#types::DescriptorType;
use crate::sandbox::capture::Outlet;

/// Something the guest may wait for: ready now, or at an instant.
pub(crate) struct Pollable(Option<Instant>);

impl Pollable {
    /// Ready at once.
    #[must_use]
    pub(crate) fn ready() -> Self {
        Self(None)
    }

    /// Ready at `when`.
    #[must_use]
    pub(crate) fn at(when: Instant) -> Self {
        Self(Some(when))
    }

    /// When it is ready (`None`: now).
    #[must_use]
    pub(crate) fn when(&self) -> Option<Instant> {
        self.0
    }
}

/// A stream the guest reads.
pub(crate) enum InputStream {
    /// Standard input: always at its end.
    Empty,
    /// A file of the standard library, read from `offset` on.
    File { file: Arc<File>, offset: Mutex<u64> },
}

/// A stream the guest writes.
pub(crate) enum OutputStream {
    /// Standard output or standard error, captured for the run's result.
    Capture(Outlet),
}

/// Why a stream operation failed, for the guest's `to-debug-string`.
pub(crate) struct IoError(pub(crate) String);

/// A descriptor of the read-only standard library: a directory or a file in it.
pub(crate) enum Descriptor {
    Dir(Arc<cap_std::fs::Dir>),
    File(Arc<File>),
}

/// The entries of a directory, handed out one at a time.
pub(crate) struct DirectoryEntries(pub(crate) Mutex<std::vec::IntoIter<(String, EntryType)>>);

/// What a directory entry is, as the guest is told.
pub(crate) type EntryType = DescriptorType;
