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
        // The directory is made with the file, user-only.
        if let Ok(text) = serde_json::to_string(&kept) {
            let _ = atomic::write(&path, text.as_bytes(), Access::Private);
        }
    }
    failure.map_or(Ok(()), Err)
}

/// Starts the runtime in a micro-VM, where there is a hypervisor at all.
fn start(installed: &Installed) -> Result<()> {
    if !hyperlight_host::is_hypervisor_present() {
        return Err(anyhow!("no hypervisor is available (no usable /dev/kvm)"));
    }
    start_bare_runtime(installed)
}
