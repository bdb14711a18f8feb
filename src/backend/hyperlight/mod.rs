//! The `hyperlight` backend (cargo feature `hyperlight`, on by default; `x86_64` Linux only): the
//! CPython component of the `wasm` backend, run by a WebAssembly runtime (wasmtime 36 in a
//! `no_std` Hyperlight guest) inside a Hyperlight micro-VM. Without the feature, or on another
//! platform, [`disabled`] stands in and says so.

#[cfg(hyperlight)]
mod enabled;
#[cfg(hyperlight)]
pub(crate) use enabled::{HYPERLIGHT_VERSION, installed, kept_probe, probe, run};

#[cfg(not(hyperlight))]
mod disabled;
#[cfg(not(hyperlight))]
pub(crate) use disabled::{HYPERLIGHT_VERSION, installed, kept_probe, probe, run};

/// Whether this build carries the backend.
pub(crate) const COMPILED_IN: bool = cfg!(hyperlight);

pub(crate) use super::preflight::NOT_COMPILED_REASON;

/// What to do about a build without the backend.
pub(crate) const BUILD_IT: &str = "build codeact with `--features hyperlight` on x86_64 Linux";

/// What to do where no micro-VM starts.
pub(crate) const NO_MICRO_VM_FIX: &str = "Hyperlight needs KVM (or MSHV) that can run its guests; use `--backend wasm` \
                                          (full CPython, no hypervisor) or `--backend monty`";
