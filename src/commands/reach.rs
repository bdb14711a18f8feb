//! How a model reaches this codeact: the command line that runs it ([`invocation`]), or the
//! `run` tool of its MCP server ([`route`]), and whether a command written earlier, into an
//! instructions file, still runs anything ([`stale_command`]).

use std::path::{Path, PathBuf};

use clap::ValueEnum as _;

use crate::copilot;
use crate::env;
use crate::hook::shell;
use crate::program;
use crate::route::Route;

/// How a model should run this codeact, as shell words: the plugin's launcher when this process
/// was started through it (`sh /…/bin/codeact`, which finds the binary again after an upgrade or
/// a `cargo clean`), `codeact` when `PATH` finds this very binary, else this binary's absolute
/// path.
#[must_use]
pub(crate) fn invocation() -> String {
    if let Some(launcher) = env::var(env::LAUNCHER).map(PathBuf::from).filter(|p| p.is_absolute() && p.is_file()) {
        return format!("sh {}", shell_quote(&launcher.display().to_string()));
    }
    let binary = current_binary();
    let found = program::shell_would_run("codeact").and_then(|file| file.canonicalize().ok());
    if found.is_some_and(|file| file == Path::new(&binary)) {
        return "codeact".to_owned();
    }
    shell_quote(&binary)
}

/// `word` as the shell reads it back: as it is when it holds only safe characters, else in
/// single quotes.
#[must_use]
pub(crate) fn shell_quote(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "/._-+@%,:=".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
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
        .and_then(|p| p.canonicalize())
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
    fn a_word_is_quoted_only_when_the_shell_would_read_it_otherwise() {
        let quoted: Vec<String> = ["/usr/bin/codeact", "/a b/it's", "", "$HOME"].into_iter().map(shell_quote).collect();
        assert_eq!(quoted, ["/usr/bin/codeact", r"'/a b/it'\''s'", "''", "'$HOME'"]);
    }
}
