//! [`TestEnv`]: a temporary workspace, `HOME`, XDG dirs, `COPILOT_HOME` and config dir per test,
//! and helpers that run the real binary in it. The test process's own environment is never
//! changed; everything is passed to the child.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;
use tempfile::TempDir;

/// The binary under test: the one this build made, or the file `CODEACT_TEST_BIN` names — the
/// same code built another way (a release package's binary, or one built for another
/// architecture, run through qemu-user where the kernel's `binfmt_misc` knows it).
pub(crate) static BIN: std::sync::LazyLock<&'static str> =
    std::sync::LazyLock::new(|| match std::env::var("CODEACT_TEST_BIN") {
        Ok(path) if !path.is_empty() => Box::leak(path.into_boxed_str()),
        _ => env!("CARGO_BIN_EXE_codeact"),
    });

/// The programs the tests run — directly, through `bash` and `sh` tools, drop-ins, MCP servers
/// and the Copilot CLI. Each test's `PATH` is one folder of links to exactly these, found once
/// on the machine's `PATH`: what else a machine has there (a `gh`, say) never changes a result.
const PROGRAMS: &[&str] = &[
    "sh", "bash", "env", "cat", "chmod", "cp", "date", "dirname", "echo", "false", "grep", "head", "id", "kill", "ln",
    "ls", "mkdir", "mkfifo", "mv", "node", "printf", "ps", "pwd", "readlink", "rm", "sed", "seq", "sleep", "sort",
    "tail", "test", "touch", "tr", "true", "uname", "wc", "xargs", "yes",
];

/// Where each of [`PROGRAMS`] is on this machine, and `python3` as the interpreter itself (not a
/// version manager's shim, which would depend on `HOME`).
fn programs() -> &'static [(String, PathBuf)] {
    static FOUND: std::sync::OnceLock<Vec<(String, PathBuf)>> = std::sync::OnceLock::new();
    FOUND.get_or_init(|| {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let dirs: Vec<PathBuf> = std::env::split_paths(&path).collect();
        let mut found: Vec<(String, PathBuf)> = PROGRAMS
            .iter()
            .filter_map(|name| {
                let at = dirs.iter().map(|dir| dir.join(name)).find(|candidate| candidate.is_file())?;
                Some(((*name).to_owned(), at))
            })
            .collect();
        let python = Command::new("python3").args(["-c", "import sys; print(sys.executable)"]).output();
        if let Some(out) = python.ok().filter(|out| out.status.success()) {
            found.push(("python3".to_owned(), PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())));
        }
        found
    })
}

/// The machine's Python interpreter by its absolute path, as [`programs`] found it: a test's
/// `PATH` is a folder of links, so an MCP server's `command` names the interpreter itself.
pub(crate) fn python3() -> String {
    let found = programs().iter().find(|(name, _)| name == "python3");
    let (_, path) = found.expect("python3 is needed for the MCP test servers");
    path.display().to_string()
}

/// An isolated environment: `root/ws` is the workspace, `root/home` is HOME, `root/bin` is the
/// whole `PATH`.
pub(crate) struct TestEnv {
    temp: TempDir,
    env: Vec<(String, String)>,
}

