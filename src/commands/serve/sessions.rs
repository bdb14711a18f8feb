//! What a client's programs define, kept from one `run` call to the next: each MCP session
//! (each stdio connection, each HTTP session) has a session of its own, held in memory by a
//! worker process of its own ([`super::worker`]) that runs its calls one at a time.
//!
//! The worker also saves the state after each run, in a private folder the server makes when
//! it starts and removes when it ends, sealed like the command line's sessions
//! (`crate::session`); a client never names them, so one client's state is never another's. A
//! call made while another call of its session runs has the state as saved, in a process of its
//! own, and keeps nothing. A session that gets no call for
//! [`--session-idle`](crate::cli::ServeArgs::session_idle) is ended, its worker and its state
//! removed; so is the session of a client that leaves. A crash, a timeout or a memory limit
//! ends the session's worker only: its next call starts another, from what the last run that
//! ended saved.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};
use tempfile::TempDir;
use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard};

use super::worker::Worker;

/// A session's worker, if it has one; held by the call whose run has the session's turn.
type Slot = Arc<AsyncMutex<Option<Worker>>>;

/// Where each session that has had a call stands, and its worker, by id.
type Marks = HashMap<String, (Mark, std::sync::Weak<AsyncMutex<Option<Worker>>>)>;

/// How many sessions may keep a worker for each of the server's slots
/// ([`--max-concurrent`](crate::cli::ServeArgs::max_concurrent)): past that, the worker of the
/// session used least lately is ended, and its next call starts it again from its save.
const WORKERS_PER_SLOT: usize = 4;

/// How long a server's folder may go unchanged before a server that starts removes it: its
/// server ended without removing it (it was killed), or has kept its sessions that long.
const STALE: Duration = Duration::from_hours(48);

