//! [`Watchdog`]: the backstop of the wall-clock and memory limits.
//!
//! The backends stop a program at its deadline wherever they can see it — between interpreter
//! steps, at every tool call, by epoch interruption in a guest — but not inside one long
//! operation: a Monty big-integer power, an HTML conversion, one search of a huge file. And
//! Monty checks its memory limit only every few hundred instructions, between which one native
//! operation (splitting a string into millions of parts) can allocate without bound.
//!
//! The watchdog is a thread that waits for the deadline plus [`GRACE`], and, while a backend
//! has a [memory probe](super::live::MemoryProbe) registered, looks at the interpreter's memory
//! every [`MEMORY_POLL`]. When the run has not ended by the deadline, or its interpreter holds
//! far more than the limit, it writes the report the run would have written (the output
//! captured so far, then `TimeoutError` or `MemoryError`) and ends the process with the exit
//! code of a failed program.
//!
//! The run and its watchdog never both write: whichever claims the report first
//! ([`Live::claim_report`]) writes it, and a run that loses the claim waits for the watchdog to
//! end the process. The watchdog only reads the run's [`Live`] state, under the locks the run
//! takes to update it, so what it prints is whole.

use std::sync::{Arc, PoisonError};
use std::time::{Duration, Instant};

use super::live::{Live, Running};
use super::{Host, LimitHit, Outcome, ProgramError};
use crate::exit;

/// How long after the deadline the watchdog waits for the run to end by itself.
pub(crate) const GRACE: Duration = Duration::from_secs(1);

/// How often the watchdog looks at the interpreter's memory, while a backend asks it to.
pub(crate) const MEMORY_POLL: Duration = Duration::from_millis(10);

/// A run's watchdog, started before the program and finished after it.
#[derive(Debug)]
pub(crate) struct Watchdog {
    live: Arc<Live>,
}

/// The errors the watchdog can end a run with, worded as the backends word them.
struct Errors {
    time: ProgramError,
    memory: ProgramError,
}

impl Watchdog {
    /// Starts watching the run `host` serves, on the backend named `backend` (until
    /// [`Host::start_over`] names another): at its deadline
    /// plus [`GRACE`], or when its memory probe says so, `report` gets the outcome and the
    /// process ends.
    #[must_use]
    pub(crate) fn start(host: &Host, backend: &'static str, report: impl FnOnce(&Outcome) + Send + 'static) -> Self {
        let live = host.live().clone();
        let errors = Errors {
            time: ProgramError::plain(&host.limit_error(LimitHit::Time)),
            memory: ProgramError::plain(&host.limit_error(LimitHit::Memory)),
        };
        live.run_on(Running { backend, fell_back: None });
        let watched = live.clone();
        // Without the thread the backends' own checks still hold; only the backstop is missing.
        let _ = std::thread::Builder::new().name("watchdog".into()).spawn(move || watch(&watched, &errors, report));
        Self { live }
    }

    /// Ends the watch once the run has its outcome. Returns when the run may write its report;
    /// when the watchdog has already claimed it, never returns: the watchdog ends the process.
    pub(crate) fn finish(self) {
        self.live.end();
        if !self.live.claim_report() {
            loop {
                std::thread::park();
            }
        }
    }
}

/// The watchdog's thread: waits for the deadline (as it moves) plus the grace, looking at the
/// memory meanwhile, then reports.
fn watch(live: &Live, errors: &Errors, report: impl FnOnce(&Outcome)) {
    let (mut state, changed) = live.watch();
    let error = loop {
        if state.done {
            return;
        }
        let probe = live.memory_probe();
        if probe.is_some_and(|probe| (probe.exceeded)()) {
            break &errors.memory;
        }
        let now = Instant::now();
        let until_deadline = match state.deadline {
            Some(deadline) if now >= deadline + GRACE => break &errors.time,
            Some(deadline) => Some(deadline + GRACE - now),
            None => None,
        };
        let wait = match (until_deadline, probe) {
            (Some(left), Some(_)) => Some(left.min(MEMORY_POLL)),
            (Some(left), None) => Some(left),
            (None, Some(_)) => Some(MEMORY_POLL),
            (None, None) => None,
        };
        state = match wait {
            Some(wait) => changed.wait_timeout(state, wait).unwrap_or_else(PoisonError::into_inner).0,
            None => changed.wait(state).unwrap_or_else(PoisonError::into_inner),
        };
    };
    drop(state);
    // The interpreter may still be allocating: with the allocator's own ceiling lifted, it
    // cannot end the process before the report is out.
    if let Some(probe) = live.memory_probe() {
        (probe.release)();
    }
    if !live.claim_report() {
        return;
    }
    let ((stdout, truncated), stderr) = live.printed();
    let Running { backend, fell_back } = live.running();
    let outcome = Outcome {
        stdout,
        truncated,
        stderr,
        return_value: None,
        return_repr: None,
        error: Some(error.clone()),
        backend,
        beyond_monty: None,
        fell_back,
        guest_cache: None,
        duration: live.started().elapsed(),
        tool_calls: live.tool_calls(),
    };
    report(&outcome);
    // Exiting runs no destructor: the servers and commands the run started are ended here.
    crate::reap::terminate_all();
    std::process::exit(i32::from(exit::PROGRAM_FAILED));
}
