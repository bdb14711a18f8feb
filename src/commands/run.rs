//! `codeact run`: read a program, run it on the selected backend, print the outcome.

use std::io::{IsTerminal, Read};
use std::time::Instant;

use anyhow::{Context, Result};

use super::setup;
use crate::backend;
use crate::catalog::Discovery;
use crate::cli::RunArgs;
use crate::exit::{self, UsageError};
use crate::hint::Hint;
use crate::output::{self, Report};
use crate::sandbox::{GuestCache, Host, Parts, Watchdog};
use crate::tools::workspace::Workspace;
use crate::tools::{ToolContext, github};

pub(crate) fn run(args: &RunArgs) -> Result<u8> {
    if args.mcp_result {
        // A run of `codeact mcp serve` ends with the server, even one killed outright: SIGTERM
        // ends the commands and servers it started too. Elsewhere (and here too) the run ends
        // when the server's end of its stdin closes (`serve::handoff`).
        #[cfg(target_os = "linux")]
        let _ = rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::TERM));
    }
    let config = setup::run_config(args)?;
    let backend = backend::select(config.backend)?;
    let prepared = backend.prepare();
    let program = read_program(args)?;
    // The loader looks at the cache first thing (for a changed file, that means hashing it):
    // none of it is the program's time.
    match prepared.guest_cache() {
        Some((GuestCache::Compiled, _)) => {
            output::diagnostic("codeact: compiling the CPython guest for this machine (once; under a minute)…");
        }
        Some((GuestCache::Recompiled, path)) => {
            output::warning(&format!("`{path}` changed since codeact wrote it; compiling the guest again"));
        }
        Some((GuestCache::Hit, _)) | None => {}
    }
    let started = Instant::now();
    let mut workspace = Workspace::open(&config.workspace)
        .with_context(|| format!("failed to open workspace `{}`", config.workspace.display()))?;
    // What the tools run stays as the user trusted it, whoever's folder it is.
    workspace.protect_tool_dirs(config.tool_dirs.iter().map(|dir| dir.path.as_path()).filter(|dir| dir.is_dir()));
    let github = github::access(&config.workspace);
    let built = setup::catalog(&config, github.as_ref(), Discovery::Lazy, false);
    let deadline = started + config.limits.timeout;
    let ctx = ToolContext::new(workspace, deadline, config.limits.max_memory, config.network.clone(), github);
    let mut host = Host::new(Parts {
        catalog: built.catalog,
        ctx,
        mcp: built.mcp,
        dropins: built.dropins,
        limits: config.limits,
        started,
        python: backend.python_runner(),
    });
    let report = match (args.json, args.mcp_result) {
        (_, true) => Report::Mcp,
        (true, false) => Report::Json,
        (false, false) => Report::Text,
    };
    let max_output = config.limits.max_output;
    let watchdog = Watchdog::start(&host, backend.name(), move |outcome| {
        let _ = output::report(outcome, report, max_output);
    });
    let outcome = prepared.run(&program, &mut host);
    watchdog.finish();
    output::report(&outcome, report, max_output)?;
    Ok(if outcome.success() { exit::SUCCESS } else { exit::PROGRAM_FAILED })
}

/// The program text from `--code`, `--file`, or stdin.
fn read_program(args: &RunArgs) -> Result<String> {
    let usage = |message: String| UsageError { message, hint: None };
    if let Some(code) = &args.code {
        return Ok(code.clone());
    }
    if let Some(path) = &args.file {
        let bytes =
            std::fs::read(path).map_err(|err| usage(format!("failed to read program `{}`: {err}", path.display())))?;
        return String::from_utf8(bytes)
            .map_err(|_| usage(format!("program `{}` is not UTF-8 text", path.display())).into());
    }
    let stdin = std::io::stdin();
    if args.mcp_result {
        let program = super::serve::handoff::read_program(&mut stdin.lock())
            .map_err(|err| usage(format!("failed to read the program the server handed over: {err}")))?;
        super::serve::handoff::end_with_the_server(stdin);
        return String::from_utf8(program).map_err(|_| usage("the program is not UTF-8 text".into()).into());
    }
    if args.stdin.is_none() && stdin.is_terminal() {
        return Err(UsageError {
            message: "no program given: pass --code CODE, --file PATH, or the program on stdin".into(),
            hint: Some(Hint::new("codeact run <<'PY'\nprint(glob(pattern=\"**/*.py\"))\nPY")),
        }
        .into());
    }
    let mut bytes = Vec::new();
    stdin.lock().read_to_end(&mut bytes).context("failed to read the program from stdin")?;
    String::from_utf8(bytes).map_err(|_| usage("the program on stdin is not UTF-8 text".into()).into())
}
