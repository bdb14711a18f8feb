//! MCP server configuration, merged from the places every agent keeps it: each agent's files
//! and how it writes them ([`sources`]), which file wins ([`load`](mod@load)), one entry read into a server ([`entry`](mod@entry)), variables expanded
//! and redacted again ([`expand`]), the `envFile`s entries name ([`env_file`]), and what the user
//! approves of a workspace file ([`approval`](mod@approval)).
//!
//! The workspace's files come with the repository: each is used only when the user trusts its
//! content (`codeact trust`), so an untrusted file's servers are never expanded or started (a
//! file never approved is not even parsed). No message shows an expanded value: a server is
//! shown as configured ([`Server::shown`]) and every expanded value is taken out of quoted text
//! ([`Server::redact`]).

mod approval;
mod entry;
mod env_file;
mod expand;
#[cfg(test)]
mod fixtures;
mod load;
mod sources;

pub(crate) use approval::{approval, preview};
pub(crate) use entry::{Fault, Server, ServerEntry, Transport, entry, servers_of};
pub(crate) use expand::{Purpose, Vars};
pub(crate) use load::{BadEntry, Configured, load, only_codeact, read_source};
pub(crate) use sources::{SERVER_LISTS, Source, WORKSPACE_FILES, gateway_file, gemini_lists};
