//! The `wasm` backend: full CPython 3.14, the guest component, under wasmtime. This is the only
//! file that names `wasmtime` items.
//!
//! The guest gets WASI 0.2 with nothing but the standard library, read-only at `/python`: no
//! other files, an empty environment, no sockets, and wasi:http answered by a hook that denies
//! every request. Its `tools.dispatch` import reaches the run's [`Host`] — the same registry,
//! argument binding and confinement as on Monty — over a channel: the guest runs on its own
//! thread under an async executor, so the wall-clock limit (epoch interruption plus a timeout
//! around the call) stops CPU loops and blocking waits alike, while the tools run on the
//! calling thread. Memory is capped by a store limiter summing every linear memory.
//!
//! The component is compiled once into a user-only cache file keyed by wasmtime's
//! compatibility hash, the component's SHA-256 and the prelude's, with a record of the file's
//! digest and metadata beside it: a file that changed since it was written is checked against
//! its digest and recompiled when it does not match — never loaded. What is compiled is a
//! snapshot of the component with codeact's prelude already loaded (see [`loader`]).

use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex, mpsc};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, anyhow, bail};
use wasmtime::component::{Component, HasSelf, Instance, Lift, Linker, ResourceTable, WasmList};
use wasmtime::{Config, Engine, OptLevel, ResourceLimiter, Store};
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamResult};
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpHooks, WasiHttpView};

use crate::guest::bridge::{self, Reply};
use crate::guest::loader;
use crate::guest::{self, Installed, write_private};
use crate::output;
use crate::sandbox::{Capture, Host, LimitHit, Outcome, ProgramError};
use crate::tools::Value;

wasmtime::component::bindgen!({
    path: "src/backend/wasm/sandbox.wit",
    world: "sandbox",
    imports: { default: async | trappable },
    exports: { default: async },
});

/// The wasmtime version compiled in.
pub const WASMTIME_VERSION: &str = "48.0.8";

/// How often the epoch ticks: the granularity of the wall-clock limit.
const EPOCH_TICK: Duration = Duration::from_millis(10);

/// The guest's native stack.
const WASM_STACK: usize = 8 << 20;

/// Bytes of the program's stderr kept.
const MAX_STDERR: usize = 64 * 1024;

// ------------------------------------------------------------------------------------ engine

fn engine() -> Result<Engine> {
    engine_with(OptLevel::Speed)
}

fn engine_with(optimisation: OptLevel) -> Result<Engine> {
    let mut config = Config::new();
    config.cranelift_opt_level(optimisation);
    config.wasm_component_model(true);
    config.epoch_interruption(true);
    // Deep C recursion (repr or json of deeply nested data) must reach CPython's own guard,
    // a catchable RecursionError, before the wasm stack runs out and kills the instance.
    config.max_wasm_stack(WASM_STACK);
    config.async_stack_size(WASM_STACK + (1 << 20));
    // Neither is used (no native unwinding through guest frames, no wasm bytecode offsets in
    // trap messages); without them the compiled guest is 3 MB smaller and loads faster.
    config.native_unwind_info(false);
    config.generate_address_map(false);
    Engine::new(&config).map_err(|err| anyhow!("failed to start wasmtime: {err}"))
}

/// The compiled component's cache file for this engine and guest.
fn cache_file(engine: &Engine, installed: &Installed) -> Result<PathBuf> {
    use std::hash::{DefaultHasher, Hash as _, Hasher as _};
    let mut hasher = DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut hasher);
    let dir =
        guest::cache_dir().context("cannot tell where to cache the compiled guest: set HOME or XDG_CACHE_HOME")?;
    let (guest, prelude) = (&installed.manifest.wasm_sha256, loader::digest());
    Ok(dir.join("wasm").join(format!(
        "python-sandbox-{:016x}-{}-{}.cwasm",
        hasher.finish(),
        &guest[..guest.len().min(16)],
        &prelude[..16]
    )))
}

/// What was recorded about a cache file when it was written.
#[derive(Debug, serde::Serialize, serde::Deserialize, PartialEq, Eq)]
struct Seal {
    sha256: String,
    len: u64,
    ino: u64,
    mtime_ns: i128,
    ctime_ns: i128,
}

