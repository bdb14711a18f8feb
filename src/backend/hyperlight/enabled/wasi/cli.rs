//! `wasi:cli`: an empty environment, no arguments and no working directory; standard output
//! and error captured for the run's result; an empty standard input; `exit` ends the run.

use super::super::bindings::r#wasi::r#cli;
use super::super::resources::{InputStream, OutputStream};
use super::super::state::Guest;

type Negative = hyperlight_common::component::Negative;

impl cli::Environment<Negative> for Guest {
    fn get_environment(&mut self) -> Vec<(String, String)> {
        Vec::new()
    }

    fn get_arguments(&mut self) -> Vec<String> {
        Vec::new()
    }

    fn initial_cwd(&mut self) -> Option<String> {
        None
    }
}

impl cli::Exit<Negative> for Guest {
    fn exit(&mut self, status: Result<(), ()>) {
        self.exited(i32::from(status.is_err()));
    }
}

impl cli::Stdin<Negative, InputStream> for Guest {
    fn get_stdin(&mut self) -> InputStream {
        InputStream::Empty
    }
}

impl cli::Stdout<Negative, OutputStream> for Guest {
    fn get_stdout(&mut self) -> OutputStream {
        OutputStream::Capture(self.stdout.clone())
    }
}

impl cli::Stderr<Negative, OutputStream> for Guest {
    fn get_stderr(&mut self) -> OutputStream {
        OutputStream::Capture(self.stderr.clone())
    }
}
