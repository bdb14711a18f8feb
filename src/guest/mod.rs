//! The CPython guest: CPython 3.14 compiled to a WebAssembly component (the
//! `hyperlight-sandbox-python-guest` wheel) plus the standard library it imports from `/python`
//! (taken from the `componentize-py` wheel, which embeds CPython 3.14.0's `Lib/`).
//!
//! `codeact guest install` puts both in the user's data directory, checked against pinned
//! SHA-256 digests; nothing is downloaded unless the user asks. Backends that run the guest
//! (`wasm` now, `hyperlight` later) find it with [`installed`] and talk to it through
//! [`bridge`] and the Python [`PRELUDE`], which are not specific to any one runtime.

pub mod bridge;
pub mod install;
pub mod loader;

use std::os::unix::fs::{DirBuilderExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};

use serde::{Deserialize, Serialize};

use crate::env;

/// A wheel on PyPI, pinned by file name and digest.
#[derive(Debug, Clone, Copy)]
pub struct Wheel {
    pub project: &'static str,
    pub version: &'static str,
    pub filename: &'static str,
    pub sha256: &'static str,
}

/// The guest component.
pub const GUEST_WHEEL: Wheel = Wheel {
    project: "hyperlight-sandbox-python-guest",
    version: "0.8.0",
    filename: "hyperlight_sandbox_python_guest-0.8.0-py3-none-any.whl",
    sha256: "fb2f27a2123e6368659540c3d845baf4b44d5493cbdb30bafa88287dbda46bbc",
};

/// Where CPython 3.14.0's standard library comes from: a zstd-compressed tar inside the
/// shared object of this wheel (the same `Lib/` on every platform; this file is the pin).
pub const STDLIB_WHEEL: Wheel = Wheel {
    project: "componentize-py",
    version: "0.25.1",
    filename: "componentize_py-0.25.1-cp39-abi3-manylinux_2_28_x86_64.whl",
    sha256: "8623cd8cab8453cb0cd8bf03f3c7103420d06f2f3d360186a280a70a1ca5e89f",
};

/// The Python version the guest runs.
pub const PYTHON_VERSION: &str = "3.14.0";

/// The component inside the guest wheel.
pub const WASM_IN_WHEEL: &str = "python_guest/resources/python-sandbox.wasm";

/// The Python code run in a fresh guest before the program: tool functions, error mapping,
/// output streams, the last expression's value and the traceback.
pub const PRELUDE: &str = include_str!("prelude.py");

/// The file name the prelude is compiled under; tracebacks leave its frames out.
pub const PRELUDE_NAME: &str = "<prelude>";

/// Where the guest's standard library is mounted inside the guest.
pub const STDLIB_GUEST_PATH: &str = "/python";

/// The command that installs the guest, for hints.
pub const INSTALL_HINT: &str = "codeact guest install";

/// An installed guest.
#[derive(Debug, Clone)]
pub struct Installed {
    pub dir: PathBuf,
    pub manifest: Manifest,
}

/// `manifest.json` of an installed guest: what it was made from.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub python: String,
    pub guest_wheel: String,
    pub guest_wheel_sha256: String,
    pub stdlib_wheel: String,
    pub stdlib_wheel_sha256: String,
    /// SHA-256 of `python-sandbox.wasm`: part of the compiled component's cache key.
    pub wasm_sha256: String,
    pub stdlib_files: usize,
}

impl Installed {
    #[must_use]
    pub fn wasm(&self) -> PathBuf {
        self.dir.join("python-sandbox.wasm")
    }

    #[must_use]
    pub fn stdlib(&self) -> PathBuf {
        self.dir.join("lib")
    }
}

/// Why no guest is usable.
#[derive(Debug, thiserror::Error)]
pub enum Missing {
    #[error("the CPython guest is not installed (looked in {0})")]
    NotInstalled(PathBuf),
    #[error("the CPython guest in {dir} is damaged: {reason}")]
    Damaged { dir: PathBuf, reason: String },
    #[error("cannot tell where to install the guest: set HOME or XDG_DATA_HOME")]
    NoHome,
}

/// codeact's data directory: `$XDG_DATA_HOME/codeact`, else `~/.local/share/codeact`.
#[must_use]
pub fn data_dir() -> Option<PathBuf> {
    env::codeact_dir(None, "XDG_DATA_HOME", ".local/share")
}

/// codeact's cache directory: `$CODEACT_CACHE_DIR`, `$XDG_CACHE_HOME/codeact`, `~/.cache/codeact`.
#[must_use]
pub fn cache_dir() -> Option<PathBuf> {
    env::codeact_dir(Some(env::CACHE_DIR), "XDG_CACHE_HOME", ".cache")
}

/// Where the pinned guest lives: `$CODEACT_GUEST_DIR`, else a folder named after the pins in
/// the data directory.
#[must_use]
pub fn guest_dir() -> Option<PathBuf> {
    if let Some(dir) = env::var(env::GUEST_DIR) {
        return Some(PathBuf::from(dir));
    }
    data_dir().map(|dir| dir.join("guest").join(format!("python-{PYTHON_VERSION}-guest-{}", GUEST_WHEEL.version)))
}

/// The installed guest, checked: its manifest names the pinned wheels and its files exist.
pub fn installed() -> Result<Installed, Missing> {
    let dir = guest_dir().ok_or(Missing::NoHome)?;
    read_installed(&dir)
}

fn read_installed(dir: &Path) -> Result<Installed, Missing> {
    let damaged = |reason: String| Missing::Damaged { dir: dir.to_path_buf(), reason };
    let text = match std::fs::read_to_string(dir.join("manifest.json")) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Err(Missing::NotInstalled(dir.to_path_buf())),
        Err(err) => return Err(damaged(format!("cannot read manifest.json: {err}"))),
    };
    let manifest: Manifest =
        serde_json::from_str(&text).map_err(|err| damaged(format!("manifest.json is not valid: {err}")))?;
    if manifest.guest_wheel_sha256 != GUEST_WHEEL.sha256 || manifest.stdlib_wheel_sha256 != STDLIB_WHEEL.sha256 {
        return Err(damaged("it was made from other wheels than this codeact pins".into()));
    }
    let installed = Installed { dir: dir.to_path_buf(), manifest };
    if !installed.wasm().is_file() {
        return Err(damaged("python-sandbox.wasm is missing".into()));
    }
    if !installed.stdlib().join("os.py").is_file() {
        return Err(damaged("the standard library (lib/os.py) is missing".into()));
    }
    Ok(installed)
}

/// Lowercase hex SHA-256.
#[must_use]
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    use std::fmt::Write as _;
    sha2::Sha256::digest(bytes).iter().fold(String::with_capacity(64), |mut out, byte| {
        let _ = write!(out, "{byte:02x}");
        out
    })
}

/// Writes a user-only file atomically, making its directory (user-only) when needed.
pub fn write_private(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write as _;
    let dir = path.parent().context("the path has no parent directory")?;
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    let mut file = tempfile::Builder::new().permissions(std::fs::Permissions::from_mode(0o600)).tempfile_in(dir)?;
    file.write_all(bytes)?;
    file.as_file().sync_all()?;
    file.persist(path).map_err(|err| err.error)?;
    Ok(())
}
