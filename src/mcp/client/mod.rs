//! MCP connections for one run, on the official Rust SDK (`rmcp`): [`Mcp`] holds each server's
//! state ([`servers`]); a connection is opened, listed and closed in [`connection`]; the
//! functions tools become are decided in [`naming`]; what a program asks of a server is in
//! [`requests`]; probing every server at once (`discover`, `instructions`, `install`) is in
//! [`probe`]; and how failures read is in [`errors`].
//!
//! A server's tools become `server__tool` functions. Two tools (or servers) whose names clean
//! up to one function keep the first that is already a Python name (else the first listed);
//! the other is said once and reached through `mcp_call`. A name is resolved against the
//! longest server prefix first, so servers `a` and `a__b` are both reachable.

mod connection;
mod errors;
mod naming;
mod probe;
mod requests;
mod servers;

pub(crate) use naming::function_name;
pub(crate) use servers::Mcp;
