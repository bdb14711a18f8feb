//! [`Live`]: what one run shares between the thread that runs the program and its
//! [watchdog](super::watchdog) — the output captured so far, the tool calls made, the deadline
//! as it stands, and who writes the run's report. Everything here is cheap to update from the
//! run's hot paths: a print takes one uncontended lock, a tool call one atomic add.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Instant;

use super::Capture;

/// Bytes kept of a program's own stderr (what a CPython guest writes there).
pub(crate) const MAX_STDERR: usize = 64 * 1024;

/// The state of one run that other threads may read while it runs.
#[derive(Debug)]
pub(crate) struct Live {
    started: Instant,
    /// The program's stdout, within the output budget.
    stdout: Arc<Mutex<Capture>>,
    /// The program's own stderr, within [`MAX_STDERR`].
    stderr: Arc<Mutex<Capture>>,
    tool_calls: AtomicU64,
    /// The deadline the watchdog holds the run to, and whether the run is over.
    watch: Mutex<Watch>,
    changed: Condvar,
    /// Set by whichever writes the run's report first: the run itself or its watchdog.
    claimed: AtomicBool,
    /// How the watchdog sees the interpreter's memory, for a backend that counts it.
    memory: OnceLock<MemoryProbe>,
    /// The backend running the program now, as the watchdog's report names it.
    running: Mutex<Running>,
}

/// Which backend runs the program, and why, when `auto` ran it again on another.
#[derive(Debug, Clone, Default)]
pub(crate) struct Running {
    pub(crate) backend: &'static str,
    /// What Monty could not do, when the program runs again on CPython.
    pub(crate) fell_back: Option<String>,
}

/// A backend's view of its interpreter's memory, for the watchdog.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MemoryProbe {
    /// Whether the interpreter holds so far more than the limit that the run must end now.
    pub(crate) exceeded: fn() -> bool,
    /// Lifts any ceiling past which the allocator would end the process itself.
    pub(crate) release: fn(),
}

/// What the watchdog waits on.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Watch {
    /// `None` while the clock is held (a backend is loading, which is not the program's time).
    pub(crate) deadline: Option<Instant>,
    /// The run has ended: the watchdog stops.
    pub(crate) done: bool,
}

impl Live {
    #[must_use]
    pub(crate) fn new(started: Instant, deadline: Instant, max_output: usize) -> Self {
        Self {
            started,
            stdout: Arc::new(Mutex::new(Capture::new(max_output))),
            stderr: Arc::new(Mutex::new(Capture::new(MAX_STDERR))),
            tool_calls: AtomicU64::new(0),
            watch: Mutex::new(Watch { deadline: Some(deadline), done: false }),
            changed: Condvar::new(),
            claimed: AtomicBool::new(false),
            memory: OnceLock::new(),
            running: Mutex::new(Running::default()),
        }
    }

    /// When the run started.
    #[must_use]
    pub(crate) fn started(&self) -> Instant {
        self.started
    }

    /// The program's stdout, for a backend to write into.
    #[must_use]
    pub(crate) fn stdout(&self) -> &Arc<Mutex<Capture>> {
        &self.stdout
    }

    /// The program's own stderr, for a backend to write into.
    #[must_use]
    pub(crate) fn stderr(&self) -> &Arc<Mutex<Capture>> {
        &self.stderr
    }

    /// What the program has printed so far, as it would be reported now: (stdout, whether it
    /// was cut, stderr). The captures stay as they are, for the watchdog to read too.
    #[must_use]
    pub(crate) fn printed(&self) -> ((String, bool), String) {
        let stdout = lock(&self.stdout).clone().finish();
        let (stderr, _) = lock(&self.stderr).clone().finish();
        (stdout, stderr)
    }

    #[must_use]
    pub(crate) fn tool_calls(&self) -> u64 {
        self.tool_calls.load(Ordering::Relaxed)
    }

    pub(crate) fn count_tool_call(&self) {
        self.tool_calls.fetch_add(1, Ordering::Relaxed);
    }

    /// Forgets what the program printed, for the same program started again on another backend;
    /// the deadline stays, and the tool calls of both runs count against the budget.
    pub(crate) fn start_over(&self) {
        lock(&self.stdout)
            .clear("[codeact: Monty cannot run this program: it runs again on CPython, from the start]\n");
        lock(&self.stderr).clear("");
    }

    /// Records which backend runs the program from now on, for the watchdog's report.
    pub(crate) fn run_on(&self, running: Running) {
        *lock(&self.running) = running;
    }

    /// The backend running the program now.
    #[must_use]
    pub(crate) fn running(&self) -> Running {
        lock(&self.running).clone()
    }

    /// Sets the deadline the watchdog holds the run to; `None` holds the clock.
    pub(crate) fn set_deadline(&self, deadline: Option<Instant>) {
        lock(&self.watch).deadline = deadline;
        self.changed.notify_all();
    }

    /// Tells the watchdog the run is over.
    pub(crate) fn end(&self) {
        lock(&self.watch).done = true;
        self.changed.notify_all();
    }

    /// The watch state, and the means to wait for it to change.
    pub(crate) fn watch(&self) -> (MutexGuard<'_, Watch>, &Condvar) {
        (lock(&self.watch), &self.changed)
    }

    /// Has the watchdog look at the interpreter's memory through `probe` (the first probe set
    /// stays).
    pub(crate) fn watch_memory(&self, probe: MemoryProbe) {
        // Under the watch lock, so the watchdog cannot miss it between a look and a wait.
        let _watch = lock(&self.watch);
        if self.memory.set(probe).is_ok() {
            self.changed.notify_all();
        }
    }

    /// The memory probe a backend registered.
    #[must_use]
    pub(crate) fn memory_probe(&self) -> Option<MemoryProbe> {
        self.memory.get().copied()
    }

    /// Claims the writing of the run's report: true for the first caller only.
    #[must_use]
    pub(crate) fn claim_report(&self) -> bool {
        !self.claimed.swap(true, Ordering::AcqRel)
    }
}

/// Locks `mutex`, also when a thread panicked while holding it: what it guards stays usable.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
