//! How a guest's run ended, and the [`Outcome`] that makes: the same for every backend that
//! runs the CPython guest.

use crate::guest::bridge::{self, Reported};
use crate::hint;
use crate::sandbox::{GuestCache, Host, LimitHit, Outcome, ProgramError};
use crate::tools::{ErrorKind, Value};

/// How the guest's run ended, seen from the thread that ran it.
pub(crate) struct Ended {
    pub(crate) report: Reported,
    pub(crate) stop: Option<LimitHit>,
    pub(crate) timed_out: bool,
    pub(crate) memory_refused: bool,
    /// A trap or host failure that is not a limit.
    pub(crate) failure: Option<String>,
    /// The program ended the interpreter itself (`os._exit`) with this status.
    pub(crate) exited: Option<i32>,
    /// What the guest's executor captured outside the prelude's streams.
    pub(crate) executor_output: String,
}

impl Ended {
    /// A run that has not ended in any particular way yet.
    #[must_use]
    pub(crate) fn with_report(report: Reported) -> Self {
        Self {
            report,
            stop: None,
            timed_out: false,
            memory_refused: false,
            failure: None,
            exited: None,
            executor_output: String::new(),
        }
    }

    /// Whether the run ended as a program does, reporting how: the guest that ran it can run
    /// the next program of a session. One that passed its deadline, hit a limit of its tools,
    /// ended the interpreter, failed outside the program or sent no valid report (the program
    /// broke what the prelude reports with) cannot.
    #[must_use]
    pub(crate) fn ran_as_programs_do(&self) -> bool {
        let reported = match &self.report {
            Reported::Report(json) => serde_json::from_str::<bridge::Report>(json).is_ok(),
            Reported::Missing | Reported::Tampered => false,
        };
        reported && !self.timed_out && self.exited.is_none() && self.failure.is_none() && self.stop.is_none()
    }
}

/// What a run of a session says when its guest did not survive it
/// ([`Ended::ran_as_programs_do`]).
pub(crate) const SESSION_GUEST_ENDED: &str = "codeact: this run ended the session's interpreter, so what its programs defined is gone; the next call starts \
     afresh\n";

/// The outcome of a run on `backend` that ended as `ended` (or could not run).
pub(crate) fn outcome(
    backend: &'static str,
    host: &mut Host,
    guest_cache: Option<GuestCache>,
    ended: anyhow::Result<Ended>,
) -> Outcome {
    let ((stdout, truncated), program_stderr) = host.live().printed();
    let settled = ended
        .map_err(|err| match hint::split(&err) {
            (message, Some(hint)) => internal(backend, &format!("{message} (hint: {hint})")),
            (message, None) => internal(backend, &message),
        })
        .and_then(|ended| settle(backend, ended, host));
    let (return_repr, return_value, error) = match settled {
        Ok(Some((repr, value))) => (repr, value, None),
        Ok(None) => (None, None, None),
        Err(error) => (None, None, Some(error)),
    };
    Outcome {
        stdout,
        truncated,
        stderr: host.take_warnings() + &program_stderr,
        return_value,
        return_repr,
        error,
        backend,
        beyond_monty: None,
        fell_back: None,
        guest_cache,
        duration: host.elapsed(),
        tool_calls: host.tool_calls(),
    }
}

/// The last expression's `repr` and value, when the program returned one.
type Returned = Option<(Option<String>, Option<Value>)>;

/// Turns how the guest ended into what the program returned, or its error.
fn settle(backend: &str, ended: Ended, host: &Host) -> Result<Returned, ProgramError> {
    let limit = |hit| Err(ProgramError::plain(&host.limit_error(hit)));
    if let Some(hit) = ended.stop {
        return limit(hit);
    }
    if ended.timed_out {
        return limit(LimitHit::Time);
    }
    let report = match (ended.report, ended.exited, ended.failure) {
        (Reported::Tampered, ..) => return Err(ProgramError::internal(TAMPERED)),
        // The prelude reports, then returns: a report followed by a trap or an exit is not its.
        (_, Some(0), None) => return Ok(None),
        (_, Some(_), None) => {
            let message = "the program ended the interpreter with a failure status (os._exit)";
            return Err(ProgramError::new("SystemExit".into(), message, None, &format!("SystemExit: {message}")));
        }
        (Reported::Report(report), None, None) => report,
        (_, _, failure) => {
            if ended.memory_refused {
                return limit(LimitHit::Memory);
            }
            let why = failure.unwrap_or_else(|| "the guest ended without a result".to_owned());
            let output = ended.executor_output.trim_end();
            return Err(internal(backend, &if output.is_empty() { why } else { format!("{why}\n{output}") }));
        }
    };
    let report: bridge::Report = serde_json::from_str(&report)
        .map_err(|err| internal(backend, &format!("the guest's report is not valid: {err}")))?;
    if let Some(error) = report.error {
        let (mut message, mut traceback) = (error.message, error.traceback);
        if error.kind == ErrorKind::Memory.python_name() && ended.memory_refused {
            message = host.limit_error(LimitHit::Memory).message;
            traceback = format!("{}MemoryError: {message}", traceback.trim_end_matches("MemoryError\n"));
        }
        return Err(ProgramError::new(error.kind, &message, error.line, &traceback));
    }
    // The value travels as JSON text of its own: one nested deeper than the host's JSON reader
    // goes (128 levels) is returned as its repr, like any value without a JSON form.
    let value = report.value.map(|text| match serde_json::from_str(&text) {
        Ok(json) => Value::from_json(&json),
        Err(_) => Value::Opaque(report.repr.clone().unwrap_or_default()),
    });
    Ok(Some((report.repr, value)))
}

/// The error of a run whose program sent a report of its own.
const TAMPERED: &str = "the program called `__codeact_report` itself; codeact does not trust the result it reported";

fn internal(backend: &str, message: &str) -> ProgramError {
    ProgramError::internal(format!("the {backend} backend failed: {message}"))
}
