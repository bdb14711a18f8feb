//! `codeact guest install` and `codeact guest status`: the CPython guest of the `wasm` and
//! `hyperlight` backends.

use std::fmt::Write as _;
use std::path::PathBuf;
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
    install_from(&args.from)?;
    Ok(exit::SUCCESS)
}

/// Installs the guest from the wheels in `from`, or from PyPI when it is empty, and compiles it
/// for this machine, saying how it goes on stderr.
pub(super) fn install_from(from: &[PathBuf]) -> Result<()> {
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

/// How long an install started in the background counts as under way: a run within it does not
/// start another.
const UNDER_WAY: Duration = Duration::from_mins(15);

/// Starts `codeact guest install` in the background, for a run that needs CPython (with
/// `guest_install: "auto"`), and returns the path of its log in the state folder. The install
/// outlives the run: it has its own process group and no terminal, and writes only to its log.
/// While a log younger than [`UNDER_WAY`] says one is under way, no other is started.
pub(super) fn install_in_background() -> Result<PathBuf> {
    let dir = crate::dirs::state().context("no state folder: set HOME or XDG_STATE_HOME")?;
    let log = dir.join("guest-install.log");
    let started = std::fs::metadata(&log).and_then(|meta| meta.modified()).ok();
    if started.is_some_and(|at| at.elapsed().is_ok_and(|age| age < UNDER_WAY)) {
        return Ok(log);
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("failed to create `{}`", dir.display()))?;
    let file = std::fs::File::create(&log).with_context(|| format!("failed to create `{}`", log.display()))?;
    let binary = std::env::current_exe().context("cannot tell where this codeact binary is")?;
    let mut command = Command::new(binary);
    command.args(["guest", "install"]).env("NO_COLOR", "1").stdin(Stdio::null()).stdout(file.try_clone()?).stderr(file);
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    command.spawn().context("failed to start `codeact guest install`")?;
    Ok(log)
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
