//! `codeact run`: read a program, run it on the selected backend, print the outcome.

use std::io::{IsTerminal, Read};
use std::time::Instant;

use anyhow::{Context, Result};

use crate::UsageError;
use crate::backend;
use crate::cli::RunArgs;
use crate::config::Config;
use crate::exit;
use crate::mcp::Mcp;
use crate::output;
use crate::sandbox::{Capture, Host, Outcome};
use crate::tools::workspace::Workspace;
use crate::tools::{Registry, ToolContext};
use crate::usertools::load::load_reporting;
use crate::usertools::pyworker;

pub fn run(args: &RunArgs) -> Result<u8> {
    let config = Config::for_run(args)?;
    let backend = backend::select(config.backend)?.start();
    let program = read_program(args)?;
    let started = Instant::now();
    let workspace = Workspace::open(&config.workspace)
        .with_context(|| format!("failed to open workspace `{}`", config.workspace.display()))?;
    let mut ctx = ToolContext::new(workspace, started + config.limits.timeout);
    ctx.mcp = Mcp::load(&config.workspace);
    ctx.network = config.network.clone();
    ctx.dropin_files = pyworker::files(&config.workspace);
    let dropins = ctx
        .dropin_files
        .iter()
        .filter_map(|p| p.file_stem())
        .map(|s| (s.to_string_lossy().into_owned(), String::new()))
        .collect();
    let registry = Registry::with_mcp(&config.tools, !ctx.mcp.is_empty())
        .with_user_tools(&config.tools, load_reporting(&config.workspace))
        .with_dropins(&config.tools, dropins);
    let mut host = Host::new(registry, ctx, config.limits, started);
    let outcome = backend.run(&program, &mut host);
    if args.json {
        output::json(&outcome.to_json(config.limits.max_output)).context("failed to write to stdout")?;
    } else {
        report_text(&outcome, config.limits.max_output)?;
    }
    Ok(if outcome.success() { exit::SUCCESS } else { exit::PROGRAM_FAILED })
}

/// The program text from `--code`, `--file`, or stdin.
fn read_program(args: &RunArgs) -> Result<String> {
    if let Some(code) = &args.code {
        return Ok(code.clone());
    }
    if let Some(path) = &args.file {
        let bytes = std::fs::read(path)
            .map_err(|err| UsageError(format!("failed to read program `{}`: {err}", path.display())))?;
        return String::from_utf8(bytes)
            .map_err(|_| UsageError(format!("program `{}` is not UTF-8 text", path.display())).into());
    }
    let stdin = std::io::stdin();
    if args.stdin.is_none() && stdin.is_terminal() {
        return Err(UsageError(
            "no program given: pass --code CODE, --file PATH, or the program on stdin\n\
             hint: codeact run <<'PY'\nprint(glob(pattern=\"**/*.py\"))\nPY"
                .into(),
        )
        .into());
    }
    let mut bytes = Vec::new();
    stdin.lock().read_to_end(&mut bytes).context("failed to read the program from stdin")?;
    String::from_utf8(bytes).map_err(|_| UsageError("the program on stdin is not UTF-8 text".into()).into())
}

/// Text mode: stdout, the result's repr on its own line, then the program's stderr and any
/// error on stderr.
fn report_text(outcome: &Outcome, max_output: usize) -> Result<()> {
    let mut out = outcome.stdout.clone();
    if let Some(repr) = &outcome.return_repr {
        let mut capture = Capture::new(max_output);
        capture.push(repr);
        out.push_str(&capture.finish().0);
        out.push('\n');
    }
    output::data(out.as_bytes()).context("failed to write to stdout")?;
    if !outcome.stderr.is_empty() {
        output::diagnostic(&outcome.stderr);
    }
    if let Some(error) = &outcome.error {
        output::diagnostic(&error.traceback);
    }
    Ok(())
}
