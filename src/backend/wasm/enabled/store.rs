//! A guest's store: what the guest can reach. WASI 0.2 with nothing but the standard library,
//! read-only at `/python` — no other files, an empty environment, no sockets — wasi:http
//! answered by a hook that denies every request, a limiter summing every linear memory, and the
//! `tools` import, which hands each call to the thread that owns the host.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};
use wasmtime::component::ResourceTable;
use wasmtime::{Engine, ResourceLimiter, Store};
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpHooks, WasiHttpView};

use super::bindings::hyperlight;
use super::stream::CaptureStream;
use crate::guest::Installed;
use crate::guest::bridge::{self, Reply, Reported, Reports};
use crate::guest::loader;
use crate::guest::manifest::STDLIB_GUEST_PATH;
use crate::guest::serve::ToHost;
use crate::sandbox::LimitHit;

/// One guest's host state: its WASI context and resources, its memory cap, and the channel
/// its tool calls go out on.
pub(super) struct GuestState {
    wasi: WasiCtx,
    table: ResourceTable,
    http: WasiHttpCtx,
    deny_http: DenyHttp,
    memory: MemoryCap,
    /// Taken when the run ends, which ends the host's loop serving tool calls.
    calls: Option<ToHost>,
    /// Only while the snapshot is made: [`loader::FETCH`] is answered with the prelude.
    serve_prelude: bool,
    /// What the prelude reported when the program ended (and any report the program forged).
    reports: Reports,
    /// The limit a tool call hit, which ended the run.
    stop: Option<LimitHit>,
}

impl GuestState {
    /// A guest's state: WASI with nothing but the standard library mounted, output into
    /// `stdout` and `stderr`, `memory` bytes of linear memory, and no tool calls served yet.
    pub(super) fn new(
        installed: &Installed,
        stdout: CaptureStream,
        stderr: CaptureStream,
        stdlib: FsPerms,
        memory: usize,
    ) -> Result<Self> {
        let mut wasi = WasiCtx::builder();
        wasi.allow_tcp(false).allow_udp(false).allow_ip_name_lookup(false);
        // File reads of the standard library on this thread, not a blocking pool: imports
        // take half the time, and nothing else runs meanwhile anyway.
        wasi.allow_blocking_current_thread(true);
        wasi.stdout(stdout).stderr(stderr);
        wasi.preopened_dir(installed.stdlib(), STDLIB_GUEST_PATH, stdlib)
            .map_err(anyhow::Error::from)
            .context("failed to mount the standard library")?;
        Ok(Self {
            wasi: wasi.build(),
            table: ResourceTable::new(),
            http: WasiHttpCtx::new(),
            deny_http: DenyHttp,
            memory: MemoryCap { limit: memory, used: Arc::default(), refused: false },
            calls: None,
            serve_prelude: false,
            reports: Reports::default(),
            stop: None,
        })
    }

    /// Sends the guest's tool calls on `calls` from now on.
    pub(super) fn send_calls(&mut self, calls: ToHost) {
        self.calls = Some(calls);
    }

    /// Expects the prelude's report, sent with `nonce`.
    pub(super) fn expect_report(&mut self, nonce: String) {
        self.reports = Reports::expecting(nonce);
    }

    /// Counts the bytes of linear memory the guest holds in `used`, which another thread reads.
    pub(super) fn count_memory_in(&mut self, used: Arc<AtomicUsize>) {
        self.memory.used = used;
    }

    /// Caps the guest's linear memory, all it holds already included, at `limit` bytes for the
    /// next program: the limit of each program of a kept guest is its own.
    pub(super) fn limit_memory(&mut self, limit: usize) {
        self.memory.limit = limit;
        self.memory.refused = false;
    }

    /// Answers the prelude's fetch: only while the snapshot is made.
    pub(super) fn serve_prelude(&mut self) {
        self.serve_prelude = true;
    }

    /// Tells the host the guest has loaded, after `waited`; the run's deadline, as the host
    /// moved it, or `fallback` when no host serves this guest.
    pub(super) async fn loaded(&self, waited: Duration, fallback: Instant) -> Instant {
        let Some(answer) = self.calls.as_ref().and_then(|calls| calls.loaded(waited)) else { return fallback };
        answer.await.unwrap_or(fallback)
    }

    /// Whether the host holds a resource (a file, a stream) for the guest.
    pub(super) fn holds_resources(&self) -> bool {
        !self.table.is_empty()
    }

    /// How the guest's run ended, as far as the host saw it; ends the host's loop serving
    /// tool calls.
    pub(super) fn finish(&mut self) -> (Reported, Option<LimitHit>, bool) {
        self.calls = None;
        (self.reports.take(), self.stop.take(), self.memory.refused)
    }
}

/// A store for one guest, its memory capped, yielding to the executor at every epoch tick.
pub(super) fn new_store(engine: &Engine, state: GuestState) -> Store<GuestState> {
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

/// Caps the sum of all linear memories: a refused growth is a `MemoryError` in Python. The
/// sum is shared with the thread serving tool calls, which refuses a result that cannot fit.
struct MemoryCap {
    limit: usize,
    used: Arc<AtomicUsize>,
    refused: bool,
}

impl ResourceLimiter for MemoryCap {
    fn memory_growing(&mut self, current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        let grow = desired.saturating_sub(current);
        let used = self.used.load(Ordering::Relaxed);
        if used.saturating_add(grow) > self.limit {
            self.refused = true;
            return Ok(false);
        }
        self.used.store(used + grow, Ordering::Relaxed);
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
            return Ok(Ok(loader::PRELUDE.to_owned()));
        }
        if name == bridge::REPORT {
            self.reports.receive(&args_json);
            return Ok(Ok("null".to_owned()));
        }
        let answer = self
            .calls
            .as_ref()
            .ok_or_else(|| wasmtime::Error::msg("the run has ended"))?
            .call(name, args_json)
            .ok_or_else(|| wasmtime::Error::msg("the host stopped serving tool calls"))?;
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
