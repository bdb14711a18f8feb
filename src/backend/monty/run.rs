//! A Monty run: the interpreter's pause/resume loop. Every call of a name the program did not
//! define pauses the interpreter and reaches [`Host::call`]; `open()`, `pathlib` and
//! `os.getenv` pause as OS calls, of which only read-only file access inside the workspace is
//! served ([`super::os`]). The wall-clock
//! deadline is re-armed at every pause (Monty's own clock stops while the host works), and the
//! loop runs on a thread with a large stack so deep recursion ends in `RecursionError`, not a
//! crash. Inside one long operation (a big-integer power) only the run's watchdog sees the
//! deadline pass.
//!
//! Memory is counted by `monty-alloc` while the interpreter runs, at three levels:
//! - The limit itself is Monty's: its interpreter compares the live bytes with `--max-memory`
//!   every few hundred instructions and before large allocations, and raises `MemoryError`,
//!   which ends the run with its report.
//! - Between two of those checks a list or dict may double its storage, and one native
//!   operation (splitting a long string) may allocate without bound. Past [`watch_line`] the
//!   run's watchdog ends the run with the same `MemoryError` report.
//! - The allocator's own ceiling, which ends the process at once and loses the report, is set
//!   far above both ([`ceiling`]), for one huge allocation Monty did not check first.
//!
//! A tool's result is refused before it is converted when it cannot fit in what is left of the
//! limit.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use monty::{MontyRepl, MontyRun, ReplStartError};
use monty_types::{
    BASELINE_MEMORY, CompileOptions, ExcType, ExtFunctionResult, LIVE_MEMORY, MontyException, MontyObject,
    NameLookupResult, OsPolicy, PrintWriter, ResourceLimits, ResourceTracker, SleepMode,
};

use super::convert::{Shape, call_arguments, from_value, python_repr, to_value};
use super::error::{SCRIPT_NAME, beyond_monty, compile_error, exception, limit_exception, runtime_error, summary};
use super::os::os_call;
use super::pause::{Call, Fed, Flow, Lookup, Once, Pause as _, Stage};
use super::printer::Printer;
use crate::sandbox::live::MemoryProbe;
use crate::sandbox::{Capture, Dispatch, Host, LimitHit, Outcome, ProgramError, memory};
use crate::tools::{ErrorKind, ToolError, Value};

/// Stack for the interpreter thread: deep recursion must reach `RecursionError` first.
const STACK_BYTES: usize = 256 * 1024 * 1024;

/// Room above twice the limit before the watchdog ends the run (see [`watch_line`]).
const WATCH_HEADROOM: usize = 64 * 1024 * 1024;

/// Room above three times the limit before the allocator ends the process (see [`ceiling`]).
const CEILING_HEADROOM: usize = 256 * 1024 * 1024;

/// The interpreter memory past which the watchdog ends the run; 0 while the limit is off.
static WATCH_LINE: AtomicUsize = AtomicUsize::new(0);

/// The Monty version compiled in.
pub(crate) const VERSION: &str = monty_types::MONTY_VERSION;

/// The first syntax problem in `code` as Monty parses it: (1-based line, message).
#[must_use]
pub(crate) fn syntax_error(code: &str) -> Option<(usize, String)> {
    let exc = MontyRun::new(code.to_owned(), SCRIPT_NAME, Vec::new(), CompileOptions::default()).err()?;
    let line = exc.traceback().last().map_or(1, |f| f.start.line as usize);
    Some((line, exc.summary()))
}

/// Runs `program` to completion against `host`.
pub(crate) fn run(program: &str, host: &mut Host) -> Outcome {
    // The watchdog reads the output as it is printed.
    let (stdout, stderr) = (host.live().stdout().clone(), host.live().stderr().clone());
    let result = on_interpreter_thread(|| execute(program, host, &stdout, &stderr));
    outcome(result, host)
}

thread_local! {
    /// Whether this thread has the interpreter's stack ([`with_interpreter_thread`]).
    static INTERPRETER_THREAD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `work` on a thread with a large stack, so that deep recursion ends in `RecursionError`,
/// not a crash (on this thread when it is such a thread already); `None` when the thread could
/// not start or `work` panicked.
fn on_interpreter_thread<T: Send>(work: impl FnOnce() -> T + Send) -> Option<T> {
    let result = if INTERPRETER_THREAD.get() {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)).ok()
    } else {
        with_interpreter_thread(work)
    };
    disarm_memory();
    result
}

