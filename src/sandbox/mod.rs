//! Backend-neutral run machinery: limits, the output budget, the host that serves tool calls,
//! and the outcome of a run.

pub mod capture;
pub mod host;
pub mod limits;
pub mod outcome;

pub use capture::Capture;
pub use host::{Dispatch, Host, LimitHit, PythonRunner};
pub use limits::Limits;
pub use outcome::{Outcome, ProgramError};
