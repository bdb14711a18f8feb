//! Backend-neutral run machinery: the output budget, the host that serves tool calls, the
//! state a run shares with its watchdog, and the outcome of a run.

pub(crate) mod capture;
pub(crate) mod host;
pub(crate) mod live;
pub(crate) mod memory;
pub(crate) mod outcome;
pub(crate) mod watchdog;

pub(crate) use capture::Capture;
pub(crate) use host::{Dispatch, Host, LimitHit, Parts, PythonRunner};
pub(crate) use outcome::{GuestCache, Outcome, ProgramError};
pub(crate) use watchdog::Watchdog;
