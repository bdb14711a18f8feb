//! The `hyperlight` backend (cargo feature `hyperlight`, on by default; `x86_64` Linux only): the
//! CPython component of the `wasm` backend, run by a WebAssembly runtime (wasmtime 36 in a
//! `no_std` Hyperlight guest) inside a Hyperlight micro-VM. Without the feature, or on another
//! platform, [`disabled`] stands in and says so.

#[cfg(all(feature = "hyperlight", target_os = "linux", target_arch = "x86_64"))]
mod enabled;
#[cfg(all(feature = "hyperlight", target_os = "linux", target_arch = "x86_64"))]
pub(crate) use enabled::{HYPERLIGHT_VERSION, installed, kept_probe, probe, run};

#[cfg(not(all(feature = "hyperlight", target_os = "linux", target_arch = "x86_64")))]
mod disabled;
#[cfg(not(all(feature = "hyperlight", target_os = "linux", target_arch = "x86_64")))]
pub(crate) use disabled::{HYPERLIGHT_VERSION, installed, kept_probe, probe, run};

/// Whether this build carries the backend.
pub(crate) const COMPILED_IN: bool = cfg!(all(feature = "hyperlight", target_os = "linux", target_arch = "x86_64"));

/// What a build without the backend says when asked for it.
pub(crate) const NOT_COMPILED_REASON: &str = "it is not compiled into this build of codeact";
pub(crate) const BUILD_IT: &str = "build codeact with `--features hyperlight` on x86_64 Linux";

/// What to do where no micro-VM starts.
pub(crate) const NO_MICRO_VM_FIX: &str = "Hyperlight needs KVM (or MSHV) that can run its guests; use `--backend wasm` \
                                          (full CPython, no hypervisor) or `--backend monty`";
