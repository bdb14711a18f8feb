//! One module per subcommand.

pub mod discover;
pub mod instructions;
pub mod run;
