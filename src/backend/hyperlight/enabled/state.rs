//! [`Guest`]: what one micro-VM's guest can reach through its imports, and [`Shared`], what
//! the host learns from it while it runs (its report, a limit a tool call hit, its exit).

use std::sync::{Arc, Mutex};
use std::time::Instant;

use hyperlight_host::hypervisor::InterruptHandle;

use super::bindings::r#hyperlight::r#sandbox::Tools;
use crate::guest::bridge::{self, Reply, Reported, Reports};
use crate::guest::loader;
use crate::guest::serve::ToHost;
use crate::sandbox::LimitHit;
use crate::sandbox::capture::Outlet;
use crate::sandbox::live::lock;

/// The host side of one guest: every import of the runtime's world is implemented on it.
pub(crate) struct Guest {
    pub(super) stdout: Outlet,
    pub(super) stderr: Outlet,
    /// The standard library, read-only.
    pub(super) stdlib: Arc<cap_std::fs::Dir>,
    pub(super) shared: Arc<Shared>,
}

/// What the host and the guest's imports share while it runs.
#[derive(Default)]
pub(super) struct Shared(Mutex<State>);

#[derive(Default)]
struct State {
    /// Where tool calls go; without it, a tool call fails.
    calls: Option<ToHost>,
    /// Only while the snapshot is made: [`loader::FETCH`] is answered with the prelude.
    serve_prelude: bool,
    reports: Reports,
    stop: Option<LimitHit>,
    exited: Option<i32>,
    /// When the run must end; waits in the guest end there.
    deadline: Option<Instant>,
    /// Stops the guest's vCPU.
    interrupt: Option<Arc<dyn InterruptHandle>>,
}

/// What the host learnt from a run.
pub(super) struct Learnt {
    pub(super) report: Reported,
    pub(super) stop: Option<LimitHit>,
    pub(super) exited: Option<i32>,
}

impl Shared {
    pub(super) fn serve_prelude(&self) {
        lock(&self.0).serve_prelude = true;
    }

    /// Sends tool calls on `calls`, expects the prelude's report with `nonce`, and ends waits
    /// at `deadline`, stopping the guest through `interrupt` when a tool call hits a limit.
    pub(super) fn start(
        &self,
        calls: Option<ToHost>,
        nonce: String,
        deadline: Instant,
        interrupt: Arc<dyn InterruptHandle>,
    ) {
        let mut state = lock(&self.0);
        state.calls = calls;
        state.reports = Reports::expecting(nonce);
        state.deadline = Some(deadline);
        state.interrupt = Some(interrupt);
    }

    /// Ends the run: tool calls are no longer served.
    pub(super) fn finish(&self) -> Learnt {
        let mut state = lock(&self.0);
        state.calls = None;
        Learnt { report: state.reports.take(), stop: state.stop.take(), exited: state.exited.take() }
    }

    fn deadline(&self) -> Option<Instant> {
        lock(&self.0).deadline
    }

    /// A tool call or a wait hit `hit`: the run ends there.
    fn stop(&self, hit: LimitHit) {
        self.end(|state| state.stop = Some(hit));
    }

    /// Records with `record` why the run ends, and stops the guest's vCPU.
    fn end(&self, record: impl FnOnce(&mut State)) {
        let mut state = lock(&self.0);
        record(&mut state);
        if let Some(interrupt) = &state.interrupt {
            interrupt.kill();
        }
    }
}

impl Guest {
    /// The program ended the interpreter (`exit` or `os._exit`) with `status`: the guest is
    /// stopped, as the `wasm` backend's trap stops it.
    pub(super) fn exited(&mut self, status: i32) {
        self.shared.end(|state| state.exited = Some(status));
    }

    /// Waits until `when` (`None`: forever), but not past the run's deadline: a wait that
    /// reaches it ends the run there.
    pub(super) fn wait_until(&self, when: Option<Instant>) {
        let deadline = self.shared.deadline();
        let until = match (when, deadline) {
            (Some(when), Some(deadline)) => when.min(deadline),
            (Some(when), None) => when,
            (None, Some(deadline)) => deadline,
            (None, None) => return,
        };
        if let Some(wait) = until.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        if deadline.is_some_and(|deadline| when.is_none_or(|when| when >= deadline)) {
            self.shared.stop(LimitHit::Time);
        }
    }
}

impl Tools<hyperlight_common::component::Negative> for Guest {
    fn dispatch(&mut self, name: String, args_json: String) -> Result<String, String> {
        let calls = {
            let mut state = lock(&self.shared.0);
            if state.serve_prelude && name == loader::FETCH {
                return Ok(loader::PRELUDE.to_owned());
            }
            if name == bridge::REPORT {
                state.reports.receive(&args_json);
                return Ok("null".to_owned());
            }
            state.calls.clone()
        };
        let Some(calls) = calls else { return Err("tools are not available here".to_owned()) };
        let Some(answer) = calls.call(name, args_json) else { return Err("the run has ended".to_owned()) };
        match answer.blocking_recv() {
            Ok(Reply::Return(json)) => Ok(json),
            Ok(Reply::Raise(message)) => Err(message),
            Ok(Reply::Stop(hit)) => {
                self.shared.stop(hit);
                Err("run limit reached".to_owned())
            }
            Err(_) => Err("the host dropped a tool call".to_owned()),
        }
    }
}
