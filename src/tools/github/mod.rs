//! `github_api`: the GitHub REST API through `gh api` when it is installed (it brings the user's
//! own login), else over HTTPS with `GITHUB_TOKEN` or `GH_TOKEN`. The endpoint is always passed
//! after `--`, so it can never become an option; it must be a path on the API, never a URL.
//! Offered only when one of the two ways is available: the command layer finds out with
//! [`access()`] and hands the answer to the catalogue and the tool context.

mod access;
mod api;

pub(crate) use access::{Access, access};
pub(crate) use api::GITHUB_API;
