//! [`Printer`]: where the program's `print()` output goes while Monty runs, shared by the run
//! loop and the OS calls that resume the interpreter.

use std::borrow::Cow;
use std::sync::Mutex;

use monty_types::{MontyException, PrintWriterCallback};

use crate::sandbox::Capture;
use crate::sandbox::live::lock;

/// Sends `print()` output into the run's output budget, where the watchdog can read it too, and
/// `print(…, file=sys.stderr)` into the program's own stderr.
pub(super) struct Printer<'a> {
    stdout: &'a Mutex<Capture>,
    stderr: &'a Mutex<Capture>,
}

impl<'a> Printer<'a> {
    /// A printer into `stdout` and `stderr`.
    pub(super) fn new(stdout: &'a Mutex<Capture>, stderr: &'a Mutex<Capture>) -> Self {
        Self { stdout, stderr }
    }
}

impl PrintWriterCallback for Printer<'_> {
    fn stdout_write(&mut self, output: Cow<'_, str>) -> Result<(), MontyException> {
        lock(self.stdout).push(&output);
        Ok(())
    }

    fn stdout_push(&mut self, end: char) -> Result<(), MontyException> {
        lock(self.stdout).push(end.encode_utf8(&mut [0; 4]));
        Ok(())
    }

    fn stderr_write(&mut self, output: Cow<'_, str>) -> Result<(), MontyException> {
        lock(self.stderr).push(&output);
        Ok(())
    }

    fn stderr_push(&mut self, end: char) -> Result<(), MontyException> {
        lock(self.stderr).push(end.encode_utf8(&mut [0; 4]));
        Ok(())
    }
}
