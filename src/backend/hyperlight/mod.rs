//! The `hyperlight` backend (cargo feature `hyperlight`, on by default; `x86_64` Linux and Windows): the
//! CPython component of the `wasm` backend, run by a WebAssembly runtime (wasmtime 36 in a
//! `no_std` Hyperlight guest) inside a Hyperlight micro-VM. Without the feature, or on another
//! platform, [`disabled`] stands in and says so.

#[cfg(hyperlight)]
mod enabled;
#[cfg(hyperlight)]
pub(crate) use enabled::{HYPERLIGHT_VERSION, Session, installed, kept_probe, probe, run};

#[cfg(not(hyperlight))]
mod disabled;
#[cfg(not(hyperlight))]
pub(crate) use disabled::{HYPERLIGHT_VERSION, Session, installed, kept_probe, probe, run};

mod missing;
pub(crate) use missing::{NO_MICRO_VM_FIX, missing_fix, missing_reason};

/// Whether this build carries the backend.
pub(crate) const COMPILED_IN: bool = cfg!(hyperlight);
