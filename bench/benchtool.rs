//! Two measurements for `bench/run` that Python's standard library cannot make well:
//!
//!     benchtool tokens FILE...             o200k_base tokens per file (`COUNT<TAB>PATH` lines),
//!                                          offline: the BPE ranks are compiled in
//!     benchtool rss OUT COMMAND [ARG...]   run COMMAND (stdio inherited), write its peak
//!                                          resident set in KiB to OUT, exit with its status
//!
//! `rss` exists because a child spawned by a large process (Python) inherits that process's
//! resident-set high-water mark at `exec`; spawned from this small one, the floor is a few MiB
//! (measure `true` to see it).

use std::io::Write as _;
#[cfg(unix)]
use std::process::Command;
use std::process::ExitCode;

#[cfg(unix)]
use nix::sys::resource::{UsageWho, getrusage};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.split_first() {
        Some((cmd, rest)) if cmd == "tokens" && !rest.is_empty() => tokens(rest),
        Some((cmd, [out, command, rest @ ..])) if cmd == "rss" => rss(out, command, rest),
        _ => Err("usage: benchtool tokens FILE... | benchtool rss OUT COMMAND [ARG...]".to_owned()),
    };
    result.unwrap_or_else(|message| {
        let _ = writeln!(std::io::stderr(), "benchtool: {message}");
        ExitCode::from(2)
    })
}

fn tokens(paths: &[String]) -> Result<ExitCode, String> {
    let encoding = tiktoken_rs::o200k_base_singleton();
    let mut out = std::io::stdout().lock();
    for path in paths {
        let text = std::fs::read_to_string(path).map_err(|err| format!("cannot read {path}: {err}"))?;
        let count = encoding.encode_with_special_tokens(&text).len();
        writeln!(out, "{count}\t{path}").map_err(|err| err.to_string())?;
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(unix)]
fn rss(out: &str, command: &str, args: &[String]) -> Result<ExitCode, String> {
    let status = Command::new(command).args(args).status().map_err(|err| format!("cannot run {command}: {err}"))?;
    // The only child this process ever had: the children's maximum is its peak.
    let usage = getrusage(UsageWho::RUSAGE_CHILDREN).map_err(|err| err.to_string())?;
    std::fs::write(out, format!("{}\n", usage.max_rss())).map_err(|err| format!("cannot write {out}: {err}"))?;
    Ok(ExitCode::from(u8::try_from(status.code().unwrap_or(1)).unwrap_or(1)))
}

/// The benchmarks measure peak memory on Unix only (`getrusage`).
#[cfg(not(unix))]
fn rss(_out: &str, _command: &str, _args: &[String]) -> Result<ExitCode, String> {
    Err("rss is measured on Unix only".to_owned())
}
