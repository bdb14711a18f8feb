//! One module per subcommand, and what they share.

pub(crate) mod agents;
pub(crate) mod check;
pub(crate) mod detect;
pub(crate) mod discover;
pub(crate) mod guest;
pub(crate) mod hook;
pub(crate) mod install;
pub(crate) mod instructions;
mod pairing;
pub(crate) mod preflight;
mod reach;
pub(crate) mod run;
pub(crate) mod serve;
pub(crate) mod session;
mod setup;
pub(crate) mod trust;
mod worker;