/// Runs `work` on a thread of its own with the interpreter's stack, where the programs it runs
/// on Monty run without a thread each: a session's worker runs all of its programs so.
pub(crate) fn with_interpreter_thread<T: Send>(work: impl FnOnce() -> T + Send) -> Option<T> {
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("monty".into())
            .stack_size(STACK_BYTES)
            .spawn_scoped(scope, || {
                INTERPRETER_THREAD.set(true);
                work()
            })
            .ok()
            .and_then(|thread| thread.join().ok())
    })
}

/// The outcome of a program that ended with `result` (`None`: the interpreter stopped).
fn outcome(result: Option<Result<MontyObject, Failed>>, host: &mut Host) -> Outcome {
    let mut beyond_monty = None;
    let (return_value, return_repr, error) = match result {
        Some(Ok(value)) if value.as_ref().type_name() == "NoneType" => (None, None, None),
        Some(Ok(value)) => match Shape::of_object(&value).refusal(host.limits().max_memory) {
            None => (Some(to_value(value.as_ref())), Some(python_repr(value)), None),
            Some(why) => {
                let message = format!("the program's result cannot be returned: {why}; print what you need of it");
                (
                    None,
                    None,
                    Some(ProgramError::new("MemoryError".into(), &message, None, &format!("MemoryError: {message}"))),
                )
            }
        },
        Some(Err(failed)) => {
            beyond_monty = failed.beyond_monty;
            (None, None, Some(failed.error))
        }
        None => (None, None, Some(ProgramError::internal("the interpreter stopped unexpectedly"))),
    };
    let ((stdout, truncated), program_stderr) = host.live().printed();
    Outcome {
        stdout,
        truncated,
        stderr: host.take_warnings() + &program_stderr,
        return_value,
        return_repr,
        error,
        backend: "monty",
        beyond_monty,
        fell_back: None,
        guest_cache: None,
        duration: host.elapsed(),
        tool_calls: host.tool_calls(),
    }
}

/// A session's interpreter state: the variables, functions and imports of the programs run
/// in it so far, kept for the next.
pub(crate) struct Session {
    /// `None` until the first program (and after a program the interpreter could not go on
    /// from, which starts the session afresh).
    repl: Option<MontyRepl>,
}

impl Session {
    /// A session that has run nothing.
    #[must_use]
    pub(crate) fn new() -> Self {
        Self { repl: None }
    }

    /// Starts the memory count of the programs' interpreter here: what is allocated from now
    /// on, the state a session loads included, counts against their limit. Called before the
    /// state is read.
    pub(crate) fn count_memory_from_here() {
        disarm_memory();
    }

    /// The session [`dump`](Self::dump) saved in `state`, which must be codeact's own, unchanged
    /// (`crate::session` seals it): the interpreter trusts what it loads.
    pub(crate) fn load(state: &[u8]) -> Result<Self, String> {
        let dump = monty::Dump::load(state).map_err(|err| format!("{err:?}"))?;
        match dump.state {
            monty::Session::Idle(repl) => Ok(Self { repl: Some(*repl) }),
            monty::Session::Suspended(_) | monty::Session::Running(_) => {
                Err("it holds a program that had not ended".into())
            }
        }
    }

    /// The session's state, for [`load`](Self::load).
    pub(crate) fn dump(&self) -> Result<Vec<u8>, String> {
        let fresh;
        let repl = if let Some(repl) = &self.repl {
            repl
        } else {
            fresh = new_repl();
            &fresh
        };
        monty::dump(SCRIPT_NAME, None, &[], monty::SessionRef::Idle(repl)).map_err(|err| err.to_string())
    }
}

/// A session's interpreter before its first program, with the clock, randomness and sleeping
/// of [`os_policy`].
fn new_repl() -> MontyRepl {
    MontyRepl::new(SCRIPT_NAME, ResourceTracker::default(), CompileOptions::default()).with_os_policy(os_policy())
}

