//! MCP servers as Python functions: configuration from the usual files, and connections
//! opened lazily for one run.

pub(crate) mod client;
pub(crate) mod config;
mod http;

pub(crate) use client::{Mcp, function_name};
