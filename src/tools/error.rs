//! [`ToolError`]: what a tool raises, mapped by each backend to the Python exception of the
//! same name so programs can `except FileNotFoundError:` whatever the backend.

use std::io;

/// The Python exception type a tool error becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ErrorKind {
    FileNotFound,
    FileExists,
    Permission,
    IsADirectory,
    NotADirectory,
    UnicodeDecode,
    Os,
    Value,
    Type,
    Timeout,
    Runtime,
    Name,
    Memory,
}

impl ErrorKind {
    /// Every kind.
    pub(crate) const ALL: [Self; 13] = [
        Self::FileNotFound,
        Self::FileExists,
        Self::Permission,
        Self::IsADirectory,
        Self::NotADirectory,
        Self::UnicodeDecode,
        Self::Os,
        Self::Value,
        Self::Type,
        Self::Timeout,
        Self::Runtime,
        Self::Name,
        Self::Memory,
    ];

    /// The kind for a Python exception name; anything without a kind of its own is a
    /// `RuntimeError`.
    #[must_use]
    pub(crate) fn from_python_name(name: &str) -> Self {
        Self::ALL.into_iter().find(|kind| kind.python_name() == name).unwrap_or(Self::Runtime)
    }

    /// The Python exception class name.
    #[must_use]
    pub(crate) fn python_name(self) -> &'static str {
        match self {
            Self::FileNotFound => "FileNotFoundError",
            Self::FileExists => "FileExistsError",
            Self::Permission => "PermissionError",
            Self::IsADirectory => "IsADirectoryError",
            Self::NotADirectory => "NotADirectoryError",
            Self::UnicodeDecode => "UnicodeDecodeError",
            Self::Os => "OSError",
            Self::Value => "ValueError",
            Self::Type => "TypeError",
            Self::Timeout => "TimeoutError",
            Self::Runtime => "RuntimeError",
            Self::Name => "NameError",
            Self::Memory => "MemoryError",
        }
    }
}

/// An exception raised by a tool: a kind and a message a model can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {message}", kind.python_name())]
pub(crate) struct ToolError {
    pub(crate) kind: ErrorKind,
    pub(crate) message: String,
}

impl ToolError {
    pub(crate) fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self { kind, message: message.into() }
    }

    pub(crate) fn value(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Value, message)
    }

    pub(crate) fn type_error(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Type, message)
    }

    pub(crate) fn runtime(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Runtime, message)
    }

    pub(crate) fn permission(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Permission, message)
    }

    /// Maps an I/O error on `path` to the matching Python exception, naming the path.
    #[must_use]
    pub(crate) fn io(err: &io::Error, path: &str) -> Self {
        let kind = match err.kind() {
            io::ErrorKind::NotFound => ErrorKind::FileNotFound,
            io::ErrorKind::AlreadyExists => ErrorKind::FileExists,
            io::ErrorKind::PermissionDenied => ErrorKind::Permission,
            io::ErrorKind::IsADirectory => ErrorKind::IsADirectory,
            io::ErrorKind::NotADirectory => ErrorKind::NotADirectory,
            _ => ErrorKind::Os,
        };
        let message = match kind {
            ErrorKind::FileNotFound => format!("no such file or directory: '{path}'"),
            ErrorKind::FileExists => format!("file already exists: '{path}'"),
            // cap-std refuses a path that resolves outside its `Dir` with a PermissionDenied
            // whose message is "a path led outside of the filesystem".
            ErrorKind::Permission if err.to_string().contains("outside") => {
                format!("'{path}' is outside the workspace")
            }
            ErrorKind::Permission => format!("permission denied: '{path}'"),
            ErrorKind::IsADirectory => format!("is a directory: '{path}'"),
            ErrorKind::NotADirectory => format!("not a directory: '{path}'"),
            _ => format!("'{path}': {}", strip_os_code(&err.to_string())),
        };
        Self { kind, message }
    }
}

/// `Too many levels of symbolic links (os error 40)` → `too many levels of symbolic links`.
fn strip_os_code(message: &str) -> String {
    let base = message.split(" (os error").next().unwrap_or(message);
    let mut chars = base.chars();
    chars.next().map_or_else(String::new, |first| first.to_lowercase().chain(chars).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_round_trips_through_its_python_name() {
        for kind in ErrorKind::ALL {
            assert_eq!(ErrorKind::from_python_name(kind.python_name()), kind);
        }
        assert_eq!(ErrorKind::from_python_name("KeyError"), ErrorKind::Runtime);
    }
}