/// Runs `program` in `session`, against `host`: what it defines stays for the next program.
/// The limits are this program's own; the state the session already holds counts against its
/// memory.
pub(crate) fn run_in(session: &mut Session, program: &str, host: &mut Host) -> Outcome {
    let (stdout, stderr) = (host.live().stdout().clone(), host.live().stderr().clone());
    let repl = session.repl.take();
    let result = on_interpreter_thread(|| feed(repl, program, host, &stdout, &stderr)).map(|(repl, result)| {
        session.repl = repl;
        result
    });
    outcome(result, host)
}

/// Compiles and drives the program; runs on the interpreter thread.
fn execute(
    program: &str,
    host: &mut Host,
    stdout: &Mutex<Capture>,
    stderr: &Mutex<Capture>,
) -> Result<MontyObject, Failed> {
    let runner = compile(program.to_owned(), SCRIPT_NAME, Vec::new(), host).map_err(|exc| Failed {
        error: compile_error(&exc, program),
        // Monty parses as CPython does: a syntax error is the program's own.
        beyond_monty: (exc.exc_type() != ExcType::SyntaxError).then(|| summary(&exc)),
    })?;
    drive(runner, Vec::new(), host, Printer::new(stdout, stderr))
}

/// Feeds `program` to the session `repl` (a new one when `None`) and drives it; runs on the
/// interpreter thread. The session comes back however the program ends.
fn feed(
    repl: Option<MontyRepl>,
    program: &str,
    host: &mut Host,
    stdout: &Mutex<Capture>,
    stderr: &Mutex<Capture>,
) -> (Option<MontyRepl>, Result<MontyObject, Failed>) {
    let memory_armed = arm_for_run(host);
    let mut repl = repl.unwrap_or_else(new_repl);
    if let Some(root) = host.context().workspace.root().to_str() {
        repl.set_cwd(&super::os::virtual_cwd(root, cfg!(windows)));
    }
    *repl.tracker_mut() = ResourceTracker::new(run_limits(host, memory_armed));
    // Monty names each program fed to a session `<python-input-N>`; a traceback names this one
    // as a program run alone is named, and those of earlier programs by their own names.
    let this_program = format!("File \"{}\"", repl.next_script_name());
    let mut printer = Printer::new(stdout, stderr);
    let mut kept = None;
    let result = match repl.feed_start(program, Vec::new(), PrintWriter::Callback(&mut printer)) {
        // Monty parses as CPython does: a syntax error is the program's own.
        Err(failed) if failed.error.exc_type() == ExcType::SyntaxError => {
            let ReplStartError { repl, error } = *failed;
            kept = Some(repl);
            Err(Failed { error: compile_error(&error, program), beyond_monty: None })
        }
        first => drive_from::<Fed>(first, &mut kept, host, &mut printer, memory_armed),
    };
    let result = result.map_err(|mut failed| {
        failed.error.traceback = failed.error.traceback.replace(&this_program, &format!("File \"{SCRIPT_NAME}\""));
        failed
    });
    (kept, result)
}

/// Why a program did not finish on Monty.
struct Failed {
    error: ProgramError,
    /// Whether the error is one of Monty's own limits, on which CPython may run the program
    /// ([`beyond_monty`]), and for syntax Monty does not compile: Monty's own words for it.
    beyond_monty: Option<String>,
}

impl Failed {
    fn at_run_time(exc: &MontyException, host: &Host) -> Self {
        Self { error: runtime_error(exc, host), beyond_monty: beyond_monty(exc).then(|| summary(exc)) }
    }
}

/// Compiles `code` to run in the workspace: relative paths in `open()`, `pathlib` and `os` are
/// the workspace's (Monty joins them onto its working directory, a POSIX path, before the host
/// sees them: [`super::os::virtual_cwd`]),
/// and the clock, randomness and sleeping follow [`os_policy`].
fn compile(code: String, name: &str, inputs: Vec<String>, host: &Host) -> Result<MontyRun, MontyException> {
    let mut runner = MontyRun::new(code, name, inputs, CompileOptions::default())?.with_os_policy(os_policy());
    if let Some(root) = host.context().workspace.root().to_str() {
        runner.set_cwd(&super::os::virtual_cwd(root, cfg!(windows)));
    }
    Ok(runner)
}

/// The clock and randomness are the machine's, as on CPython; a sleep comes to the host
/// ([`super::os`]), which waits at most until the run's deadline, so it counts against
/// `--timeout` like everything else the program does.
fn os_policy() -> OsPolicy {
    OsPolicy { sleep: SleepMode::CallHost, ..OsPolicy::default() }
}

