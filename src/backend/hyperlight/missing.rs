//! What `detect` and `preflight` say where this build has no `hyperlight` backend: the system
//! is not one Hyperlight runs on, or the build left it out, and what to use instead.

/// Why this build has no backend: the system is not one Hyperlight runs on, or the build left
/// it out.
pub(crate) fn missing_reason() -> String {
    missing_on(std::env::consts::OS, std::env::consts::ARCH).0
}

/// What to do about a build without the backend.
pub(crate) fn missing_fix() -> String {
    missing_on(std::env::consts::OS, std::env::consts::ARCH).1
}

/// [`missing_reason`] and [`missing_fix`] on the system `os` (as Rust names it) and `arch`.
fn missing_on(os: &str, arch: &str) -> (String, String) {
    const ELSE: &str = "use `--backend wasm` (full CPython, no hypervisor; `codeact guest install` installs it) \
                        or `--backend monty`";
    if matches!((os, arch), ("linux" | "windows", "x86_64")) {
        let fix = "build codeact with `--features hyperlight`, or use `--backend wasm` (full CPython, no hypervisor)";
        return (crate::backend::preflight::NOT_COMPILED_REASON.to_owned(), fix.to_owned());
    }
    let system = match os {
        "macos" => "macOS".to_owned(),
        "windows" => "Windows".to_owned(),
        os => format!("{os} on {arch}"),
    };
    let reason = format!(
        "Hyperlight does not run on {system}: codeact runs its micro-VMs on x86_64 Linux (KVM or MSHV) \
         and x86_64 Windows (the Windows Hypervisor Platform)"
    );
    (reason, ELSE.to_owned())
}

/// What to do where no micro-VM starts.
#[cfg(not(windows))]
pub(crate) const NO_MICRO_VM_FIX: &str = "Hyperlight needs KVM (or MSHV) that can run its guests; use `--backend wasm` \
                                          (full CPython, no hypervisor) or `--backend monty`";
#[cfg(windows)]
pub(crate) const NO_MICRO_VM_FIX: &str = "Hyperlight needs the Windows Hypervisor Platform: turn on the Windows feature \
                                          \"Windows Hypervisor Platform\" (an administrator, then a restart), or use \
                                          `--backend wasm` (full CPython, no hypervisor) or `--backend monty`";

#[cfg(test)]
mod tests {
    use super::missing_on;

    #[test]
    fn a_system_hyperlight_does_not_run_on_is_named_and_wasm_offered() {
        for (os, arch, named) in [
            ("macos", "aarch64", "macOS"),
            ("macos", "x86_64", "macOS"),
            ("linux", "aarch64", "linux on aarch64"),
            ("windows", "aarch64", "Windows"),
        ] {
            let (reason, fix) = missing_on(os, arch);
            assert!(reason.starts_with(&format!("Hyperlight does not run on {named}:")), "{reason}");
            assert!(fix.contains("--backend wasm") && !fix.contains("--features"), "{fix}");
        }
        for os in ["linux", "windows"] {
            let (reason, fix) = missing_on(os, "x86_64");
            assert_eq!(reason, "it is not compiled into this build of codeact");
            assert!(fix.contains("--features hyperlight"), "{fix}");
        }
    }
}
