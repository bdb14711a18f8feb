//! `codeact run`: read a program, run it on the selected backend, print the outcome.

use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use super::guest::Background;
use super::setup;
use crate::backend::{self, Backend, Choice, GuestSession, Prepared, monty};
use crate::catalog::Discovery;
use crate::cli::RunArgs;
use crate::config::Config;
use crate::exit::{self, UsageError};
use crate::guest::{self, GuestInstall};
use crate::hint::Hint;
use crate::output::{self, Report};
use crate::sandbox::live::lock;
use crate::sandbox::{Capture, GuestCache, Host, Outcome, Parts, Watchdog};
use crate::session;
use crate::tools::workspace::Workspace;
use crate::tools::{ToolContext, github};

pub(crate) fn run(args: &RunArgs) -> Result<u8> {
    if args.mcp_result || args.mcp_worker {
        // A run of `codeact mcp serve` ends with the server, even one killed outright: SIGTERM
        // ends the commands and servers it started too. Elsewhere (and here too) the run ends
        // when the server's end of its stdin closes (`serve::handoff`).
        #[cfg(target_os = "linux")]
        let _ = rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::TERM));
    }
    let config = setup::run_config(args)?;
    if args.mcp_worker {
        return super::worker::serve(args, &config);
    }
    let mut kept = match &args.session {
        Some(name) => Some(Kept::open(name, args.sessions_dir.as_deref(), config.backend, &config.workspace)?),
        None => None,
    };
    let backend = if kept.is_some() { Backend::Monty } else { backend::select(config.backend)? };
    let prepared = backend.prepare();
    let program = read_program(args)?;
    // The loader looks at the cache first thing (for a changed file, that means hashing it):
    // none of it is the program's time.
    say_guest_cache(&prepared);
    let report = match (args.json, args.mcp_result) {
        (_, true) => Report::Mcp,
        (true, false) => Report::Json,
        (false, false) => Report::Text,
    };
    let max_output = config.limits.max_output;
    let place = match kept.as_mut() {
        Some(kept) => Place::Session(kept),
        None => Place::Alone(prepared),
    };
    let outcome = run_program(&config, Program { backend, place, text: &program, report })?;
    if let Some(kept) = &kept
        && !args.session_unsaved
    {
        kept.save();
    }
    output::report(&outcome, report, max_output)?;
    Ok(if outcome.success() { exit::SUCCESS } else { exit::PROGRAM_FAILED })
}

/// A program to run, and where.
pub(super) struct Program<'a> {
    pub(super) backend: Backend,
    pub(super) place: Place<'a>,
    pub(super) text: &'a str,
    /// How the outcome is reported (by the watchdog, when it ends the run).
    pub(super) report: Report,
}