impl Seal {
    fn of(meta: &std::fs::Metadata, sha256: String) -> Self {
        Self {
            sha256,
            len: meta.len(),
            ino: meta.ino(),
            mtime_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
            ctime_ns: i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec()),
        }
    }

    fn path(cache: &Path) -> PathBuf {
        cache.with_extension("cwasm.seal")
    }
}

/// Whether the cache file is the one this program wrote: its metadata is unchanged since, or
/// failing that, its contents still have the recorded digest.
fn sealed(cache: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(Seal::path(cache)) else { return false };
    let Ok(seal) = serde_json::from_str::<Seal>(&text) else { return false };
    let Ok(meta) = std::fs::symlink_metadata(cache) else { return false };
    if !meta.is_file() {
        return false;
    }
    if Seal::of(&meta, seal.sha256.clone()) == seal {
        return true;
    }
    let Ok(bytes) = std::fs::read(cache) else { return false };
    if guest::sha256_hex(&bytes) != seal.sha256 {
        return false;
    }
    // Same contents, new metadata (copied, touched): record the new metadata.
    let _ = write_seal(cache, seal.sha256);
    true
}

fn write_seal(cache: &Path, sha256: String) -> Result<()> {
    let meta = std::fs::metadata(cache)?;
    write_private(&Seal::path(cache), serde_json::to_string(&Seal::of(&meta, sha256))?.as_bytes())
}

/// Compiles the guest component into the cache, replacing whatever is there.
pub fn precompile(installed: &Installed) -> Result<PathBuf> {
    let engine = engine()?;
    compile_into_cache(&engine, installed)
}

fn compile_into_cache(engine: &Engine, installed: &Installed) -> Result<PathBuf> {
    let cache = cache_file(engine, installed)?;
    let wasm =
        std::fs::read(installed.wasm()).with_context(|| format!("failed to read {}", installed.wasm().display()))?;
    if guest::sha256_hex(&wasm) != installed.manifest.wasm_sha256 {
        bail!(
            "{} does not match its recorded SHA-256\nhint: reinstall it with `{}`",
            installed.wasm().display(),
            guest::INSTALL_HINT
        );
    }
    let snapshot = snapshot(installed, &wasm)?;
    let compiled =
        engine.precompile_component(&snapshot).map_err(|err| anyhow!("failed to compile the guest: {err}"))?;
    write_private(&cache, &compiled).with_context(|| format!("failed to write {}", cache.display()))?;
    write_seal(&cache, guest::sha256_hex(&compiled)).with_context(|| format!("failed to seal {}", cache.display()))?;
    Ok(cache)
}

/// The guest component with the prelude loaded, as a new component: the guest runs
/// [`loader::init_code`] and its state is snapshotted.
fn snapshot(installed: &Installed, wasm: &[u8]) -> Result<Vec<u8>> {
    // The instrumented component runs once, for a few milliseconds: compiling it without
    // optimisation saves seconds.
    let engine = &engine_with(OptLevel::None)?;
    // The initialisation is called below, through the bindings, not by Wizer: no export is
    // renamed or dropped from the snapshot.
    let mut wizer = wasmtime_wizer::Wizer::new();
    wizer.keep_init_func(true);
    let (context, instrumented) =
        wizer.instrument_component(wasm).map_err(|err| anyhow!("failed to prepare the guest's snapshot: {err}"))?;
    let component = Component::new(engine, &instrumented)
        .map_err(|err| anyhow!("failed to compile the guest for its snapshot: {err}"))?;
    let stderr = Arc::new(Mutex::new(Capture::new(MAX_STDERR)));
    let mut state = GuestState::new(installed, &stderr, &stderr, FsPerms::ReadOnly, 1 << 30)?;
    state.serve_prelude = true;
    let mut store = new_store(engine, state);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build()?;
    runtime.block_on(async {
        let instance =
            linker(engine)?.instantiate_async(&mut store, &component).await.map_err(|err| anyhow!("{err}"))?;
        let sandbox = Sandbox::new(&mut store, &instance).map_err(|err| anyhow!("{err}"))?;
        let init = loader::init_code();
        let loaded = sandbox
            .hyperlight_sandbox_executor()
            .call_run(&mut store, &init)
            .await
            .map_err(|err| anyhow!("loading the prelude into the guest failed: {err:#}"))?;
        let output = format!("{}{}{}", loaded.stdout, loaded.stderr, take(&stderr).finish().0);
        if loaded.exit_code != 0 || !output.trim().is_empty() {
            bail!("loading the prelude into the guest failed:\n{}", output.trim_end());
        }
        if !store.data().table.is_empty() {
            bail!("the guest kept a host resource while loading the prelude; it cannot be snapshotted");
        }
        let mut state = Snapshotted { store: &mut store, instance, failure: None };
        let snapshot = wizer.snapshot_component(&context, &mut state).await;
        if let Some(err) = state.failure {
            bail!("failed to read the guest's state for its snapshot: {err}");
        }
        snapshot.map_err(|err| anyhow!("failed to snapshot the guest: {err}"))
    })
}

