//! The tools layer: the built-in tools, and the vocabulary every tool kind shares — values,
//! errors, signatures and argument binding, the tool context, and the workspace confinement
//! that every file operation goes through.

pub(crate) mod args;
pub(crate) mod bash;
pub(crate) mod builtin;
pub(crate) mod context;
pub(crate) mod error;
pub(crate) mod files;
pub(crate) mod github;
pub(crate) mod glob;
pub(crate) mod grep;
pub(crate) mod handler;
pub(crate) mod mcp;
pub(crate) mod network;
pub(crate) mod pattern;
pub(crate) mod process;
pub(crate) mod protected;
pub(crate) mod spec;
pub(crate) mod sql;
pub(crate) mod value;
pub(crate) mod walk;
pub(crate) mod web;
pub(crate) mod workspace;

pub(crate) use context::ToolContext;
pub(crate) use error::{ErrorKind, ToolError};
pub(crate) use value::Value;