/// Where a program runs.
pub(super) enum Place<'a> {
    /// On its own, on the backend prepared for it.
    Alone(Prepared),
    /// In a session kept on Monty, saved between runs.
    Session(&'a mut Kept),
    /// In a CPython guest kept in memory for the programs of a session of `codeact mcp serve`.
    Guest(&'a mut GuestSession),
}

/// Runs `program` with `config`'s workspace, tools and limits, where it says. A served run
/// (`Report::Mcp`) streams what its program prints as it prints it.
pub(super) fn run_program(config: &Config, program: Program<'_>) -> Result<Outcome> {
    let Program { backend, place, text: program, report } = program;
    let started = Instant::now();
    let mut workspace = Workspace::open(&config.workspace)
        .with_context(|| format!("failed to open workspace `{}`", config.workspace.display()))?;
    // What the tools run stays as the user trusted it, whoever's folder it is.
    workspace.protect_tool_dirs(config.tool_dirs.iter().map(|dir| dir.path.as_path()).filter(|dir| dir.is_dir()));
    let github = github::access(&config.workspace);
    let built = setup::catalog(config, github.as_ref(), Discovery::Lazy, false);
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
    let max_output = config.limits.max_output;
    // The server shows a run that yields what it printed so far.
    let streamer = (report == Report::Mcp).then(|| Streamer::start(host.live().stdout()));
    let stream = streamer.as_ref().map(Streamer::capture);
    let watchdog = Watchdog::start(&host, backend.name(), move |outcome| {
        if let Some(stream) = &stream {
            send_streamed(stream);
        }
        let _ = output::report(outcome, report, max_output);
    });
    let outcome = match place {
        Place::Session(kept) => run_kept(kept, program, &mut host, config.backend, config.guest_install),
        Place::Guest(guest) => guest.run_in(program, &mut host),
        Place::Alone(prepared) => {
            let mut outcome = match monty_differs(config.backend, program) {
                Some((cpython, because)) => run_on(cpython, program, &mut host, because),
                None => prepared.run(program, &mut host),
            };
            if config.backend == Choice::Auto && outcome.beyond_monty.is_some() {
                outcome = run_on_cpython(outcome, program, &mut host, config.guest_install);
            }
            outcome
        }
    };
    watchdog.finish();
    if let Some(streamer) = streamer {
        streamer.finish();
    }
    Ok(outcome)
}

/// A session of `--session NAME`: its interpreter state, loaded before the program runs and
/// saved after it ends.
pub(super) struct Kept {
    name: String,
    /// The folder it is kept in.
    folder: PathBuf,
    /// The workspace whose session it is.
    workspace: PathBuf,
    /// Whether it is a server's (`--sessions-dir`), which ends with the server.
    served: bool,
    state: monty::Session,
}

impl Kept {
    /// The session `name`, as saved in `folder` (codeact's state folder when `None`; a new
    /// session when there is none), for a run on `choice` in `workspace`.
    pub(super) fn open(name: &str, folder: Option<&Path>, choice: Choice, workspace: &Path) -> Result<Self> {
        session::check_name(name)?;
        // The server's client cannot remove a session it never named: one that cannot be
        // loaded starts afresh, saying so.
        let served = folder.is_some();
        let folder = match folder {
            Some(folder) => folder.to_owned(),
            None => session::dir().ok_or_else(|| UsageError {
                message: "no folder to keep sessions in".into(),
                hint: Some(Hint::new("set XDG_STATE_HOME or HOME")),
            })?,
        };
        if session::folder_in(&folder, workspace) {
            return Err(UsageError {
                message: format!(
                    "sessions are kept in `{}`, inside the workspace, where a program could change them",
                    folder.display()
                ),
                hint: Some(Hint::new("set XDG_STATE_HOME to a folder outside the workspace")),
            }
            .into());
        }
        if !choice.keeps_state() {
            return Err(UsageError {
                message: format!("sessions keep their state on Monty only, not on `{}`", choice.name()),
                hint: Some(Hint::new("leave out --backend, or --session")),
            }
            .into());
        }
        let afresh = || Hint::new(format!("`codeact session rm {name}` starts it afresh"));
        // What the session holds counts against the memory limit of its programs.
        monty::Session::count_memory_from_here();
        let state = match session::load(&folder, name, workspace) {
            Ok(Some(saved)) => monty::Session::load(&saved).map_err(|why| UsageError {
                message: format!("the session `{name}` could not be loaded: {why}"),
                hint: Some(afresh()),
            })?,
            Ok(None) => monty::Session::new(),
            Err(refused) if served => {
                output::warning(&format!("{refused}; this session starts afresh"));
                let _ = std::fs::remove_file(session::file(&folder, name));
                monty::Session::new()
            }
            Err(refused) => return Err(UsageError { message: refused.to_string(), hint: Some(afresh()) }.into()),
        };
        Ok(Self { name: name.to_owned(), folder, workspace: workspace.to_owned(), served, state })
    }

    /// Saves the state for the next run, saying so when it cannot.
    pub(super) fn save(&self) {
        self.save_with(|state| session::save(&self.folder, &self.name, &self.workspace, state, self.served).map(drop));
    }

    /// Saves the state beside the session's file, for the server to put in place
    /// ([`session::save_pending`]); whether it was saved, saying so when it was not.
    pub(super) fn save_pending(&self) -> bool {
        self.save_with(|state| session::save_pending(&self.folder, &self.name, &self.workspace, state))
    }

    fn save_with(&self, save: impl FnOnce(&[u8]) -> std::io::Result<()>) -> bool {
        let saved =
            self.state.dump().map_err(anyhow::Error::msg).and_then(|state| save(&state).map_err(anyhow::Error::from));
        if let Err(err) = &saved {
            output::warning(&format!("the session `{}` could not be saved: {err:#}", self.name));
        }
        saved.is_ok()
    }
}

/// Runs `program` in the session `kept`, on Monty. On `auto`, a program Monty cannot run runs
/// again on CPython as it would without a session: without the session's state, and keeping
/// nothing of its own, which it says.
fn run_kept(kept: &mut Kept, program: &str, host: &mut Host, choice: Choice, fetch: GuestInstall) -> Outcome {
    let outcome = monty::run_in(&mut kept.state, program, host);
    if outcome.beyond_monty.is_none() {
        return outcome;
    }
    if choice != Choice::Auto {
        let note = "codeact: sessions keep their state on Monty, which cannot run this program; write it for \
                    Monty, or run it outside the session";
        return with_note(outcome, note);
    }
    let mut outcome = run_on_cpython(outcome, program, host, fetch);
    if outcome.fell_back.is_some() {
        outcome.stderr.push_str(
            "codeact: Monty cannot run this program, so it ran on CPython, which does not have the session's \
             variables; what it defined is not kept\n",
        );
    }
    outcome
}

/// How often a served run sends what its program printed since.
const STREAM_EVERY: Duration = Duration::from_millis(200);

/// Sends what a served run's program prints, as it prints it, to the server: a line
/// `{"printed": TEXT}` on stdout every [`STREAM_EVERY`] while there is news, before the report's
/// line. Each is within the output budget. One thread of the process sends for each run in turn
/// (a session's worker runs many), and waits while none runs.
struct Streamer {
    stdout: Arc<Mutex<Capture>>,
}

/// The capture of the run being streamed, if any, and a signal when that changes.
struct Streaming {
    run: Mutex<Option<Arc<Mutex<Capture>>>>,
    changed: std::sync::Condvar,
}

impl Streamer {
    fn start(stdout: &Arc<Mutex<Capture>>) -> Self {
        lock(stdout).stream();
        let streaming = streaming();
        *lock(&streaming.run) = Some(stdout.clone());
        streaming.changed.notify_one();
        Self { stdout: stdout.clone() }
    }

    fn capture(&self) -> Arc<Mutex<Capture>> {
        self.stdout.clone()
    }

    /// Stops streaming the run and sends what is left, before the report: the thread sends
    /// only while it holds the run, so nothing of this run comes after.
    fn finish(self) {
        *lock(&streaming().run) = None;
        send_streamed(&self.stdout);
    }
}

/// The process's streaming, its thread started at the first run.
fn streaming() -> &'static Streaming {
    static STREAMING: Streaming = Streaming { run: Mutex::new(None), changed: std::sync::Condvar::new() };
    static THREAD: std::sync::Once = std::sync::Once::new();
    THREAD.call_once(|| {
        let _ = std::thread::Builder::new().name("stream".into()).spawn(|| {
            let mut run = lock(&STREAMING.run);
            loop {
                if run.is_none() {
                    run = STREAMING.changed.wait(run).unwrap_or_else(std::sync::PoisonError::into_inner);
                    continue;
                }
                run = STREAMING
                    .changed
                    .wait_timeout(run, STREAM_EVERY)
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .0;
                if let Some(stdout) = run.as_ref() {
                    send_streamed(stdout);
                }
            }
        });
    });
    &STREAMING
}

