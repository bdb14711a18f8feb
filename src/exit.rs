//! Named process exit codes, and the error that means a usage error. Commands return these;
//! the one other way out is a run's watchdog (`sandbox::watchdog`), which ends the process with
//! [`PROGRAM_FAILED`] after writing the report of a run that overran its limits.

use std::process::ExitCode;

use crate::hint::Hint;

/// The program ran and finished without an uncaught exception.
pub(crate) const SUCCESS: u8 = 0;
/// The program raised an exception or hit a limit.
pub(crate) const PROGRAM_FAILED: u8 = 1;
/// The command line was wrong (clap's own code).
pub(crate) const USAGE: u8 = 2;
/// The chosen backend cannot run on this machine.
pub(crate) const BACKEND_UNAVAILABLE: u8 = 3;
/// A configuration or tool file is invalid.
pub(crate) const INVALID_CONFIG: u8 = 4;

/// Converts one of the codes above into the process exit code.
#[must_use]
pub(crate) fn code(value: u8) -> ExitCode {
    ExitCode::from(value)
}

/// The command line was wrong in a way clap cannot see (exit [`USAGE`]).
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub(crate) struct UsageError {
    pub(crate) message: String,
    #[source]
    pub(crate) hint: Option<Hint>,
}
