//! One module per subcommand.

pub mod check;
pub mod detect;
pub mod discover;
pub mod guest;
pub mod hook;
pub mod install;
pub mod instructions;
pub mod preflight;
pub mod run;
