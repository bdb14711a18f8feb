//! How codeact is installed and found: the plugins' launcher (`plugin/bin/codeact`) finds the
//! binary wherever pip, uv, npm or cargo put it, never runs one from a folder of the project, and
//! never goes through npm's JavaScript launcher; that launcher (`npm/codeact`) runs its platform
//! package's binary with everything passed through; and every manifest carries the crate's
//! version, which `preflight` and the session-start hook compare with the plugin's.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use pretty_assertions::assert_eq;
use serde_json::Value;

use crate::support::{BIN, Output, TestEnv};

const VERSION: &str = env!("CARGO_PKG_VERSION");

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn plugin_launcher() -> PathBuf {
    repo().join("plugin/bin/codeact")
}

fn output(command: &mut Command) -> Output {
    let output = command.output().unwrap();
    Output {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// `/bin/sh` in the workspace with exactly `path` as `PATH` and the test's HOME, to run a launcher.
fn shell(env: &TestEnv, path: &str) -> Command {
    let mut command = Command::new("/bin/sh");
    command.current_dir(env.workspace()).env_clear().env("PATH", path).env("HOME", env.home()).stdin(Stdio::null());
    command
}

/// Runs the plugin's launcher in the workspace with exactly `path` as `PATH`.
fn launch(env: &TestEnv, path: &str, args: &[&str]) -> Output {
    output(shell(env, path).arg(plugin_launcher()).args(args))
}

/// A copy of the plugin's launcher at `to`, with its folders.
fn copy_launcher(to: &Path) {
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::copy(plugin_launcher(), to).unwrap();
}

/// A stand-in for codeact at `path` that says which one it is and what it was given.
fn fake_codeact(path: &Path, label: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, format!("#!/bin/sh\necho \"{label}: $*\"\n")).unwrap();
    make_executable(path);
}

fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// npm's name for this machine's platform package.
fn npm_platform() -> &'static str {
    match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => "linux-x64",
        ("linux", "aarch64") => "linux-arm64",
        ("macos", "x86_64") => "darwin-x64",
        ("macos", "aarch64") => "darwin-arm64",
        (os, arch) => panic!("no npm platform package for {os} {arch}"),
    }
}

/// The name of the binary the launcher runs from beside itself on this machine:
/// `codeact-<os>-<arch>`, with the system as `uname -s` says it and the architecture as Rust does.
fn beside_name() -> String {
    let os = if cfg!(target_os = "macos") { "darwin" } else { std::env::consts::OS };
    format!("codeact-{os}-{}", std::env::consts::ARCH)
}

#[test]
fn the_launcher_execs_codeact_bin() {
    let env = TestEnv::new();
    let out = output(shell(&env, &env.path()).arg(plugin_launcher()).arg("--version").env("CODEACT_BIN", *BIN));
    out.code(0).stdout(&format!("codeact {VERSION} (monty 1.4.0)\n"));
}

#[test]
fn a_binary_in_an_absolute_path_entry_is_found_as_pip_installs_it_in_a_virtual_environment() {
    let env = TestEnv::new();
    let venv = env.root().join("venv/bin");
    fake_codeact(&venv.join("codeact"), "venv");
    let path = format!("{}:{}", env.path(), venv.display());
    launch(&env, &path, &["run", "--code", "1"]).code(0).stdout("venv: run --code 1\n");
}

#[test]
fn a_codeact_in_a_relative_path_entry_is_never_run_in_any_spelling() {
    let env = TestEnv::new();
    // The project holds a `codeact` at its top and in a folder; a PATH entry that is relative
    // (an empty one is the current directory) names them, since the hooks run in the project.
    fake_codeact(&env.workspace().join("codeact"), "the project's own");
    fake_codeact(&env.workspace().join("tools/codeact"), "the project's own");
    let venv = env.root().join("venv/bin");
    fake_codeact(&venv.join("codeact"), "installed");
    let venv = venv.display().to_string();
    let bin = env.path();
    for relative in [".", "./", "", "tools", "./tools", "tools/", "tools/../tools", "./.", "../ws"] {
        for path in
            [format!("{relative}:{bin}:{venv}"), format!("{bin}:{relative}:{venv}"), format!("{bin}:{venv}:{relative}")]
        {
            launch(&env, &path, &["--version"]).code(0).stdout("installed: --version\n");
        }
        // With nothing installed, nothing runs.
        let out = launch(&env, &format!("{relative}:{bin}"), &["hook", "pre-tool-use"]);
        out.code(0).stdout("").stderr("");
    }
}

