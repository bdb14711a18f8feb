//! A run on the `wasm` backend. The compiled guest loads on a thread of its own while the
//! caller builds the host; the guest then runs on another thread under an async executor, so
//! the wall-clock limit (epoch interruption plus a timeout around the call) stops CPU loops and
//! blocking waits alike, while its tool calls are served on the calling thread, which owns the
//! [`Host`] — the same catalogue, argument binding and confinement as on Monty.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, mpsc};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use wasmtime::Engine;
use wasmtime::component::Component;
use wasmtime_wasi::FsPerms;

use super::bindings::SandboxPre;
use super::cache;
use super::engine::{engine, linker};
use super::heap::{grow_heaps_in_large_steps, huge_pages_for_this_threads_heap};
use super::store::{FromGuest, GuestState, new_store};
use super::stream::MAX_STDERR;
use crate::guest::bridge::{self, Reported};
use crate::guest::loader;
use crate::guest::manifest::STDLIB_GUEST_PATH;
use crate::guest::{self, Installed};
use crate::hint;
use crate::sandbox::{Capture, GuestCache, Host, LimitHit, Outcome, ProgramError};
use crate::tools::{ErrorKind, Value};

/// How often the epoch ticks: the granularity of the wall-clock limit.
const EPOCH_TICK: Duration = Duration::from_millis(10);

/// The compiled guest, loading on a thread of its own while the caller goes on. Loading the
/// compiled code is the longest step of a warm run: `codeact run` starts it as soon as it
/// knows the backend, and meanwhile reads the program and builds the host, and the guest's
/// thread builds its store and links the host's functions.
pub(crate) struct Loading(Result<Pending>);

struct Pending {
    engine: Engine,
    installed: Installed,
    component: std::thread::JoinHandle<Result<Component>>,
    /// What the loader found in the cache, sent before it compiles anything.
    cache: mpsc::Receiver<(GuestCache, PathBuf)>,
    seen: OnceLock<Option<(GuestCache, String)>>,
}

impl Loading {
    /// Starts loading the installed guest.
    #[must_use]
    pub(crate) fn start() -> Self {
        Self::spawn(guest::installed().map_err(|missing| hint::error(missing, guest::INSTALL_HINT)))
    }

    fn spawn(installed: Result<Installed>) -> Self {
        grow_heaps_in_large_steps();
        Self(installed.and_then(|installed| {
            let engine = engine()?;
            let (for_engine, for_installed) = (engine.clone(), installed.clone());
            let (found, cache) = mpsc::channel();
            let component = std::thread::Builder::new()
                .name("wasm-load".into())
                .spawn(move || {
                    huge_pages_for_this_threads_heap();
                    let (path, status) = cache::look_up(&for_engine, &for_installed)?;
                    let _ = found.send((status, path.clone()));
                    cache::load(&for_engine, &for_installed, &path, status)
                })
                .context("failed to start loading the guest")?;
            Ok(Pending { engine, installed, component, cache, seen: OnceLock::new() })
        }))
    }

    /// Whether the compiled guest comes from the cache, and the cache file, once the loader
    /// has looked (before it compiles anything). `None` when loading failed.
    #[must_use]
    pub(crate) fn cache(&self) -> Option<(GuestCache, String)> {
        let pending = self.0.as_ref().ok()?;
        pending.seen.get_or_init(|| pending.cache.recv().ok().map(|(s, path)| (s, path.display().to_string()))).clone()
    }
}

/// Compiles the installed standard library to bytecode inside the guest (CPython 3.14's own
/// `compileall`, the only compiler whose `.pyc` it accepts), so that imports read bytecode
/// instead of compiling source on every run: `pathlib` loads in about a tenth of the time.
/// Then runs an empty program, which checks the prelude.
pub(crate) fn compile_stdlib(installed: &Installed) -> Result<()> {
    let Pending { engine, installed, component, .. } = Loading::spawn(Ok(installed.clone())).0?;
    let stdout = Arc::new(Mutex::new(Capture::new(MAX_STDERR)));
    let stderr = Arc::new(Mutex::new(Capture::new(MAX_STDERR)));
    let nonce = bridge::nonce();
    let ended = std::thread::scope(|scope| {
        let _ticker = Ticker::start(scope, &engine);
        let guest = GuestRun {
            engine: &engine,
            component,
            installed: &installed,
            code: format!(
                "import compileall\ncompileall.compile_dir({STDLIB_GUEST_PATH:?}, quiet=1)\n{}",
                loader::main_call("", "[]", false, &nonce)
            ),
            nonce: nonce.clone(),
            memory_used: Arc::default(),
            calls: None,
            stdout: &stdout,
            stderr: &stderr,
            memory: 1 << 30,
            writable_stdlib: true,
        };
        guest.run(Instant::now() + Duration::from_mins(10))
    })?;
    if ended.timed_out {
        bail!("compiling the standard library took more than 10 minutes");
    }
    if !matches!(ended.report, Reported::Report(_)) {
        bail!(
            "compiling the standard library failed: {}",
            ended.failure.unwrap_or_else(|| ended.executor_output.trim_end().to_owned())
        );
    }
    Ok(())
}

