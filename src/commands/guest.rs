//! `codeact guest install` and `codeact guest status`: the CPython guest of the `wasm` and
//! `hyperlight` backends.

use std::fmt::Write as _;
use std::fs::{File, TryLockError};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};
use serde_json::json;

use crate::backend::{hyperlight, wasm};
use crate::cli::{GuestCommand, GuestInstallArgs, JsonArgs};
use crate::exit;
use crate::guest::manifest::RUNTIME_WHEEL;
use crate::guest::{self, GUEST_WHEEL, STDLIB_WHEEL};
use crate::output::{self, ProgressBars};

pub(crate) fn run(command: &GuestCommand) -> Result<u8> {
    match command {
        GuestCommand::Install(args) => install(args),
        GuestCommand::Status(args) => status(args),
    }
}

fn install(args: &GuestInstallArgs) -> Result<u8> {
    install_guest(&args.from, args.if_missing)?;
    Ok(exit::SUCCESS)
}

/// Installs the guest from the wheels in `from`, or from PyPI when it is empty (with
/// `if_missing`, only when it is not installed and sound), one install at a time: another may
/// be under way in the background.
pub(super) fn install_guest(from: &[PathBuf], if_missing: bool) -> Result<()> {
    let _lock = lock_installs()?;
    if if_missing && guest::installed().is_ok() {
        output::diagnostic("the CPython guest is installed; nothing to do");
        return Ok(());
    }
    install_from(from)
}

/// The file whose lock an install holds while it runs, in the state folder.
fn lock_path() -> Option<PathBuf> {
    crate::dirs::state().map(|dir| dir.join("guest-install.lock"))
}

/// Takes the installs' lock, waiting (and saying so) while another install holds it; `None`
/// where there is no state folder to keep it in.
fn lock_installs() -> Result<Option<File>> {
    let Some(path) = lock_path() else { return Ok(None) };
    let (file, taken) = try_lock(&path)?;
    if !taken {
        output::diagnostic("waiting for another `codeact guest install` to end…");
        file.lock().with_context(|| format!("failed to lock `{}`", path.display()))?;
    }
    Ok(Some(file))
}

/// Opens the installs' lock at `path` and tries to take it without waiting: the file, and
/// whether it is now held.
fn try_lock(path: &Path) -> Result<(File, bool)> {
    let file =
        crate::dirs::open_private(path, false).with_context(|| format!("failed to open `{}`", path.display()))?;
    match file.try_lock() {
        Ok(()) => Ok((file, true)),
        Err(TryLockError::WouldBlock) => Ok((file, false)),
        Err(TryLockError::Error(err)) => Err(err).with_context(|| format!("failed to lock `{}`", path.display())),
    }
}

/// Installs the guest from the wheels in `from`, or from PyPI when it is empty, and compiles it
/// for this machine, saying how it goes on stderr. The caller holds the installs' lock.
fn install_from(from: &[PathBuf]) -> Result<()> {
    let dir =
        guest::manifest::guest_dir().context("cannot tell where to install the guest: set HOME or XDG_DATA_HOME")?;
    let source = if from.is_empty() { "PyPI" } else { "local files" };
    output::diagnostic(&format!(
        "installing CPython {} guest ({} {}, standard library from {} {}, Hyperlight runtime from {} {}) from {source}",
        guest::PYTHON_VERSION,
        GUEST_WHEEL.project,
        GUEST_WHEEL.version,
        STDLIB_WHEEL.project,
        STDLIB_WHEEL.version,
        RUNTIME_WHEEL.project,
        RUNTIME_WHEEL.version
    ));
    let installed = guest::install::install(&dir, from, &mut ProgressBars::default())?;
    output::diagnostic(&format!(
        "unpacked into `{}` ({} standard library files)",
        installed.dir.display(),
        installed.manifest.stdlib_files
    ));
    let started = Instant::now();
    output::diagnostic("loading the prelude into the component and compiling it for this machine…");
    let cache = wasm::precompile(&installed)?;
    output::diagnostic(&format!("compiled in {:.1} s into `{}`", started.elapsed().as_secs_f64(), cache.display()));
    let started = Instant::now();
    output::diagnostic("compiling the standard library to bytecode…");
    wasm::compile_stdlib(&installed)?;
    output::diagnostic(&format!("compiled in {:.1} s", started.elapsed().as_secs_f64()));
    output::diagnostic(
        "done: `codeact run --backend wasm` runs full CPython; `--backend hyperlight` runs it in a micro-VM where \
         `codeact preflight --backend hyperlight` finds one (its snapshot is made on first use)",
    );
    Ok(())
}

/// How long after an install started in the background ended (it failed: a finished one
/// leaves the guest installed) a run does not start another.
const RETRY_AFTER: Duration = Duration::from_mins(15);

/// Where an install in the background stands, for what a run that needs CPython says.
pub(super) enum Background {
    /// One was started now.
    Started(PathBuf),
    /// One is running.
    UnderWay(PathBuf),
    /// One ended without installing it less than [`RETRY_AFTER`] ago.
    FailedLately(PathBuf),
}