#[test]
fn absolute_path_entries_inside_the_project_or_npms_node_modules_are_never_searched() {
    let env = TestEnv::new();
    // What the launcher runs itself is looked up the same way: a project `uname` or `readlink`
    // would run before any codeact.
    let marker = env.root().join("ran");
    for folder in ["tools", "node_modules/.bin"] {
        for program in ["codeact", "uname", "readlink"] {
            let path = env.workspace().join(folder).join(program);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, format!("#!/bin/sh\necho {program} >> '{}'\n", marker.display())).unwrap();
            make_executable(&path);
        }
    }
    let elsewhere = env.root().join("elsewhere/node_modules/.bin");
    fake_codeact(&elsewhere.join("codeact"), "a package's own");
    let ws = env.workspace().display().to_string();
    let root = env.root().display().to_string();
    std::os::unix::fs::symlink(env.workspace(), env.root().join("ws-link")).unwrap();
    let bin = env.path();
    for path in [
        format!("{ws}/tools:{bin}"),
        // The project spelled another way.
        format!("/{ws}/tools:{bin}"),
        format!("{root}//ws/tools:{bin}"),
        format!("{root}/home/../ws/tools:{bin}"),
        format!("{root}/ws-link/tools:{bin}"),
        format!("{ws}/node_modules/.bin:{bin}"),
        format!("{ws}/node_modules/.bin/:{bin}"),
        format!("{ws}/./tools:{bin}"),
        format!("{}:{bin}", elsewhere.display()),
        // No absolute entry at all: an empty PATH would be the current directory.
        ".".to_owned(),
        String::new(),
        "tools:node_modules/.bin".to_owned(),
    ] {
        launch(&env, &path, &["hook", "pre-tool-use"]).code(0).stdout("").stderr("");
        assert!(!marker.exists(), "PATH={path}: {}", std::fs::read_to_string(&marker).unwrap());
    }
}

#[test]
fn a_hook_run_in_a_subdirectory_searches_no_entry_of_the_hosts_project() {
    let env = TestEnv::new();
    let marker = env.root().join("ran");
    let planted = env.workspace().join(".venv/bin/codeact");
    std::fs::create_dir_all(planted.parent().unwrap()).unwrap();
    std::fs::write(&planted, format!("#!/bin/sh\necho codeact >> '{}'\n", marker.display())).unwrap();
    make_executable(&planted);
    std::fs::create_dir_all(env.workspace().join("sub")).unwrap();
    let ws = env.workspace().display().to_string();
    let path = format!("{ws}/.venv/bin:{}", env.path());
    for host in ["COPILOT_PROJECT_DIR", "CLAUDE_PROJECT_DIR"] {
        let out = output(
            shell(&env, &path)
                .current_dir(env.workspace().join("sub"))
                .env(host, &ws)
                .arg(plugin_launcher())
                .args(["hook", "pre-tool-use"]),
        );
        out.code(0).stdout("").stderr("");
        assert!(!marker.exists(), "{host}: the project's codeact ran");
    }
    // Without a host's project directory, the repository around the current one is the project.
    std::fs::create_dir_all(env.workspace().join(".git")).unwrap();
    let out = output(
        shell(&env, &path)
            .current_dir(env.workspace().join("sub"))
            .arg(plugin_launcher())
            .args(["hook", "pre-tool-use"]),
    );
    out.code(0).stdout("").stderr("");
    assert!(!marker.exists(), "the repository's codeact ran from a subdirectory");
    // `/proc/self/cwd` is the current directory, whatever it is; `..` after a link outside
    // leads into the project by no spelling of it.
    let link = env.root().join("to-venv-bin-inner");
    std::fs::create_dir_all(env.workspace().join(".venv/bin/inner")).unwrap();
    std::os::unix::fs::symlink(env.workspace().join(".venv/bin/inner"), &link).unwrap();
    for entry in ["/proc/self/cwd/.venv/bin".to_owned(), format!("{}/..", link.display())] {
        let path = format!("{entry}:{}", env.path());
        launch(&env, &path, &["hook", "pre-tool-use"]).code(0).stdout("").stderr("");
        assert!(!marker.exists(), "PATH={path}");
    }
}

