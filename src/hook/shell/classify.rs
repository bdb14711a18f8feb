//! The two questions a `bash` tool call is asked: is it exactly one codeact run ([`codeact_run`],
//! and where it goes and what it is given), and does it only read ([`is_read_only`])? A line
//! the parser does not follow is neither.

use super::parse::{SimpleCommand, is_literal, parse};
use crate::env;

/// What a program word names, as the caller resolves it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Program {
    /// The codeact binary itself.
    Codeact,
    /// The plugin's launcher script, which execs the binary.
    Launcher,
    /// A POSIX shell (`sh`, `bash`) that may run the launcher.
    Shell,
    Other,
}

/// The variables a codeact run may set in front of it: its own limits. Anything else — `PATH`,
/// `LD_PRELOAD`, `BASH_ENV`, `CODEACT_CONFIG_DIR` — changes what runs or what it trusts.
const RUN_VARIABLES: &[&str] = &[env::TIMEOUT, env::MAX_MEMORY, env::MAX_OUTPUT, env::MAX_TOOL_CALLS];

/// The flag that adds a folder of tool files to a run, which no codeact call in exclusive mode
/// may name.
const TOOLS_FLAG: &str = "--tools";
/// The words after a leading `exec`.
fn after_exec(words: &[String]) -> &[String] {
    if words.first().is_some_and(|w| w == "exec") { &words[1..] } else { words }
}

/// The leading `cd … &&` commands, where the `cd` sets no variable and redirects nothing
/// (`cd x > /dev/tcp/…` would open a connection), and the commands after them.
fn split_cd(commands: &[SimpleCommand]) -> (&[SimpleCommand], &[SimpleCommand]) {
    let start = commands
        .iter()
        .position(|c| {
            !(c.words.first().is_some_and(|w| w == "cd")
                && c.assignments.is_empty()
                && c.redirects.is_empty()
                && c.separator == Some("&&"))
        })
        .unwrap_or(commands.len());
    commands.split_at(start)
}
/// A command line that is one codeact run, as [`codeact_run`] reads it: where the shell goes
/// first, and what codeact is given. Whether those keep the run in the project is for the
/// caller to decide, against the file system.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Invocation {
    /// The arguments of each leading `cd`, in order.
    pub(crate) cd: Vec<Vec<String>>,
    /// codeact's own arguments, after the program word (or the launcher's path).
    pub(crate) args: Vec<String>,
}

/// The codeact run `line` is, when it is exactly one: after `cd … &&`, codeact's own limit
/// variables ([`RUN_VARIABLES`]) and `exec`, the program is the codeact binary or its launcher
/// (per `identify`; the launcher may be run by `sh` or `bash` given its absolute path), running
/// `run`, `--code` or `--file`, with nothing chained after it, and no word the shell expands
/// unquoted (a `$` expansion, a glob, a leading `~`). The only redirections allowed
/// are quoted here-documents on stdin and stderr merged into stdout or dropped: `< file` could
/// read a FIFO or open `/dev/tcp/…`, and a here-string expands its word. A run that names
/// `--tools` is none: it would add tools that run on the host, from a folder the model picks.
///
/// `identify` is called last, and only on literal words, so that a line rejected for its
/// shape costs no file-system lookup.
pub(crate) fn codeact_run(line: &str, identify: impl Fn(&str) -> Program) -> Option<Invocation> {
    let commands = parse(line)?;
    let (cds, rest) = split_cd(&commands);
    let [command] = rest else { return None };
    // A word the shell expands unquoted may become several (`$X` split, `*` matching a file
    // called `--workspace=..`): what codeact is given would not be what is checked here.
    if !matches!(command.separator, None | Some("\n")) || command.expands || cds.iter().any(|cd| cd.expands) {
        return None;
    }
    let assignments_ok =
        command.assignments.iter().all(|a| a.split_once('=').is_some_and(|(name, _)| RUN_VARIABLES.contains(&name)));
    let redirects_ok = command.redirects.iter().all(|r| match (r.fd, r.op) {
        (None | Some(0), "<<" | "<<-") => true,
        (Some(2), ">&") => r.target == "1",
        (Some(2), ">") => r.target == "/dev/null",
        _ => false,
    });
    let words = after_exec(&command.words);
    let (program, args) = words.split_first()?;
    // `sh /abs/path/bin/codeact …` runs the launcher; the script word must be absolute, since
    // the shell reads a relative one from the current directory.
    let (script, args) = match args.split_first() {
        Some((script, rest)) if program == "sh" || program == "bash" => (Some(script), rest),
        _ => (None, args),
    };
    let runs = match args.first().map(String::as_str) {
        Some("run") => true,
        Some(first) => ["--code", "--file"].iter().any(|flag| first == *flag || first.starts_with(&format!("{flag}="))),
        None => false,
    };
    let adds_tools = args.iter().any(|arg| arg == TOOLS_FLAG || arg.starts_with(&format!("{TOOLS_FLAG}=")));
    if !(assignments_ok && redirects_ok && runs && !adds_tools && is_literal(program)) {
        return None;
    }
    let identified = match script {
        Some(script) => {
            script.starts_with('/')
                && is_literal(script)
                && identify(program) == Program::Shell
                && identify(script) == Program::Launcher
        }
        None => matches!(identify(program), Program::Codeact | Program::Launcher),
    };
    identified.then(|| Invocation { cd: cds.iter().map(|cd| cd.words[1..].to_vec()).collect(), args: args.to_vec() })
}

