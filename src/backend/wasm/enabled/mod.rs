//! The `wasm` backend: full CPython 3.14, the guest component, under wasmtime. Only this folder
//! names `wasmtime` items. Each file is one piece: the engine and linker, the compiled-guest
//! cache, the snapshot with the prelude loaded, the allocator settings, a guest's store, its
//! output streams, and the run.

mod bindings;
mod cache;
mod engine;
mod heap;
mod run;
mod snapshot;
mod store;
mod stream;

pub(crate) use cache::precompile;
pub(crate) use run::{Loading, Session, compile_stdlib, run};

/// The wasmtime version compiled in: its pin in `Cargo.toml`, read by the build script.
pub(crate) const WASMTIME_VERSION: &str = env!("CODEACT_WASMTIME_VERSION");
