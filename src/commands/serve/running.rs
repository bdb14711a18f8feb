//! Runs that outlive their call: a `run` call waits for its program until the yield time
//! (`yield_after`, else [`--yield-after`](crate::cli::ServeArgs::yield_after)), and a program
//! still running then goes on in the background, under an id of its client's. `run(wait=ID)`
//! waits for it again, with a yield time of its own, and gives what it printed since the last
//! answer; `stop=true` ends it. Each answer shows at most the output budget of what was printed
//! since the one before, and one run's answers [`WHOLE_RUN`] budgets in all.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::child::{self, Failed, Launch, Request, RunEnded};
use super::sessions::Turn;
use crate::sandbox::Capture;
use crate::sandbox::live::lock;

/// How many output budgets one run's answers show in all; past that, each answer shows the
/// end of what was printed since the last.
pub(super) const WHOLE_RUN: usize = 4;

/// How long a run that yielded goes on with no call waiting for it, from its last answer: then
/// it is stopped (its client has gone without saying, or forgot it), or, ended, its result
/// dropped.
pub(super) const UNWAITED: Duration = Duration::from_mins(10);

/// The most runs one client keeps that yielded and have no call waiting: past that, the oldest
/// that has ended is dropped.
const KEPT_PER_CLIENT: usize = 16;

/// The ids of the runs, unique in the server.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A program started by a `run` call, and what it has printed that no answer has shown.
#[derive(Debug)]
pub(super) struct Running {
    pub(super) id: u64,
    pub(super) started: Instant,
    pub(super) timeout: Duration,
    /// What the program printed since the last answer.
    unread: Arc<Mutex<Capture>>,
    /// The bytes of output the answers have shown.
    shown: AtomicUsize,
    /// The output budget of one answer.
    budget: usize,
    /// Set once the run has ended.
    ended: watch::Receiver<Option<Arc<Result<RunEnded, Failed>>>>,
    /// Ends the program.
    stop: CancellationToken,
    /// Whether an answer said it still runs: the later answers show its output as printed.
    yielded: std::sync::atomic::AtomicBool,
    /// How many answers it has had: a watch for [`UNWAITED`] knows whether one came since.
    answers: AtomicU64,
    /// Whether a call is waiting for it: one at a time, so that its result is given once.
    waiting: std::sync::atomic::AtomicBool,
}

/// A call's claim to wait for a run ([`Running::wait_alone`]), given up when dropped.
pub(super) struct Waiting(Arc<Running>);

impl Drop for Waiting {
    fn drop(&mut self) {
        self.0.waiting.store(false, Ordering::Release);
    }
}

impl Running {
    /// Starts `request` in the background, in the call's share of its session `turn` if it has
    /// one; `turn` and `held` (the call's slot) are kept until it ends.
    pub(super) fn start(
        launch: Launch,
        request: Request,
        mut turn: Option<Turn>,
        budget: usize,
        held: impl Send + 'static,
    ) -> Arc<Self> {
        let unread = Arc::new(Mutex::new(Capture::new(budget)));
        lock(&unread).stream();
        let (ended_tx, ended) = watch::channel(None);
        let running = Arc::new(Self {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            started: Instant::now(),
            timeout: request.timeout,
            unread: Arc::clone(&unread),
            shown: AtomicUsize::new(0),
            budget,
            ended,
            stop: CancellationToken::new(),
            yielded: std::sync::atomic::AtomicBool::new(false),
            answers: AtomicU64::new(0),
            waiting: std::sync::atomic::AtomicBool::new(false),
        });
        let stop = running.stop.clone();
        tokio::spawn(async move {
            let result = child::run(&launch, &request, turn.as_mut(), &stop, unread).await;
            // Answered before its session's worker has saved it; the turn is held until then.
            if let Some(turn) = &turn {
                turn.answering();
            }
            let _ = ended_tx.send(Some(Arc::new(result)));
            if let Some(turn) = &mut turn {
                turn.settle().await;
            }
            drop((turn, held));
        });
        running
    }

    /// This call's claim to wait for the run; `None` while another call waits for it.
    pub(super) fn wait_alone(self: &Arc<Self>) -> Option<Waiting> {
        (!self.waiting.swap(true, Ordering::AcqRel)).then(|| Waiting(Arc::clone(self)))
    }

    /// Notes a call that waits for the run: a watch for [`UNWAITED`] leaves it alone.
    pub(super) fn waited(&self) {
        self.answers.fetch_add(1, Ordering::Relaxed);
    }

