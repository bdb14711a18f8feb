//! The two questions a `powershell` tool call is asked, as the POSIX classifier answers them for
//! a `bash` one: is it exactly one codeact run, and does it only read? A line the parser does
//! not follow is neither.

use super::cmdlets::{self, Reader};
use super::lex::{Command, Word, parse};
use crate::hook::shell::{Invocation, Program};

/// The flag that adds a folder of tool files to a run, which no codeact call in exclusive mode
/// may name.
const TOOLS_FLAG: &str = "--tools";

/// The codeact run `line` is, when it is exactly one: a single-quoted here-string piped into
/// codeact (`@'`, the program, `'@ | codeact run`), or codeact run on its own, with nothing
/// before or after it. The program word is bare or follows the call operator (`& 'C:\Program
/// Files\…\codeact.exe'`), names the codeact binary or its launcher (per `identify`), and runs
/// `run`, `--code` or `--file`, without `--tools`. The only redirections are `2>$null` and
/// `2>&1`.
///
/// codeact's arguments must reach it as they are written here ([`is_passed_as_written`]).
/// There is no leading `cd`: `Set-Location x; …` would run codeact where it was when the
/// location does not exist, so the workspace is named with `--workspace`. `$env:` variables
/// are never set. A double-quoted here-string (`@"`) expands `$x` and `$(…)`: it is refused.
///
/// `identify` is called last, and only on a literal program word.
pub(crate) fn codeact_run(line: &str, identify: impl Fn(&str) -> Program) -> Option<Invocation> {
    let line = parse(line)?;
    let [command] = line.commands.as_slice() else { return None };
    if !matches!(command.separator, None | Some("\n")) {
        return None;
    }
    let (program, args) = command.words.split_first()?;
    let args: Vec<String> =
        args.iter().map(|arg| is_passed_as_written(arg).then(|| arg.text.clone())).collect::<Option<_>>()?;
    let runs = match args.first().map(String::as_str) {
        Some("run") => true,
        Some(first) => ["--code", "--file"].iter().any(|flag| first == *flag || first.starts_with(&format!("{flag}="))),
        None => false,
    };
    let adds_tools = args.iter().any(|arg| arg == TOOLS_FLAG || arg.starts_with(&format!("{TOOLS_FLAG}=")));
    if !(runs && !adds_tools && is_program_word(program, command.call)) {
        return None;
    }
    matches!(identify(&program.text), Program::Codeact | Program::Launcher).then(|| Invocation { cd: Vec::new(), args })
}

/// Whether `word` names a program file as it is written: a bare word, or a quoted one after the
/// call operator (a quoted word alone is a string, not a command), with no wildcard (PowerShell
/// resolves `codeac?` to the command it matches) and no `~`.
fn is_program_word(word: &Word, call: bool) -> bool {
    (call || !word.quoted)
        && !word.text.is_empty()
        && word.text.chars().all(|c| c.is_ascii_alphanumeric() || "-_.:\\/ ".contains(c))
}

/// Whether PowerShell passes `word` to a program as the one argument it reads here, in Windows
/// PowerShell's legacy quoting too. Refused: an empty string (dropped), a `"` or a trailing
/// backslash (PowerShell wraps an argument with a space in quotes without escaping either, so
/// the program would split it elsewhere), a bare word that starts with `-` and holds anything
/// but letters, digits, `-` and `_` (Windows PowerShell splits `-a.b` into `-a` and `.b`), a
/// bare word that starts like a number but is not plain digits (`1kb` is passed as `1024`), a
/// bare word with a wildcard or `~` (expanded for programs outside Windows), and `--` and
/// `--%`, which PowerShell may take for itself.
fn is_passed_as_written(word: &Word) -> bool {
    let text = word.text.as_str();
    let kept = !text.is_empty() && !text.contains('"') && !text.ends_with('\\') && text != "--" && text != "--%";
    let bare_ok = word.quoted
        || if text.starts_with('-') {
            text.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        } else if text.starts_with(|c: char| c.is_ascii_digit() || c == '.' || c == '+') {
            text.chars().all(|c| c.is_ascii_digit())
        } else {
            !text.contains(['*', '?', '~', '!'])
        };
    kept && bare_ok
}

