//! Backend-neutral run machinery: the output budget, the host that serves tool calls, and the
//! outcome of a run.

pub(crate) mod capture;
pub(crate) mod host;
pub(crate) mod outcome;

pub(crate) use capture::Capture;
pub(crate) use host::{Dispatch, Host, LimitHit, Parts, PythonRunner};
pub(crate) use outcome::{GuestCache, Outcome, ProgramError};
