//! Workspace trust: what a repository may make codeact run.
//!
//! A workspace's MCP servers, its tool files and the keys of its `.codeact/config.json` that
//! loosen the user's own settings all make codeact run code on the host, reach the network or
//! do more than the user allowed. Each is ignored until the user approves that exact content
//! with `codeact trust`, which records the SHA-256 of every item, keyed by the workspace's
//! canonical path, in the user's state directory (`$XDG_STATE_HOME/codeact/trust.json`). Any
//! change to an approved file makes it untrusted again, as direnv's `allow` does; a new file
//! is untrusted until approved.
//!
//! The store is only read here and written by `codeact trust`; a store that cannot be read
//! approves nothing.

pub(crate) mod quote;
mod store;

pub(crate) use store::{Approved, Standing, Store, approved};
