//! Build-time names for the code: the `cfg` aliases for the backends a build carries, and the
//! versions of the runtimes they embed, read from their exact pins in `Cargo.toml` so that
//! what codeact shows is what it was built with.

use cfg_aliases::cfg_aliases;

/// The crates whose pinned version the code shows, and the variable each is handed in.
const PINS: [(&str, &str); 2] =
    [("wasmtime", "CODEACT_WASMTIME_VERSION"), ("hyperlight-host", "CODEACT_HYPERLIGHT_VERSION")];

fn main() -> Result<(), String> {
    cfg_aliases! {
        // The `hyperlight` backend: the feature, on the platforms hyperlight-host supports: KVM on
        // x86_64 Linux, the Windows Hypervisor Platform on x86_64 Windows with the MSVC
        // toolchain, whose linker loads the platform's library when it is first called (below).
        hyperlight: {
            all(
                feature = "hyperlight",
                target_arch = "x86_64",
                any(target_os = "linux", all(windows, target_env = "msvc"))
            )
        },
        // A backend that runs the CPython guest (`wasm` or `hyperlight`).
        guest_backend: { any(feature = "wasm", hyperlight) },
    }
    windows_hyperlight();
    println!("cargo:rerun-if-changed=Cargo.toml");
    let manifest = std::fs::read_to_string("Cargo.toml").map_err(|err| format!("cannot read `Cargo.toml`: {err}"))?;
    for (name, variable) in PINS {
        let version = pinned(&manifest, name).ok_or_else(|| format!("`Cargo.toml` pins no `{name} = \"=x.y.z\"`"))?;
        println!("cargo:rustc-env={variable}={version}");
    }
    Ok(())
}

/// hyperlight-host imports `winhvplatform.dll`, which Windows has only where the Windows
/// Hypervisor Platform is turned on: a binary that imports it at start does not start anywhere
/// else. The MSVC linker loads it when it is first called instead, so codeact starts everywhere
/// and asks for the library before it calls into it (`platform::has_system_library`). The GNU
/// linker cannot; `CODEACT_HYPERLIGHT_GNU=1` builds the backend with it anyway, for a binary
/// that starts only where the platform is on (CI checks the backend's Windows code this way).
fn windows_hyperlight() {
    println!("cargo:rerun-if-env-changed=CODEACT_HYPERLIGHT_GNU");
    let cfg = |name: &str| std::env::var(format!("CARGO_CFG_TARGET_{name}")).unwrap_or_default();
    let wanted =
        std::env::var_os("CARGO_FEATURE_HYPERLIGHT").is_some() && cfg("OS") == "windows" && cfg("ARCH") == "x86_64";
    if !wanted {
        return;
    }
    match cfg("ENV").as_str() {
        "msvc" => {
            println!("cargo:rustc-link-arg=/DELAYLOAD:winhvplatform.dll");
            println!("cargo:rustc-link-arg=delayimp.lib");
        }
        "gnu" if std::env::var_os("CODEACT_HYPERLIGHT_GNU").is_some_and(|value| value == "1") => {
            println!("cargo:rustc-cfg=hyperlight");
            println!("cargo:rustc-cfg=guest_backend");
        }
        _ => {}
    }
}

/// The exact version `manifest` pins `name` to: written inline (`name = { version = "=x.y.z",
/// … }`), or in a table of its own (`[dependencies.name]` then `version = "=x.y.z"`), as the
/// manifest `cargo package` writes has it.
fn pinned<'a>(manifest: &'a str, name: &str) -> Option<&'a str> {
    let table = format!("dependencies.{name}]");
    let mut in_table = false;
    manifest.lines().map(str::trim).find_map(|line| {
        if line.starts_with('[') {
            in_table = line.ends_with(&table);
            return None;
        }
        let rest = if in_table {
            line.strip_prefix("version")?
        } else {
            line.strip_prefix(name)?.trim_start().strip_prefix('=')?.split_once("version")?.1
        };
        rest.trim_start()
            .strip_prefix('=')?
            .trim_start()
            .strip_prefix("\"=")?
            .split_once('"')
            .map(|(version, _)| version)
    })
}
