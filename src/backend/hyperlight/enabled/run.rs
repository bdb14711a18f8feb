//! A run on the `hyperlight` backend. The guest runs on a thread of its own, in a micro-VM
//! restored from the prepared snapshot (made first when there is none); its tool calls are
//! served on the calling thread, which owns the [`Host`]. At the deadline a timer stops the
//! vCPU; waits the guest asks the host for end there too.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use hyperlight_host::hypervisor::InterruptHandle;

use super::cache;
use super::sandbox::IO_BUFFER_SIZE;
use super::sandbox::{MicroVm, Wiring, load_snapshot, save_snapshot};
use super::state::Shared;
use crate::guest::bridge;
use crate::guest::ended::{self, Ended};
use crate::guest::serve;
use crate::guest::{self, Installed, loader};
use crate::hint;
use crate::sandbox::capture::Outlet;
use crate::sandbox::live::lock;
use crate::sandbox::{Capture, GuestCache, Host, Outcome};

/// How often a stopped guest is told again to stop, until its thread returns (a stop that
/// arrives while the guest is in a host function takes effect on its next instruction).
const KILL_AGAIN: Duration = Duration::from_millis(20);

/// How much of the executor's own output is kept for error messages.
const MAX_EXECUTOR_OUTPUT: usize = 64 << 10;

/// The installed guest, with the `hyperlight` files checked.
pub(crate) fn installed() -> Result<Installed> {
    let installed = guest::installed().map_err(|missing| hint::error(missing, guest::INSTALL_HINT))?;
    installed.hyperlight().map_err(|missing| hint::error(missing, guest::INSTALL_HINT))?;
    #[cfg(windows)]
    if !super::probe::hypervisor_present() {
        return Err(super::probe::no_hypervisor());
    }
    Ok(installed)
}

/// Runs `program` to completion against `host`.
pub(crate) fn run(program: &str, host: &mut Host) -> Outcome {
    let mut guest_cache = None;
    let ended = Session::new().and_then(|mut once| once.execute(program, host, false, &mut guest_cache));
    ended::outcome("hyperlight", host, guest_cache, ended)
}

/// A micro-VM kept from one program to the next, for a session of `codeact mcp serve`: what a
/// program defines stays for the next, as in a REPL. Each program has its own host, deadline,
/// report nonce and output; the guest's heap is the memory limit, so a program with another
/// limit starts a fresh one. A program that does not end as programs do (it passed its
/// deadline, hit a limit of its tools, or exited the interpreter) ends the micro-VM with it,
/// and the next program starts a fresh one.
pub(crate) struct Session {
    installed: Installed,
    wiring: Wiring,
    kept: Option<Kept>,
}

/// A micro-VM that has run a session's programs, and its heap.
struct Kept {
    vm: MicroVm,
    heap: u64,
}

impl Session {
    /// A session of the installed guest; its micro-VM starts with its first program.
    pub(crate) fn new() -> Result<Self> {
        let nowhere = Arc::new(Mutex::new(Capture::new(0)));
        let wiring = Wiring { stdout: Outlet::new(&nowhere), stderr: Outlet::new(&nowhere), shared: Arc::default() };
        Ok(Self { installed: installed()?, wiring, kept: None })
    }

    /// Runs `program` against `host` in the session's micro-VM.
    pub(crate) fn run_in(&mut self, program: &str, host: &mut Host) -> Outcome {
        let mut guest_cache = None;
        let had = self.kept.as_ref().map(|kept| kept.heap);
        let ended = self.execute(program, host, true, &mut guest_cache);
        let mut outcome = ended::outcome("hyperlight", host, guest_cache, ended);
        let heap = self.kept.as_ref().map(|kept| kept.heap);
        if heap.is_none() {
            outcome.stderr.push_str(ended::SESSION_GUEST_ENDED);
        } else if had.is_some() && had != heap {
            outcome.stderr.push_str(
                "codeact: the memory limit changed, so this run started a fresh interpreter without what the \
                 session's earlier programs defined\n",
            );
        }
        outcome
    }

