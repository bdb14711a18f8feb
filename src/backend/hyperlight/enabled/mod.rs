//! The `hyperlight` backend's host side. Only this folder names `hyperlight_*` items. Each
//! file is one piece: the generated bindings, the imports (real ones in `wasi` and `state`,
//! refused ones in `refused`), the resources they hand out, one micro-VM, the prepared
//! snapshot's cache, and the run.

mod bindings;
mod cache;
mod imports;
mod probe;
mod refused;
mod resources;
mod run;
mod sandbox;
mod state;
mod wasi;

pub(crate) use probe::{kept_probe, probe};
pub(crate) use run::{Session, installed, run};

/// The hyperlight-host version compiled in (the one the guest runtime was built against).
/// Its pin in `Cargo.toml`, read by the build script.
pub(crate) const HYPERLIGHT_VERSION: &str = env!("CODEACT_HYPERLIGHT_VERSION");