/// Starts `codeact guest install --if-missing` in the background, for a run that needs CPython
/// (with `guest_install: "auto"`), unless one is under way (it holds the installs' lock) or
/// failed lately. The install outlives the run: it has its own process group, works in the state
/// folder, gets only the environment an install needs, and writes only to its log there
/// (appended to, never through a link).
pub(super) fn install_in_background() -> Result<Background> {
    let lock = lock_path().context("no state folder: set HOME or XDG_STATE_HOME")?;
    let dir = lock.parent().context("the lock has no folder")?.to_path_buf();
    let log = dir.join("guest-install.log");
    let (held, taken) = try_lock(&lock)?;
    if !taken {
        return Ok(Background::UnderWay(log));
    }
    let ended = std::fs::metadata(&log).and_then(|meta| meta.modified()).ok();
    if ended.is_some_and(|at| at.elapsed().is_ok_and(|age| age < RETRY_AFTER)) {
        return Ok(Background::FailedLately(log));
    }
    let mut file =
        crate::dirs::open_private(&log, true).with_context(|| format!("failed to open `{}`", log.display()))?;
    let _ = writeln!(file, "--- started by a run that needed CPython");
    let binary = std::env::current_exe().context("cannot tell where this codeact binary is")?;
    let mut command = Command::new(binary);
    command
        .args(["guest", "install", "--if-missing"])
        .current_dir(&dir)
        .env_clear()
        .envs(std::env::vars_os().filter(|(name, _)| wanted_by_install(&name.to_string_lossy())))
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(file.try_clone()?)
        .stderr(file);
    crate::platform::detach(&mut command);
    // The child takes the lock itself; this one is let go first, so that it can.
    drop(held);
    command.spawn().context("failed to start `codeact guest install`")?;
    Ok(Background::Started(log))
}

/// Whether an install in the background gets the variable `name`: where codeact's folders are,
/// how to reach PyPI (proxies, certificates), and the basics every program reads.
fn wanted_by_install(name: &str) -> bool {
    crate::env::INHERITED.contains(&name)
        || name.starts_with("XDG_")
        || [crate::env::GUEST_DIR, crate::env::CACHE_DIR, "SSL_CERT_FILE", "SSL_CERT_DIR"].contains(&name)
        || name.to_ascii_uppercase().ends_with("_PROXY")
}

fn status(args: &JsonArgs) -> Result<u8> {
    let installed = guest::installed();
    if args.json {
        let value = match &installed {
            Ok(installed) => json!({
                "installed": true,
                "dir": installed.dir,
                "manifest": installed.manifest,
                "compiled_in": wasm::COMPILED_IN,
                "hyperlight": {
                    "installed": installed.hyperlight().is_ok(),
                    "runtime": installed.runtime(),
                    "aot": installed.aot(),
                    "compiled_in": hyperlight::COMPILED_IN,
                },
            }),
            Err(missing) => {
                json!({"installed": false, "reason": missing.to_string(), "compiled_in": wasm::COMPILED_IN})
            }
        };
        output::json(&value)?;
        return Ok(exit::SUCCESS);
    }
    let mut text = String::new();
    match &installed {
        Ok(installed) => {
            let m = &installed.manifest;
            let _ = writeln!(text, "CPython {} guest installed in {}", m.python, installed.dir.display());
            let _ = writeln!(text, "  component       {} (sha256 {})", m.guest_wheel, m.wasm_sha256);
            let _ = writeln!(text, "  standard library {} files from {}", m.stdlib_files, m.stdlib_wheel);
            match installed.hyperlight() {
                Ok(files) => {
                    let _ = writeln!(
                        text,
                        "  hyperlight runtime from {} (sha256 {})",
                        files.runtime_wheel, files.runtime_sha256
                    );
                    let _ = writeln!(
                        text,
                        "  compiled component {} (sha256 {})",
                        installed.aot().display(),
                        files.aot_sha256
                    );
                }
                Err(missing) => {
                    let _ = writeln!(text, "  hyperlight runtime: {missing}");
                }
            }
        }
        Err(missing) => {
            let _ = writeln!(text, "{missing}\n  install it with `{}`", guest::INSTALL_HINT);
        }
    }
    let _ = writeln!(
        text,
        "wasm backend: {}",
        if wasm::COMPILED_IN {
            format!("compiled in (wasmtime {})", wasm::WASMTIME_VERSION)
        } else {
            "not compiled into this build".to_owned()
        }
    );
    let _ = writeln!(
        text,
        "hyperlight backend: {}",
        if hyperlight::COMPILED_IN {
            format!(
                "compiled in (hyperlight-host {}; `codeact preflight --backend hyperlight` checks for a micro-VM)",
                hyperlight::HYPERLIGHT_VERSION
            )
        } else {
            hyperlight::missing_reason()
        }
    );
    output::text(&text)?;
    Ok(exit::SUCCESS)
}
