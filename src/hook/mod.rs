//! Copilot CLI hooks: payload parsing, shell classification, the decision policy, the mode and
//! the per-session state behind it. The commands live in `commands::hook`.

pub(crate) mod mode;
pub(crate) mod payload;
pub(crate) mod policy;
pub(crate) mod shell;
pub(crate) mod state;
pub(crate) mod suggest;
