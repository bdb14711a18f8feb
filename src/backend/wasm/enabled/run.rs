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
use wasmtime::component::Component;
use wasmtime::{Engine, Store};
use wasmtime_wasi::FsPerms;

use super::bindings::exports::hyperlight::sandbox::executor::ExecutionResult;
use super::bindings::{Sandbox, SandboxPre};
use super::cache;
use super::engine::{engine, linker};
use super::heap::{grow_heaps_in_large_steps, huge_pages_for_this_threads_heap};
use super::store::{GuestState, new_store};
use super::stream::{CaptureStream, MAX_STDERR};
use crate::guest::bridge::{self, Reported};
use crate::guest::ended::{self, Ended};
use crate::guest::loader;
use crate::guest::manifest::STDLIB_GUEST_PATH;
use crate::guest::serve::{self, ToHost};
use crate::guest::{self, Installed};
use crate::hint;
use crate::sandbox::{Capture, GuestCache, Host, Outcome};

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
    let nonce = crate::digest::nonce();
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

/// Runs `program` to completion against `host`.
///
/// The guest's memory and compiled code are left for the kernel to unmap when the process
/// exits, which it does faster than freeing them here: call this once per process.
pub(crate) fn run(program: &str, host: &mut Host, loading: Loading) -> Outcome {
    let guest_cache = loading.cache().map(|(status, _)| status);
    // The watchdog reads the output as it is written.
    let (stdout, stderr) = (host.live().stdout().clone(), host.live().stderr().clone());
    let ended = execute(program, host, loading, &stdout, &stderr);
    ended::outcome("wasm", host, guest_cache, ended)
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
    let nonce = crate::digest::nonce();
    let code = loader::main_call(program, &bridge::tool_names_json(host), bridge::mcp_functions(host), &nonce);
    let deadline = host.deadline();
    let memory = host.limits().max_memory;
    let memory_used = Arc::new(AtomicUsize::new(0));
    let (calls, messages) = serve::channel();
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
        // Serve tool calls until the guest's thread lets go of its end.
        serve::serve(host, &messages, || memory.saturating_sub(memory_used.load(Ordering::Relaxed)));
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
    calls: Option<ToHost>,
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
        let (stdout, stderr) = (CaptureStream::new(self.stdout), CaptureStream::new(self.stderr));
        let mut state = GuestState::new(self.installed, stdout, stderr, perms, self.memory)?;
        state.expect_report(self.nonce);
        state.count_memory_in(self.memory_used);
        if let Some(calls) = self.calls {
            state.send_calls(calls);
        }
        let mut store = new_store(self.engine, state);
        let linker = linker(self.engine);

        let waiting = Instant::now();
        let pre = link(linker, self.component)?;
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
        let ended = ended_with(&mut store, result);
        // The process ends after the run: the kernel unmaps the guest's memory at exit faster
        // than dropping the store does now (no TLB shootdown per mapping while threads run).
        std::mem::forget(store);
        Ok(ended)
    }
}

/// The guest, once `component` has loaded, linked with the host's functions by `linker`.
fn link(
    linker: Result<wasmtime::component::Linker<GuestState>>,
    component: std::thread::JoinHandle<Result<Component>>,
) -> Result<SandboxPre<GuestState>> {
    let component = component.join().map_err(|_| anyhow::anyhow!("loading the guest panicked"))??;
    linker?
        .instantiate_pre(&component)
        .map_err(anyhow::Error::from)
        .and_then(|pre| SandboxPre::new(pre).map_err(anyhow::Error::from))
        .context("the guest does not link with the host")
}

/// What the executor's `run` answers, or why it did not.
type Called = std::result::Result<wasmtime::Result<ExecutionResult>, tokio::time::error::Elapsed>;

/// How a guest's run ended, from what its call gave (`Err` when it passed its deadline) and
/// what its store saw.
fn ended_with(store: &mut Store<GuestState>, result: Called) -> Ended {
    let (report, stop, memory_refused) = store.data_mut().finish();
    let mut ended = Ended { stop, memory_refused, ..Ended::with_report(report) };
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
    ended
}

/// A guest kept from one program to the next, for a session of `codeact mcp serve`: what a
/// program defines (variables, functions, imports) stays for the next, as in a REPL. Each
/// program has its own host, deadline, memory limit, report nonce and output; the memory the
/// guest holds counts against each program's limit. A program that does not end as programs
/// do (it passed its deadline, hit a limit of its tools, or exited the interpreter) ends the
/// guest with it, and the next program starts a fresh one.
pub(crate) struct Session {
    /// One executor for the session, so that what the guest waits on outlives each program.
    runtime: tokio::runtime::Runtime,
    guest: Guest,
}

/// A session's guest, and what it is made from.
struct Guest {
    engine: Engine,
    installed: Installed,
    /// The compiled guest: loading until the first program, then linked.
    component: Linking,
    kept: Option<Kept>,
    /// The guest's linear memory, counted for the thread that serves its tool calls.
    memory_used: Arc<AtomicUsize>,
    stdout: CaptureStream,
    stderr: CaptureStream,
}

enum Linking {
    Loading(std::thread::JoinHandle<Result<Component>>),
    Linked(SandboxPre<GuestState>),
    Failed,
}

/// A guest that has run a session's programs.
struct Kept {
    store: Store<GuestState>,
    sandbox: Sandbox,
}