/// Reads an initialised guest's state through the functions the snapshot's instrumentation
/// exports. The first failure is kept (the reads cannot return one) and fails the snapshot.
struct Snapshotted<'a> {
    store: &'a mut Store<GuestState>,
    instance: Instance,
    failure: Option<wasmtime::Error>,
}

impl Snapshotted<'_> {
    async fn call<R: Lift + Send + Sync + 'static>(&mut self, instance: &str, func: &str) -> Option<R> {
        let result = async {
            let (_, exports) = self
                .instance
                .get_export(&mut *self.store, None, instance)
                .ok_or_else(|| wasmtime::Error::msg(format!("no export {instance}")))?;
            let (_, index) = self
                .instance
                .get_export(&mut *self.store, Some(&exports), func)
                .ok_or_else(|| wasmtime::Error::msg(format!("no export {instance}#{func}")))?;
            let func = self.instance.get_typed_func::<(), (R,)>(&mut *self.store, index)?;
            Ok::<_, wasmtime::Error>(func.call_async(&mut *self.store, ()).await?.0)
        };
        match result.await {
            Ok(value) => Some(value),
            Err(err) => {
                self.failure.get_or_insert(err);
                None
            }
        }
    }
}

impl wasmtime_wizer::ComponentInstanceState for Snapshotted<'_> {
    async fn call_func_ret_list_u8(&mut self, instance: &str, func: &str, contents: impl FnOnce(&[u8]) + Send) {
        if let Some(list) = self.call::<WasmList<u8>>(instance, func).await {
            contents(list.as_le_slice(&*self.store));
        }
    }

    async fn call_func_ret_s32(&mut self, instance: &str, func: &str) -> i32 {
        self.call(instance, func).await.unwrap_or_default()
    }

    async fn call_func_ret_s64(&mut self, instance: &str, func: &str) -> i64 {
        self.call(instance, func).await.unwrap_or_default()
    }

    async fn call_func_ret_f32(&mut self, instance: &str, func: &str) -> u32 {
        self.call::<f32>(instance, func).await.unwrap_or_default().to_bits()
    }

    async fn call_func_ret_f64(&mut self, instance: &str, func: &str) -> u64 {
        self.call::<f64>(instance, func).await.unwrap_or_default().to_bits()
    }
}

/// The compiled component, compiling it first when the cache is missing or was changed.
fn component(engine: &Engine, installed: &Installed) -> Result<Component> {
    let cache = cache_file(engine, installed)?;
    if !sealed(&cache) {
        if cache.exists() {
            output::warning(&format!("{} changed since codeact wrote it; compiling the guest again", cache.display()));
        } else {
            output::diagnostic("codeact: compiling the CPython guest for this machine (once; under a minute)…");
        }
        compile_into_cache(engine, installed)?;
    }
    // The file is user-only, was written by this program for this engine (wasmtime checks the
    // header and the compatibility hash), and its seal was checked just above.
    #[expect(unsafe_code, reason = "loading precompiled code is unsafe by definition in wasmtime")]
    // SAFETY: see above; the file is not modified while mapped by this short-lived process.
    let component = unsafe { Component::deserialize_file(engine, &cache) };
    component.map_err(|err| anyhow!("failed to load {}: {err}", cache.display()))
}

/// The compiled guest, loading on a thread of its own while the caller goes on. Loading the
/// compiled code is the longest step of a warm run: `codeact run` starts it as soon as it
/// knows the backend, and meanwhile reads the program and builds the host, and the guest's
/// thread builds its store and links the host's functions.
pub struct Loading(Result<Started>);