/// Whether every command of `line` only reads: the commands of [`cmdlets`], without the
/// parameters that write, joined by pipes, `;` or newlines, their errors dropped or merged at
/// most. Script blocks are never lexed, so `Where-Object` and `Sort-Object` take property names
/// only; nothing is run through `&`.
#[must_use]
pub(crate) fn is_read_only(line: &str) -> bool {
    let Some(line) = parse(line) else { return false };
    line.here_string.is_none() && !line.commands.is_empty() && line.commands.iter().all(reads_only)
}

fn reads_only(command: &Command) -> bool {
    let Some((name, args)) = command.words.split_first() else { return false };
    if command.call || name.quoted {
        return false;
    }
    let unquoted = || args.iter().filter(|arg| !arg.quoted).map(|arg| arg.text.as_str());
    match cmdlets::reader(&name.text) {
        Some(Reader::Cmdlet(refused)) => !unquoted().any(|arg| cmdlets::is_refused_parameter(arg, refused)),
        Some(Reader::Ripgrep) => !args.iter().any(|arg| arg.text == "--pre" || arg.text.starts_with("--pre=")),
        None => false,
    }
}

/// What a plain read in PowerShell reads, for a suggestion to read it with codeact's tools.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PlainRead {
    /// `Get-Content <file>` (or `gc`, `cat`, `type`).
    File(String),
    /// `Get-ChildItem [<folder>]` (or `gci`, `ls`, `dir`); `.` when none is named.
    Folder(String),
}

