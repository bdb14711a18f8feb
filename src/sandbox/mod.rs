//! Backend-neutral run machinery: the output budget, the host that serves tool calls, the
//! state a run shares with its watchdog, and the outcome of a run.
//!
//! This is not where a program is confined. The confinement is in `tools::workspace` (every
//! path resolved beneath the workspace) and `tools::protected` (what no tool writes), and the
//! isolation is each backend's own: Monty's interpreter, the wasm component, the micro-VM.
//! What lives here only holds a run to its limits and carries its tool calls to the tools.

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
