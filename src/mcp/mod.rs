//! MCP servers as Python functions: configuration from the usual files, and connections
//! opened lazily for one run.

pub mod client;
pub mod config;

pub use client::{Mcp, ServerTools, function_name};