/// Sends what `stdout` has had printed since it was last sent, if anything. One send at a
/// time: what the streamer took is written before the watchdog's last send and its report.
fn send_streamed(stdout: &Mutex<Capture>) {
    static SENDING: Mutex<()> = Mutex::new(());
    let _sending = lock(&SENDING);
    let Some(printed) = lock(stdout).take_streamed() else { return };
    let mut line = serde_json::json!({ "printed": printed }).to_string();
    line.push('\n');
    let _ = output::data(line.as_bytes());
}

/// What the wasm loader found in its cache, when it is news to the user.
fn say_guest_cache(prepared: &Prepared) {
    match prepared.guest_cache() {
        Some((GuestCache::Compiled, _)) => {
            output::diagnostic("codeact: compiling the CPython guest for this machine (once; under a minute)…");
        }
        Some((GuestCache::Recompiled, path)) => {
            output::warning(&format!("`{path}` changed since codeact wrote it; compiling the guest again"));
        }
        Some((GuestCache::Hit, _)) | None => {}
    }
}

/// A program Monty could not run, on `auto`: run again from the start on CPython, when it has
/// changed nothing yet (it called only tools that read) and CPython runs here. Otherwise
/// Monty's error stands, saying why it was not run again and what would run it.
fn run_on_cpython(monty: Outcome, program: &str, host: &mut Host, fetch: GuestInstall) -> Outcome {
    if let Some(tool) = host.changed_something() {
        let note = format!(
            "codeact: Monty cannot run this program, and it was not run again on CPython because it had \
             already called {tool}(), which may have changed something; write it for Monty, or run it with \
             `--backend wasm`"
        );
        return with_note(monty, &note);
    }
    match backend::cpython() {
        Ok(cpython) => run_on(cpython, program, host, monty.beyond_monty.unwrap_or_default()),
        Err(_) if fetch == GuestInstall::Auto && guest::installed().is_err() => {
            let hint = guest::INSTALL_HINT;
            let note = match super::guest::install_in_background() {
                Ok(Background::Started(log) | Background::UnderWay(log)) => format!(
                    "codeact: Monty cannot run this program, and CPython, which would, is being installed in the \
                     background (`{hint}`); run it again once that is done (its log: `{}`)",
                    log.display()
                ),
                Ok(Background::FailedLately(log)) => format!(
                    "codeact: Monty cannot run this program, and CPython, which would, could not be installed in \
                     the background lately (its log: `{}`); `{hint}` installs it",
                    log.display()
                ),
                Err(err) => format!(
                    "codeact: Monty cannot run this program, and CPython, which would, could not be installed in the \
                     background ({err:#}); `{hint}` installs it"
                ),
            };
            with_note(monty, &note)
        }
        Err(unavailable) => {
            if fetch == GuestInstall::Suggest {
                say_once_how_to_install(&unavailable.reason);
            }
            let note = format!(
                "codeact: Monty cannot run this program, and CPython, which would, is not installed \
                 (`{}` installs it); write it for Monty",
                guest::INSTALL_HINT
            );
            with_note(monty, &note)
        }
    }
}