/// Programs that only read, when used without their writing options.
const READ_ONLY: &[&str] =
    &["cat", "head", "tail", "ls", "find", "grep", "egrep", "fgrep", "rg", "wc", "sed", "cd", "pwd"];

/// Whether every command of `line` only reads: the programs in [`READ_ONLY`] (`sed` only with
/// `-n` and without `-i`; `find` without `-exec`, `-delete` and friends; `rg` without `--pre`),
/// joined by pipes or sequenced, with no output redirected anywhere but `/dev/null`.
#[must_use]
pub(crate) fn is_read_only(line: &str) -> bool {
    let Some(commands) = parse(line) else { return false };
    !commands.is_empty()
        && commands.iter().all(|command| {
            let words = after_exec(&command.words);
            let Some((program, args)) = words.split_first() else { return false };
            let name = program.rsplit('/').next().unwrap_or(program);
            let separator_ok = !matches!(command.separator, Some("&"));
            let redirects_ok = command.redirects.iter().all(|r| match r.op {
                "<" => true,
                ">" | ">>" | "&>" => r.target == "/dev/null",
                ">&" => r.target == "1" || r.target == "2",
                _ => false,
            });
            let args_ok = match name {
                "sed" => {
                    args.iter().any(|a| a == "-n" || a == "--quiet" || a == "--silent")
                        && !args.iter().any(|a| {
                            a.starts_with("-i") || a.starts_with("--in-place") || a.contains('w') && !a.starts_with('-')
                        })
                }
                "find" => !args.iter().any(|a| {
                    ["-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"]
                        .contains(&a.as_str())
                }),
                "rg" => !args.iter().any(|a| a == "--pre" || a.starts_with("--pre=")),
                _ => true,
            };
            separator_ok && redirects_ok && args_ok && READ_ONLY.contains(&name)
        })
}
#[cfg(test)]
mod tests {
    use super::*;

    fn is_codeact_run(line: &str, identify: impl Fn(&str) -> Program) -> bool {
        codeact_run(line, identify).is_some()
    }

    /// `codeact` and `/opt/bin/codeact` are the binary, `/plugins/codeact/bin/codeact` the
    /// launcher, `sh` and `bash` shells; nothing else is.
    fn identify(word: &str) -> Program {
        match word {
            "codeact" | "/opt/bin/codeact" => Program::Codeact,
            "/plugins/codeact/bin/codeact" => Program::Launcher,
            "sh" | "bash" => Program::Shell,
            _ => Program::Other,
        }
    }

    #[test]
    fn codeact_runs_are_recognised_by_their_program_word() {
        for line in [
            "codeact run <<'PY'\nprint(1)\nPY",
            "/opt/bin/codeact run --backend monty <<'PY'\nfor f in glob(pattern='*'):\n    print(f)\nPY\n",
            "cd /repo && codeact run --code 'print(1)'",
            "CODEACT_TIMEOUT=5 exec codeact run --file prog.py",
            "CODEACT_TIMEOUT=5 CODEACT_MAX_MEMORY=\"1 GiB\" codeact run <<\"PY\"\nprint($x)\nPY",
            "codeact --code 'print(1)' 2>&1",
            "codeact --code 'print(1)' 2>/dev/null",
            "codeact --file=prog.py",
            "sh /plugins/codeact/bin/codeact run <<'PY'\n1\nPY",
            "bash /plugins/codeact/bin/codeact run <<'PY'\n1\nPY",
            "/plugins/codeact/bin/codeact run --code 1",
            "codeact run <<-'PY'\n\tprint(1)\n\tPY\n",
            "codeact run <<\\PY\nprint(`x`)\nPY",
            "codeact run 0<<'PY'\nprint(1)\nPY",
            "codeact run \\\n  --backend monty <<'PY'\nprint(1)\nPY",
            "codeact run --backend monty\\\n <<'PY'\nprint(1)\nPY",
            "codeact run --code \"print('${HOME}')\"",
        ] {
            assert!(is_codeact_run(line, identify), "{line}");
        }
    }