#[test]
fn a_launcher_run_by_name_or_by_another_copy_of_itself_runs_no_copy_again() {
    let env = TestEnv::new();
    // A second copy of the launcher on PATH, and the first one on PATH too: they would exec each
    // other for ever.
    let copy = env.root().join("copy/bin/codeact");
    copy_launcher(&copy);
    let path = format!(
        "{}:{}:{}",
        copy.parent().unwrap().display(),
        plugin_launcher().parent().unwrap().display(),
        env.path()
    );
    launch(&env, &path, &["hook", "pre-tool-use"]).code(0).stdout("").stderr("");
    // `sh -s` reads the launcher from stdin: it has no folder, so the project's
    // `codeact-<os>-<arch>` is no binary of its.
    fake_codeact(&env.workspace().join(beside_name()), "the project's own");
    let script = std::fs::File::open(plugin_launcher()).unwrap();
    let out = output(shell(&env, &env.path()).args(["-s", "hook", "pre-tool-use"]).stdin(script));
    out.code(0).stdout("").stderr("");
}

#[test]
fn a_binary_next_to_the_launcher_named_for_this_machine_comes_before_path() {
    let env = TestEnv::new();
    let launcher = env.root().join("plugin/bin/codeact");
    copy_launcher(&launcher);
    let venv = env.root().join("venv/bin");
    fake_codeact(&venv.join("codeact"), "venv");
    let path = format!("{}:{}", venv.display(), env.path());
    let run = || output(shell(&env, &path).arg(&launcher).arg("--version"));
    // One for another machine is passed over.
    fake_codeact(&launcher.with_file_name("codeact-plan9-mips"), "another machine's");
    run().code(0).stdout("venv: --version\n");
    fake_codeact(&launcher.with_file_name(beside_name()), "beside");
    run().code(0).stdout("beside: --version\n");
}

#[test]
fn the_binary_beside_the_launcher_is_named_by_the_system_and_rusts_name_for_its_architecture() {
    // What `uname -sm` says on each machine codeact ships for, and the binary it picks.
    for (uname, name) in [
        ("Linux x86_64", "codeact-linux-x86_64"),
        ("Linux aarch64", "codeact-linux-aarch64"),
        ("Darwin x86_64", "codeact-darwin-x86_64"),
        ("Darwin arm64", "codeact-darwin-aarch64"),
    ] {
        let env = TestEnv::new();
        let launcher = env.root().join("plugin/bin/codeact");
        copy_launcher(&launcher);
        let tools = env.root().join("system-bin");
        std::fs::create_dir_all(&tools).unwrap();
        std::fs::write(tools.join("uname"), format!("#!/bin/sh\necho '{uname}'\n")).unwrap();
        make_executable(&tools.join("uname"));
        for other in ["codeact-linux-x86_64", "codeact-linux-aarch64", "codeact-darwin-x86_64", "codeact-darwin-arm64"]
        {
            if other != name {
                fake_codeact(&launcher.with_file_name(other), "another machine's");
            }
        }
        fake_codeact(&launcher.with_file_name(name), "beside");
        let path = format!("{}:{}", tools.display(), env.path());
        let out = output(shell(&env, &path).arg(&launcher).arg("--version"));
        out.code(0).stdout("beside: --version\n");
    }
}

#[test]
fn user_installs_in_local_bin_and_cargo_installs_are_found_in_that_order() {
    let env = TestEnv::new();
    fake_codeact(&env.home().join(".cargo/bin/codeact"), "cargo");
    launch(&env, &env.path(), &["--version"]).code(0).stdout("cargo: --version\n");
    // pip install --user, uv tool install and pipx put it here.
    fake_codeact(&env.home().join(".local/bin/codeact"), "local");
    launch(&env, &env.path(), &["--version"]).code(0).stdout("local: --version\n");
}