/// Advances the engine's epoch every [`EPOCH_TICK`] until dropped (and stops at once then).
struct Ticker {
    _stop: mpsc::Sender<()>,
}

impl Ticker {
    fn start<'scope>(scope: &'scope std::thread::Scope<'scope, '_>, engine: &Engine) -> Self {
        let (stop, stopped) = mpsc::channel::<()>();
        let engine = engine.clone();
        scope.spawn(move || {
            while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(EPOCH_TICK) {
                engine.increment_epoch();
            }
        });
        Self { _stop: stop }
    }
}

/// How the guest's run ended, seen from its thread.
struct Ended {
    report: Reported,
    stop: Option<LimitHit>,
    timed_out: bool,
    memory_refused: bool,
    /// A trap or host failure that is not a limit.
    failure: Option<String>,
    /// The program ended the interpreter itself (`os._exit`) with this status.
    exited: Option<i32>,
    /// What the guest's executor captured outside the prelude's streams.
    executor_output: String,
}

/// Runs `program` to completion against `host`.
///
/// The guest's memory and compiled code are left for the kernel to unmap when the process
/// exits, which it does faster than freeing them here: call this once per process.
pub(crate) fn run(program: &str, host: &mut Host, loading: Loading) -> Outcome {
    let guest_cache = loading.cache().map(|(status, _)| status);
    // The watchdog reads the output as it is written.
    let (stdout, stderr) = (host.live().stdout().clone(), host.live().stderr().clone());
    let ended = execute(program, host, loading, &stdout, &stderr);
    let ((stdout, truncated), program_stderr) = host.live().printed();
    let settled = ended
        .map_err(|err| match hint::split(&err) {
            (message, Some(hint)) => internal(&format!("{message} (hint: {hint})")),
            (message, None) => internal(&message),
        })
        .and_then(|ended| settle(ended, host));
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
        backend: "wasm",
        guest_cache,
        duration: host.elapsed(),
        tool_calls: host.tool_calls(),
    }
}

/// The last expression's `repr` and value, when the program returned one.
type Returned = Option<(Option<String>, Option<Value>)>;

/// Turns how the guest ended into what the program returned, or its error.
fn settle(ended: Ended, host: &Host) -> Result<Returned, ProgramError> {
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
            return Err(internal(&if output.is_empty() { why } else { format!("{why}\n{output}") }));
        }
    };
    let report: bridge::Report =
        serde_json::from_str(&report).map_err(|err| internal(&format!("the guest's report is not valid: {err}")))?;
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

fn internal(message: &str) -> ProgramError {
    ProgramError::internal(format!("the wasm backend failed: {message}"))
}

/// Runs the guest on its own thread and serves its tool calls on this one.
fn execute(
    program: &str,
    host: &mut Host,
    loading: Loading,
    stdout: &Arc<Mutex<Capture>>,
    stderr: &Arc<Mutex<Capture>>,
) -> Result<Ended> {
    let Pending { engine, installed, component, .. } = loading.0?;
    let nonce = bridge::nonce();
    let code = loader::main_call(program, &bridge::tool_names_json(host), bridge::mcp_functions(host), &nonce);
    let deadline = host.deadline();
    let memory = host.limits().max_memory;
    let memory_used = Arc::new(AtomicUsize::new(0));
    let (calls, messages) = mpsc::channel::<FromGuest>();
    // Waiting for the guest to load is not the program's time: the watchdog waits too.
    host.hold_clock();
    std::thread::scope(|scope| {
        let ticker = Ticker::start(scope, &engine);
        let guest = std::thread::Builder::new().name("wasm".into()).spawn_scoped(scope, || {
            let guest = GuestRun {
                engine: &engine,
                component,
                installed: &installed,
                code,
                nonce,
                memory_used: memory_used.clone(),
                calls: Some(calls),
                stdout,
                stderr,
                memory,
                writable_stdlib: false,
            };
            let ended = guest.run(deadline);
            drop(ticker);
            ended
        });
        let guest = guest.context("failed to start the guest thread")?;
        // Serve tool calls until the guest's thread lets go of its sender.
        for message in messages {
            match message {
                // Waiting for the guest to load (and, after an upgrade or a changed cache, to
                // compile) is not the program's time.
                FromGuest::Loaded { waited, deadline } => {
                    host.extend_deadline(waited);
                    let _ = deadline.send(host.deadline());
                }
                FromGuest::Call(request) => {
                    let room = memory.saturating_sub(memory_used.load(Ordering::Relaxed));
                    let reply = bridge::dispatch(host, &request.name, &request.args_json, room);
                    let _ = request.reply.send(reply);
                }
            }
        }
        guest.join().map_err(|_| anyhow::anyhow!("the guest thread panicked"))?
    })
}

