//! One micro-VM running the guest runtime with the CPython component loaded: built from the
//! runtime ELF (the runtime initialised with the host's functions, the precompiled component
//! mapped copy-on-write and loaded), or restored from a snapshot of one that has the prelude
//! loaded too.

use std::path::Path;
use std::sync::{Arc, Mutex};

use anyhow::{Context as _, Result, anyhow, bail};
use hyperlight_common::flatbuffer_wrappers::host_function_definition::HostFunctionDefinition;
use hyperlight_common::flatbuffer_wrappers::host_function_details::HostFunctionDetails;
use hyperlight_host::func::{HostFunction, ParameterTuple, Registerable, SupportedReturnType};
use hyperlight_host::hypervisor::InterruptHandle;
use hyperlight_host::sandbox::SandboxConfiguration;
use hyperlight_host::sandbox::snapshot::Snapshot;
use hyperlight_host::{GuestBinary, HostFunctions, MultiUseSandbox, UninitializedSandbox};

use super::bindings::r#hyperlight::r#sandbox::Executor as _;
use super::bindings::{RootResources, RootSandbox, register_host_functions};
use super::state::{Guest, Shared};
use crate::guest::Installed;
use crate::sandbox::capture::Outlet;

/// Where the precompiled component is mapped in the guest's address space (above the
/// sandbox's own memory, as the runtime expects).
const COMPONENT_ADDRESS: u64 = 0x1_0000_0000;

/// The stack the guest's wasmtime runs CPython on.
const SCRATCH_SIZE: usize = 64 << 20;

/// The buffers calls cross in: a tool's result comes in through the input buffer.
pub(super) const IO_BUFFER_SIZE: usize = 8 << 20;

/// The least guest heap that holds the runtime and the component's initial memory.
pub(super) const MIN_HEAP: u64 = 256 << 20;

/// What a guest's imports read and write, before the guest exists.
#[derive(Clone)]
pub(super) struct Wiring {
    pub(super) stdout: Outlet,
    pub(super) stderr: Outlet,
    pub(super) shared: Arc<Shared>,
}

/// A guest with the component loaded, ready to run code.
pub(super) struct MicroVm {
    sandbox: RootSandbox<Guest, MultiUseSandbox>,
}

/// The sandbox's configuration for a guest heap of `heap` bytes.
fn configuration(heap: u64) -> SandboxConfiguration {
    let mut config = SandboxConfiguration::default();
    config.set_heap_size(heap.max(MIN_HEAP));
    config.set_scratch_size(SCRATCH_SIZE);
    config.set_input_data_size(IO_BUFFER_SIZE);
    config.set_output_data_size(IO_BUFFER_SIZE);
    config
}

fn guest(installed: &Installed, wiring: Wiring) -> Result<Guest> {
    let stdlib = cap_std::fs::Dir::open_ambient_dir(installed.stdlib(), cap_std::ambient_authority())
        .with_context(|| format!("failed to open the standard library in `{}`", installed.stdlib().display()))?;
    Ok(Guest { stdout: wiring.stdout, stderr: wiring.stderr, stdlib: Arc::new(stdlib), shared: wiring.shared })
}

/// Registers host functions on a sandbox and records their signatures, which the runtime is
/// told when it starts.
struct Recording<'a> {
    sandbox: &'a mut UninitializedSandbox,
    definitions: Vec<HostFunctionDefinition>,
}

impl Registerable for Recording<'_> {
    fn register_host_function<Args: ParameterTuple, Output: SupportedReturnType>(
        &mut self,
        name: &str,
        function: impl Into<HostFunction<Output, Args>>,
    ) -> hyperlight_host::Result<()> {
        self.sandbox.register(name, function)?;
        self.definitions.push(HostFunctionDefinition {
            function_name: name.to_owned(),
            parameter_types: Some(Args::TYPE.to_vec()),
            return_type: Output::TYPE,
        });
        Ok(())
    }
}

fn failed(step: &str) -> impl FnOnce(hyperlight_host::HyperlightError) -> anyhow::Error + '_ {
    move |err| anyhow!("{step}: {err}")
}

