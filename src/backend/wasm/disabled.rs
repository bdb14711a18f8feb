//! Stands in for the `wasm` backend in a build without the `wasm` feature.

use std::path::PathBuf;

use anyhow::{Result, bail};

use crate::guest::Installed;
use crate::sandbox::{Host, Outcome, ProgramError};

/// No wasmtime in this build.
pub const WASMTIME_VERSION: &str = "none";

const NOT_BUILT: &str = "the wasm backend is not compiled into this build of codeact";

pub fn precompile(_installed: &Installed) -> Result<PathBuf> {
    bail!("{NOT_BUILT}\nhint: build codeact with `--features wasm`")
}

pub fn compile_stdlib(_installed: &Installed) -> Result<()> {
    bail!("{NOT_BUILT}\nhint: build codeact with `--features wasm`")
}

/// Nothing to load.
pub struct Loading;

impl Loading {
    #[must_use]
    pub fn start() -> Self {
        Self
    }
}

pub fn run(_program: &str, host: &mut Host, _loading: Loading) -> Outcome {
    Outcome {
        stdout: String::new(),
        truncated: false,
        stderr: String::new(),
        return_value: None,
        return_repr: None,
        error: Some(ProgramError {
            kind: "RuntimeError".to_owned(),
            message: NOT_BUILT.to_owned(),
            line: None,
            traceback: format!("RuntimeError: {NOT_BUILT}"),
        }),
        backend: "wasm",
        duration: host.started.elapsed(),
        tool_calls: 0,
    }
}
