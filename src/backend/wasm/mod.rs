//! The `wasm` backend (cargo feature `wasm`, on by default): full CPython 3.14 as a WebAssembly
//! component under wasmtime. Without the feature, [`disabled`] stands in and says so.

#[cfg(feature = "wasm")]
mod enabled;
#[cfg(feature = "wasm")]
pub use enabled::{Loading, WASMTIME_VERSION, compile_stdlib, precompile, run};

#[cfg(not(feature = "wasm"))]
mod disabled;
#[cfg(not(feature = "wasm"))]
pub use disabled::{Loading, WASMTIME_VERSION, compile_stdlib, precompile, run};

/// Whether this build carries the backend.
pub const COMPILED_IN: bool = cfg!(feature = "wasm");
