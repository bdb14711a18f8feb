//! User-defined tools: Markdown tool files (agentschema v0.2), Python drop-ins, and the
//! problems `codeact check` reports in them and in config files.

pub(crate) mod call;
pub(crate) mod check;
pub(crate) mod dropin;
pub(crate) mod folders;
pub(crate) mod load;
pub(crate) mod markdown;
pub(crate) mod node;
pub(crate) mod problem;
pub(crate) mod secrets;

pub(crate) use problem::{Problem, Severity, is_identifier};
