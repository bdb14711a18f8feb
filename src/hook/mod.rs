//! Copilot CLI and Claude Code hooks: payload parsing, shell classification, where a run's
//! sandbox would be, the project and its mode, the decision policy and the per-session state
//! behind it. The commands live in `commands::hook`.

pub(crate) mod mode;
pub(crate) mod payload;
pub(crate) mod policy;
pub(crate) mod shell;
pub(crate) mod state;
pub(crate) mod suggest;
