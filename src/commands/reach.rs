//! How a model reaches this codeact: the command line that runs it ([`invocation`]), or the
//! `run` tool of its MCP server ([`route`]), and whether a command written earlier, into an
//! instructions file, still runs anything ([`stale_command`]).

use std::path::{Path, PathBuf};

use clap::ValueEnum as _;

use crate::copilot;
use crate::env;
use crate::hook::shell;
use crate::platform::Canonical as _;
use crate::program;
use crate::route::Route;

/// How a model should run this codeact, as shell words: the plugin's launcher when this process
/// was started through it (`sh /…/bin/codeact`, which finds the binary again after an upgrade or
/// a `cargo clean`; `& 'C:/…/codeact.ps1'` for the PowerShell one), `codeact` when `PATH` finds
/// this very binary, else this binary's absolute path.
#[must_use]
pub(crate) fn invocation() -> String {
    let launcher = env::var(env::LAUNCHER).map(PathBuf::from).filter(|p| p.is_absolute() && p.is_file());
    let binary = current_binary();
    let on_path = launcher.is_none()
        && program::shell_would_run("codeact")
            .and_then(|file| file.canonical().ok())
            .is_some_and(|file| file == Path::new(&binary));
    spelled(launcher.as_deref(), &binary, on_path, cfg!(windows))
}

/// [`invocation`], from the launcher this process was started through, this binary's path and
/// whether `PATH` finds it as `codeact`. On Windows paths are written with `/`, which both
/// PowerShell and Git for Windows' `sh` read (a `\` is an escape to the one); a path that must
/// be quoted is run with PowerShell's call operator, the shell the Copilot CLI runs there (a
/// quoted word alone is a string to it, not a command).
fn spelled(launcher: Option<&Path>, binary: &str, on_path: bool, windows: bool) -> String {
    let slashed = |path: &str| if windows { path.replace('\\', "/") } else { path.to_owned() };
    if let Some(launcher) = launcher {
        let launcher = slashed(&launcher.to_string_lossy());
        if windows && launcher.to_ascii_lowercase().ends_with(".ps1") {
            return format!("& {}", shell::powershell_word(&launcher));
        }
        return format!("sh {}", shell::posix_word(&launcher));
    }
    if on_path {
        return "codeact".to_owned();
    }
    let binary = slashed(binary);
    let word = shell::posix_word(&binary);
    if windows && word != binary { format!("& {}", shell::powershell_word(&binary)) } else { word }
}

/// The program a command line names that is not there: `codeact` not on `PATH`, a binary or
/// launcher script that was removed (after a `cargo clean`, say). `None` when it runs, or when
/// the line is not one this can read.
#[must_use]
pub(crate) fn missing_program(command: &str) -> Option<String> {
    let commands = shell::parse(command)?;
    let words = &commands.first()?.words;
    let (program, rest) = words.split_first()?;
    let missing = match (program.as_str(), rest.first()) {
        ("sh" | "bash", Some(script)) => !Path::new(script).is_file(),
        (word, _) if word.contains('/') => !program::is_executable(Path::new(word)),
        (word, _) => program::shell_would_run(word).is_none(),
    };
    let shown = if matches!(program.as_str(), "sh" | "bash") { rest.first()? } else { program };
    missing.then(|| shown.clone())
}

/// The installed instructions file for `workspace` (repository or user level) whose command no
/// longer runs, with the program that is missing.
#[must_use]
pub(crate) fn stale_instructions(workspace: &Path) -> Option<(PathBuf, String)> {
    let (path, text) = copilot::installed_instructions(workspace)?;
    stale_command(&text).map(|missing| (path, missing))
}

/// The program the command of a generated file's text names that is gone, if it is.
#[must_use]
pub(crate) fn stale_command(text: &str) -> Option<String> {
    missing_program(copilot::command_in(text)?)
}

/// How the instructions this command writes or injects tell a model to run programs: `--route`
/// when given, else `$CODEACT_ROUTE`, else the MCP server's `run` tool when the plugin, which
/// bundles the server, runs this command, else a here-document for the shell. A value it does
/// not know counts as unset: the hooks must not fail on it.
#[must_use]
pub(crate) fn route(given: Option<Route>) -> Route {
    given
        .or_else(|| env::var(env::ROUTE).as_deref().and_then(named_route))
        .unwrap_or(if env::var(env::LAUNCHER).is_some() { Route::Mcp } else { Route::Bash })
}

/// The route `value` names, as `--route` spells it; `None` for one it does not know.
fn named_route(value: &str) -> Option<Route> {
    Route::from_str(value, false).ok()
}

/// The absolute path of this binary.
#[must_use]
pub(crate) fn current_binary() -> String {
    std::env::current_exe()
        .and_then(|p| p.canonical())
        .map_or_else(|_| "codeact".to_owned(), |p| p.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_route_is_named_as_the_flag_spells_it_and_any_other_value_names_none() {
        let named: Vec<Option<Route>> = ["mcp", "bash", "MCP", "shell", ""].into_iter().map(named_route).collect();
        assert_eq!(named, [Some(Route::Mcp), Some(Route::Bash), None, None, None]);
    }

    #[test]
    fn the_invocation_names_the_launcher_the_command_or_the_binary_as_each_system_reads_it() {
        let spell = |launcher: Option<&str>, binary: &str, on_path: bool, windows: bool| {
            spelled(launcher.map(Path::new), binary, on_path, windows)
        };
        assert_eq!(spell(Some("/p/bin/codeact"), "/x/codeact", true, false), "sh /p/bin/codeact");
        assert_eq!(spell(Some("/my p/bin/codeact"), "/x/codeact", false, false), "sh '/my p/bin/codeact'");
        assert_eq!(spell(None, "/x/codeact", true, false), "codeact");
        assert_eq!(spell(None, "/it's/codeact", false, false), r"'/it'\''s/codeact'");
        // Windows: `/` for `\`; the PowerShell launcher and a quoted path by the call operator.
        assert_eq!(spell(Some(r"C:\p\bin\codeact.ps1"), "x", false, true), "& C:/p/bin/codeact.ps1");
        assert_eq!(spell(Some(r"C:\my p\bin\codeact.PS1"), "x", false, true), "& 'C:/my p/bin/codeact.PS1'");
        assert_eq!(spell(Some(r"C:\p\bin\codeact"), "x", false, true), "sh C:/p/bin/codeact");
        assert_eq!(
            spell(None, r"C:\Users\me\.cargo\bin\codeact.exe", false, true),
            "C:/Users/me/.cargo/bin/codeact.exe"
        );
        assert_eq!(
            spell(None, r"C:\Program Files\codeact\codeact.exe", false, true),
            "& 'C:/Program Files/codeact/codeact.exe'"
        );
        assert_eq!(spell(None, r"C:\x\codeact.exe", true, true), "codeact");
    }
}
