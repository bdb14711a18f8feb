//! Where a codeact run would put its sandbox, for exclusive mode, where the model does not
//! choose it: a shell call counts as a codeact run only when the workspace it would get is the
//! project root itself and the program file it would read is inside it. (A subdirectory would
//! be a sandbox the model picked: the target of one of the project's protected links, a Python
//! environment, are protected as part of the project, not as a workspace of their own.)
//!
//! The workspace is the directory the shell is in after its leading `cd`s, or `--workspace`
//! taken from there; the program file is `--file`, taken from there. Each is resolved as the
//! shell and codeact would resolve it, against the file system, symlinks followed:
//!
//! - A `cd` takes exactly one argument, which the shell reads the same whatever its settings:
//!   `.`, or a path that starts with `/` or `./`, with no `..`. `cd` alone (home), `cd -` (the
//!   previous directory), options, `~`, `$VAR` and globs are refused; so is a bare name, which
//!   `CDPATH` or `cdable_vars` may send elsewhere, and `..`, which the shell takes from the path
//!   it came through (a symlink, maybe), not from where it is.
//! - codeact's arguments are read by codeact's own parser, so every spelling of a flag
//!   (`--workspace=DIR`, a repeated one, a new short one) is read as codeact reads it; a line
//!   it would refuse is no run. The paths given must be literal.
//! - What no file system check can follow is refused: the payload without an absolute `cwd`,
//!   a path that does not exist.

use std::path::{Component, Path};

use clap::Parser as _;

use crate::cli::{Cli, Command, RunArgs};
use crate::hook::shell::{Invocation, is_literal};
use crate::platform::{self, Canonical as _};
use crate::program;

/// Whether `run`, sent from `cwd`, has `root` (canonical) as its workspace and its `--file`
/// inside it.
#[must_use]
pub(crate) fn within(run: &Invocation, cwd: Option<&Path>, root: &Path) -> bool {
    let Some(mut dir) = cwd.filter(|cwd| cwd.is_absolute()).map(Path::to_path_buf) else { return false };
    for args in &run.cd {
        let [target] = args.as_slice() else { return false };
        if !plain_cd(target) {
            return false;
        }
        dir.push(target);
    }
    let Ok(dir) = dir.canonical() else { return false };
    let Some(args) = run_args(&run.args) else { return false };
    let resolved = |given: &Path| {
        let text = given.to_string_lossy();
        let plain = is_literal(&text) && !text.starts_with('=') && (!given.is_absolute() || program::is_fixed(given));
        plain.then(|| dir.join(given).canonical().ok()).flatten()
    };
    let workspace_ok = match args.common.workspace.as_deref() {
        None => dir == root,
        Some(given) => resolved(given).is_some_and(|workspace| workspace == root),
    };
    let file_ok =
        args.file.as_deref().is_none_or(|given| resolved(given).is_some_and(|file| platform::is_within(&file, root)));
    workspace_ok && file_ok && args.tools.dirs.is_empty()
}

/// Whether the shell's `cd` reads `target` the same way whatever its settings: `.`, or an
/// absolute or `./` path, literal, without `..`.
fn plain_cd(target: &str) -> bool {
    let anchored = target == "." || program::is_fixed(Path::new(target)) || target.starts_with("./");
    anchored && is_literal(target) && !Path::new(target).components().any(|c| c == Component::ParentDir)
}

/// codeact's run arguments, as its own parser reads `args`; `None` for a line it refuses.
fn run_args(args: &[String]) -> Option<RunArgs> {
    let cli = Cli::try_parse_from(std::iter::once("codeact").chain(args.iter().map(String::as_str))).ok()?;
    match cli.command {
        Some(Command::Run(args)) => Some(args),
        Some(_) => None,
        None => Some(cli.run),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn invocation(cd: &[&str], args: &[&str]) -> Invocation {
        Invocation {
            cd: cd.iter().map(|target| vec![(*target).to_owned()]).collect(),
            args: args.iter().map(|arg| (*arg).to_owned()).collect(),
        }
    }

    // A POSIX shell's `cd`, with Unix paths.
    #[cfg(unix)]
    #[test]
    fn cd_targets_must_read_the_same_in_every_shell() {
        for target in [".", "/repo", "./sub", "./sub/deeper/", "/a/./b"] {
            assert!(plain_cd(target), "{target}");
        }
        for target in [
            "..",
            "../x",
            "./a/../..",
            "/repo/..",
            "sub",
            ".git",
            "-",
            "-P",
            "~",
            "$HOME",
            "*",
            "",
            "/proc/self/cwd",
            "/dev/fd/3",
        ] {
            assert!(!plain_cd(target), "{target}");
        }
    }

    #[test]
    fn codeacts_own_parser_reads_the_arguments() {
        let dirs = |args: &[&str]| {
            let args: Vec<String> = args.iter().map(|arg| (*arg).to_owned()).collect();
            run_args(&args).map(|run| (run.common.workspace, run.file))
        };
        assert_eq!(dirs(&["run", "--workspace=/", "--code", "1"]), Some((Some("/".into()), None)));
        assert_eq!(dirs(&["--file=p.py"]), Some((None, Some("p.py".into()))));
        assert_eq!(dirs(&["run", "--code", "1", "--bogus"]), None);
        assert_eq!(dirs(&["discover"]), None);
    }

    #[test]
    fn without_an_absolute_cwd_nothing_is_within() {
        let run = invocation(&[], &["run", "--code", "1"]);
        assert!(!within(&run, None, Path::new("/")));
        assert!(!within(&run, Some(Path::new("rel")), Path::new("/")));
        #[cfg(unix)]
        assert!(within(&run, Some(Path::new("/")), Path::new("/")));
    }
}
