//! The tool catalogue: every callable tool of every kind — built-in, Markdown tool file, Python
//! drop-in, MCP function — as one [`Tool`], built once per command by [`build`], which is where
//! the allow and deny lists, reserved names and availability are decided. `run`, `discover`,
//! `instructions`, `install`, the hooks and both backends' bridges read the same catalogue.

pub(crate) mod build;
pub(crate) mod entry;
pub(crate) mod filter;
pub(crate) mod index;

pub(crate) use build::{Built, Discovery, Sources, build, project_item};
pub(crate) use entry::{McpFunction, Tool};
pub(crate) use filter::ToolFilter;
pub(crate) use index::Catalog;
