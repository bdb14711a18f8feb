//! [`Printer`]: where the program's `print()` output goes while Monty runs, shared by the run
//! loop and the OS calls that resume the interpreter.

use std::borrow::Cow;
use std::sync::Mutex;

use monty_types::{MontyException, PrintWriterCallback};

use crate::sandbox::Capture;
use crate::sandbox::live::lock;

/// Sends `print()` output into the run's output budget, where the watchdog can read it too.
pub(super) struct Printer<'a> {
    capture: &'a Mutex<Capture>,
}

impl<'a> Printer<'a> {
    /// A printer into `capture`.
    pub(super) fn new(capture: &'a Mutex<Capture>) -> Self {
        Self { capture }
    }
}

impl PrintWriterCallback for Printer<'_> {
    fn stdout_write(&mut self, output: Cow<'_, str>) -> Result<(), MontyException> {
        lock(self.capture).push(&output);
        Ok(())
    }

    fn stdout_push(&mut self, end: char) -> Result<(), MontyException> {
        lock(self.capture).push(end.encode_utf8(&mut [0; 4]));
        Ok(())
    }
}