/// The file or folder `line` reads, when it is one plain read: one command, no parameter, at
/// most one path, with no wildcard or `~`.
#[must_use]
pub(crate) fn plain_read(line: &str) -> Option<PlainRead> {
    let line = parse(line)?;
    let [command] = line.commands.as_slice() else { return None };
    let (name, args) = command.words.split_first()?;
    let literal = |word: &Word| {
        !word.text.is_empty() && !word.text.starts_with('-') && !word.text.contains(['*', '?', '[', ']', '~'])
    };
    if line.here_string.is_some() || command.call || name.quoted || !args.iter().all(literal) {
        return None;
    }
    let name = name.text.to_ascii_lowercase();
    match (name.as_str(), args) {
        ("get-content" | "gc" | "cat" | "type", [file]) => Some(PlainRead::File(file.text.clone())),
        ("get-childitem" | "gci" | "ls" | "dir", []) => Some(PlainRead::Folder(".".to_owned())),
        ("get-childitem" | "gci" | "ls" | "dir", [folder]) => Some(PlainRead::Folder(folder.text.clone())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_codeact_run(line: &str) -> bool {
        codeact_run(line, identify).is_some()
    }

    /// `codeact`, `codeact.exe` and `C:\Tools\codeact.exe` (with a space too) are the binary,
    /// `C:\plugin\bin\codeact.ps1` the launcher; nothing else is.
    fn identify(word: &str) -> Program {
        match word {
            "codeact" | "codeact.exe" | r"C:\Tools\codeact.exe" | r"C:\Program Files\codeact\codeact.exe" => {
                Program::Codeact
            }
            r"C:\plugin\bin\codeact.ps1" => Program::Launcher,
            _ => Program::Other,
        }
    }

    fn strings(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| (*w).to_owned()).collect()
    }

    #[test]
    fn a_here_string_piped_into_codeact_is_a_codeact_run() {
        for line in [
            "@'\nprint(1)\n'@ | codeact run",
            "@'\r\nprint(1)\r\n'@ | codeact run\r\n",
            "@'\nfor f in glob(pattern='*'):\n    print(f)\n'@ | codeact.exe run --backend monty",
            "@'  \nprint(\"$(rm -rf /)\" + '`n')\n'@|codeact run",
            "@'\nprint(1)\n'@ |\n  codeact run --backend monty 2>&1",
            "@'\nprint(1)\n'@ | codeact run 2>$null",
            "@'\nprint(1)\n'@ | codeact run 2> $NULL # all of it",
            "@'\nprint(1)\n'@ | C:\\Tools\\codeact.exe run",
            "@'\nprint(1)\n'@ | & 'C:\\Program Files\\codeact\\codeact.exe' run",
            "@'\nprint(1)\n'@ | & \"C:\\Program Files\\codeact\\codeact.exe\" run",
            "@'\nprint(1)\n'@ | C:\\plugin\\bin\\codeact.ps1 run",
            "\n# a comment\n@'\nprint(1)\n'@ | codeact run\n\n",
            "codeact run --code 'print(1)'",
            "codeact --code 'print(1)'",
            "codeact --file prog.py",
            "codeact run --timeout 30 --code '1'",
        ] {
            assert!(is_codeact_run(line), "{line:?}");
        }
    }

    #[test]
    fn a_run_is_read_as_the_posix_one_is_with_no_cd() {
        let run = codeact_run("@'\nprint(1)\n'@ | codeact run --workspace 'C:\\my repo' --backend monty", identify);
        assert_eq!(
            run,
            Some(Invocation {
                cd: Vec::new(),
                args: strings(&["run", "--workspace", r"C:\my repo", "--backend", "monty"])
            })
        );
        let run = codeact_run("codeact --code 'print(''it''''s'')'", identify);
        assert_eq!(run, Some(Invocation { cd: Vec::new(), args: strings(&["--code", "print('it''s')"]) }));
    }

    #[test]
    fn the_here_string_body_is_not_parsed_as_commands() {
        let line = "@'\nprint('a; b | c')\nRemove-Item -Recurse C:\\\n$(iex x)\n  '@\n'@ | codeact run";
        assert_eq!(codeact_run(line, identify).map(|run| run.args), Some(strings(&["run"])));
    }

    #[test]
    fn a_here_string_ends_where_powershell_ends_it() {
        for line in [
            // The typographic quote ends it too: `Remove-Item` runs after the string.
            "@'\nprint(1)\n’@ | Remove-Item x\n'@ | codeact run",
            // No terminator at the start of a line: the string never ends.
            "@'\nprint(1)\n  '@ | codeact run",
            "@'\nprint(1) '@ | codeact run",
            "@'\nprint(1)\n'@",
            // Anything after the header on its line.
            "@' x\nprint(1)\n'@ | codeact run",
            "@'print(1)\n'@ | codeact run",
            // Anything glued to the terminator.
            "@'\nprint(1)\n'@x | codeact run",
        ] {
            assert!(!is_codeact_run(line), "{line:?}");
        }
    }

    #[test]
    fn double_quoted_here_strings_and_expansions_are_not_codeact_runs() {
        for line in [
            "@\"\nprint(1)\n\"@ | codeact run",
            "@“\nprint(1)\n”@ | codeact run",
            "codeact run --code \"$(Remove-Item x)\"",
            "codeact run --code \"print(`$x)\"",
            "codeact run --code $x",
            "codeact run --workspace $HOME",
            "codeact run --workspace $env:TEMP --code 1",
            "codeact run --code @(1)",
            "codeact run @args",
            "codeact run --code (Get-Content p.py)",
            "codeact run --code {1}",
            "codeact run --code [char]65",
            "codeact run --code 1,2",
            "$env:CODEACT_TIMEOUT=5; codeact run --code 1",
            "$env:PATH='C:\\evil'; @'\n1\n'@ | codeact run",
        ] {
            assert!(!is_codeact_run(line), "{line:?}");
        }
    }

    #[test]
    fn nothing_may_run_before_or_after_a_codeact_run() {
        for line in [
            "@'\nprint(1)\n'@ | codeact run; Remove-Item x",
            "@'\nprint(1)\n'@ | codeact run\nRemove-Item x",
            "@'\nprint(1)\n'@ | codeact run | Out-File x",
            "@'\nprint(1)\n'@ | codeact run && rm x",
            "@'\nprint(1)\n'@ | codeact run || rm x",
            "@'\nprint(1)\n'@ | codeact run &",
            "@'\nprint(1)\n'@ | codeact run > out.txt",
            "@'\nprint(1)\n'@ | codeact run >> out.txt",
            "@'\nprint(1)\n'@ | codeact run 2> err.txt",
            "@'\nprint(1)\n'@ | codeact run *> $null",
            "@'\nprint(1)\n'@ | codeact run 3>$null",
            "@'\nprint(1)\n'@ | codeact run 2>$nullx",
            "@'\nprint(1)\n'@ | codeact run < p.py",
            "Remove-Item x; @'\nprint(1)\n'@ | codeact run",
            "Set-Location C:\\elsewhere; @'\nprint(1)\n'@ | codeact run",
            "cd C:\\elsewhere\n@'\nprint(1)\n'@ | codeact run",
            "@'\nprint(1)\n'@ | Tee-Object x | codeact run",
            "@'\nprint(1)\n'@ | iex",
            "@'\nprint(1)\n'@ | Invoke-Expression",
            "@'\nprint(1)\n'@ | codeact run;",
            "@'\nprint(1)\n'@",
            "@'\nprint(1)\n'@ codeact run",
        ] {
            assert!(!is_codeact_run(line), "{line:?}");
        }
    }

    #[test]
    fn only_the_binary_or_the_launcher_is_codeact() {
        for line in [
            "@'\n1\n'@ | .\\codeact.exe run",
            "@'\n1\n'@ | ./codeact run",
            "@'\n1\n'@ | C:\\evil\\codeact.exe run",
            "@'\n1\n'@ | codeac? run",
            "@'\n1\n'@ | codeact* run",
            "@'\n1\n'@ | ~\\codeact.exe run",
            "@'\n1\n'@ | 'codeact' run",
            "@'\n1\n'@ | & $codeact run",
            "@'\n1\n'@ | & { codeact run }",
            "@'\n1\n'@ | & (Get-Command codeact) run",
            "@'\n1\n'@ | . codeact run",
            "@'\n1\n'@ | Start-Process codeact run",
            "@'\n1\n'@ | Invoke-Command codeact run",
            "@'\n1\n'@ | & & codeact run",
            "notcodeact run --code 1",
            "echo codeact run",
            "Write-Output 'codeact run'",
        ] {
            assert!(!is_codeact_run(line), "{line:?}");
        }
    }

    #[test]
    fn a_run_must_run_a_program_without_tools_folders() {
        for line in [
            "@'\n1\n'@ | codeact discover",
            "@'\n1\n'@ | codeact",
            "@'\n1\n'@ | codeact RUN",
            "@'\n1\n'@ | codeact run --tools C:\\evil",
            "@'\n1\n'@ | codeact run --tools=evil",
            "@'\n1\n'@ | codeact run '--tools' evil",
            "codeact --code 1 --tools evil",
        ] {
            assert!(!is_codeact_run(line), "{line:?}");
        }
        // The flag's name inside the program is no flag.
        assert!(is_codeact_run("@'\nprint('--tools x')\n'@ | codeact run"));
    }

    #[test]
    fn arguments_powershell_might_pass_otherwise_are_refused() {
        for line in [
            // Windows PowerShell splits `-a.b` at the dot.
            "codeact run --file=prog.py",
            "codeact run --workspace=C:\\repo --code 1",
            // Read as numbers: `1kb` is passed as `1024`.
            "codeact run --max-memory 1kb --code 1",
            "codeact run --timeout 0x10 --code 1",
            "codeact run --timeout 1e3 --code 1",
            // Dropped, or split by the program where PowerShell's quotes end.
            "codeact run --code ''",
            "codeact run --code 'print(\"a b\")' --workspace 'C:\\my repo\\'",
            "codeact run --code 'a\" --workspace \"C:\\'",
            // Taken by PowerShell: the rest of the line as it is, or the end of parameters.
            "codeact run --% --code 1",
            "codeact run -- --code 1",
            // Wildcards and `~`, expanded for programs outside Windows.
            "codeact run --file *.py",
            "codeact run --workspace ~ --code 1",
            // Typographic dashes and quotes outside strings.
            "codeact run –-code 1",
            "codeact run --code 1 \u{00a0}",
        ] {
            assert!(!is_codeact_run(line), "{line:?}");
        }
        // Quoted, they are passed as they are.
        for line in
            ["codeact run '--file=prog.py'", "codeact run --max-memory '1kb' --code 1", "codeact run --file '*.py'"]
        {
            assert!(is_codeact_run(line), "{line:?}");
        }
    }

    #[test]
    fn read_only_cmdlets_and_their_aliases_in_any_case_are_read_only() {
        for line in [
            "Get-Content src\\main.rs",
            "get-content -Path src/a.py -TotalCount 20",
            "GC -Raw a.txt",
            "cat a.txt | Select-Object -First 5",
            "type a.txt",
            "Select-String -Pattern TODO -Path src\\*.rs",
            "sls 'fn main' -Path *.rs -Context 2",
            "Get-ChildItem -Recurse -Filter *.py | Select-Object -ExpandProperty FullName",
            "gci src -File | Sort-Object Length -Descending | Format-Table -Property Name",
            "ls; dir src; pwd; Get-Location",
            "Get-Item a.txt | Format-List *",
            "Test-Path a.txt; Resolve-Path .\\src",
            "gc a.txt | Measure-Object -Line",
            "Get-ChildItem | Where-Object Length -gt 1000 | Out-String -Width 200",
            "gci | ? Name -like '*.rs' | ft",
            "rg -n 'fn main' src 2>$null",
            "rg --files | Select-String test 2>&1",
            "Get-Content a.txt -ErrorAction SilentlyContinue",
            "Get-Content a.txt -ea 0\nGet-Content b.txt",
        ] {
            assert!(is_read_only(line), "{line:?}");
        }
    }

    #[test]
    fn commands_that_write_or_run_code_are_not_read_only() {
        for line in [
            "Set-Content a.txt x",
            "set-content a.txt x",
            "New-Item x",
            "Remove-Item x",
            "rm x",
            "ri x",
            "del x",
            "Out-File x",
            "gc a | Out-File b",
            "gc a | Add-Content b",
            "gc a | Tee-Object b",
            "gc a | tee b",
            "Copy-Item a b",
            "Move-Item a b",
            "Invoke-Expression 'rm x'",
            "iex 'rm x'",
            "Invoke-Command { rm x }",
            "icm -ScriptBlock { rm x }",
            "Start-Process calc",
            "saps calc",
            "& gc a",
            "& 'Get-Content' a",
            ". .\\profile.ps1",
            ".\\script.ps1",
            "$x = gc a",
            "$x",
            "& $x a",
            "gc $(rm x)",
            "gc @(rm x)",
            "gc (rm x)",
            "gc a > b",
            "gc a >> b",
            "gc a 2> err.txt",
            "gc a *> $null",
            "gc a > $null",
            "gc a -OutVariable PSDefaultParameterValues",
            "gc a -ov x",
            "gc a -OutV x",
            "gc a -PipelineVariable x",
            "gc a -ErrorVariable x",
            "gci | ForEach-Object Delete",
            "gci | % Delete",
            "gci | foreach { rm $_ }",
            "gci | Where-Object { $_.Delete() }",
            "gci | ? { rm x }",
            "gci | Where-Object -FilterScript { $true }",
            "gci | Where-Object -Is System.IO.FileInfo",
            "gci | Sort-Object { $_.Delete() }",
            "gci | Select-Object @{n='x'; e={ rm x }}",
            "sort -o out.txt in.txt",
            "rg --pre ./script pattern",
            "rg --pre=./script pattern",
            "git status",
            "gc `\n a",
            "gc a`;rm x",
            "gc “a” ;rm x",
            "gc a –OutVariable x",
            "gc a && rm x",
            "gc a || rm x",
            "gc a &",
            "@'\nx\n'@ | gc",
            "gc a | ",
            "",
        ] {
            assert!(!is_read_only(line), "{line:?}");
        }
    }

    #[test]
    fn plain_reads_name_their_file_or_folder() {
        assert_eq!(plain_read("Get-Content src\\a.py"), Some(PlainRead::File(r"src\a.py".to_owned())));
        assert_eq!(plain_read("cat 'my file.txt'"), Some(PlainRead::File("my file.txt".to_owned())));
        assert_eq!(plain_read("gci"), Some(PlainRead::Folder(".".to_owned())));
        assert_eq!(plain_read("DIR src"), Some(PlainRead::Folder("src".to_owned())));
        for line in ["gc -Raw a", "gc a b", "gc *.py", "gci -Recurse", "gc a | sls x", "Select-String x a"] {
            assert_eq!(plain_read(line), None, "{line}");
        }
    }
}
