//! Whether a micro-VM really starts here: the only sure test. `/dev/kvm` can be present and
//! usable by other guests while no Hyperlight guest starts (kvm-pvm, for one, fails on the
//! guest's first SSE instruction), so the probe boots the runtime and starts it. The answer
//! is kept per boot, so that `auto` and `preflight` pay for it once.

use std::path::PathBuf;

use anyhow::{Result, anyhow};
use hyperlight_common::flatbuffer_wrappers::host_function_details::HostFunctionDetails;
use hyperlight_host::{GuestBinary, UninitializedSandbox};
use serde::{Deserialize, Serialize};

use super::sandbox::{MIN_HEAP, configuration};
use crate::atomic::{self, Access};
use crate::dirs;
use crate::guest::Installed;

/// A probe's answer, as kept.
#[derive(Debug, Serialize, Deserialize)]
struct Kept {
    boot: String,
    runtime: String,
    codeact: String,
    failure: Option<String>,
}

fn kept_path() -> Option<PathBuf> {
    dirs::cache().map(|dir| dir.join("hyperlight").join("probe.json"))
}

fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id").map(|id| id.trim().to_owned()).unwrap_or_default()
}

/// The answer kept for this boot, if a probe gave one.
pub(crate) fn kept_probe(installed: &Installed) -> Option<Result<(), String>> {
    let files = installed.hyperlight().ok()?;
    let boot = boot_id();
    let text = std::fs::read_to_string(kept_path()?).ok()?;
    let kept = serde_json::from_str::<Kept>(&text).ok()?;
    let current = !boot.is_empty()
        && kept.boot == boot
        && kept.runtime == files.runtime_sha256
        && kept.codeact == env!("CARGO_PKG_VERSION");
    current.then(|| kept.failure.map_or(Ok(()), Err))
}

/// Whether a micro-VM starts here with the installed runtime, or why not; from the answer
/// kept for this boot when there is one.
pub(crate) fn probe(installed: &Installed) -> Result<(), String> {
    if let Some(kept) = kept_probe(installed) {
        return kept;
    }
    let files = installed.hyperlight().map_err(|missing| missing.to_string())?;
    let (boot, runtime, codeact) = (boot_id(), files.runtime_sha256.clone(), env!("CARGO_PKG_VERSION").to_owned());
    let path = kept_path();
    let failure = start(installed).err().map(|err| format!("{err:#}"));
    if let Some(path) = path {
        let kept = Kept { boot, runtime, codeact, failure: failure.clone() };
        if let (Some(parent), Ok(text)) = (path.parent(), serde_json::to_string(&kept)) {
            let _ = std::fs::create_dir_all(parent);
            let _ = atomic::write(&path, text.as_bytes(), Access::Private);
        }
    }
    failure.map_or(Ok(()), Err)
}

/// Boots the runtime in a small micro-VM and starts it.
fn start(installed: &Installed) -> Result<()> {
    if !hyperlight_host::is_hypervisor_present() {
        return Err(anyhow!("no hypervisor is available (no usable /dev/kvm)"));
    }
    let config = configuration(MIN_HEAP);
    let sandbox = UninitializedSandbox::new(GuestBinary::FilePath(installed.runtime()), Some(config))
        .map_err(|err| anyhow!("the micro-VM could not be created: {err}"))?;
    let mut sandbox = sandbox.evolve().map_err(|err| anyhow!("the micro-VM did not start: {err}"))?;
    let details: Vec<u8> = (&HostFunctionDetails { host_functions: Some(Vec::new()) })
        .try_into()
        .map_err(|err| anyhow!("failed to describe the host functions: {err:?}"))?;
    let status: i32 =
        sandbox.call("InitWasmRuntime", (details,)).map_err(|err| anyhow!("the guest runtime did not start: {err}"))?;
    if status != 0 {
        return Err(anyhow!("the guest runtime did not start (status {status})"));
    }
    Ok(())
}