struct Started {
    engine: Engine,
    installed: Installed,
    component: std::thread::JoinHandle<Result<Component>>,
}

impl Loading {
    /// Starts loading the installed guest.
    #[must_use]
    pub fn start() -> Self {
        Self::spawn(guest::installed().map_err(|err| anyhow!("{err}\nhint: {}", guest::INSTALL_HINT)))
    }

    fn spawn(installed: Result<Installed>) -> Self {
        grow_heaps_in_large_steps();
        Self(installed.and_then(|installed| {
            let engine = engine()?;
            let (for_engine, for_installed) = (engine.clone(), installed.clone());
            let component = std::thread::Builder::new()
                .name("wasm-load".into())
                .spawn(move || {
                    huge_pages_for_this_threads_heap();
                    component(&for_engine, &for_installed)
                })
                .map_err(|err| anyhow!("failed to start loading the guest: {err}"))?;
            Ok(Started { engine, installed, component })
        }))
    }
}

/// Lets every malloc arena grow in steps of 8 MiB. Loading the guest allocates megabytes of
/// metadata on its own thread, whose arena would otherwise be made usable a few pages at a
/// time, one system call each (about 250 per run). Only address space is reserved: a page is
/// still backed when it is first touched.
fn grow_heaps_in_large_steps() {
    #[cfg(target_env = "gnu")]
    #[expect(unsafe_code, reason = "mallopt is a C function")]
    // SAFETY: mallopt only changes glibc's allocator settings, under the allocator's own lock.
    unsafe {
        libc::mallopt(libc::M_TOP_PAD, 8 << 20);
    }
}

/// Asks for transparent huge pages in the calling thread's malloc heap, as glibc's
/// `glibc.malloc.hugetlb=1` tunable does for every heap. Loading and instantiating the guest
/// fill a few megabytes of fresh heap: page by page that is about 830 page faults a run (over
/// 2 ms on a virtual machine, where one costs about 3 µs), in 2 MiB pages a handful. The
/// first 2 MiB, which glibc has already touched, are collapsed into one huge page. Where the
/// kernel has no free huge page (or transparent huge pages are off) the heap keeps small pages.
///
/// Only for a thread arena: glibc maps each one on its own, aligned to its maximum size, so
/// the arena is found from any block it handed out. The main heap (below the program break)
/// is left alone.
fn huge_pages_for_this_threads_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
    {
        /// glibc's `HEAP_MAX_SIZE` on 64-bit targets.
        const ARENA: usize = 64 << 20;
        let block = Box::new(0_u8);
        let address = std::ptr::from_ref::<u8>(std::hint::black_box(&block)).addr();
        #[expect(unsafe_code, reason = "sbrk and madvise are C functions")]
        // SAFETY: sbrk(0) only reads the program break. Neither madvise changes memory contents
        // or protections (a collapse copies small pages into a huge one); both fail harmlessly
        // on unmapped parts.
        unsafe {
            if address >= libc::sbrk(0).addr() {
                let arena = std::ptr::without_provenance_mut::<libc::c_void>(address & !(ARENA - 1));
                libc::madvise(arena, ARENA, libc::MADV_HUGEPAGE);
                libc::madvise(arena, 2 << 20, libc::MADV_COLLAPSE);
            }
        }
    }
}

/// WASI 0.2, wasi:http (every request denied) and the `tools` interface.
fn linker(engine: &Engine) -> Result<Linker<GuestState>> {
    let mut linker: Linker<GuestState> = Linker::new(engine);
    wasmtime_wasi::p2::add_to_linker_async(&mut linker).map_err(|err| anyhow!("{err}"))?;
    wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker).map_err(|err| anyhow!("{err}"))?;
    hyperlight::sandbox::tools::add_to_linker::<GuestState, HasSelf<GuestState>>(&mut linker, |s| s)
        .map_err(|err| anyhow!("{err}"))?;
    Ok(linker)
}