    /// Runs the guest on its own thread and serves its tool calls on this one; keeps the
    /// micro-VM for the next program when `keep` and the program ended as programs do.
    fn execute(
        &mut self,
        program: &str,
        host: &mut Host,
        keep: bool,
        guest_cache: &mut Option<GuestCache>,
    ) -> Result<Ended> {
        let nonce = crate::digest::nonce();
        let (tools, mcp) = (bridge::tool_names_json(host), bridge::mcp_functions(host));
        let code = if keep {
            loader::session_call(program, &tools, mcp, &nonce)
        } else {
            loader::main_call(program, &tools, mcp, &nonce)
        };
        let heap = u64::try_from(host.limits().max_memory).unwrap_or(u64::MAX);
        self.wiring.stdout.point_at(host.live().stdout());
        self.wiring.stderr.point_at(host.live().stderr());
        let Self { installed, wiring, kept } = self;
        let shared = wiring.shared.clone();
        let (to_host, messages) = serve::channel();
        // Preparing the guest is not the program's time: the watchdog waits too.
        host.hold_clock();
        let (cache_status, ended) = std::thread::scope(|scope| {
            let guest = std::thread::Builder::new().name("hyperlight".into()).spawn_scoped(scope, move || {
                let started = Instant::now();
                let (mut loaded, status) = match kept.take() {
                    Some(Kept { vm, heap: same }) if same == heap => (vm, None),
                    _ => prepare(installed, heap, wiring.clone()).map(|(vm, status)| (vm, Some(status)))?,
                };
                let answer = to_host.loaded(started.elapsed());
                let deadline = answer.and_then(|answer| answer.blocking_recv().ok()).unwrap_or_else(Instant::now);
                let interrupt = loaded.interrupt();
                shared.start(Some(to_host), nonce, deadline, interrupt.clone());
                let done = AtomicBool::new(false);
                let ran = std::thread::scope(|scope| {
                    scope.spawn(|| stop_at(deadline, &done, interrupt.as_ref()));
                    let ran = loaded.run(&code);
                    done.store(true, Ordering::Release);
                    ran
                });
                let learnt = shared.finish();
                let mut ended = Ended { stop: learnt.stop, exited: learnt.exited, ..Ended::with_report(learnt.report) };
                match ran {
                    Ok((output, status)) => {
                        ended.executor_output = output;
                        if status != 0 {
                            ended.failure = Some(format!("the prelude failed (exit code {status})"));
                        }
                    }
                    Err(err) if ended.stop.is_none() && ended.exited.is_none() => {
                        if Instant::now() >= deadline {
                            ended.timed_out = true;
                        } else {
                            let message = format!("{err:#}");
                            // The guest's allocator ran out of its heap, which is the memory limit.
                            ended.memory_refused = message.contains("Out of physical memory");
                            ended.failure = Some(message);
                        }
                    }
                    Err(_) => {}
                }
                if keep && ended.ran_as_programs_do() {
                    *kept = Some(Kept { vm: loaded, heap });
                }
                anyhow::Ok((status, ended))
            });
            let guest = guest.context("failed to start the guest thread")?;
            // A result comes into the guest through its input buffer.
            serve::serve(host, &messages, || IO_BUFFER_SIZE - (64 << 10));
            guest.join().map_err(|_| anyhow::anyhow!("the guest thread panicked"))?
        })?;
        *guest_cache = cache_status;
        Ok(ended)
    }
}

/// A guest ready to run with `wiring`: restored from the sealed snapshot, or booted,
/// prepared and snapshotted first when there is none (or it changed).
fn prepare(installed: &Installed, heap: u64, wiring: Wiring) -> Result<(MicroVm, GuestCache)> {
    let dir = cache::snapshot_dir(installed, heap)?;
    let status = if !dir.exists() {
        GuestCache::Compiled
    } else if cache::sealed(&dir) {
        // A snapshot this build cannot load (another hypervisor, a CPU of another vendor) is
        // made again.
        if let Ok(snapshot) = load_snapshot(&dir, cache::TAG) {
            return Ok((MicroVm::restore(installed, snapshot, wiring)?, GuestCache::Hit));
        }
        GuestCache::Recompiled
    } else {
        GuestCache::Recompiled
    };
    let snapshot = make_snapshot(installed, heap)?;
    cache::store(&dir, |staging| save_snapshot(&snapshot, staging, cache::TAG))?;
    Ok((MicroVm::restore(installed, snapshot, wiring)?, status))
}

/// Boots a guest, loads the prelude into it (only then is its fetch answered) and snapshots it.
fn make_snapshot(
    installed: &Installed,
    heap: u64,
) -> Result<std::sync::Arc<hyperlight_host::sandbox::snapshot::Snapshot>> {
    let output = Arc::new(Mutex::new(Capture::new(MAX_EXECUTOR_OUTPUT)));
    let shared = Arc::new(Shared::default());
    shared.serve_prelude();
    let outlet = Outlet::new(&output);
    let wiring = Wiring { stdout: outlet.clone(), stderr: outlet, shared: shared.clone() };
    let mut loaded = MicroVm::boot(installed, heap, wiring)?;
    let (executor_output, status) =
        loaded.run(&loader::init_code()).context("loading the prelude into the guest failed")?;
    let printed = std::mem::replace(&mut *lock(&output), Capture::new(0)).finish().0;
    let all = format!("{executor_output}{printed}");
    if status != 0 || !all.trim().is_empty() {
        bail!("loading the prelude into the guest failed:\n{}", all.trim_end());
    }
    loaded.snapshot()
}

/// Stops the guest at `deadline`, and again every [`KILL_AGAIN`] until `done`.
fn stop_at(deadline: Instant, done: &AtomicBool, interrupt: &dyn InterruptHandle) {
    while !done.load(Ordering::Acquire) {
        let now = Instant::now();
        if now >= deadline {
            interrupt.kill();
            std::thread::sleep(KILL_AGAIN);
        } else {
            std::thread::sleep((deadline - now).min(KILL_AGAIN));
        }
    }
}
