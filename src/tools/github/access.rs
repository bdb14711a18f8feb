//! How `github_api` reaches GitHub on this machine ([`Access`]): found once by the command
//! layer ([`access`]) and handed to the catalogue and the tool context.

use crate::{env, program};

/// How `github_api` reaches GitHub here, if at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Access {
    Gh(std::path::PathBuf),
    Token(String),
}

/// `gh` on `PATH`, else a token in the environment.
#[must_use]
pub(crate) fn access() -> Option<Access> {
    program::find("gh", None)
        .ok()
        .map(Access::Gh)
        .or_else(|| env::GITHUB_TOKENS.iter().find_map(|name| env::var(name)).map(Access::Token))
}