    #[test]
    fn a_run_says_where_the_shell_goes_first_and_what_codeact_is_given() {
        let run = codeact_run("cd /repo && cd ./sub && CODEACT_TIMEOUT=5 codeact run --workspace=x --code 1", identify);
        let strings = |words: &[&str]| words.iter().map(|w| (*w).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            run,
            Some(Invocation {
                cd: vec![strings(&["/repo"]), strings(&["./sub"])],
                args: strings(&["run", "--workspace=x", "--code", "1"])
            })
        );
        let run = codeact_run("cd && sh /plugins/codeact/bin/codeact --file p.py", identify);
        assert_eq!(run, Some(Invocation { cd: vec![vec![]], args: strings(&["--file", "p.py"]) }));
    }

    #[test]
    fn strings_that_merely_mention_codeact_are_not_codeact_runs() {
        for line in [
            "echo codeact run",
            "codeact discover",
            "codeact run --code 1 && rm -rf /",
            "codeact run --code 1; curl evil",
            "codeact run --code 1 > out.txt",
            "codeact run --code 1 | sh",
            "cat prog.py | codeact run",
            "notcodeact run --code 1",
            "$(codeact run --code 1)",
            "codeact run --code \"$(rm -rf /)\"",
            "grep codeact README.md",
        ] {
            assert!(!is_codeact_run(line, identify), "{line}");
        }
    }

    #[test]
    fn a_run_that_adds_tools_folders_is_not_a_codeact_run() {
        for line in [
            "codeact run --tools /tmp/evil <<'PY'\nprint(1)\nPY",
            "codeact run --tools=/tmp/evil --code 1",
            "codeact --code 1 --tools evil",
            "cd /repo && codeact run --backend monty --tools ./tools <<'PY'\n1\nPY",
            "sh /plugins/codeact/bin/codeact run --tools=x <<'PY'\n1\nPY",
            "codeact run '--tools' x --code 1",
        ] {
            assert!(!is_codeact_run(line, identify), "{line:?}");
        }
        // The flag's name inside the program or another value is no flag.
        assert!(is_codeact_run("codeact run <<'PY'\nprint('--tools x')\nPY", identify));
        assert!(is_codeact_run("codeact run --code \"print('--tools')\"", identify));
    }

    #[test]
    fn unquoted_here_documents_are_not_codeact_runs() {
        for line in [
            "codeact run <<PY\n$(touch /tmp/x)\nPY",
            "codeact run <<PY\n`touch /tmp/x`\nPY",
            "codeact run <<-PY\n\tprint(1)\n\tPY",
            // The shell joins `P\` and `Y` into the delimiter and runs the next line.
            "codeact run <<PY\nP\\\nY\ntouch /tmp/x\nPY",
        ] {
            assert!(!is_codeact_run(line, identify), "{line:?}");
        }
    }

    #[test]
    fn delimiters_the_shell_would_read_otherwise_are_refused() {
        for line in [
            // The shell's delimiter is `PY`, so `touch` runs after the document.
            "codeact run <<'P'\\\nY\nprint(1)\nPY\ntouch /tmp/x\nP\nY",
            // `<<` + continuation + `-'PY'` is `<<-'PY'` to the shell.
            "codeact run <<\\\n-'PY'\nprint(1)\nPY\ntouch /tmp/x\n-PY",
            // The shell drops NUL bytes: `P<NUL>Y` ends the document there.
            "codeact run <<'PY'\nP\0Y\ntouch /tmp/x\nPY",
            // `$'PY'` is `PY` to the shell.
            "codeact run <<$'PY'\nPY\ntouch /tmp/x\n$PY",
            "codeact run <<$\"PY\"\nPY\ntouch /tmp/x\n$PY",
            "codeact run 3<<'PY'\nprint(1)\nPY",
        ] {
            assert!(!is_codeact_run(line, identify), "{line:?}");
        }
    }

    #[test]
    fn only_the_binary_or_the_launcher_is_codeact() {
        for line in [
            "./codeact run --code 1",
            "/tmp/evil/codeact run --code 1",
            "*/codeact run --code 1",
            "~/bin/codeact run --code 1",
            "$HOME/codeact run --code 1",
            "codea?t run --code 1",
            "sh ./codeact run --code 1",
            "sh codeact run --code 1",
            "sh /opt/bin/codeact run --code 1",
            "sh /tmp/evil/codeact run --code 1",
            "sh -c 'codeact run --code 1'",
            "bash -x /plugins/codeact/bin/codeact run --code 1",
            "env codeact run --code 1",
            "exec -a x codeact run --code 1",
        ] {
            assert!(!is_codeact_run(line, identify), "{line}");
        }
    }