/// What one run of the binary produced.
#[derive(Debug)]
pub(crate) struct Output {
    pub(crate) code: i32,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl TestEnv {
    pub(crate) fn new() -> Self {
        let temp = tempfile::Builder::new().prefix("codeact-test-").tempdir().expect("tempdir");
        for dir in ["ws", "home", "home/.config", "home/.cache", "home/.copilot", "outside", "bin"] {
            std::fs::create_dir_all(temp.path().join(dir)).expect("mkdir");
        }
        for (name, at) in programs() {
            std::os::unix::fs::symlink(at, temp.path().join("bin").join(name)).expect("link a program");
        }
        Self { temp, env: Vec::new() }
    }

    /// A copy of `tests/fixtures/workspace` as the workspace.
    pub(crate) fn with_fixture_workspace() -> Self {
        let env = Self::new();
        copy_dir(&fixtures().join("workspace"), &env.workspace());
        env
    }

    pub(crate) fn root(&self) -> PathBuf {
        self.temp.path().canonicalize().expect("canonical temp dir")
    }

    pub(crate) fn workspace(&self) -> PathBuf {
        self.root().join("ws")
    }

    /// A directory beside the workspace, for escape attempts to aim at.
    pub(crate) fn outside(&self) -> PathBuf {
        self.root().join("outside")
    }

    pub(crate) fn home(&self) -> PathBuf {
        self.root().join("home")
    }

    /// The `PATH` the binary gets: the test's own folder of programs.
    pub(crate) fn path(&self) -> String {
        self.root().join("bin").display().to_string()
    }

    /// The user config dir the binary sees (`$XDG_CONFIG_HOME/codeact`).
    pub(crate) fn user_config_dir(&self) -> PathBuf {
        self.home().join(".config").join("codeact")
    }

    /// Writes a file in the workspace, creating parent directories.
    pub(crate) fn file(self, path: &str, contents: impl AsRef<[u8]>) -> Self {
        write(&self.workspace().join(path), contents.as_ref());
        self
    }

    /// Writes a file outside the workspace.
    pub(crate) fn outside_file(self, path: &str, contents: impl AsRef<[u8]>) -> Self {
        write(&self.outside().join(path), contents.as_ref());
        self
    }

    /// Creates a symlink at `link` (in the workspace) pointing to `target` (as given).
    pub(crate) fn symlink(self, target: impl AsRef<Path>, link: &str) -> Self {
        let link = self.workspace().join(link);
        std::fs::create_dir_all(link.parent().expect("parent")).expect("mkdir");
        std::os::unix::fs::symlink(target, link).expect("symlink");
        self
    }

    pub(crate) fn user_config(self, json: &str) -> Self {
        write(&self.user_config_dir().join("config.json"), json.as_bytes());
        self
    }

    /// A file in the user's config dir (`tools/x.py`, say), written with its folders.
    pub(crate) fn user_file(self, path: &str, contents: impl AsRef<[u8]>) -> Self {
        write(&self.user_config_dir().join(path), contents.as_ref());
        self
    }

    pub(crate) fn project_config(self, json: &str) -> Self {
        write(&self.workspace().join(".codeact/config.json"), json.as_bytes());
        self
    }

    /// Runs `codeact trust` here, approving the workspace's MCP config, tool files and project
    /// config as they are now.
    pub(crate) fn trusted(self) -> Self {
        self.trust();
        self
    }

    /// [`Self::trusted`] on a shared environment.
    pub(crate) fn trust(&self) {
        let out = self.run(&["trust"], "");
        assert_eq!(out.code, 0, "codeact trust failed: {}", out.stderr);
    }

    pub(crate) fn env(mut self, key: &str, value: &str) -> Self {
        self.env.push((key.to_owned(), value.to_owned()));
        self
    }

    /// The binary with a clean environment pointing into this test's directories.
    pub(crate) fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(*BIN);
        let home = self.home();
        command
            .args(args)
            .current_dir(self.workspace())
            .env_clear()
            .env("PATH", self.path())
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("XDG_CACHE_HOME", home.join(".cache"))
            .env("XDG_DATA_HOME", home.join(".local/share"))
            .env("COPILOT_HOME", home.join(".copilot"))
            .env("NO_COLOR", "1")
            // Nothing is fetched from PyPI unless a test asks for it.
            .env("CODEACT_GUEST_INSTALL", "never");
        for (key, value) in &self.env {
            command.env(key, value);
        }
        command
    }

    /// Runs the binary with `args`, feeding `stdin`.
    pub(crate) fn run(&self, args: &[&str], stdin: &str) -> Output {
        let mut child = self
            .command(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn codeact");
        let mut input = child.stdin.take().expect("stdin");
        let stdin = stdin.to_owned();
        let writer = std::thread::spawn(move || {
            let _ = input.write_all(stdin.as_bytes());
        });
        let output = child.wait_with_output().expect("wait for codeact");
        writer.join().expect("stdin writer");
        Output {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// `codeact run` with the program on stdin.
    pub(crate) fn run_code(&self, code: &str) -> Output {
        self.run(&["run"], code)
    }

    /// `codeact run --json` with extra flags; returns the parsed object and the exit code.
    pub(crate) fn run_json(&self, code: &str, flags: &[&str]) -> (i32, Value) {
        let mut args = vec!["run", "--json"];
        args.extend_from_slice(flags);
        let out = self.run(&args, code);
        let value = serde_json::from_str(&out.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}\nstderr:\n{}", out.stdout, out.stderr));
        (out.code, value)
    }

    /// Runs a program that must succeed and returns its stdout.
    pub(crate) fn stdout_of(&self, code: &str) -> String {
        let out = self.run_code(code);
        assert_eq!(out.code, 0, "program failed:\n{code}\nstderr:\n{}", out.stderr);
        out.stdout
    }

    /// Runs a program that must fail and returns (error type, message) from `--json`.
    pub(crate) fn error_of(&self, code: &str) -> (String, String) {
        let (status, value) = self.run_json(code, &[]);
        assert_eq!(status, 1, "program should have failed: {value}");
        let error = &value["error"];
        (
            error["type"].as_str().unwrap_or_default().to_owned(),
            error["message"].as_str().unwrap_or_default().to_owned(),
        )
    }
}

impl Output {
    /// Asserts the exit code and returns self for more checks.
    pub(crate) fn code(self, expected: i32) -> Self {
        assert_eq!(self.code, expected, "exit code\nstdout:\n{}\nstderr:\n{}", self.stdout, self.stderr);
        self
    }

    /// Asserts the whole stdout.
    pub(crate) fn stdout(self, expected: &str) -> Self {
        pretty_assertions::assert_eq!(self.stdout, expected, "stderr:\n{}", self.stderr);
        self
    }

    /// Asserts the whole stderr.
    pub(crate) fn stderr(self, expected: &str) -> Self {
        pretty_assertions::assert_eq!(self.stderr, expected);
        self
    }
}

pub(crate) fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("fixtures")
}

fn write(path: &Path, contents: &[u8]) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, contents).expect("write");
}

