//! Stands in for the `hyperlight` backend in a build without it.

use anyhow::Result;

use super::{missing_fix, missing_reason};
use crate::backend::Choice;
use crate::backend::preflight::not_compiled;
use crate::guest::Installed;
use crate::hint;
use crate::sandbox::{Host, Outcome, ProgramError};

/// No hyperlight-host in this build.
pub(crate) const HYPERLIGHT_VERSION: &str = "none";

pub(crate) fn installed() -> Result<Installed> {
    Err(hint::error(not_compiled(Choice::Hyperlight), missing_fix()))
}

pub(crate) fn probe(_installed: &Installed) -> Result<(), String> {
    Err(missing_reason())
}

pub(crate) fn kept_probe(_installed: &Installed) -> Option<Result<(), String>> {
    None
}

pub(crate) fn run(_program: &str, host: &mut Host) -> Outcome {
    let error = ProgramError::internal(not_compiled(Choice::Hyperlight));
    Outcome::not_run("hyperlight", error, host.elapsed())
}
