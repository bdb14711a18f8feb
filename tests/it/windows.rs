//! What codeact promises on Windows, checked on Windows itself or under Wine: the README's
//! program in a workspace, every Windows spelling of a path that leaves the workspace or names
//! something other than a plain file refused, the folders codeact keeps its files in, and a
//! program found by `PATHEXT`. What Wine cannot show (symbolic links and junctions, read-only
//! files for an administrator, PowerShell) is `#[ignore = "needs real Windows"]`: the
//! `windows` workflow runs those with `--include-ignored`. [`servers`] starts child processes:
//! MCP servers, trees of processes, `codeact mcp serve`, the hooks.

mod servers;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use std::io::Write as _;

/// A workspace and a profile of its own (`USERPROFILE`, `APPDATA`, `LOCALAPPDATA`) per test.
struct Env {
    root: tempfile::TempDir,
}

impl Env {
    fn new() -> Self {
        let env = Self { root: tempfile::tempdir().unwrap() };
        for dir in ["ws", "outside", "profile/AppData/Roaming", "profile/AppData/Local"] {
            std::fs::create_dir_all(env.root.path().join(dir)).unwrap();
        }
        env
    }

    fn workspace(&self) -> PathBuf {
        self.root.path().join("ws")
    }

    fn outside(&self) -> PathBuf {
        self.root.path().join("outside")
    }

    fn file(&self, path: &str, contents: &str) -> &Self {
        let path = self.workspace().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, contents).unwrap();
        self
    }

    fn command(&self, args: &[&str]) -> Command {
        let profile = self.root.path().join("profile");
        let mut command = Command::new(env!("CARGO_BIN_EXE_codeact"));
        command
            .args(args)
            .current_dir(self.workspace())
            .env_remove("CODEACT_BACKEND")
            .env("USERPROFILE", &profile)
            .env("HOME", &profile)
            .env("APPDATA", profile.join("AppData/Roaming"))
            .env("LOCALAPPDATA", profile.join("AppData/Local"))
            .env("NO_COLOR", "1");
        for xdg in ["XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR"] {
            command.env_remove(xdg);
        }
        command
    }

    /// Runs `program` with `codeact run` in the workspace, on Monty.
    fn run(&self, program: &str) -> Output {
        self.run_with(&[], program)
    }

    /// [`Self::run`] with more flags.
    fn run_with(&self, flags: &[&str], program: &str) -> Output {
        let args: Vec<&str> = ["run", "--backend", "monty"].into_iter().chain(flags.iter().copied()).collect();
        with_stdin(&mut self.command(&args), program)
    }
}

/// What `command` says and how it ends, given `input` on its stdin.
fn with_stdin(command: &mut Command, input: &str) -> Output {
    let mut child = command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).replace("\r\n", "\n")
}

#[test]
fn the_readme_program_runs_in_a_workspace() {
    let env = Env::new();
    env.file("src/main.rs", "// TODO: one\nfn main() {}\n").file("src/lib/util.rs", "// TODO: two\n// TODO: three\n");
    let out = env.run(
        "todos = [m for m in grep(pattern=\"TODO\", paths=\"src\")]\n\
         print(len(todos), \"TODOs in\", len({m[\"path\"] for m in todos}), \"files\")\n\
         print(sorted({m[\"path\"] for m in todos}))\n",
    );
    assert_eq!(text(&out.stderr), "");
    assert_eq!(text(&out.stdout), "3 TODOs in 2 files\n['src/lib/util.rs', 'src/main.rs']\n");
    assert!(out.status.success());
}

#[test]
fn files_are_created_edited_and_listed_with_forward_slashes() {
    let env = Env::new();
    let out = env.run(
        "create(path=\"out\\\\deep/notes.txt\", file_text=\"first\\n\")\n\
         edit(path=\"out/deep/notes.txt\", old_str=\"first\", new_str=\"second\")\n\
         print(view(path=\"out/deep/notes.txt\"), end=\"\")\n\
         print(glob(pattern=\"**/*.txt\"))\n",
    );
    assert_eq!(text(&out.stderr), "");
    assert_eq!(text(&out.stdout), "second\n['out/deep/notes.txt']\n");
    assert_eq!(std::fs::read_to_string(env.workspace().join("out/deep/notes.txt")).unwrap(), "second\n");
}

