//! The CPython guest: CPython 3.14 compiled to a WebAssembly component (the
//! `hyperlight-sandbox-python-guest` wheel) plus the standard library it imports from `/python`
//! (taken from the `componentize-py` wheel, which embeds CPython 3.14.0's `Lib/`).
//!
//! `codeact guest install` puts both in the user's data directory, checked against pinned
//! SHA-256 digests; nothing is downloaded unless the user asks ([`GuestInstall`] says when
//! `codeact install` and a run that needs CPython ask for it). Backends that run the guest
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

/// When codeact fetches the guest without `codeact guest install`: the `guest_install` setting.
/// Ordered from the most to the least restrained, so that a project's config file can only
/// lower it without the user's trust.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum GuestInstall {
    /// Only `codeact guest install` fetches it.
    Never,
    /// `codeact install` fetches it; a run that needs it says once which command does.
    #[default]
    Suggest,
    /// As `suggest`, and a run that needs it starts fetching it in the background.
    Auto,
}

impl GuestInstall {
    /// The setting named `text`, as the config file and `CODEACT_GUEST_INSTALL` spell it.
    #[must_use]
    pub(crate) fn parse(text: &str) -> Option<Self> {
        match text {
            "never" => Some(Self::Never),
            "suggest" => Some(Self::Suggest),
            "auto" => Some(Self::Auto),
            _ => None,
        }
    }
}