/// Runs the Python code of a user tool inside the sandbox: its `run` function is called with
/// `input` as keywords, with the same tools, limits and confinement as the program. What it
/// prints goes to the program's stderr.
pub(crate) fn run_tool(name: &str, code: &str, input: Value, host: &mut Host) -> Result<Value, ToolError> {
    let source = format!("{code}\nrun(**__codeact_input)");
    let runner = compile(source.clone(), &format!("<tool {name}>"), vec!["__codeact_input".into()], host)
        .map_err(|exc| ToolError::runtime(format!("{name}(): {}", compile_error(&exc, &source).message)))?;
    // What the tool prints, to either stream, goes to the program's stderr.
    let capture = Mutex::new(Capture::new(host.limits().max_output));
    let result = drive(runner, vec![from_value(input)], host, Printer::new(&capture, &capture));
    // The caller is in the middle of a tool call, with the memory limit off.
    disarm_memory();
    let (printed, _) = capture.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner).finish();
    if !printed.is_empty() {
        host.warn(printed.trim_end());
    }
    match result {
        Ok(value) => match Shape::of_object(&value).refusal(host.limits().max_memory) {
            None => Ok(to_value(value.as_ref())),
            Some(why) => {
                Err(ToolError::new(ErrorKind::Memory, format!("{name}(): its result cannot be returned: {why}")))
            }
        },
        Err(Failed { error, .. }) => {
            Err(ToolError::new(ErrorKind::from_python_name(&error.kind), format!("{name}(): {}", error.message)))
        }
    }
}

/// Drives a compiled program to completion.
fn drive(
    runner: MontyRun,
    inputs: Vec<MontyObject>,
    host: &mut Host,
    mut printer: Printer<'_>,
) -> Result<MontyObject, Failed> {
    let memory_armed = arm_for_run(host);
    let first =
        runner.start(inputs, ResourceTracker::new(run_limits(host, memory_armed)), PrintWriter::Callback(&mut printer));
    drive_from::<Once>(first, &mut (), host, &mut printer, memory_armed)
}

/// Arms the memory limit for a run; false when it cannot be (library tests).
fn arm_for_run(host: &Host) -> bool {
    let memory_armed = arm_memory(host.limits().max_memory);
    if memory_armed {
        host.live().watch_memory(MemoryProbe { exceeded: past_watch_line, release: disarm_memory });
    }
    memory_armed
}

/// The interpreter's limits for a run: a turn, the stretch between two host calls, is given
/// what is left of the run at each.
fn run_limits(host: &Host, memory_armed: bool) -> ResourceLimits {
    let limits =
        ResourceLimits::default().max_turn_duration(remaining(host)).max_recursion_depth(host.limits().max_recursion);
    if memory_armed { limits.max_memory(host.limits().max_memory) } else { limits }
}

/// Answers the pauses of a run, from its first step, until it ends.
fn drive_from<F: Flow>(
    first: F::Next,
    kept: &mut F::Kept,
    host: &mut Host,
    printer: &mut Printer<'_>,
    memory_armed: bool,
) -> Result<MontyObject, Failed> {
    let mut next = first;
    loop {
        next = match F::step(next, kept, remaining(host)).map_err(|exc| Failed::at_run_time(&exc, host))? {
            Stage::Done(value) => return Ok(value),
            Stage::Call(call) => function_call(call, host, printer, memory_armed),
            Stage::Lookup(lookup) => name_lookup(lookup, host, printer),
            Stage::Os(call) => os_call(call, host, printer),
            Stage::Futures(futures) => {
                // Every host call is answered at once, so no future is ever left pending.
                let exc =
                    MontyException::new(ExcType::RuntimeError, Some("awaited a host call that never started".into()));
                futures.abort(exc, PrintWriter::Callback(printer))
            }
        };
    }
}

