//! Where Copilot CLI looks for codeact's generated files, how codeact reaches them without
//! following a link a repository planted, and how it tells its own files — and whether they were
//! edited since it wrote them — from the user's.
//!
//! # Reaching the files
//!
//! A repository's `.github`, `.github/instructions` and `.github/agents` come with the clone, so
//! any of them may be a symbolic link: `.github/instructions -> ~/.copilot/instructions` would
//! turn a repository-level install into a global one that carries the repository's own tool
//! descriptions into every session. So each directory below the workspace is opened one name at
//! a time, relative to the handle of the one above it, and refused when it is a symbolic link
//! (`O_NOFOLLOW` beneath the held handle; cap-std resolves with `openat2(RESOLVE_BENEATH)` where
//! the kernel has it). The file is then read, written (temporary file + rename) and removed
//! through the last directory's handle. Nothing is checked on a host path and opened again
//! later, so there is no window in which to swap a link in.
//!
//! `$COPILOT_HOME` is the user's own directory, where a link (to a dotfiles checkout, say) is
//! theirs to make: its directories are followed. In both places the file itself is never a link:
//! codeact neither writes through one nor replaces one.
//!
//! Whether a generated file was edited since codeact wrote it is told by its marker line
//! ([`marker`]).

mod marker;
mod plugin;
mod target;

pub(crate) use marker::{Authorship, MARKER_PREFIX, authorship, seal};
pub(crate) use plugin::plugin_enabled;
pub(crate) use target::{Existing, FileKind, Place, Target, command_in, copilot_home, installed_instructions, targets};