#[test]
fn the_real_binary_runs_through_the_launcher_from_a_cargo_install() {
    let env = TestEnv::new();
    let cargo_bin = env.home().join(".cargo/bin");
    std::fs::create_dir_all(&cargo_bin).unwrap();
    std::os::unix::fs::symlink(*BIN, cargo_bin.join("codeact")).unwrap();
    launch(&env, &env.path(), &["--version"]).code(0).stdout(&format!("codeact {VERSION} (monty 1.4.0)\n"));
}

#[test]
fn the_launcher_passes_over_itself_on_path() {
    let env = TestEnv::new();
    let path = format!("{}:{}", plugin_launcher().parent().unwrap().display(), env.path());
    launch(&env, &path, &["hook", "pre-tool-use"]).code(0).stdout("").stderr("");
}

/// An npm global install in `prefix`: the launcher package's script linked as `bin/codeact`, and
/// the platform package either beside it (`hoisted`) or inside it.
fn npm_install(prefix: &Path, hoisted: bool, with_platform: bool) {
    let modules = prefix.join("lib/node_modules");
    let script = modules.join("codeact/bin/codeact.js");
    std::fs::create_dir_all(script.parent().unwrap()).unwrap();
    // Were this script run, the output would say so.
    std::fs::write(&script, "#!/bin/sh\necho 'the JavaScript launcher ran'\nexit 9\n").unwrap();
    make_executable(&script);
    std::fs::create_dir_all(prefix.join("bin")).unwrap();
    std::os::unix::fs::symlink("../lib/node_modules/codeact/bin/codeact.js", prefix.join("bin/codeact")).unwrap();
    if with_platform {
        let package = if hoisted { modules.clone() } else { modules.join("codeact/node_modules") }
            .join("@codeact")
            .join(npm_platform());
        fake_codeact(&package.join("bin/codeact"), "npm platform package");
    }
}

#[test]
fn npm_installs_run_the_platform_packages_binary_never_the_javascript_launcher() {
    for hoisted in [true, false] {
        let env = TestEnv::new();
        let prefix = env.root().join("npm");
        npm_install(&prefix, hoisted, true);
        let path = format!("{}:{}", prefix.join("bin").display(), env.path());
        launch(&env, &path, &["hook", "pre-tool-use"]).code(0).stdout("npm platform package: hook pre-tool-use\n");
    }
}

#[test]
fn an_npm_install_without_its_platform_package_is_passed_over() {
    let env = TestEnv::new();
    let prefix = env.root().join("npm");
    npm_install(&prefix, true, false);
    let path = format!("{}:{}", prefix.join("bin").display(), env.path());
    // The hooks still fail open, quietly; nothing runs node.
    launch(&env, &path, &["hook", "pre-tool-use"]).code(0).stdout("").stderr("");
    // A later install is still found.
    fake_codeact(&env.home().join(".cargo/bin/codeact"), "cargo");
    launch(&env, &path, &["--version"]).code(0).stdout("cargo: --version\n");
}

#[test]
fn without_a_binary_the_session_start_hook_says_once_how_to_install_and_the_others_stay_quiet() {
    let env = TestEnv::new();
    for event in ["pre-tool-use", "post-tool-use"] {
        launch(&env, &env.path(), &["hook", event]).code(0).stdout("").stderr("");
    }
    let out = launch(&env, &env.path(), &["hook", "session-start"]).code(0).stderr("");
    let said: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        said["additionalContext"],
        "codeact is not installed on this machine, so its tools are unavailable in this session. It installs \
         with `pip install codeact`."
    );
    assert_eq!(out.stdout.lines().count(), 1);
    let out = launch(&env, &env.path(), &["install"]).code(127).stdout("");
    assert_eq!(
        out.stderr,
        "codeact: the codeact binary was not found; install it with `pip install codeact` (or set CODEACT_BIN to its \
         path)\n"
    );
}

#[test]
fn the_install_command_named_is_one_this_machine_can_run() {
    let env = TestEnv::new();
    let tools = env.root().join("tools");
    let path = format!("{}:{}", env.path(), tools.display());
    fake_codeact(&tools.join("npm"), "npm");
    let out = launch(&env, &path, &["install"]).code(127);
    assert!(out.stderr.contains("install it with `npm install -g codeact`"), "{}", out.stderr);
    fake_codeact(&tools.join("uv"), "uv");
    let out = launch(&env, &path, &["install"]).code(127);
    assert!(out.stderr.contains("install it with `uv tool install codeact`"), "{}", out.stderr);
}