/// On `auto`, a program that names something Monty runs with another answer than CPython's
/// ([`monty::differs_from_cpython`]) goes to CPython from the start, where CPython runs here:
/// that backend, and why.
fn monty_differs(choice: Choice, program: &str) -> Option<(Backend, String)> {
    if choice != Choice::Auto {
        return None;
    }
    let why = monty::differs_from_cpython(program)?;
    Some((backend::cpython().ok()?, why.to_owned()))
}

/// Runs `program` (again, from the start) on the CPython backend `cpython`, because Monty
/// cannot run it as CPython does.
fn run_on(cpython: Backend, program: &str, host: &mut Host, because: String) -> Outcome {
    host.start_over(cpython.name(), &because);
    let prepared = cpython.prepare();
    say_guest_cache(&prepared);
    let mut outcome = prepared.run(program, host);
    outcome.fell_back = Some(because);
    outcome
}

/// Tells the user, once per machine (a file in codeact's state folder marks it said), that
/// programs Monty cannot run would run on CPython once it is installed. Programs that need it
/// are the model's; the install is the user's.
fn say_once_how_to_install(why: &str) {
    let Some(marker) = crate::dirs::state().map(|dir| dir.join("cpython-install-suggested")) else { return };
    if marker.exists() {
        return;
    }
    output::diagnostic(&format!(
        "codeact: a program Monty cannot run would run on CPython, which is not installed here ({why}); \
         `{}` installs it (once; this is not said again)",
        guest::INSTALL_HINT
    ));
    let _ = crate::dirs::open_private(&marker, false);
}

/// `outcome` with `note` after its error's traceback.
fn with_note(mut outcome: Outcome, note: &str) -> Outcome {
    if let Some(error) = &mut outcome.error {
        error.traceback.push('\n');
        error.traceback.push_str(note);
    }
    outcome
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