/// Compiles the installed standard library to bytecode inside the guest (CPython 3.14's own
/// `compileall`, the only compiler whose `.pyc` it accepts), so that imports read bytecode
/// instead of compiling source on every run: `pathlib` loads in about a tenth of the time.
/// Then runs an empty program, which checks the prelude.
pub fn compile_stdlib(installed: &Installed) -> Result<()> {
    let Started { engine, installed, component } = Loading::spawn(Ok(installed.clone())).0?;
    let (calls, _messages) = mpsc::channel::<FromGuest>();
    let stdout = Arc::new(Mutex::new(Capture::new(MAX_STDERR)));
    let stderr = Arc::new(Mutex::new(Capture::new(MAX_STDERR)));
    let ended = std::thread::scope(|scope| {
        let _ticker = Ticker::start(scope, &engine);
        let guest = GuestRun {
            engine: &engine,
            component,
            installed: &installed,
            code: format!(
                "import compileall\ncompileall.compile_dir({:?}, quiet=1)\n{}",
                guest::STDLIB_GUEST_PATH,
                loader::main_call("", "[]", false)
            ),
            calls,
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
    if ended.report.is_none() {
        bail!(
            "compiling the standard library failed: {}",
            ended.failure.unwrap_or_else(|| ended.executor_output.trim_end().to_owned())
        );
    }
    Ok(())
}

// ------------------------------------------------------------------------------------ store

/// What the guest's thread tells the thread that owns the [`Host`].
enum FromGuest {
    /// The guest has loaded, after this long waiting for it.
    Loaded(Duration),
    /// A tool call.
    Call(Request),
}

/// A tool call handed to the thread that owns the [`Host`].
struct Request {
    name: String,
    args_json: String,
    reply: tokio::sync::oneshot::Sender<Reply>,
}

struct GuestState {
    wasi: WasiCtx,
    table: ResourceTable,
    http: WasiHttpCtx,
    deny_http: DenyHttp,
    memory: MemoryCap,
    /// Taken when the run ends, which ends the host's loop serving tool calls.
    calls: Option<mpsc::Sender<FromGuest>>,
    /// Only while the snapshot is made: [`loader::FETCH`] is answered with the prelude.
    serve_prelude: bool,
    report: Option<String>,
    stop: Option<LimitHit>,
}

impl GuestState {
    /// A guest's state: WASI with nothing but the standard library mounted, output into
    /// `stdout` and `stderr`, `memory` bytes of linear memory, and no tool calls served yet.
    fn new(
        installed: &Installed,
        stdout: &Arc<Mutex<Capture>>,
        stderr: &Arc<Mutex<Capture>>,
        stdlib: FsPerms,
        memory: usize,
    ) -> Result<Self> {
        let mut wasi = WasiCtx::builder();
        wasi.allow_tcp(false).allow_udp(false).allow_ip_name_lookup(false);
        // File reads of the standard library on this thread, not a blocking pool: imports
        // take half the time, and nothing else runs meanwhile anyway.
        wasi.allow_blocking_current_thread(true);
        wasi.stdout(CaptureStream(stdout.clone())).stderr(CaptureStream(stderr.clone()));
        wasi.preopened_dir(installed.stdlib(), guest::STDLIB_GUEST_PATH, stdlib)
            .map_err(|err| anyhow!("failed to mount the standard library: {err}"))?;
        Ok(Self {
            wasi: wasi.build(),
            table: ResourceTable::new(),
            http: WasiHttpCtx::new(),
            deny_http: DenyHttp,
            memory: MemoryCap { limit: memory, used: 0, refused: false },
            calls: None,
            serve_prelude: false,
            report: None,
            stop: None,
        })
    }
}

/// A store for one guest, its memory capped, yielding to the executor at every epoch tick.
fn new_store(engine: &Engine, state: GuestState) -> Store<GuestState> {
    let mut store = Store::new(engine, state);
    store.limiter(|s| &mut s.memory);
    store.epoch_deadline_async_yield_and_update(1);
    store.set_epoch_deadline(1);
    store
}

impl WasiView for GuestState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
}

impl WasiHttpView for GuestState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView { ctx: &mut self.http, table: &mut self.table, hooks: &mut self.deny_http }
    }
}

/// Every outgoing wasi:http request is refused: the guest reaches the network only through
/// the `web_fetch` tool and its policy.
struct DenyHttp;

type HttpResult<T> = std::result::Result<T, wasmtime_wasi_http::Error>;
type Sent = (http::Response<wasmtime_wasi_http::WasiBody>, Box<dyn Future<Output = HttpResult<()>> + Send>);

