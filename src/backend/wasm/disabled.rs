//! Stands in for the `wasm` backend in a build without the `wasm` feature.

use std::path::PathBuf;

use anyhow::Result;

use crate::guest::Installed;
use crate::hint;
use crate::sandbox::{GuestCache, Host, Outcome, ProgramError};

/// No wasmtime in this build.
pub(crate) const WASMTIME_VERSION: &str = "none";

use super::BUILD_IT;
use crate::backend::Choice;
use crate::backend::preflight::not_compiled;

pub(crate) fn precompile(_installed: &Installed) -> Result<PathBuf> {
    Err(hint::error(not_compiled(Choice::Wasm), BUILD_IT))
}

pub(crate) fn compile_stdlib(_installed: &Installed) -> Result<()> {
    Err(hint::error(not_compiled(Choice::Wasm), BUILD_IT))
}

/// Nothing to load.
pub(crate) struct Loading;

impl Loading {
    #[must_use]
    pub(crate) fn start() -> Self {
        Self
    }

    #[must_use]
    #[expect(clippy::unused_self, reason = "the same method as the enabled backend's")]
    pub(crate) fn cache(&self) -> Option<(GuestCache, String)> {
        None
    }
}

pub(crate) fn run(_program: &str, host: &mut Host, _loading: Loading) -> Outcome {
    Outcome::not_run("wasm", ProgramError::internal(not_compiled(Choice::Wasm)), host.elapsed())
}

/// No guest to keep.
pub(crate) struct Session;

impl Session {
    pub(crate) fn new() -> Result<Self> {
        Err(hint::error(not_compiled(Choice::Wasm), BUILD_IT))
    }

    #[expect(clippy::unused_self, reason = "the same method as the enabled backend's")]
    pub(crate) fn run_in(&mut self, program: &str, host: &mut Host) -> Outcome {
        run(program, host, Loading)
    }
}
