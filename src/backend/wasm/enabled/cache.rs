//! The compiled guest cache. The component is compiled once into a user-only file keyed by
//! wasmtime's compatibility hash, the component's SHA-256 and the prelude's, with a record of
//! the file's digest and metadata beside it (its seal): a file that changed since it was
//! written is checked against its digest and compiled again when it does not match — never
//! loaded. What is compiled is a snapshot of the component with the prelude loaded
//! ([`super::snapshot`]).

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use wasmtime::Engine;
use wasmtime::component::Component;

use super::engine::engine;
use super::snapshot::snapshot;
use crate::atomic::{self, Access};
use crate::digest::sha256_hex;
use crate::dirs;
use crate::guest::loader;
use crate::guest::seal::Seal;
use crate::guest::{self, Installed};
use crate::hint;
use crate::sandbox::GuestCache;

/// The compiled component's cache file for this engine and guest.
fn cache_file(engine: &Engine, installed: &Installed) -> Result<PathBuf> {
    use std::hash::{DefaultHasher, Hash as _, Hasher as _};
    let mut hasher = DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut hasher);
    let dir = dirs::cache().context("cannot tell where to cache the compiled guest: set HOME or XDG_CACHE_HOME")?;
    let (guest, prelude) = (&installed.manifest.wasm_sha256, loader::digest());
    Ok(dir.join("wasm").join(format!(
        "python-sandbox-{:016x}-{}-{}.cwasm",
        hasher.finish(),
        &guest[..guest.len().min(16)],
        &prelude[..16]
    )))
}

/// Where the seal of the cache file `cache` is kept.
fn seal_path(cache: &Path) -> PathBuf {
    cache.with_extension("cwasm.seal")
}

/// Whether the cache file is the one this program wrote: its metadata is unchanged since, or
/// failing that, its contents still have the recorded digest.
fn sealed(cache: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(seal_path(cache)) else { return false };
    let Ok(seal) = serde_json::from_str::<Seal>(&text) else { return false };
    let Ok(meta) = std::fs::symlink_metadata(cache) else { return false };
    if !meta.is_file() {
        return false;
    }
    if seal.unchanged(cache) {
        return true;
    }
    if !seal.same_contents(cache) {
        return false;
    }
    // Same contents, new metadata (copied, touched): record the new metadata.
    let _ = write_seal(cache, seal.sha256);
    true
}

fn write_seal(cache: &Path, sha256: String) -> Result<()> {
    let seal = serde_json::to_string(&Seal::of(cache, sha256)?)?;
    atomic::write(&seal_path(cache), seal.as_bytes(), Access::Private)
        .with_context(|| format!("failed to seal `{}`", cache.display()))
}

/// Compiles the guest component into the cache, replacing whatever is there.
pub(crate) fn precompile(installed: &Installed) -> Result<PathBuf> {
    let engine = engine()?;
    let cache = cache_file(&engine, installed)?;
    compile_into(&engine, installed, &cache)?;
    Ok(cache)
}

fn compile_into(engine: &Engine, installed: &Installed, cache: &Path) -> Result<()> {
    let wasm =
        std::fs::read(installed.wasm()).with_context(|| format!("failed to read `{}`", installed.wasm().display()))?;
    if sha256_hex(&wasm) != installed.manifest.wasm_sha256 {
        return Err(hint::error(
            format!("`{}` does not match its recorded SHA-256", installed.wasm().display()),
            format!("reinstall it with `{}`", guest::INSTALL_HINT),
        ));
    }
    let snapshot = snapshot(installed, &wasm)?;
    let compiled =
        engine.precompile_component(&snapshot).map_err(anyhow::Error::from).context("failed to compile the guest")?;
    atomic::write(cache, &compiled, Access::Private)
        .with_context(|| format!("failed to write `{}`", cache.display()))?;
    write_seal(cache, sha256_hex(&compiled))
}

/// The compiled guest's cache file, and whether it can be loaded as it is.
pub(super) fn look_up(engine: &Engine, installed: &Installed) -> Result<(PathBuf, GuestCache)> {
    let cache = cache_file(engine, installed)?;
    let status = if sealed(&cache) {
        GuestCache::Hit
    } else if cache.exists() {
        GuestCache::Recompiled
    } else {
        GuestCache::Compiled
    };
    Ok((cache, status))
}

/// The compiled component, compiling it into `cache` first unless `status` says it is there.
pub(super) fn load(engine: &Engine, installed: &Installed, cache: &Path, status: GuestCache) -> Result<Component> {
    if status != GuestCache::Hit {
        compile_into(engine, installed, cache)?;
    }
    // The file is user-only, was written by this program for this engine (wasmtime checks the
    // header and the compatibility hash), and its seal was checked or written just above.
    #[expect(unsafe_code, reason = "loading precompiled code is unsafe by definition in wasmtime")]
    // SAFETY: see above; the file is not modified while mapped by this short-lived process.
    let component = unsafe { Component::deserialize_file(engine, cache) };
    component.map_err(anyhow::Error::from).with_context(|| format!("failed to load `{}`", cache.display()))
}
