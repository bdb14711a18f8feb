//! MCP servers as Python functions: configuration from the usual files, and connections
//! opened lazily for one run.

pub(crate) mod check;
pub(crate) mod client;
pub(crate) mod config;
pub(crate) mod content;
mod handler;
mod helper;
mod http;
pub(crate) mod keywords;
mod listed;
pub(crate) mod output;
mod python_repr;
pub(crate) mod schema;
mod stdio;

pub(crate) use client::{Mcp, function_name};
pub(crate) use helper::McpHelper;
pub(crate) use listed::ListedTool;