fn json_file(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn every_manifest_carries_the_crates_version() {
    for (file, pointer) in [
        ("plugin/plugin.json", "/version"),
        ("claude-plugin/.claude-plugin/plugin.json", "/version"),
        (".github/plugin/marketplace.json", "/plugins/0/version"),
        ("npm/codeact/package.json", "/version"),
        ("npm/codeact/package.json", "/optionalDependencies/@codeact~1linux-x64"),
        ("npm/codeact/package.json", "/optionalDependencies/@codeact~1linux-arm64"),
        ("npm/codeact/package.json", "/optionalDependencies/@codeact~1darwin-x64"),
        ("npm/codeact/package.json", "/optionalDependencies/@codeact~1darwin-arm64"),
        ("npm/codeact/package.json", "/optionalDependencies/@codeact~1win32-x64"),
    ] {
        assert_eq!(json_file(&repo().join(file)).pointer(pointer), Some(&Value::from(VERSION)), "{file} {pointer}");
    }
    // The wheel's version is the crate's, read by maturin.
    let pyproject = std::fs::read_to_string(repo().join("pyproject.toml")).unwrap();
    assert!(pyproject.contains("dynamic = [\"version\"]"), "{pyproject}");
    assert!(!pyproject.lines().any(|line| line.starts_with("version")), "{pyproject}");
}

#[test]
fn the_npm_launcher_lists_a_platform_package_for_every_platform_it_knows() {
    let manifest = json_file(&repo().join("npm/codeact/package.json"));
    let script = std::fs::read_to_string(repo().join("npm/codeact/bin/codeact.js")).unwrap();
    let listed: Vec<&String> = manifest["optionalDependencies"].as_object().unwrap().keys().collect();
    assert_ne!(listed.len(), 0);
    for name in &listed {
        assert!(script.contains(&format!("\"{name}\"")), "{name} is not in the launcher's table");
    }
    assert_eq!(script.matches("\"@codeact/").count(), listed.len(), "the launcher knows a package npm does not list");
    assert_eq!(manifest["bin"]["codeact"], "bin/codeact.js");
    // Every target scripts/package publishes has its package listed: `"TRIPLE": ("OS", "CPU", [...])`.
    let package = std::fs::read_to_string(repo().join("scripts/package")).unwrap();
    let published: Vec<String> = package
        .lines()
        .filter_map(|line| {
            let (_, tuple) = line.trim().split_once("\": (\"")?;
            let mut fields = tuple.split('"');
            let (os, _, cpu) = (fields.next()?, fields.next()?, fields.next()?);
            Some(format!("@codeact/{os}-{cpu}"))
        })
        .collect();
    assert_eq!(published.len(), 5, "{published:?}");
    for name in &published {
        assert!(listed.contains(&name), "{name} is published but not listed");
    }
}

/// A plugin root in the test's folder whose manifest (Copilot's or Claude's) declares `version`,
/// with a launcher in `bin/`; returns the launcher's path.
fn plugin_of_version(env: &TestEnv, manifest: &str, version: &str) -> PathBuf {
    let root = env.root().join("plugin-root");
    let manifest = root.join(manifest);
    std::fs::create_dir_all(manifest.parent().unwrap()).unwrap();
    std::fs::write(&manifest, format!("{{\"name\": \"codeact\", \"version\": \"{version}\"}}")).unwrap();
    copy_launcher(&root.join("bin/codeact"));
    root.join("bin/codeact")
}

#[test]
fn preflight_and_the_session_start_hook_say_when_the_plugin_is_another_version() {
    for manifest in ["plugin.json", ".claude-plugin/plugin.json"] {
        let env = TestEnv::new();
        let launcher = plugin_of_version(&env, manifest, "9.9.9").display().to_string();
        let expected = format!(
            "the codeact plugin is version 9.9.9 (`{}`) but the codeact binary is {VERSION}; install the binary of the \
             plugin's version (`npm install -g codeact@9.9.9` or `pip install codeact==9.9.9`) or update the plugin",
            env.root().join("plugin-root").join(manifest).display()
        );

        let env = env.env("CODEACT_LAUNCHER", &launcher);
        let out = env.run(&["preflight", "--backend", "monty"], "").code(0);
        assert!(out.stderr.contains(&expected), "{manifest}: {}", out.stderr);

        let payload = serde_json::json!({"cwd": env.workspace()}).to_string();
        let out = env.run(&["hook", "session-start"], &payload).code(0);
        let said: Value = serde_json::from_str(&out.stdout).unwrap();
        let context = said["additionalContext"].as_str().unwrap();
        assert!(context.starts_with(&format!("codeact: {expected}.\n\n# codeact")), "{manifest}: {context}");
    }
}

#[test]
fn a_plugin_of_the_same_version_is_not_mentioned() {
    let env = TestEnv::new();
    let launcher = plugin_of_version(&env, "plugin.json", VERSION).display().to_string();
    let env = env.env("CODEACT_LAUNCHER", &launcher);
    let out = env.run(&["preflight", "--backend", "monty"], "").code(0);
    assert!(!out.stderr.contains("plugin is version"), "{}", out.stderr);
    let payload = serde_json::json!({"cwd": env.workspace()}).to_string();
    let out = env.run(&["hook", "session-start"], &payload).code(0);
    assert!(!out.stdout.contains("plugin is version"), "{}", out.stdout);
    assert!(out.stdout.contains("# codeact"), "{}", out.stdout);
}

/// npm's layout for a global install of the launcher package and this platform's package, with
/// the real binary; returns the launcher script.
fn npm_layout(env: &TestEnv, with_platform: bool) -> PathBuf {
    let modules = env.root().join("npm/lib/node_modules");
    crate::support::copy_dir(&repo().join("npm/codeact"), &modules.join("codeact"));
    if with_platform {
        let package = modules.join("@codeact").join(npm_platform());
        std::fs::create_dir_all(package.join("bin")).unwrap();
        std::fs::write(package.join("package.json"), format!("{{\"name\": \"@codeact/{}\"}}", npm_platform())).unwrap();
        std::os::unix::fs::symlink(*BIN, package.join("bin/codeact")).unwrap();
    }
    modules.join("codeact/bin/codeact.js")
}

fn node(env: &TestEnv, script: &Path, args: &[&str]) -> Command {
    let mut command = Command::new("node");
    command
        .arg(script)
        .args(args)
        .current_dir(env.workspace())
        .env_clear()
        .env("PATH", env.path())
        .env("HOME", env.home());
    command
}

#[test]
#[ignore = "needs node (the CI machine has it)"]
fn the_npm_launcher_runs_the_platform_binary_with_arguments_streams_and_status_passed_through() {
    let env = TestEnv::new().file("notes.txt", "one\ntwo\n");
    let script = npm_layout(&env, true);
    output(&mut node(&env, &script, &["--version"])).code(0).stdout(&format!("codeact {VERSION} (monty 1.4.0)\n"));

    let mut child = node(&env, &script, &["run"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), b"print(len(view(path=\"notes.txt\").splitlines()))\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "2\n", "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success());

    // A failing program's status and stderr are the binary's own.
    let direct = env.run(&["run", "--code", "1 / 0"], "");
    let through = output(&mut node(&env, &script, &["run", "--code", "1 / 0"]));
    assert_ne!(direct.code, 0);
    assert_eq!((through.code, through.stdout, through.stderr), (direct.code, direct.stdout, direct.stderr));
}

#[test]
#[ignore = "needs node (the CI machine has it)"]
fn the_npm_launcher_without_its_platform_package_says_how_to_reinstall() {
    let env = TestEnv::new();
    let script = npm_layout(&env, false);
    let out = output(&mut node(&env, &script, &["--version"])).code(127).stdout("");
    assert_eq!(
        out.stderr,
        format!(
            "codeact: the package @codeact/{}, which holds the binary, is not installed; reinstall without omitting \
             optional dependencies: npm install -g codeact\n",
            npm_platform()
        )
    );
}
