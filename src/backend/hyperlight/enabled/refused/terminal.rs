//! `wasi:cli`'s terminal interfaces: no terminal is attached to any standard stream.

use hyperlight_common::component::Negative;

use super::super::bindings::r#wasi::r#cli::{self as cli, r#terminal_input, r#terminal_output};
use super::super::state::Guest;

/// A terminal the guest could read; none is attached.
pub(crate) struct TerminalInput;
/// A terminal the guest could write; none is attached.
pub(crate) struct TerminalOutput;

impl terminal_input::TerminalInput<Negative> for Guest {
    type T = TerminalInput;
}

impl cli::TerminalInput<Negative> for Guest {}

impl terminal_output::TerminalOutput<Negative> for Guest {
    type T = TerminalOutput;
}

impl cli::TerminalOutput<Negative> for Guest {}

impl cli::TerminalStdin<Negative, TerminalInput> for Guest {
    fn get_terminal_stdin(&mut self) -> Option<TerminalInput> {
        None
    }
}

impl cli::TerminalStdout<Negative, TerminalOutput> for Guest {
    fn get_terminal_stdout(&mut self) -> Option<TerminalOutput> {
        None
    }
}

impl cli::TerminalStderr<Negative, TerminalOutput> for Guest {
    fn get_terminal_stderr(&mut self) -> Option<TerminalOutput> {
        None
    }
}