#[test]
fn the_interpreters_own_file_access_and_view_of_a_folder_work() {
    let env = Env::new();
    env.file("src/a.txt", "one\n");
    std::fs::write(env.outside().join("x.txt"), "outside\n").unwrap();
    let out = env.run(
        "print(open(\"src/a.txt\").read(), end=\"\")\n\
         from pathlib import Path\n\
         print(Path(\"src\\\\a.txt\").read_text(), end=\"\")\n\
         print([p.name for p in Path(\"src\").iterdir()], Path(\"src\").is_dir(), Path(\"nope\").exists())\n\
         print(view(path=\"src\"))\n\
         print(view(path=\".\"))\n\
         for path in [\"../outside/x.txt\", \"..\\\\outside\\\\x.txt\"]:\n\
         \x20   try:\n\
         \x20       open(path)\n\
         \x20       print(\"ALLOWED\", path)\n\
         \x20   except PermissionError:\n\
         \x20       pass\n",
    );
    assert_eq!(text(&out.stderr), "");
    assert_eq!(text(&out.stdout), "one\none\n['a.txt'] True False\na.txt\nsrc/\n");
}

/// Each spelling that leads out of the workspace on Windows, or to something that is not the
/// plain file it seems to name: another drive or the current drive's root, UNC and device
/// paths, alternate data streams, DOS device names, names Win32 trims, 8.3 short names,
/// wildcards.
fn escapes(outside: &Path) -> Vec<String> {
    let outside = outside.to_string_lossy().into_owned();
    let mut paths: Vec<String> = [
        "C:foo.txt",
        "C:..\\x.txt",
        "c:/windows/win.ini",
        "C:\\Windows\\win.ini",
        "\\x.txt",
        "/x.txt",
        "\\\\server\\share\\x.txt",
        "//server/share/x.txt",
        "\\\\?\\C:\\x.txt",
        "//?/c:/x.txt",
        "\\\\.\\C:\\x.txt",
        "\\\\.\\pipe\\codeact",
        "\\??\\C:\\x.txt",
        "..\\outside\\x.txt",
        "a\\..\\..\\outside\\x.txt",
        "a.txt:stream",
        "a.txt::$DATA",
        "dir:$I30:$INDEX_ALLOCATION\\x.txt",
        "NUL",
        "nul.txt",
        "src\\NUL",
        "Con",
        "CON .txt",
        "prn",
        "aux.md",
        "COM1",
        "com9.log",
        "LPT1",
        "lpt3.txt",
        "COM\u{b9}",
        "CONIN$",
        "conout$",
        "x.txt.",
        "x.txt ",
        ".git.\\config",
        ".github \\hooks\\h.json",
        "GITHUB~1\\hooks\\h.json",
        "git~1\\config",
        // Wine's short names for `.git` and `.github`, made from the long name alone.
        "_GIT~IBP\\config",
        "_git~ibp/hooks/pre-commit",
        "_GIT~DER\\hooks\\h.json",
        "a*.txt",
        "a?.txt",
        "a<b.txt",
        "a|b.txt",
        "a\"b.txt",
    ]
    .map(str::to_owned)
    .to_vec();
    paths.push(format!("{outside}\\x.txt"));
    paths.push(format!("{}/x.txt", outside.replace('\\', "/")));
    paths
}

