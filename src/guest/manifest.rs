//! The pinned guest and where it lives: the two wheels it is made from, the installed
//! directory and its manifest, and the check that an installed guest is usable.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::{dirs, env};

/// A wheel on PyPI, pinned by file name and digest.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Wheel {
    pub(crate) project: &'static str,
    pub(crate) version: &'static str,
    pub(crate) filename: &'static str,
    pub(crate) sha256: &'static str,
}

/// The guest component.
pub(crate) const GUEST_WHEEL: Wheel = Wheel {
    project: "hyperlight-sandbox-python-guest",
    version: "0.8.0",
    filename: "hyperlight_sandbox_python_guest-0.8.0-py3-none-any.whl",
    sha256: "fb2f27a2123e6368659540c3d845baf4b44d5493cbdb30bafa88287dbda46bbc",
};

/// Where CPython 3.14.0's standard library comes from: a zstd-compressed tar inside the
/// shared object of this wheel (the same `Lib/` on every platform; this file is the pin).
pub(crate) const STDLIB_WHEEL: Wheel = Wheel {
    project: "componentize-py",
    version: "0.25.1",
    filename: "componentize_py-0.25.1-cp39-abi3-manylinux_2_28_x86_64.whl",
    sha256: "8623cd8cab8453cb0cd8bf03f3c7103420d06f2f3d360186a280a70a1ca5e89f",
};

/// Where the `hyperlight` backend's guest runtime comes from: the Hyperlight guest (wasmtime
/// 36.0.14 inside a `no_std` ELF, built from `hyperlight-wasm` 0.15.0) that this wheel's
/// extension module embeds. The runtime is the same in every build of the wheel; this file is
/// the pin.
pub(crate) const RUNTIME_WHEEL: Wheel = Wheel {
    project: "hyperlight-sandbox-backend-wasm",
    version: "0.8.0",
    filename: "hyperlight_sandbox_backend_wasm-0.8.0-cp312-cp312-manylinux_2_28_x86_64.whl",
    sha256: "5ef64125c744ee81efe33a19065b71ee5466dce001db4e7789cd7d570bfc3f93",
};

/// The extension module inside [`RUNTIME_WHEEL`] that embeds the runtime.
pub(crate) const RUNTIME_CARRIER: &str = "hyperlight_sandbox_backend_wasm/_native_wasm.cpython-312-x86_64-linux-gnu.so";

/// SHA-256 of the runtime ELF inside [`RUNTIME_CARRIER`].
pub(crate) const RUNTIME_SHA256: &str = "af70258c087d94264046e16c5a807e199a46cf9c8ad90718b4c73501bc8b43bd";

/// The component precompiled for the runtime's wasmtime, inside the guest wheel.
pub(crate) const AOT_IN_WHEEL: &str = "python_guest/resources/python-sandbox.aot";

/// SHA-256 of [`AOT_IN_WHEEL`].
pub(crate) const AOT_SHA256: &str = "6b9d9c3c5af71e4c3be5802844c35f7e63b709aeb82bdcf6de4d6e9e6d79d307";

/// The Python version the guest runs.
pub(crate) const PYTHON_VERSION: &str = "3.14.0";

/// The component inside the guest wheel.
pub(crate) const WASM_IN_WHEEL: &str = "python_guest/resources/python-sandbox.wasm";

/// Where the guest's standard library is mounted inside the guest.
#[cfg_attr(not(guest_backend), expect(dead_code, reason = "only the wasm and hyperlight backends run the guest"))]
pub(crate) const STDLIB_GUEST_PATH: &str = "/python";

/// The command that installs the guest, for hints.
pub(crate) const INSTALL_HINT: &str = "codeact guest install";

/// An installed guest.
#[derive(Debug, Clone)]
pub(crate) struct Installed {
    pub(crate) dir: PathBuf,
    pub(crate) manifest: Manifest,
}

/// `manifest.json` of an installed guest: what it was made from.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub(crate) struct Manifest {
    pub(crate) python: String,
    pub(crate) guest_wheel: String,
    pub(crate) guest_wheel_sha256: String,
    pub(crate) stdlib_wheel: String,
    pub(crate) stdlib_wheel_sha256: String,
    /// SHA-256 of `python-sandbox.wasm`: part of the compiled component's cache key.
    pub(crate) wasm_sha256: String,
    pub(crate) stdlib_files: usize,
    /// What the `hyperlight` backend runs; absent from a guest installed before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) hyperlight: Option<HyperlightFiles>,
}

/// The `hyperlight` backend's part of an installed guest.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub(crate) struct HyperlightFiles {
    pub(crate) runtime_wheel: String,
    pub(crate) runtime_wheel_sha256: String,
    pub(crate) runtime_sha256: String,
    pub(crate) aot_sha256: String,
}

impl Installed {
    #[must_use]
    pub(crate) fn wasm(&self) -> PathBuf {
        self.dir.join("python-sandbox.wasm")
    }

    #[must_use]
    pub(crate) fn stdlib(&self) -> PathBuf {
        self.dir.join("lib")
    }

    /// The Hyperlight guest runtime (an ELF the micro-VM boots).
    #[must_use]
    pub(crate) fn runtime(&self) -> PathBuf {
        self.dir.join("hyperlight-wasm-runtime")
    }

    /// The component precompiled for the runtime.
    #[must_use]
    pub(crate) fn aot(&self) -> PathBuf {
        self.dir.join("python-sandbox.aot")
    }

    /// Whether this guest carries the pinned `hyperlight` files, or why not.
    pub(crate) fn hyperlight(&self) -> Result<&HyperlightFiles, Missing> {
        let damaged = |reason: &str| Missing::Damaged { dir: self.dir.clone(), reason: reason.to_owned() };
        let files = self
            .manifest
            .hyperlight
            .as_ref()
            .ok_or_else(|| damaged("it was installed without the hyperlight runtime; install it again"))?;
        if files.runtime_sha256 != RUNTIME_SHA256 || files.aot_sha256 != AOT_SHA256 {
            return Err(damaged("its hyperlight runtime is not the one this codeact pins"));
        }
        if !self.runtime().is_file() || !self.aot().is_file() {
            return Err(damaged("the hyperlight runtime or python-sandbox.aot is missing"));
        }
        Ok(files)
    }
}

/// Why no guest is usable.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Missing {
    #[error("the CPython guest is not installed (looked in `{}`)", .0.display())]
    NotInstalled(PathBuf),
    #[error("the CPython guest in `{}` is damaged: {reason}", dir.display())]
    Damaged { dir: PathBuf, reason: String },
    #[error("cannot tell where to install the guest: set HOME or XDG_DATA_HOME")]
    NoHome,
}

/// Where the pinned guest lives: `$CODEACT_GUEST_DIR`, else a folder named after the pins in
/// the data directory.
#[must_use]
pub(crate) fn guest_dir() -> Option<PathBuf> {
    if let Some(dir) = env::var(env::GUEST_DIR) {
        return Some(PathBuf::from(dir));
    }
    dirs::data().map(|dir| dir.join("guest").join(format!("python-{PYTHON_VERSION}-guest-{}", GUEST_WHEEL.version)))
}

/// The installed guest, checked: its manifest names the pinned wheels and its files exist.
pub(crate) fn installed() -> Result<Installed, Missing> {
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
