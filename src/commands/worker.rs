//! `codeact run --mcp-worker`: one session of `codeact mcp serve`, kept in memory. The server
//! starts it at the session's first call and hands it each program its client runs in the
//! session, one at a time ([`serve::handoff`](super::serve::handoff)); it runs each as
//! `codeact run --mcp-result --session` would, reports it the same way, and keeps the
//! interpreter for the next. The state is also saved after each run is reported, for the server
//! to put in place: a worker that ends (its run crashed, passed its deadline or its memory, or
//! was stopped) is started again from what the last run that ended saved.
//!
//! A worker is a process of its own, so what ends it ends its session only. Its memory, the
//! session's state included, counts against each of its programs' `--max-memory`.

use std::io::Write as _;
use std::sync::mpsc;
use std::time::Duration;

use anyhow::{Context as _, Result};

use super::run::{Kept, Place, Program, run_program};
use super::serve::handoff::{self, Settings};
use super::setup;
use crate::backend::{self, Backend, Choice, GuestSession, monty};
use crate::cli::RunArgs;
use crate::config::Config;
use crate::exit;
use crate::output::{self, Report};

/// Runs the programs the server hands over until it closes the pipe. The configuration is read
/// again for each, as each `codeact run` reads it: a `codeact trust` or an edited config takes
/// effect at the next call.
pub(super) fn serve(args: &RunArgs, config: &Config) -> Result<u8> {
    // On the interpreter's thread throughout: a Monty run then needs no thread of its own.
    monty::with_interpreter_thread(|| serve_on_this_thread(args, config))
        .context("the worker's thread could not start, or panicked")?
}

fn serve_on_this_thread(args: &RunArgs, config: &Config) -> Result<u8> {
    let name = args.session.as_deref().context("a worker needs --session")?;
    // The server starts workers only for a backend that keeps state: Monty, or a CPython one.
    let held = match config.backend {
        Choice::Auto | Choice::Monty => None,
        Choice::Wasm | Choice::Hyperlight => GuestSession::new(backend::select(config.backend)?),
    };
    let mut held = match held {
        Some(guest) => Held::Guest(guest?),
        None => Held::Saved(Kept::open(name, args.sessions_dir.as_deref(), config.backend, &config.workspace)?),
    };
    for (settings, program) in requests() {
        let program = String::from_utf8(program).context("the program the server handed over is not UTF-8 text")?;
        let mut config = setup::run_config(args)?;
        config.limits.timeout = Duration::try_from_secs_f64(settings.timeout)
            .with_context(|| format!("the server handed over a timeout of {} s", settings.timeout))?;
        config.limits.read_only |= settings.read_only;
        let (backend, place) = match &mut held {
            Held::Saved(kept) => (Backend::Monty, Place::Session(kept)),
            Held::Guest(guest) => (guest.backend(), Place::Guest(guest)),
        };
        let outcome = run_program(&config, Program { backend, place, text: &program, report: Report::Mcp })?;
        // The report writes nothing on stderr: the end line goes first, so that the server has
        // it as soon as it has the report.
        say_ended(&settings);
        output::report(&outcome, Report::Mcp, config.limits.max_output)?;
        // Saved after the run is reported, so that the answer does not wait for it, and beside
        // the session's file: the server puts it in place once it has the report, before it
        // may end the worker or another call loads the state. A worker it stopped before it
        // had the report leaves the state as it was, as the server answers.
        let saved = match &held {
            Held::Saved(kept) => kept.save_pending(),
            Held::Guest(_) => false,
        };
        output::data(if saved { b"{\"saved\":true}\n" } else { b"{\"saved\":false}\n" })?;
    }
    Ok(exit::SUCCESS)
}

/// Where a worker keeps its session.
#[expect(clippy::large_enum_variant, reason = "a worker holds one, for as long as it runs")]
enum Held {
    /// On Monty, whose state is saved after each run.
    Saved(Kept),
    /// In a CPython guest, whose state lives in memory only: a worker that ends loses it.
    Guest(GuestSession),
}

/// Tells the server, on stderr, that what was written there before is the run's.
fn say_ended(settings: &Settings) {
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "\n{}", settings.end);
    let _ = stderr.flush();
}

/// The programs the server hands over, read on a thread of their own: once the server closes
/// the pipe (it ended, however it ended), the worker ends as SIGTERM would end it, in the
/// middle of a run too.
fn requests() -> mpsc::Receiver<(Settings, Vec<u8>)> {
    let (send, requests) = mpsc::sync_channel(0);
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin().lock();
        loop {
            match handoff::read_for_worker(&mut stdin) {
                Ok(Some(request)) => {
                    if send.send(request).is_err() {
                        return;
                    }
                }
                Ok(None) => break,
                Err(err) => {
                    output::warning(&format!("the server handed over what is not a program: {err}"));
                    break;
                }
            }
        }
        crate::reap::end_as_if_stopped();
    });
    requests
}
