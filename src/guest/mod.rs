//! The CPython guest: CPython 3.14 compiled to a WebAssembly component (the
//! `hyperlight-sandbox-python-guest` wheel) plus the standard library it imports from `/python`
//! (taken from the `componentize-py` wheel, which embeds CPython 3.14.0's `Lib/`).
//!
//! `codeact guest install` puts both in the user's data directory, checked against pinned
//! SHA-256 digests; nothing is downloaded unless the user asks. Backends that run the guest
//! (`wasm` and `hyperlight`) find it with [`manifest::installed`], talk to it through
//! [`bridge`] and the Python prelude ([`loader`]), serve its messages with [`serve`] and seal
//! what they cache with [`seal`]: none of it is specific to any one runtime.

#[cfg_attr(not(guest_backend), expect(dead_code, reason = "only the wasm and hyperlight backends run the guest"))]
pub(crate) mod bridge;
#[cfg_attr(not(guest_backend), expect(dead_code, reason = "only the wasm and hyperlight backends run the guest"))]
pub(crate) mod ended;
pub(crate) mod install;
#[cfg_attr(not(guest_backend), expect(dead_code, reason = "only the wasm and hyperlight backends run the guest"))]
pub(crate) mod loader;
pub(crate) mod manifest;
#[cfg_attr(not(guest_backend), expect(dead_code, reason = "only the wasm and hyperlight backends run the guest"))]
pub(crate) mod seal;
#[cfg_attr(not(guest_backend), expect(dead_code, reason = "only the wasm and hyperlight backends run the guest"))]
pub(crate) mod serve;

pub(crate) use manifest::{GUEST_WHEEL, INSTALL_HINT, Installed, Missing, PYTHON_VERSION, STDLIB_WHEEL, installed};
