//! codeact runs one Python program that calls a coding agent's tools (view, glob, grep, edit,
//! bash, sql, …) as functions inside a sandbox, and prints only what the program prints.
//!
//! [`run`] is the whole command line: it parses arguments, dispatches to one command in
//! `commands`, and turns any error into one message on stderr and an exit code.
//!
//! The modules are layers, each using only those listed before it (`scripts/check-layers`
//! holds the tree to that): the system beneath (`platform`); the leaves (`limits`, `digest`,
//! `hint`, `atomic`, `bounded`, `terminal`, `reap`, `program`, `paths`, `route`, `tls`); `env`, `exit` and `spawn`; `dirs` and
//! `copilot`; workspace `trust` and saved `session`s; `tools` and `hook`; `usertools` and `mcp`; the tool `catalog`;
//! the `sandbox` that serves tool calls; the CPython `guest`; the `backend`s; `config`; and on
//! top `render`, `output`, `cli` and the `commands`.
//!
//! The public surface is what the integration tests and benchmarks use: [`run`],
//! [`env::ALL`] and [`plugin_files`].

// The `hyperlight` backend's generated bindings name `alloc::` paths.
#[cfg(hyperlight)]
extern crate alloc;

mod atomic;
mod backend;
mod bounded;
mod catalog;
mod cli;
mod commands;
mod config;
mod copilot;
mod digest;
mod dirs;
pub mod env;
mod exit;
mod guest;
mod hint;
mod hook;
mod limits;
mod mcp;
mod output;
mod paths;
mod platform;
mod program;
mod reap;
mod render;
mod route;
mod sandbox;
mod session;
mod spawn;
mod terminal;
mod tls;
mod tools;
mod trust;
mod usertools;

use std::ffi::OsString;
use std::process::ExitCode;

use clap::{CommandFactory, Parser};

use crate::cli::{Cli, Command, McpCommand};

/// Runs codeact with these arguments and returns the process exit code.
pub fn run(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    static SIGNALS: std::sync::Once = std::sync::Once::new();
    SIGNALS.call_once(reap::on_signals);
    let args: Vec<OsString> = args.into_iter().collect();
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        // A hook fails open, even on what it was given: every `CODEACT_*` variable with a flag
        // is read here, and one a hook cannot parse must not deny every tool call.
        Err(err) if err.exit_code() != 0 && args.get(1).is_some_and(|arg| arg == "hook") => {
            let message = err.to_string();
            output::diagnostic(&format!("codeact hook: {} (allowing)", message.lines().next().unwrap_or_default()));
            return exit::code(exit::SUCCESS);
        }
        Err(err) => {
            // Help and version go to stdout; usage errors to stderr.
            let _ = err.print();
            return exit::code(u8::try_from(err.exit_code()).unwrap_or(exit::USAGE));
        }
    };
    let result = match &cli.command {
        Some(Command::Run(args)) => commands::run::run(args),
        Some(Command::Discover(args)) => commands::discover::run(args),
        Some(Command::Instructions(args)) => commands::instructions::run(args),
        Some(Command::Detect(args)) => commands::detect::run(args),
        Some(Command::Preflight(args)) => commands::preflight::run(args),
        Some(Command::Install(args)) => commands::install::install(args),
        Some(Command::Uninstall(args)) => commands::install::uninstall(args),
        Some(Command::Guest { command }) => commands::guest::run(command),
        Some(Command::Session { command }) => commands::session::run(command),
        Some(Command::Hook { event, host }) => commands::hook::run(*event, *host),
        Some(Command::Mcp { command: McpCommand::Serve(args) }) => commands::serve::run(args),
        Some(Command::Check(args)) => commands::check::run(args),
        Some(Command::Trust(args)) => commands::trust::run(args),
        Some(Command::Setup(args)) => commands::agents::run(args),
        None if cli.run.code.is_some() || cli.run.file.is_some() || cli.run.stdin.is_some() => {
            commands::run::run(&cli.run)
        }
        None => {
            let _ = Cli::command().print_help();
            return exit::code(exit::USAGE);
        }
    };
    let code = match result {
        Ok(code) => code,
        Err(err) => {
            output::error(&err);
            exit_code_for(&err)
        }
    };
    // A command that ended because codeact was signalled must not exit as if it had not been.
    reap::wait_for_signal_exit();
    exit::code(code)
}

/// The files of the Copilot CLI plugin folder that codeact renders from its templates, by path
/// in the folder: the agent, the install skill and its script.
pub fn plugin_files() -> anyhow::Result<Vec<(&'static str, String)>> {
    render::plugin_files()
}

/// The exit code an error means.
fn exit_code_for(err: &anyhow::Error) -> u8 {
    if err.downcast_ref::<config::InvalidConfig>().is_some() {
        exit::INVALID_CONFIG
    } else if err.downcast_ref::<backend::BackendUnavailable>().is_some() {
        exit::BACKEND_UNAVAILABLE
    } else if err.downcast_ref::<exit::UsageError>().is_some() {
        exit::USAGE
    } else {
        exit::PROGRAM_FAILED
    }
}