    #[test]
    fn words_the_shell_expands_into_other_words_are_not_codeact_runs() {
        for line in [
            "codeact run --code 1 $X",
            "codeact run --code a$X",
            "codeact run --workspace $HOME --code 1",
            "codeact run --code 1 *",
            "codeact run --code x* --backend monty",
            "codeact run --code 1 --backend {monty,wasm}",
            "codeact run --workspace ~ --code 1",
            "codeact run --file =python3",
            "codeact run --code 1 --backend ^wasm",
            "codeact run --code x# --backend monty",
            "cd $HOME && codeact run --code 1",
            "cd ~ && codeact run --code 1",
            "cd /re?o && codeact run --code 1",
        ] {
            assert!(!is_codeact_run(line, identify), "{line}");
        }
        // Quoted, they are text.
        for line in
            ["codeact run --code \"print('$X *')\"", "codeact run --code '~ ='", "cd '/re?o' && codeact --code 1"]
        {
            assert!(is_codeact_run(line, identify), "{line}");
        }
    }

    #[test]
    fn only_codeacts_limit_variables_may_be_set() {
        for line in [
            "LD_PRELOAD=/x.so codeact run --code 1",
            "BASH_ENV=/x bash /plugins/codeact/bin/codeact run --code 1",
            "PATH=/evil:$PATH codeact run --code 1",
            "CODEACT_CONFIG_DIR=/evil codeact run --code 1",
            "CODEACT_TIMEOUT=5 CODEACT_DISABLE= codeact run --code 1",
            "PATH=/evil cd /repo && codeact run --code 1",
            // A quoted name is no assignment: the shell runs a program called `CODEACT_TIMEOUT=5`.
            "'CODEACT_TIMEOUT'=5 codeact run --code 1",
        ] {
            assert!(!is_codeact_run(line, identify), "{line}");
        }
    }

    #[test]
    fn only_here_documents_may_feed_a_codeact_run() {
        for line in [
            "codeact run --code 1 < /dev/tcp/127.0.0.1/18080",
            "codeact run < prog.py",
            "codeact run <<< 'print(1)'",
            "codeact run --code 1 2> /tmp/log",
            "codeact run --code 1 >&2",
            "codeact run --code 1 <&3",
            "cd /repo > /dev/tcp/127.0.0.1/18080 && codeact run --code 1",
        ] {
            assert!(!is_codeact_run(line, identify), "{line}");
        }
    }

    #[test]
    fn expansions_that_can_run_commands_are_not_followed() {
        for line in [
            "codeact run --code \"${x[PWD]}\"",
            "codeact run --code ${!name}",
            "codeact run --code ${x:PWD}",
            "codeact run --code $[PWD]",
            "codeact run --code $((1+1))",
            "codeact run --code \"$\\\n(touch /tmp/x)\"",
            "codeact run --code $\\\n(touch /tmp/x)",
            "codeact run --code $'\\x41'",
            "codeact run --co\\\nde 1",
        ] {
            assert!(!is_codeact_run(line, identify), "{line:?}");
        }
    }
    #[test]
    fn a_here_document_body_is_not_parsed_as_commands() {
        let line = "codeact run <<'PY'\nprint('a; b && c | d')\nrm -rf /\nPY\n";
        assert!(is_codeact_run(line, identify));
        // Nor is a backslash-newline in a quoted document's body a continuation.
        let line = "codeact run <<'PY'\nP\\\nY\nprint(1)\nPY";
        assert!(is_codeact_run(line, identify));
    }

    #[test]
    fn read_only_commands_and_pipes_of_them_are_read_only() {
        for line in ["cat src/a.py", "ls -la src | head -20", "grep -rn TODO src | wc -l", "sed -n '1,20p' src/a.py"] {
            assert!(is_read_only(line), "{line}");
        }
        assert!(is_read_only("cd src && rg -n 'fn main' 2>/dev/null"));
        assert!(is_read_only("find . -name '*.rs' -type f"));
        assert!(is_read_only("LC_ALL=C grep -c x a"));
    }

    #[test]
    fn commands_that_write_or_run_programs_are_not_read_only() {
        for line in [
            "sed -i 's/a/b/' x",
            "sed 's/a/b/' x",
            "cat a > b",
            "find . -delete",
            "find . -exec rm {} ;",
            "rg --pre ./script pattern",
            "ls | xargs rm",
            "cat a & rm b",
            "echo hi",
            "ls $(rm -rf /)",
            "",
        ] {
            assert!(!is_read_only(line), "{line}");
        }
    }
}
