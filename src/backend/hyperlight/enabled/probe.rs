//! Whether a micro-VM really starts here: the only sure test. `/dev/kvm` can be present and
//! usable by other guests while no Hyperlight guest starts (kvm-pvm, for one, fails on the
//! guest's first SSE instruction), so the probe boots the runtime and starts it. The answer
//! is kept per boot, so that `auto` and `preflight` pay for it once.

use std::path::PathBuf;

use anyhow::{Result, anyhow};
use serde::{Deserialize, Serialize};

use super::sandbox::start_bare_runtime;
use crate::atomic::{self, Access};
use crate::dirs;
use crate::guest::Installed;
use crate::platform;

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

/// The answer kept for this boot, if a probe gave one.
pub(crate) fn kept_probe(installed: &Installed) -> Option<Result<(), String>> {
    let files = installed.hyperlight().ok()?;
    let boot = platform::boot_id();
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
    let (boot, runtime, codeact) =
        (platform::boot_id(), files.runtime_sha256.clone(), env!("CARGO_PKG_VERSION").to_owned());
    let path = kept_path();
    let failure = start(installed).err().map(|err| format!("{err:#}"));
    if let Some(path) = path {
        let kept = Kept { boot, runtime, codeact, failure: failure.clone() };
        // The directory is made with the file, user-only.
        if let Ok(text) = serde_json::to_string(&kept) {
            let _ = atomic::write(&path, text.as_bytes(), Access::Private);
        }
    }
    failure.map_or(Ok(()), Err)
}

/// Why no micro-VM can start, where the system offers no hypervisor.
#[cfg(target_os = "linux")]
const NO_HYPERVISOR: &str = "no hypervisor is available (no usable /dev/kvm)";
#[cfg(windows)]
const NO_HYPERVISOR: &str = "no hypervisor is available (the Windows Hypervisor Platform is not turned on)";

/// Starts the runtime in a micro-VM, where there is a hypervisor at all.
fn start(installed: &Installed) -> Result<()> {
    if !hypervisor_present() {
        return Err(anyhow!(NO_HYPERVISOR));
    }
    start_bare_runtime(installed)
}

/// Whether there is a hypervisor here that hyperlight-host can use. On Windows its library is
/// asked for first, as nothing may call into it where it is missing.
pub(super) fn hypervisor_present() -> bool {
    #[cfg(windows)]
    if !platform::has_system_library("winhvplatform.dll") {
        return false;
    }
    hyperlight_host::is_hypervisor_present()
}

/// [`NO_HYPERVISOR`], as the error of a run where there is none.
#[cfg(windows)]
pub(super) fn no_hypervisor() -> anyhow::Error {
    crate::hint::error(NO_HYPERVISOR, super::super::NO_MICRO_VM_FIX)
}