#[test]
fn a_program_that_tries_each_windows_escape_is_refused() {
    let env = Env::new();
    env.file("a.txt", "inside\n").file("x.txt", "inside\n");
    std::fs::create_dir_all(env.workspace().join(".git")).unwrap();
    std::fs::create_dir_all(env.workspace().join(".github/hooks")).unwrap();
    std::fs::create_dir_all(env.workspace().join("src")).unwrap();
    let list = serde_json::to_string(&escapes(&env.outside())).unwrap();
    let program = format!(
        "for path in {list}:\n\
         \x20   for name, call in [\n\
         \x20       (\"view\", lambda: view(path=path)),\n\
         \x20       (\"create\", lambda: create(path=path, file_text=\"x\")),\n\
         \x20       (\"edit\", lambda: edit(path=path, old_str=\"inside\", new_str=\"changed\")),\n\
         \x20       (\"glob\", lambda: glob(pattern=\"*\", paths=path)),\n\
         \x20       (\"grep\", lambda: grep(pattern=\"inside\", paths=path)),\n\
         \x20   ]:\n\
         \x20       try:\n\
         \x20           call()\n\
         \x20           print(\"ALLOWED\", name, repr(path))\n\
         \x20       except PermissionError:\n\
         \x20           pass\n\
         \x20       except Exception as e:\n\
         \x20           print(\"OTHER\", name, repr(path), type(e).__name__, e)\n\
         print(\"done\")\n"
    );
    let out = env.run(&program);
    assert_eq!(text(&out.stdout), "done\n", "stderr: {}", text(&out.stderr));
    assert_eq!(std::fs::read_dir(env.outside()).unwrap().count(), 0, "nothing was written outside");
    assert_eq!(std::fs::read_to_string(env.workspace().join("a.txt")).unwrap(), "inside\n");
    assert_eq!(std::fs::read_to_string(env.workspace().join("x.txt")).unwrap(), "inside\n");
    let mut names: Vec<_> = std::fs::read_dir(env.workspace()).unwrap().map(|e| e.unwrap().file_name()).collect();
    names.sort();
    assert_eq!(names, [".git", ".github", "a.txt", "src", "x.txt"], "nothing new in the workspace");
}

#[test]
fn protected_names_are_refused_in_any_case() {
    let env = Env::new();
    std::fs::create_dir_all(env.workspace().join(".git")).unwrap();
    let out = env.run(
        "for path in [\".GIT/config\", \".Git\\\\hooks\\\\pre-commit\", \".github/HOOKS/h.json\", \"agents.MD\"]:\n\
         \x20   try:\n\
         \x20       create(path=path, file_text=\"x\")\n\
         \x20       print(\"ALLOWED\", path)\n\
         \x20   except PermissionError:\n\
         \x20       pass\n\
         print(\"done\")\n",
    );
    assert_eq!(text(&out.stdout), "done\n", "stderr: {}", text(&out.stderr));
    assert_eq!(std::fs::read_dir(env.workspace().join(".git")).unwrap().count(), 0);
}

#[test]
fn detect_says_what_runs_here() {
    let env = Env::new();
    let out = env.command(&["detect"]).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    assert!(said.lines().any(|line| line.starts_with("  monty       yes")), "{said}");
    // Built with the backend (MSVC) or without it (GNU): either way a reason fit for Windows.
    let hyperlight = said.lines().find(|line| line.trim_start().starts_with("hyperlight")).unwrap();
    assert!(!hyperlight.contains("does not run on Windows") && !hyperlight.contains("/dev/kvm"), "{hyperlight}");
}

#[test]
fn codeact_keeps_its_files_beneath_the_users_profile() {
    let env = Env::new();
    env.file(".codeact/config.json", r#"{"network": {"allow_private": true}}"#);
    let out = env.command(&["trust"]).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let local = env.root.path().join("profile/AppData/Local/codeact/state");
    assert!(local.is_dir(), "trust is kept in %LOCALAPPDATA%\\codeact\\state: {}", text(&out.stderr));
}

#[test]
#[ignore = "needs real Windows: Wine resolves no symbolic links or junctions"]
fn a_junction_out_of_the_workspace_is_not_followed() {
    let env = Env::new();
    std::fs::write(env.outside().join("secret.txt"), "secret\n").unwrap();
    let made = Command::new("cmd")
        .args(["/C", "mklink", "/J"])
        .arg(env.workspace().join("out"))
        .arg(env.outside())
        .output()
        .unwrap();
    assert!(made.status.success(), "{}", text(&made.stderr));
    let out = env.run(
        "for call in [lambda: view(path=\"out/secret.txt\"), lambda: create(path=\"out/new.txt\", file_text=\"x\")]:\n\
         \x20   try:\n\
         \x20       call()\n\
         \x20       print(\"ALLOWED\")\n\
         \x20   except PermissionError:\n\
         \x20       pass\n\
         print(\"done\")\n",
    );
    assert_eq!(text(&out.stdout), "done\n", "stderr: {}", text(&out.stderr));
    assert!(!env.outside().join("new.txt").exists());
}