impl WasiHttpHooks for DenyHttp {
    fn send_request(
        &mut self,
        _request: http::Request<wasmtime_wasi_http::WasiBody>,
        _options: Option<wasmtime_wasi_http::RequestOptions>,
        _fut: Box<dyn Future<Output = HttpResult<()>> + Send>,
    ) -> Box<dyn Future<Output = HttpResult<Sent>> + Send> {
        Box::new(async { Err(wasmtime_wasi_http::Error::HttpRequestDenied) })
    }
}

/// Caps the sum of all linear memories: a refused growth is a `MemoryError` in Python.
struct MemoryCap {
    limit: usize,
    used: usize,
    refused: bool,
}

impl ResourceLimiter for MemoryCap {
    fn memory_growing(&mut self, current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        let grow = desired.saturating_sub(current);
        if self.used.saturating_add(grow) > self.limit {
            self.refused = true;
            return Ok(false);
        }
        self.used += grow;
        Ok(true)
    }

    fn table_growing(&mut self, _current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        Ok(desired <= 1 << 20)
    }
}

impl hyperlight::sandbox::tools::Host for GuestState {
    async fn dispatch(
        &mut self,
        name: String,
        args_json: String,
    ) -> wasmtime::Result<std::result::Result<String, String>> {
        if self.serve_prelude && name == loader::FETCH {
            return Ok(Ok(guest::PRELUDE.to_owned()));
        }
        if name == bridge::REPORT {
            self.report = Some(args_json);
            return Ok(Ok("null".to_owned()));
        }
        let (reply, answer) = tokio::sync::oneshot::channel();
        self.calls
            .as_ref()
            .ok_or_else(|| wasmtime::Error::msg("the run has ended"))?
            .send(FromGuest::Call(Request { name, args_json, reply }))
            .map_err(|_| wasmtime::Error::msg("the host stopped serving tool calls"))?;
        match answer.await.map_err(|_| wasmtime::Error::msg("the host dropped a tool call"))? {
            Reply::Return(json) => Ok(Ok(json)),
            Reply::Raise(message) => Ok(Err(message)),
            Reply::Stop(hit) => {
                self.stop = Some(hit);
                Err(wasmtime::Error::msg("run limit reached"))
            }
        }
    }
}

/// The guest's stdout or stderr, kept within a budget as it is written.
#[derive(Clone)]
struct CaptureStream(Arc<Mutex<Capture>>);

impl CaptureStream {
    fn writer(&self) -> CaptureWriter {
        CaptureWriter { capture: self.0.clone(), pending: Vec::new() }
    }
}

impl IsTerminal for CaptureStream {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for CaptureStream {
    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        Box::new(self.writer())
    }

    /// Writes straight into the capture: always ready, nothing to flush, and no task between
    /// the guest and the capture for every `print`.
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.writer())
    }
}

/// Feeds bytes to a [`Capture`], holding back an incomplete UTF-8 sequence at the end.
struct CaptureWriter {
    capture: Arc<Mutex<Capture>>,
    pending: Vec<u8>,
}

impl CaptureWriter {
    /// The most one write may carry (what `check-write` grants).
    const PERMIT: usize = 64 * 1024;

    fn push(&mut self, buf: &[u8]) {
        self.pending.extend_from_slice(buf);
        let valid = match std::str::from_utf8(&self.pending) {
            Ok(text) => text.len(),
            Err(err) if err.error_len().is_none() => err.valid_up_to(),
            Err(_) => self.pending.len(),
        };
        let chunk: Vec<u8> = self.pending.drain(..valid).collect();
        if let Ok(mut capture) = self.capture.lock() {
            capture.push(&String::from_utf8_lossy(&chunk));
        }
    }
}