/// Copies a directory tree (regular files and directories only).
pub(crate) fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read fixture dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// A program from `tests/e2e/node_modules/.bin`, installed by `npm ci --prefix tests/e2e` (as
/// `.ci/run` does). The tests that use one are `#[ignore]`d, so `cargo test -- --include-ignored`
/// without it fails, saying what to run.
pub(crate) fn npm_bin(name: &str) -> PathBuf {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/node_modules/.bin").join(name);
    assert!(bin.exists(), "{name} is missing: run `npm ci --prefix tests/e2e`");
    bin
}

/// Whether the process `pid` (as text) is still running: it exists and is not a zombie
/// waiting for whoever inherited it to reap it.
pub(crate) fn process_alive(pid: &str) -> bool {
    let pid = pid.trim();
    let exists = pid
        .parse()
        .ok()
        .and_then(rustix::process::Pid::from_raw)
        .is_some_and(|pid| rustix::process::test_kill_process(pid).is_ok());
    exists && process_state(pid).as_deref() != Some("Z")
}

/// The one-letter state of `pid` (`Z` for a zombie), from `/proc/<pid>/stat`, which is
/// `pid (name) state …` (the name may hold spaces and parentheses).
#[cfg(target_os = "linux")]
fn process_state(pid: &str) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().next().map(str::to_owned))
}

/// The one-letter state of `pid` (`Z` for a zombie), as `ps` shows it where there is no `/proc`.
#[cfg(not(target_os = "linux"))]
fn process_state(pid: &str) -> Option<String> {
    let out = Command::new("/bin/ps").args(["-o", "stat=", "-p", pid]).output().ok()?;
    String::from_utf8_lossy(&out.stdout).trim().get(..1).map(str::to_owned)
}

/// The live processes whose environment holds any of `entries` (`NAME=value`), sorted.
pub(crate) fn processes_with_env(entries: &[String]) -> Vec<String> {
    let mut pids: Vec<String> = environments()
        .into_iter()
        .filter(|(_, environment)| environment.iter().any(|entry| entries.contains(entry)))
        .map(|(pid, _)| pid)
        .filter(|pid| process_alive(pid))
        .collect();
    pids.sort();
    pids
}

/// Every process's pid and environment entries, from `/proc/<pid>/environ`.
#[cfg(target_os = "linux")]
fn environments() -> Vec<(String, Vec<String>)> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .map(|pid| {
            let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
            let entries = environ.split(|byte| *byte == 0).map(|entry| String::from_utf8_lossy(entry).into_owned());
            (pid.to_string(), entries.collect())
        })
        .collect()
}

/// Every process's pid and environment entries where there is no `/proc`: `ps -E` prints the
/// environment after the command line (for this user's processes), space-separated, so an entry
/// is a word of it.
#[cfg(not(target_os = "linux"))]
fn environments() -> Vec<(String, Vec<String>)> {
    let out = Command::new("/bin/ps").args(["-A", "-E", "-ww", "-o", "pid=,command="]).output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let pid = words.next()?.to_owned();
            Some((pid, words.map(str::to_owned).collect()))
        })
        .collect()
}

/// The plugin's skills, sorted.
pub(crate) const SKILLS: &[&str] = &["codeact-install"];

