//! Build-time names for the code: the `cfg` aliases for the backends a build carries, and the
//! versions of the runtimes they embed, read from their exact pins in `Cargo.toml` so that
//! what codeact shows is what it was built with.

use cfg_aliases::cfg_aliases;

/// The crates whose pinned version the code shows, and the variable each is handed in.
const PINS: [(&str, &str); 2] =
    [("wasmtime", "CODEACT_WASMTIME_VERSION"), ("hyperlight-host", "CODEACT_HYPERLIGHT_VERSION")];

fn main() -> Result<(), String> {
    cfg_aliases! {
        // The `hyperlight` backend: the feature, on the only platform hyperlight-host supports.
        hyperlight: { all(feature = "hyperlight", target_os = "linux", target_arch = "x86_64") },
        // A backend that runs the CPython guest (`wasm` or `hyperlight`).
        guest_backend: { any(feature = "wasm", hyperlight) },
    }
    println!("cargo:rerun-if-changed=Cargo.toml");
    let manifest = std::fs::read_to_string("Cargo.toml").map_err(|err| format!("cannot read `Cargo.toml`: {err}"))?;
    for (name, variable) in PINS {
        let version = pinned(&manifest, name).ok_or_else(|| format!("`Cargo.toml` pins no `{name} = \"=x.y.z\"`"))?;
        println!("cargo:rustc-env={variable}={version}");
    }
    Ok(())
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