impl tokio::io::AsyncWrite for CaptureWriter {
    fn poll_write(mut self: Pin<&mut Self>, _: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        self.push(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

impl OutputStream for CaptureWriter {
    fn write(&mut self, bytes: bytes::Bytes) -> StreamResult<()> {
        self.push(&bytes);
        Ok(())
    }

    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        Ok(Self::PERMIT)
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for CaptureWriter {
    async fn ready(&mut self) {}
}

// ------------------------------------------------------------------------------------ run

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
    report: Option<String>,
    stop: Option<LimitHit>,
    timed_out: bool,
    memory_refused: bool,
    /// A trap or host failure that is not a limit.
    failure: Option<String>,
    /// What the guest's executor captured outside the prelude's streams.
    executor_output: String,
}

/// Runs `program` to completion against `host`.
///
/// The guest's memory and compiled code are left for the kernel to unmap when the process
/// exits, which it does faster than freeing them here: call this once per process.
pub fn run(program: &str, host: &mut Host, loading: Loading) -> Outcome {
    host.python = Some(crate::backend::monty::run_tool);
    let stdout = Arc::new(Mutex::new(Capture::new(host.limits.max_output)));
    let stderr = Arc::new(Mutex::new(Capture::new(MAX_STDERR)));
    let ended = execute(program, host, loading, &stdout, &stderr);
    let (stdout, truncated) = take(&stdout).finish();
    let (program_stderr, _) = take(&stderr).finish();
    let mut outcome = Outcome {
        stdout,
        truncated,
        stderr: String::new(),
        return_value: None,
        return_repr: None,
        error: None,
        backend: "wasm",
        duration: Duration::ZERO,
        tool_calls: host.tool_calls,
    };
    match ended {
        Err(err) => outcome.error = Some(internal(&format!("{err:#}"))),
        Ok(ended) => settle(&mut outcome, ended, host),
    }
    let mut stderr_text = std::mem::take(&mut host.ctx.stderr);
    stderr_text.push_str(&program_stderr);
    outcome.stderr = stderr_text;
    outcome.duration = host.started.elapsed();
    outcome
}

fn take(capture: &Arc<Mutex<Capture>>) -> Capture {
    let mut guard = capture.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    std::mem::replace(&mut *guard, Capture::new(0))
}

/// Turns how the guest ended into the outcome's value or error.
fn settle(outcome: &mut Outcome, ended: Ended, host: &Host) {
    let limit = |hit| {
        let (kind, message) = host.limit_message(hit);
        ProgramError {
            kind: kind.to_owned(),
            message: message.clone(),
            line: None,
            traceback: format!("{kind}: {message}"),
        }
    };
    if let Some(hit) = ended.stop {
        outcome.error = Some(limit(hit));
        return;
    }
    if ended.timed_out {
        outcome.error = Some(limit(LimitHit::Time));
        return;
    }
    let Some(report) = ended.report else {
        let why = ended.failure.unwrap_or_else(|| "the guest ended without a result".to_owned());
        outcome.error = Some(if ended.memory_refused {
            limit(LimitHit::Memory)
        } else {
            internal(&format!(
                "{why}{}",
                if ended.executor_output.is_empty() {
                    String::new()
                } else {
                    format!("\n{}", ended.executor_output.trim_end())
                }
            ))
        });
        return;
    };
    let report: bridge::Report = match serde_json::from_str(&report) {
        Ok(report) => report,
        Err(err) => {
            outcome.error = Some(internal(&format!("the guest's report is not valid: {err}")));
            return;
        }
    };
    if let Some(error) = report.error {
        let mut error =
            ProgramError { kind: error.kind, message: error.message, line: error.line, traceback: error.traceback };
        if error.kind == "MemoryError" && ended.memory_refused {
            let (_, message) = host.limit_message(LimitHit::Memory);
            error.traceback = format!("{}MemoryError: {message}", error.traceback.trim_end_matches("MemoryError\n"));
            error.message = message;
        }
        outcome.error = Some(error);
        return;
    }
    outcome.return_repr = report.repr;
    outcome.return_value = report.value.as_ref().map(Value::from_json);
}

fn internal(message: &str) -> ProgramError {
    ProgramError {
        kind: "RuntimeError".to_owned(),
        message: format!("the wasm backend failed: {message}"),
        line: None,
        traceback: format!("RuntimeError: the wasm backend failed: {message}"),
    }
}

/// Runs the guest on its own thread and serves its tool calls on this one.
fn execute(
    program: &str,
    host: &mut Host,
    loading: Loading,
    stdout: &Arc<Mutex<Capture>>,
    stderr: &Arc<Mutex<Capture>>,
) -> Result<Ended> {
    let Started { engine, installed, component } = loading.0?;
    let code = loader::main_call(program, &bridge::tool_names_json(host), bridge::mcp_functions(host));
    let deadline = host.ctx.deadline;
    let memory = host.limits.max_memory;
    let (calls, messages) = mpsc::channel::<FromGuest>();
    std::thread::scope(|scope| {
        let ticker = Ticker::start(scope, &engine);
        let guest = std::thread::Builder::new().name("wasm".into()).spawn_scoped(scope, || {
            let guest = GuestRun {
                engine: &engine,
                component,
                installed: &installed,
                code,
                calls,
                stdout,
                stderr,
                memory,
                writable_stdlib: false,
            };
            let ended = guest.run(deadline);
            drop(ticker);
            ended
        });
        let guest = guest.map_err(|err| anyhow!("failed to start the guest thread: {err}"))?;
        // Serve tool calls until the guest's thread lets go of its sender.
        for message in messages {
            match message {
                // Waiting for the guest to load (and, after an upgrade or a changed cache, to
                // compile) is not the program's time.
                FromGuest::Loaded(waited) => host.ctx.deadline += waited,
                FromGuest::Call(request) => {
                    let reply = bridge::dispatch(host, &request.name, &request.args_json);
                    let _ = request.reply.send(reply);
                }
            }
        }
        guest.join().map_err(|_| anyhow!("the guest thread panicked"))?
    })
}

struct GuestRun<'a> {
    engine: &'a Engine,
    /// The compiled guest, still loading.
    component: std::thread::JoinHandle<Result<Component>>,
    installed: &'a Installed,
    /// What the guest runs: ends with the call that starts the program ([`loader::main_call`]).
    code: String,
    calls: mpsc::Sender<FromGuest>,
    stdout: &'a Arc<Mutex<Capture>>,
    stderr: &'a Arc<Mutex<Capture>>,
    memory: usize,
    /// Only while `guest install` compiles the standard library to bytecode.
    writable_stdlib: bool,
}

impl GuestRun<'_> {
    /// Runs the code in one guest, once it has loaded. The wait for it extends `deadline`.
    fn run(self, deadline: Instant) -> Result<Ended> {
        huge_pages_for_this_threads_heap();
        let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build()?;
        runtime.block_on(self.run_async(deadline))
    }

    async fn run_async(self, deadline: Instant) -> Result<Ended> {
        let perms = if self.writable_stdlib { FsPerms::ReadWrite } else { FsPerms::ReadOnly };
        let mut state = GuestState::new(self.installed, self.stdout, self.stderr, perms, self.memory)?;
        state.calls = Some(self.calls);
        let mut store = new_store(self.engine, state);
        let linker = linker(self.engine);

        let waiting = Instant::now();
        let component = self.component.join().map_err(|_| anyhow!("loading the guest panicked"))??;
        let pre = SandboxPre::new(linker?.instantiate_pre(&component).map_err(|err| anyhow!("{err}"))?)
            .map_err(|err| anyhow!("{err}"))?;
        let waited = waiting.elapsed();
        if let Some(calls) = &store.data().calls {
            let _ = calls.send(FromGuest::Loaded(waited));
        }
        let remaining = (deadline + waited).saturating_duration_since(Instant::now());
        let call = async {
            let sandbox = pre.instantiate_async(&mut store).await?;
            store.set_epoch_deadline(1);
            let executor = sandbox.hyperlight_sandbox_executor();
            executor.call_run(&mut store, &self.code).await
        };
        let result = tokio::time::timeout(remaining, call).await;
        let state = store.data_mut();
        state.calls = None;
        let mut ended = Ended {
            report: state.report.take(),
            stop: state.stop.take(),
            timed_out: false,
            memory_refused: state.memory.refused,
            failure: None,
            executor_output: String::new(),
        };
        // The process ends after the run: the kernel unmaps the guest's memory at exit faster
        // than dropping the store does now (no TLB shootdown per mapping while threads run).
        std::mem::forget(store);
        match result {
            Err(_) => ended.timed_out = true,
            Ok(Err(trap)) => ended.failure = Some(format!("{trap:#}")),
            Ok(Ok(result)) => {
                ended.executor_output = format!("{}{}", result.stdout, result.stderr);
            }
        }
        Ok(ended)
    }
}