/// The guest the `wasm` tests share, installed once per test run (and kept in `target/` between
/// runs) from the wheels in `$CODEACT_TEST_WHEELS` or `target/guest-wheels`, which `.ci/run`
/// fetches with `pip download`: (guest dir, cache dir). The tests that use it are `#[ignore]`d;
/// run without the wheels, they fail saying where the wheels come from.
pub(crate) fn wasm_guest() -> &'static (PathBuf, PathBuf) {
    static GUEST: std::sync::OnceLock<(PathBuf, PathBuf)> = std::sync::OnceLock::new();
    GUEST.get_or_init(install_test_guest)
}

/// The folder of guest wheels: `$CODEACT_TEST_WHEELS`, else `target/guest-wheels`.
pub(crate) fn guest_wheels() -> PathBuf {
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
    std::env::var_os("CODEACT_TEST_WHEELS").map_or_else(|| target.join("guest-wheels"), PathBuf::from)
}

fn install_test_guest() -> (PathBuf, PathBuf) {
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
    let wheels = guest_wheels();
    let root = target.join("it-guest");
    let (guest, cache) = (root.join("guest"), root.join("cache"));
    let command = |args: &[&str]| {
        let mut command = Command::new(*BIN);
        command
            .args(args)
            .env_clear()
            .env("HOME", &root)
            .env("CODEACT_GUEST_DIR", &guest)
            .env("CODEACT_CACHE_DIR", &cache);
        command
    };
    let installed = command(&["guest", "status", "--json"])
        .output()
        .ok()
        .and_then(|out| serde_json::from_slice::<Value>(&out.stdout).ok())
        .is_some_and(|status| status["installed"] == true);
    if !installed {
        assert!(
            wheels.is_dir(),
            "the guest wheels are missing from {}: fetch them as `.ci/run` does (pip download)",
            wheels.display()
        );
        let out =
            command(&["guest", "install", "--from", &wheels.to_string_lossy()]).output().expect("run guest install");
        assert!(out.status.success(), "guest install failed:\n{}", String::from_utf8_lossy(&out.stderr));
    }
    // Compile the component now, once, rather than in many tests at the same time.
    let out = command(&["run", "--backend", "wasm", "--code", "print(1)"]).output().expect("run print(1)");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "1\n", "{}", String::from_utf8_lossy(&out.stderr));
    (guest, cache)
}

impl TestEnv {
    /// This environment with the shared `wasm` guest.
    pub(crate) fn with_wasm(self) -> Self {
        let (guest, cache) = wasm_guest();
        self.env("CODEACT_GUEST_DIR", &guest.to_string_lossy()).env("CODEACT_CACHE_DIR", &cache.to_string_lossy())
    }
}

/// The MCP test venv's Python, `target/mcp-venv`, which `.ci/run` makes from `tests/mcp/requirements.txt`.
pub(crate) fn mcp_python() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("target/mcp-venv/bin/python")
}

/// A test server, `tests/mcp/<name>`: `server.py` needs [`mcp_python`], which `.ci/run` installs.
pub(crate) fn mcp_script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp").join(name)
}

/// The real `mcp-server-time`, which `.ci/run` installs into the MCP test venv.
pub(crate) fn mcp_server_time() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("target/mcp-venv/bin/mcp-server-time")
}

/// Waits, a generous while, for `path` to exist (a file a test's process writes once it has
/// started); fails saying `what`.
pub(crate) fn wait_for_file(path: &Path, what: &str) {
    let started = std::time::Instant::now();
    while !path.exists() {
        assert!(started.elapsed() < std::time::Duration::from_secs(30), "{what}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Waits, a generous while, until `live` lists no process; kills any left and fails naming
/// them, saying `what`.
pub(crate) fn assert_none_left(live: impl Fn() -> Vec<String>, what: &str) {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !live().is_empty() && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let left = live();
    for pid in &left {
        let _ = Command::new("kill").arg("-9").arg(pid).status();
    }
    assert_eq!(left, Vec::<String>::new(), "{what}");
}

/// The live processes whose environment holds `IT_MARK=mark`.
pub(crate) fn marked(mark: &str) -> Vec<String> {
    processes_with_env(&[format!("IT_MARK={mark}")])
}

/// `o200k_base` tokens, counted offline.
pub(crate) fn tokens(text: &str) -> usize {
    tiktoken_rs::o200k_base_singleton().encode_with_special_tokens(text).len()
}
