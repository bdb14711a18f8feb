//! `codeact hook pre-tool-use`, `post-tool-use` and `session-start`: Copilot CLI and Claude
//! Code hooks.
//!
//! [`events`] answers each event; [`project`] finds the project a call belongs to; [`confine`]
//! says where a codeact run would put its sandbox; [`known`] tells codeact from other programs.

mod confine;
mod events;
mod known;
mod project;

pub(crate) use events::run;