    /// Waits until the run ends, or `until` passes (never, when `None`); its result, once ended.
    pub(super) async fn wait(&self, until: Option<tokio::time::Instant>) -> Option<Arc<Result<RunEnded, Failed>>> {
        let mut ended = self.ended.clone();
        let end = ended.wait_for(Option::is_some);
        let result = match until {
            Some(until) => tokio::time::timeout_at(until, end).await.ok()?,
            None => end.await,
        };
        result.ok().and_then(|ended| ended.clone())
    }

    pub(super) fn set_yielded(&self) {
        self.yielded.store(true, Ordering::Relaxed);
    }

    /// Watches the run after an answer said it still runs: when no call has waited for it
    /// [`UNWAITED`] later, it is stopped, and forgotten.
    pub(super) fn watch_unwaited(self: &Arc<Self>, runs: std::sync::Weak<Runs>) {
        let answers = self.answers.fetch_add(1, Ordering::Relaxed) + 1;
        let running = Arc::clone(self);
        if let Some(runs) = runs.upgrade() {
            runs.keep_at_most(KEPT_PER_CLIENT);
        }
        tokio::spawn(async move {
            tokio::time::sleep(UNWAITED).await;
            if running.answers.load(Ordering::Relaxed) == answers {
                running.stop();
                if let Some(runs) = runs.upgrade() {
                    runs.remove(running.id);
                }
            }
        });
    }

    /// Whether the run has ended.
    fn ended(&self) -> bool {
        self.ended.borrow().is_some()
    }

    pub(super) fn yielded(&self) -> bool {
        self.yielded.load(Ordering::Relaxed)
    }

    /// Ends the program: SIGTERM, then SIGKILL to its process group.
    pub(super) fn stop(&self) {
        self.stop.cancel();
    }

    /// Ends the program and waits until it has ended; whether it had ended on its own before the
    /// stop reached it (its result is then what it reported, not a stop).
    pub(super) async fn stop_and_wait(&self) -> bool {
        self.stop();
        self.wait(None).await.is_some_and(|ended| !matches!(*ended, Err(Failed::Cancelled)))
    }

    /// What the program printed since the last answer, within one answer's budget and what is
    /// left of the whole run's.
    pub(super) fn take_unread(&self) -> String {
        let Some(text) = lock(&self.unread).take_streamed() else { return String::new() };
        let whole = self.budget.saturating_mul(WHOLE_RUN);
        let shown = self.shown.fetch_add(text.len(), Ordering::Relaxed);
        if shown.saturating_add(text.len()) <= whole {
            return text;
        }
        // The whole run's budget is spent: only the end of what is new.
        let keep = (self.budget / 8).min(text.len());
        let start = (text.len() - keep..=text.len()).find(|at| text.is_char_boundary(*at)).unwrap_or(text.len());
        format!(
            "[… {start} bytes of output elided: this run has shown {} of output in all; print less …]\n{}",
            crate::limits::format_size(whole),
            &text[start..]
        )
    }
}

/// The runs of one client that no answer has ended yet, by id. A client that goes stops them.
#[derive(Debug, Default)]
pub(super) struct Runs {
    runs: Mutex<HashMap<u64, Arc<Running>>>,
}

impl Runs {
    pub(super) fn add(&self, running: &Arc<Running>) {
        self.lock().insert(running.id, Arc::clone(running));
    }

    pub(super) fn get(&self, id: u64) -> Option<Arc<Running>> {
        self.lock().get(&id).cloned()
    }

    /// The ids of the runs still running.
    pub(super) fn still_running(&self) -> Vec<u64> {
        let mut ids: Vec<u64> =
            self.lock().values().filter(|running| !running.ended()).map(|running| running.id).collect();
        ids.sort_unstable();
        ids
    }

    /// Drops the oldest runs that have ended until at most `most` are kept.
    fn keep_at_most(&self, most: usize) {
        let mut runs = self.lock();
        let mut ended: Vec<u64> = runs.values().filter(|running| running.ended()).map(|running| running.id).collect();
        ended.sort_unstable();
        let excess = runs.len().saturating_sub(most);
        for id in ended.into_iter().take(excess) {
            runs.remove(&id);
        }
    }

    /// Forgets the run `id`: its result has been given.
    pub(super) fn remove(&self, id: u64) {
        self.lock().remove(&id);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Running>>> {
        self.runs.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for Runs {
    fn drop(&mut self) {
        for running in self.lock().values() {
            running.stop();
        }
    }
}