/// Boots the runtime in a new micro-VM with a guest heap of `heap` bytes, with the host
/// functions `register` registers, and starts it (telling it their signatures).
fn start_runtime<R>(
    installed: &Installed,
    heap: u64,
    register: impl FnOnce(&mut Recording<'_>) -> Result<R>,
) -> Result<(MultiUseSandbox, R)> {
    let runtime = GuestBinary::FilePath(installed.runtime());
    let mut uninitialized = UninitializedSandbox::new(runtime, Some(configuration(heap)))
        .map_err(failed("failed to create the micro-VM"))?;
    let mut recording = Recording { sandbox: &mut uninitialized, definitions: Vec::new() };
    let registered = register(&mut recording)?;
    let details = HostFunctionDetails { host_functions: Some(std::mem::take(&mut recording.definitions)) };
    let details: Vec<u8> =
        (&details).try_into().map_err(|err| anyhow!("failed to describe the host functions: {err:?}"))?;
    let mut sandbox = uninitialized.evolve().map_err(failed("the micro-VM did not start"))?;
    let status: i32 = sandbox.call("InitWasmRuntime", (details,)).map_err(failed("the guest runtime did not start"))?;
    if status != 0 {
        bail!("the guest runtime did not start (status {status})");
    }
    Ok((sandbox, registered))
}

/// Boots the runtime in the smallest micro-VM it runs in and starts it, with no host
/// functions: whether a micro-VM starts here at all.
pub(super) fn start_bare_runtime(installed: &Installed) -> Result<()> {
    start_runtime(installed, MIN_HEAP, |_| Ok(())).map(|_| ())
}

impl MicroVm {
    /// Boots the runtime in a new micro-VM with a guest heap of `heap` bytes and loads the
    /// precompiled component into it.
    pub(super) fn boot(installed: &Installed, heap: u64, wiring: Wiring) -> Result<Self> {
        let guest = guest(installed, wiring)?;
        let (mut sandbox, resources) =
            start_runtime(installed, heap, |recording| register_host_functions(recording, guest))?;
        let len = sandbox
            .map_file_cow(&installed.aot(), COMPONENT_ADDRESS)
            .map_err(failed("failed to map the compiled component"))?;
        sandbox
            .call::<()>("LoadWasmModulePhys", (COMPONENT_ADDRESS, len))
            .map_err(failed("the guest runtime did not load the component"))?;
        Ok(Self::new(sandbox, resources))
    }

    /// A micro-VM restored from `snapshot`, which [`MicroVm::snapshot`] took of a guest booted
    /// by this build.
    pub(super) fn restore(installed: &Installed, snapshot: Arc<Snapshot>, wiring: Wiring) -> Result<Self> {
        let guest = guest(installed, wiring)?;
        let mut functions = HostFunctions::default();
        let resources = register_host_functions(&mut functions, guest)?;
        let sandbox = MultiUseSandbox::from_snapshot(snapshot, functions, None)
            .map_err(failed("failed to restore the micro-VM from its snapshot"))?;
        Ok(Self::new(sandbox, resources))
    }

    fn new(sb: MultiUseSandbox, rt: Arc<Mutex<RootResources<Guest>>>) -> Self {
        Self { sandbox: RootSandbox { sb, rt } }
    }

    /// Stops the guest's vCPU from another thread.
    pub(super) fn interrupt(&self) -> Arc<dyn InterruptHandle> {
        self.sandbox.sb.interrupt_handle()
    }

    /// Runs `code` in the guest's executor: what it captured, and its exit code.
    pub(super) fn run(&mut self, code: &str) -> Result<(String, i32)> {
        // The generated bindings read the guest's reply with `unwrap`: a malformed reply is a
        // failed run, not a crash of codeact.
        let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.sandbox.run(code.to_owned())));
        let result = ran.map_err(|_| anyhow!("the guest sent a malformed reply"))??;
        Ok((format!("{}{}", result.stdout, result.stderr), result.exit_code))
    }

    /// A snapshot of the guest as it is now.
    pub(super) fn snapshot(&mut self) -> Result<Arc<Snapshot>> {
        self.sandbox.sb.snapshot().map_err(failed("failed to snapshot the micro-VM"))
    }
}

/// The snapshot saved in `dir` under `tag`.
pub(super) fn load_snapshot(dir: &Path, tag: &str) -> Result<Arc<Snapshot>> {
    let tag = hyperlight_host::sandbox::snapshot::OciTag::new(tag).map_err(failed("invalid snapshot tag"))?;
    Snapshot::load(dir, tag).map(Arc::new).map_err(failed("failed to load the snapshot"))
}

/// Saves `snapshot` in `dir` under `tag`.
pub(super) fn save_snapshot(snapshot: &Snapshot, dir: &Path, tag: &str) -> Result<()> {
    let tag = hyperlight_host::sandbox::snapshot::OciTag::new(tag).map_err(failed("invalid snapshot tag"))?;
    snapshot.save(dir, &tag).map(|_| ()).map_err(failed("failed to save the snapshot"))
}
