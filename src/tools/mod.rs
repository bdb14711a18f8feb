//! The tools a program calls: their specs, argument binding, the workspace confinement they all
//! go through, and the registry that offers them.

pub mod args;
pub mod bash;
pub mod context;
pub mod error;
pub mod files;
pub mod github;
pub mod glob;
pub mod grep;
pub mod mcp;
pub mod pattern;
pub mod process;
pub mod registry;
pub mod spec;
pub mod sql;
pub mod value;
pub mod web;
pub mod workspace;

pub use context::ToolContext;
pub use error::{ErrorKind, ToolError};
pub use registry::Registry;
pub use spec::ToolSpec;
pub use value::Value;
