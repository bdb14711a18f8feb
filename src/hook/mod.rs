//! Copilot CLI hooks: payload parsing, shell classification, the decision policy and the
//! per-session state behind it. The commands live in `commands::hook`.

pub mod payload;
pub mod policy;
pub mod shell;
pub mod state;
