//! The WASI imports the guest really gets, one file per WASI package: an empty environment, no
//! arguments, standard output and error captured for the run's result and an empty standard
//! input ([`cli`]), clocks whose waits end at the run's deadline ([`clocks`], [`io`]), random
//! bytes from the host ([`random`]), and the standard library read-only at `/python`
//! ([`filesystem`]) — the same view the `wasm` backend gives its guest.

mod cli;
mod clocks;
mod filesystem;
mod io;
mod random;
