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

/// No micro-VM to keep.
pub(crate) struct Session;

impl Session {
    pub(crate) fn new() -> Result<Self> {
        installed().map(|_| Self)
    }

    #[expect(clippy::unused_self, reason = "the same method as the enabled backend's")]
    pub(crate) fn run_in(&mut self, program: &str, host: &mut Host) -> Outcome {
        run(program, host)
    }
}