/// One guest instance running one piece of code.
struct GuestRun<'a> {
    engine: &'a Engine,
    /// The compiled guest, still loading.
    component: std::thread::JoinHandle<Result<Component>>,
    installed: &'a Installed,
    /// What the guest runs: ends with the call that starts the program ([`loader::main_call`]).
    code: String,
    /// The nonce `code` passes the prelude, which its report must carry.
    nonce: String,
    /// Where the guest's linear memory is counted, for the thread serving its tool calls.
    memory_used: Arc<AtomicUsize>,
    /// Where its tool calls go; without a host, a tool call fails.
    calls: Option<mpsc::Sender<FromGuest>>,
    stdout: &'a Arc<Mutex<Capture>>,
    stderr: &'a Arc<Mutex<Capture>>,
    memory: usize,
    /// Only while `guest install` compiles the standard library to bytecode.
    writable_stdlib: bool,
}

impl GuestRun<'_> {
    /// Runs the code in one guest, once it has loaded, until `deadline` — moved on by the host
    /// for the time spent waiting for the guest to load.
    fn run(self, deadline: Instant) -> Result<Ended> {
        huge_pages_for_this_threads_heap();
        let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build()?;
        runtime.block_on(self.run_async(deadline))
    }

    async fn run_async(self, deadline: Instant) -> Result<Ended> {
        let perms = if self.writable_stdlib { FsPerms::ReadWrite } else { FsPerms::ReadOnly };
        let mut state = GuestState::new(self.installed, self.stdout, self.stderr, perms, self.memory)?;
        state.expect_report(self.nonce);
        state.count_memory_in(self.memory_used);
        if let Some(calls) = self.calls {
            state.send_calls(calls);
        }
        let mut store = new_store(self.engine, state);
        let linker = linker(self.engine);

        let waiting = Instant::now();
        let component = self.component.join().map_err(|_| anyhow::anyhow!("loading the guest panicked"))??;
        let pre = linker?
            .instantiate_pre(&component)
            .map_err(anyhow::Error::from)
            .and_then(|pre| SandboxPre::new(pre).map_err(anyhow::Error::from))
            .context("the guest does not link with the host")?;
        let waited = waiting.elapsed();
        let deadline = store.data().loaded(waited, deadline + waited).await;
        let remaining = deadline.saturating_duration_since(Instant::now());
        let call = async {
            let sandbox = pre.instantiate_async(&mut store).await?;
            store.set_epoch_deadline(1);
            let executor = sandbox.hyperlight_sandbox_executor();
            executor.call_run(&mut store, &self.code).await
        };
        let result = tokio::time::timeout(remaining, call).await;
        let (report, stop, memory_refused) = store.data_mut().finish();
        let mut ended = Ended {
            report,
            stop,
            timed_out: false,
            memory_refused,
            failure: None,
            exited: None,
            executor_output: String::new(),
        };
        // The process ends after the run: the kernel unmaps the guest's memory at exit faster
        // than dropping the store does now (no TLB shootdown per mapping while threads run).
        std::mem::forget(store);
        match result {
            Err(_) => ended.timed_out = true,
            Ok(Err(trap)) => match trap.downcast_ref::<wasmtime_wasi::I32Exit>() {
                Some(exit) => ended.exited = Some(exit.0),
                None => ended.failure = Some(format!("{:#}", anyhow::Error::from(trap))),
            },
            Ok(Ok(result)) => {
                ended.executor_output = format!("{}{}", result.stdout, result.stderr);
                // The prelude catches everything the program raises: an exception escaped it.
                if result.exit_code != 0 {
                    ended.failure = Some(format!("the prelude failed (exit code {})", result.exit_code));
                }
            }
        }
        Ok(ended)
    }
}
