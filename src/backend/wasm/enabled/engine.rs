//! The wasmtime engine and the linker every guest store uses: WASI 0.2, wasi:http (each
//! request denied by the store) and the `tools` interface.

use anyhow::{Context as _, Result};
use wasmtime::component::{HasSelf, Linker};
use wasmtime::{Config, Engine, OptLevel};

use super::bindings::hyperlight;
use super::store::GuestState;

/// The guest's native stack.
const WASM_STACK: usize = 8 << 20;

/// The engine runs use: guest code compiled for speed.
pub(super) fn engine() -> Result<Engine> {
    engine_with(OptLevel::Speed)
}

/// An engine whose compiled code is optimised `optimisation`-ly, interrupted at every epoch.
pub(super) fn engine_with(optimisation: OptLevel) -> Result<Engine> {
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
    Engine::new(&config).map_err(anyhow::Error::from).context("failed to start wasmtime")
}

/// WASI 0.2, wasi:http (every request denied) and the `tools` interface.
pub(super) fn linker(engine: &Engine) -> Result<Linker<GuestState>> {
    let mut linker: Linker<GuestState> = Linker::new(engine);
    let link = |result: wasmtime::Result<()>, what: &str| {
        result.map_err(anyhow::Error::from).with_context(|| format!("failed to link {what} into the guest"))
    };
    link(wasmtime_wasi::p2::add_to_linker_async(&mut linker), "WASI")?;
    link(wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker), "wasi:http")?;
    link(
        hyperlight::sandbox::tools::add_to_linker::<GuestState, HasSelf<GuestState>>(&mut linker, |s| s),
        "the tools",
    )?;
    Ok(linker)
}