impl Session {
    /// A session of the installed guest, which starts loading now.
    pub(crate) fn new() -> Result<Self> {
        let Pending { engine, installed, component, .. } = Loading::start().0?;
        let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build()?;
        let nowhere = Arc::new(Mutex::new(Capture::new(0)));
        let guest = Guest {
            engine,
            installed,
            component: Linking::Loading(component),
            kept: None,
            memory_used: Arc::default(),
            stdout: CaptureStream::new(&nowhere),
            stderr: CaptureStream::new(&nowhere),
        };
        Ok(Self { runtime, guest })
    }

    /// Runs `program` against `host` in the session's guest.
    pub(crate) fn run_in(&mut self, program: &str, host: &mut Host) -> Outcome {
        // The watchdog reads the output as it is written.
        self.guest.stdout.point_at(host.live().stdout());
        self.guest.stderr.point_at(host.live().stderr());
        let ended = self.execute(program, host);
        let mut outcome = ended::outcome("wasm", host, None, ended);
        if self.guest.kept.is_none() {
            outcome.stderr.push_str(ended::SESSION_GUEST_ENDED);
        }
        outcome
    }

    /// Runs the guest on its own thread and serves its tool calls on this one.
    fn execute(&mut self, program: &str, host: &mut Host) -> Result<Ended> {
        let nonce = crate::digest::nonce();
        let code = loader::session_call(program, &bridge::tool_names_json(host), bridge::mcp_functions(host), &nonce);
        let deadline = host.deadline();
        let memory = host.limits().max_memory;
        let (calls, messages) = serve::channel();
        let loading = matches!(self.guest.component, Linking::Loading(_));
        // Waiting for the guest to load is not the program's time: the watchdog waits too.
        if loading {
            host.hold_clock();
        }
        let engine = self.guest.engine.clone();
        let memory_used = Arc::clone(&self.guest.memory_used);
        let run = Run { code, nonce, calls, memory, deadline, loading };
        std::thread::scope(|scope| {
            let ticker = Ticker::start(scope, &engine);
            let guest = std::thread::Builder::new().name("wasm".into()).spawn_scoped(scope, || {
                huge_pages_for_this_threads_heap();
                let ended = self.runtime.block_on(self.guest.run(run));
                drop(ticker);
                ended
            });
            let guest = guest.context("failed to start the guest thread")?;
            serve::serve(host, &messages, || memory.saturating_sub(memory_used.load(Ordering::Relaxed)));
            guest.join().map_err(|_| anyhow::anyhow!("the guest thread panicked"))?
        })
    }
}

impl Guest {
    /// The guest, linked once it has loaded.
    fn linked(&mut self) -> Result<SandboxPre<GuestState>> {
        if matches!(self.component, Linking::Loading(_))
            && let Linking::Loading(component) = std::mem::replace(&mut self.component, Linking::Failed)
        {
            self.component = Linking::Linked(link(linker(&self.engine), component)?);
        }
        match &self.component {
            Linking::Linked(pre) => Ok(pre.clone()),
            Linking::Loading(_) | Linking::Failed => bail!("the guest could not be loaded"),
        }
    }

    /// Runs one program in the kept guest, or a fresh one; keeps the guest when the program
    /// ended as programs do.
    async fn run(&mut self, run: Run) -> Result<Ended> {
        let Run { code, nonce, calls, memory, deadline, loading } = run;
        let waiting = Instant::now();
        let pre = self.linked()?;
        let waited = waiting.elapsed();
        let (mut store, mut sandbox) = if let Some(Kept { store, sandbox }) = self.kept.take() {
            (store, Some(sandbox))
        } else {
            let (stdout, stderr) = (self.stdout.clone(), self.stderr.clone());
            let mut state = GuestState::new(&self.installed, stdout, stderr, FsPerms::ReadOnly, memory)?;
            self.memory_used.store(0, Ordering::Relaxed);
            state.count_memory_in(Arc::clone(&self.memory_used));
            (new_store(&self.engine, state), None)
        };
        let state = store.data_mut();
        state.expect_report(nonce);
        state.send_calls(calls);
        state.limit_memory(memory);
        let deadline = if loading { store.data().loaded(waited, deadline + waited).await } else { deadline };
        let remaining = deadline.saturating_duration_since(Instant::now());
        let call = async {
            let instance = match sandbox.take() {
                Some(instance) => instance,
                None => pre.instantiate_async(&mut store).await?,
            };
            store.set_epoch_deadline(1);
            let instance = sandbox.insert(instance);
            instance.hyperlight_sandbox_executor().call_run(&mut store, &code).await
        };
        let result = tokio::time::timeout(remaining, call).await;
        let ended = ended_with(&mut store, result);
        let ran_as_programs_do = ended.ran_as_programs_do();
        if let Some(sandbox) = sandbox.filter(|_| ran_as_programs_do) {
            self.kept = Some(Kept { store, sandbox });
        }
        Ok(ended)
    }
}

/// One program of a session, as [`Guest::run`] runs it.
struct Run {
    /// What the guest runs ([`loader::session_call`]).
    code: String,
    /// The nonce `code` passes the prelude, which its report must carry.
    nonce: String,
    calls: ToHost,
    memory: usize,
    deadline: Instant,
    /// Whether the guest is still loading: the first program's.
    loading: bool,
}