/// Removes the folders in `served` unchanged for [`STALE`].
fn remove_stale(served: &Path) {
    let Ok(entries) = std::fs::read_dir(served) else { return };
    for entry in entries.flatten() {
        let old = entry.metadata().ok().and_then(|meta| meta.modified().ok()).and_then(|time| time.elapsed().ok());
        if old.is_some_and(|old| old > STALE) && entry.file_type().is_ok_and(|kind| kind.is_dir()) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// The sessions of one server.
#[derive(Debug)]
pub(super) struct Sessions {
    /// The private folder the states are kept in.
    folder: TempDir,
    /// How long a session is kept without a call.
    idle: Duration,
    /// How many sessions may keep a worker at once.
    most_workers: usize,
    /// Whether the workers save the state (on Monty), from which a worker that ended starts
    /// again; else (a CPython guest) it lives in the worker only.
    saved: bool,
    /// Where each session that has had a call stands, by id, and its worker.
    marks: Mutex<Marks>,
}

/// Where a session stands.
#[derive(Debug, Clone, Copy)]
enum Mark {
    /// A call of it is running.
    Running,
    /// Its last call ended then.
    Idle(Instant),
    /// It was ended for its idle time, and has had no call since.
    Ended,
}

impl Sessions {
    /// The sessions of a server with `slots` slots that keeps each for `idle` without a call, in
    /// a folder of its own in `served/` of the sessions' folder (`crate::session::dir`). Folders
    /// that servers which did not end left there for [`STALE`] are removed.
    pub(super) fn new(idle: Duration, slots: usize, saved: bool) -> Result<Arc<Self>> {
        let served = crate::session::dir().map(|dir| dir.join("served")).context("no folder to keep sessions in")?;
        crate::dirs::make_private_dir(&served)
            .with_context(|| format!("failed to make the folder `{}`", served.display()))?;
        remove_stale(&served);
        let folder = tempfile::Builder::new().prefix("").tempdir_in(&served).with_context(|| {
            format!("failed to make a private folder for the clients' sessions in `{}`", served.display())
        })?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(folder.path(), std::fs::Permissions::from_mode(0o700))?;
        }
        crate::reap::remove_on_stop(folder.path().to_owned());
        let most_workers = slots.saturating_mul(WORKERS_PER_SLOT);
        Ok(Arc::new(Self { folder, idle, most_workers, saved, marks: Mutex::new(HashMap::new()) }))
    }

    pub(super) fn folder(&self) -> &Path {
        self.folder.path()
    }

    /// A new session, for a client that has just connected.
    pub(super) fn open(self: &Arc<Self>) -> Session {
        let id = crate::digest::nonce();
        let inner = Inner {
            id,
            sessions: Arc::clone(self),
            turn: Arc::new(AsyncMutex::new(None)),
            saving: AtomicU64::new(NO_TURN),
            had_worker: AtomicBool::new(false),
        };
        Session { inner: Arc::new(inner) }
    }

    /// Ends the sessions that have had no call for longer than the idle time, stopping their
    /// workers and removing their state; the next call of each starts afresh, and says so.
    pub(super) fn end_idle(&self) {
        let now = Instant::now();
        for (id, (mark, slot)) in self.marks().iter_mut() {
            if let Mark::Idle(last) = *mark
                && now.duration_since(last) > self.idle
            {
                // An idle session's turn is free: its worker is dropped, which kills it.
                if let Some(slot) = slot.upgrade()
                    && let Ok(mut worker) = slot.try_lock()
                {
                    *worker = None;
                }
                remove_state(self.folder(), id);
                *mark = Mark::Ended;
            }
        }
    }

    /// Makes room for the worker the session `id` is about to start: while as many sessions as
    /// may keep one do, the idle worker of the session used least lately is ended. Its state
    /// was saved when its last run ended, so its next call starts it again from there.
    fn make_room_for_a_worker(&self, id: &str) {
        let marks = self.marks();
        let mut live = 0_usize;
        let mut idle = Vec::new();
        for (other, (mark, slot)) in marks.iter() {
            let Some(slot) = slot.upgrade() else { continue };
            if other == id {
                continue;
            }
            match slot.try_lock() {
                Err(_) => live += 1,
                Ok(worker) if worker.is_some() => {
                    live += 1;
                    if let Mark::Idle(last) = *mark {
                        idle.push((last, Arc::clone(&slot)));
                    }
                }
                Ok(_) => {}
            }
        }
        drop(marks);
        idle.sort_by_key(|(last, _)| *last);
        let excess = (live + 1).saturating_sub(self.most_workers);
        for (_, slot) in idle.into_iter().take(excess) {
            if let Ok(mut worker) = slot.try_lock() {
                *worker = None;
            }
        }
    }

    fn marks(&self) -> std::sync::MutexGuard<'_, Marks> {
        self.marks.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How often [`end_idle`](Self::end_idle) runs: often enough that a session outlives its
    /// idle time by at most a tenth of it (and a minute at most).
    pub(super) fn sweep_every(&self) -> Duration {
        (self.idle / 10).clamp(Duration::from_millis(100), Duration::from_mins(1))
    }
}

/// One client's session; its clones are the same session. Its state is removed when the last
/// clone is dropped: the client has gone.
#[derive(Debug, Clone)]
pub(crate) struct Session {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    id: String,
    sessions: Arc<Sessions>,
    /// Held by the call whose run has the session's worker.
    turn: Slot,
    /// The turn ([`Turn::id`]) of the call that holds the session's turn, once it has answered
    /// and until it has put its run's state in place and let go of the turn, else
    /// [`NO_TURN`]: a call made then waits for the turn, as it would for a call that had ended.
    saving: AtomicU64,
    /// Whether a worker has run its calls: one that ended since, without a save to start
    /// again from, took what they defined with it.
    had_worker: AtomicBool,
}

/// What [`Inner::saving`] holds while no call is putting its state in place.
const NO_TURN: u64 = 0;

/// The ids of the calls' turns, unique in the server.
static NEXT_TURN: AtomicU64 = AtomicU64::new(NO_TURN + 1);

/// Removes what the session `id` has saved in `folder`.
fn remove_state(folder: &Path, id: &str) {
    let _ = std::fs::remove_file(crate::session::file(folder, id));
    let _ = std::fs::remove_file(crate::session::pending(folder, id));
}

/// A call's share of its session: the call that holds the session's turn runs in its worker; a
/// call made while another runs has the state as the last run saved it, and keeps nothing, so
/// that calls of one session still run at once.
pub(super) struct Turn {
    /// The session's worker, held while the run has it. Dropped before `session`, so that a
    /// session whose client has gone ends its worker before it removes its state.
    held: Option<OwnedMutexGuard<Option<Worker>>>,
    session: Session,
    /// Said to the model with the result.
    pub(super) note: Option<String>,
    id: u64,
}

impl Session {
    /// This call's share of the session.
    pub(super) async fn turn(&self) -> Turn {
        let id = NEXT_TURN.fetch_add(1, Ordering::Relaxed);
        let turn = || Arc::clone(&self.inner.turn);
        let held = match turn().try_lock_owned() {
            Ok(held) => Ok(held),
            // The call that holds it has answered, and lets go once its state is in place.
            Err(_) if self.inner.saving.load(Ordering::Acquire) != NO_TURN => Ok(turn().lock_owned().await),
            // It may have let go since.
            Err(_) => turn().try_lock_owned(),
        };
        let Ok(mut held) = held else {
            let note = if self.inner.sessions.saved {
                "codeact: another call of this session was running, so this one had the state as the last call \
                 left it, and what it defined is not kept"
            } else {
                "codeact: another call of this session was running, so this one ran without the session's state, \
                 and what it defined is not kept"
            };
            return Turn { session: self.clone(), held: None, note: Some(note.to_owned()), id };
        };
        let sessions = &self.inner.sessions;
        let running = (Mark::Running, Arc::downgrade(&self.inner.turn));
        let ended = matches!(sessions.marks().insert(self.inner.id.clone(), running), Some((Mark::Ended, _)));
        if ended {
            *held = None;
        }
        let lost =
            !sessions.saved && self.inner.had_worker.load(Ordering::Relaxed) && held.as_mut().is_none_or(Worker::ended);
        let note = if ended {
            Some(format!(
                "codeact: this session had no call for over {}, so what its earlier programs defined was cleared",
                crate::limits::format_seconds(sessions.idle)
            ))
        } else if lost {
            Some(
                "codeact: this session's interpreter had ended (a crash, a deadline, or room made for other \
                 sessions), so what its earlier programs defined was cleared"
                    .to_owned(),
            )
        } else {
            None
        };
        Turn { session: self.clone(), held: Some(held), note, id }
    }
}

impl Turn {
    /// The arguments that make a run this session's: `--session ID --sessions-dir DIR`, and
    /// `--session-unsaved` for a call that does not hold the turn; none for such a call when
    /// the state is not saved, which then runs as a call without a session.
    pub(super) fn arguments(&self) -> Vec<std::ffi::OsString> {
        let inner = &self.session.inner;
        if self.held.is_none() && !inner.sessions.saved {
            return Vec::new();
        }
        let mut arguments = vec![
            "--session".into(),
            inner.id.clone().into(),
            "--sessions-dir".into(),
            inner.sessions.folder().as_os_str().to_owned(),
        ];
        if self.held.is_none() {
            arguments.push("--session-unsaved".into());
        }
        arguments
    }

    /// The session's worker, for the call that holds the session's turn; when it has none
    /// (or it has ended), room is made for the one it starts.
    pub(super) fn worker(&mut self) -> Option<&mut Option<Worker>> {
        let worker = self.held.as_deref_mut()?;
        let inner = &self.session.inner;
        if worker.as_mut().is_none_or(Worker::ended) {
            inner.sessions.make_room_for_a_worker(&inner.id);
        }
        inner.had_worker.store(true, Ordering::Relaxed);
        Some(worker)
    }

    /// Says that the run has ended and is answered: a call made from now until this turn
    /// lets go of the session's (after [`settle`](Self::settle)) waits for it.
    pub(super) fn answering(&self) {
        if self.held.as_deref().is_some_and(|worker| worker.as_ref().is_some_and(Worker::saving)) {
            self.session.inner.saving.store(self.id, Ordering::Release);
        }
    }

    /// Puts in place the state the session's worker saved after the run ([`super::worker::settle`]).
    pub(super) async fn settle(&mut self) {
        let Some(worker) = self.held.as_deref_mut() else { return };
        let inner = &self.session.inner;
        super::worker::settle(worker, inner.sessions.folder(), &inner.id).await;
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        let Some(held) = self.held.take() else { return };
        let inner = &self.session.inner;
        let idle = (Mark::Idle(Instant::now()), Arc::downgrade(&inner.turn));
        inner.sessions.marks().insert(inner.id.clone(), idle);
        drop(held);
        // Once the turn is free: a call that saw this turn saving waits for it. A call that has
        // taken the turn since, and said it is saving, is left as it is.
        let _ = inner.saving.compare_exchange(self.id, NO_TURN, Ordering::AcqRel, Ordering::Relaxed);
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        // The worker first, so that it writes nothing after its state is removed.
        if let Ok(mut worker) = self.turn.try_lock() {
            *worker = None;
        }
        self.sessions.marks().remove(&self.id);
        remove_state(self.sessions.folder(), &self.id);
    }
}
