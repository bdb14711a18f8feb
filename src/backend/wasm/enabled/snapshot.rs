//! The guest with codeact's prelude loaded, as a new component (wasmtime's Wizer): a fresh
//! instance runs [`loader::init_code`] and its state is snapshotted, so that every run starts
//! with the prelude loaded ([`loader`] says why). The snapshot is refused when the host holds a
//! resource for the guest afterwards: a later run's host would not know it.

use std::sync::{Arc, Mutex};

use anyhow::{Context as _, Result, bail};
use wasmtime::component::{Component, Instance, Lift, WasmList};
use wasmtime::{OptLevel, Store};
use wasmtime_wasi::FsPerms;

use super::bindings::Sandbox;
use super::engine::{engine_with, linker};
use super::store::{GuestState, new_store};
use super::stream::{CaptureStream, MAX_STDERR, take};
use crate::guest::Installed;
use crate::guest::loader;
use crate::sandbox::Capture;

/// The guest component with the prelude loaded, as a new component: the guest runs
/// [`loader::init_code`] and its state is snapshotted.
pub(super) fn snapshot(installed: &Installed, wasm: &[u8]) -> Result<Vec<u8>> {
    // The instrumented component runs once, for a few milliseconds: compiling it without
    // optimisation saves seconds.
    let engine = &engine_with(OptLevel::None)?;
    // The initialisation is called below, through the bindings, not by Wizer: no export is
    // renamed or dropped from the snapshot.
    let mut wizer = wasmtime_wizer::Wizer::new();
    wizer.keep_init_func(true);
    let (context, instrumented) = wizer
        .instrument_component(wasm)
        .map_err(anyhow::Error::from)
        .context("failed to prepare the guest's snapshot")?;
    let component = Component::new(engine, &instrumented)
        .map_err(anyhow::Error::from)
        .context("failed to compile the guest for its snapshot")?;
    let stderr = Arc::new(Mutex::new(Capture::new(MAX_STDERR)));
    let mut state = GuestState::new(
        installed,
        CaptureStream::new(&stderr),
        CaptureStream::new(&stderr),
        FsPerms::ReadOnly,
        1 << 30,
    )?;
    state.serve_prelude();
    let mut store = new_store(engine, state);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build()?;
    runtime.block_on(async {
        let instance = linker(engine)?
            .instantiate_async(&mut store, &component)
            .await
            .map_err(anyhow::Error::from)
            .context("failed to start the guest for its snapshot")?;
        let sandbox = Sandbox::new(&mut store, &instance)
            .map_err(anyhow::Error::from)
            .context("the guest's exports are not as expected")?;
        let init = loader::init_code();
        let loaded = sandbox
            .hyperlight_sandbox_executor()
            .call_run(&mut store, &init)
            .await
            .map_err(anyhow::Error::from)
            .context("loading the prelude into the guest failed")?;
        let output = format!("{}{}{}", loaded.stdout, loaded.stderr, take(&stderr).finish().0);
        if loaded.exit_code != 0 || !output.trim().is_empty() {
            bail!("loading the prelude into the guest failed:\n{}", output.trim_end());
        }
        if store.data().holds_resources() {
            bail!("the guest kept a host resource while loading the prelude; it cannot be snapshotted");
        }
        let mut state = Snapshotted { store: &mut store, instance, failure: None };
        let snapshot = wizer.snapshot_component(&context, &mut state).await;
        if let Some(err) = state.failure {
            return Err(anyhow::Error::from(err).context("failed to read the guest's state for its snapshot"));
        }
        snapshot.map_err(anyhow::Error::from).context("failed to snapshot the guest")
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