fn function_call<C: Call>(mut call: C, host: &mut Host, printer: &mut Printer<'_>, memory_armed: bool) -> C::Next {
    if call.object_id().is_some() {
        let exc =
            MontyException::new(ExcType::TypeError, Some(format!("'{}' is not callable here", call.function_name())));
        return call.resume(ExtFunctionResult::Error(exc), PrintWriter::Callback(printer));
    }
    let args = call.take_args();
    let (positional, keywords) = match call_arguments(call.function_name(), &args, host.limits().max_memory) {
        Ok(arguments) => arguments,
        Err(err) => return call.resume(ExtFunctionResult::Error(exception(&err)), PrintWriter::Callback(printer)),
    };
    drop(args);
    // Tool buffers are the host's, not the program's: do not count them against its memory.
    let room = memory_left(host.limits().max_memory);
    disarm_memory();
    let answer = match host.call(call.function_name(), positional, keywords) {
        // A result that cannot fit in what is left is refused before it is copied into
        // interpreter objects, and dropped while the limit is still off.
        Dispatch::Return(value) if memory_armed && memory::estimate(&value) > room => Err(LimitHit::Memory),
        Dispatch::Return(value) => Ok(ExtFunctionResult::Return(from_value(value))),
        Dispatch::Raise(err) => Ok(ExtFunctionResult::Error(exception(&err))),
        Dispatch::Stop(hit) => Err(hit),
    };
    // The tool's own copy of its result is gone: re-armed, the limit counts what the program holds.
    if memory_armed {
        arm_memory(host.limits().max_memory);
    }
    match answer {
        Ok(result) => {
            if let Some(tracker) = call.tracker_mut() {
                tracker.set_max_turn_duration(remaining(host));
            }
            call.resume(result, PrintWriter::Callback(printer))
        }
        Err(hit) => call.abort(limit_exception(host, hit), PrintWriter::Callback(printer)),
    }
}

/// A bare reference to a tool (`f = view`) resolves to a callable; anything else is a `NameError`.
fn name_lookup<L: Lookup>(lookup: L, host: &mut Host, printer: &mut Printer<'_>) -> L::Next {
    let answer = if lookup.object_id().is_none() && host.has_tool(lookup.name()) {
        NameLookupResult::Value(MontyObject::function(lookup.name().to_owned(), None))
    } else if lookup.object_id().is_some() {
        NameLookupResult::Undefined
    } else {
        NameLookupResult::Error(exception(&host.unknown_name(lookup.name())))
    };
    lookup.resume(answer, PrintWriter::Callback(printer))
}

fn remaining(host: &Host) -> Duration {
    host.deadline().saturating_duration_since(Instant::now())
}

/// Arms `monty-alloc` for a limit of `bytes`; false when its allocator is not installed
/// (library tests). The interpreter enforces `bytes` itself; the allocator gets the
/// [`ceiling`] above it.
pub(super) fn arm_memory(bytes: usize) -> bool {
    let armed = monty_alloc::set_hard_limit(Some(ceiling(bytes))).is_ok();
    if armed {
        WATCH_LINE.store(watch_line(bytes), Ordering::Relaxed);
    }
    armed
}

/// Where the watchdog ends the run for a limit of `bytes`: twice the limit, plus room for the
/// interpreter's bookkeeping. Between two of the interpreter's checks a container grows by at
/// most its own size (a list or dict doubles its storage), and it held no more than the limit
/// at the last check, so an ordinary program reaches the next check and its own `MemoryError`.
fn watch_line(bytes: usize) -> usize {
    bytes.saturating_mul(2).saturating_add(WATCH_HEADROOM)
}

/// Where the allocator ends the process for a limit of `bytes`: well past the
/// [`watch_line`], so that the watchdog, which looks every few milliseconds, gets there first.
fn ceiling(bytes: usize) -> usize {
    bytes.saturating_mul(3).saturating_add(CEILING_HEADROOM)
}

/// Whether the interpreter holds more than the [`watch_line`] (never while the limit is off).
fn past_watch_line() -> bool {
    let line = WATCH_LINE.load(Ordering::Relaxed);
    line != 0 && memory_used() > line
}

/// What is left of a limit of `bytes`, by the allocator's count of what the interpreter holds.
fn memory_left(bytes: usize) -> usize {
    bytes.saturating_sub(memory_used())
}

/// The bytes allocated since the limit was first armed: what the interpreter holds.
fn memory_used() -> usize {
    LIVE_MEMORY.load(Ordering::Relaxed).saturating_sub(BASELINE_MEMORY.load(Ordering::Relaxed))
}

fn disarm_memory() {
    WATCH_LINE.store(0, Ordering::Relaxed);
    let _ = monty_alloc::set_hard_limit(None);
}
