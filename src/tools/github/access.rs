//! How `github_api` reaches GitHub on this machine ([`Access`]): found once by the command
//! layer ([`access`]) and handed to the catalogue and the tool context.

use std::path::Path;

use crate::{env, program};

/// How `github_api` reaches GitHub here, if at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Access {
    /// The `gh` found, which the call runs.
    Gh(std::path::PathBuf),
    Token(String),
}

/// `gh` on `PATH` and outside `workspace` (the one `github_api` then runs), else a token in
/// the environment.
#[must_use]
pub(crate) fn access(workspace: &Path) -> Option<Access> {
    program::find("gh", Some(workspace))
        .ok()
        .map(Access::Gh)
        .or_else(|| env::GITHUB_TOKENS.iter().find_map(|name| env::var(name)).map(Access::Token))
}
