//! The `wasm` backend (cargo feature `wasm`, on by default): full CPython 3.14 as a WebAssembly
//! component under wasmtime. Without the feature, [`disabled`] stands in and says so.

#[cfg(feature = "wasm")]
mod enabled;
#[cfg(feature = "wasm")]
pub(crate) use enabled::{Loading, Session, WASMTIME_VERSION, compile_stdlib, precompile, run};

#[cfg(not(feature = "wasm"))]
mod disabled;
#[cfg(not(feature = "wasm"))]
pub(crate) use disabled::{Loading, Session, WASMTIME_VERSION, compile_stdlib, precompile, run};

/// Whether this build carries the backend.
pub(crate) const COMPILED_IN: bool = cfg!(feature = "wasm");

pub(crate) use super::preflight::NOT_COMPILED_REASON;

/// What to do about a build without the backend.
pub(crate) const BUILD_IT: &str = "build codeact with `--features wasm`";
