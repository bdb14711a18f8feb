//! What a built-in tool is: its [`ToolSpec`] and the [`Handler`] that runs it once its arguments
//! are bound. The tools themselves are listed in [`super::builtin`].

use super::args::Args;
use super::context::ToolContext;
use super::error::ToolError;
use super::spec::ToolSpec;
use super::value::Value;

/// The function that runs a built-in tool once its arguments are bound.
pub(crate) type Handler = fn(&mut ToolContext, &Args<'_>) -> Result<Value, ToolError>;

/// A built-in tool.
#[derive(Debug)]
pub(crate) struct Builtin {
    pub(crate) spec: ToolSpec,
    pub(crate) handler: Handler,
}
