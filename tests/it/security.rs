//! SPEC §9: each test tries to break a rule — escape the workspace, read what is not a regular
//! file, turn an argument into an option, leak a secret.

use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::json;

use crate::support::TestEnv;

const SECRET: &str = "OUTSIDE-SECRET";

/// A workspace with a secret file beside it.
pub(crate) fn env() -> TestEnv {
    TestEnv::new().outside_file("secret.txt", SECRET).file("inside.txt", "inside\n")
}

fn permission_error(env: &TestEnv, code: &str) -> String {
    let (kind, message) = env.error_of(code);
    assert_eq!(kind, "PermissionError", "{code}: {message}");
    assert!(!message.contains(SECRET));
    message
}

#[test]
fn dot_dot_cannot_leave_the_workspace() {
    let env = env();
    assert_eq!(
        permission_error(&env, "view(path='../outside/secret.txt')"),
        "'../outside/secret.txt' is outside the workspace"
    );
    permission_error(&env, "view(path='sub/../../outside/secret.txt')");
    permission_error(&env, "create(path='../outside/new.txt', file_text='x')");
    permission_error(&env, "edit(path='../outside/secret.txt', old_str='OUTSIDE', new_str='x')");
    permission_error(&env, "glob(pattern='*', paths='..')");
    permission_error(&env, "grep(pattern='SECRET', paths='../outside')");
    permission_error(&env, "sql(query='select 1', db_path='../outside/x.db')");
    assert!(!env.outside().join("new.txt").exists());
}

#[test]
fn absolute_paths_outside_the_workspace_are_refused() {
    let env = env();
    let secret = env.outside().join("secret.txt");
    permission_error(&env, &format!("view(path={:?})", secret.to_str().unwrap()));
    permission_error(&env, "view(path='/etc/passwd')");
    permission_error(&env, "grep(pattern='root', paths='/etc')");
}

#[test]
fn absolute_paths_inside_the_workspace_are_accepted() {
    let env = env();
    let inside = env.workspace().join("inside.txt");
    assert_eq!(env.stdout_of(&format!("print(view(path={:?}), end='')", inside.to_str().unwrap())), "inside\n");
}

#[test]
fn a_symlinked_file_that_leaves_the_workspace_is_refused() {
    let env = env().symlink("../outside/secret.txt", "link.txt");
    permission_error(&env, "view(path='link.txt')");
    permission_error(&env, "edit(path='link.txt', old_str='OUTSIDE', new_str='x')");
    let (kind, _) = env.error_of("create(path='link.txt', file_text='x')");
    assert_eq!(kind, "FileExistsError");
    let hits = env.stdout_of("print(grep(pattern='SECRET'))");
    assert_eq!(hits, "[]\n");
    assert_eq!(std::fs::read_to_string(env.outside().join("secret.txt")).unwrap(), SECRET);
}

#[test]
fn a_symlinked_directory_that_leaves_the_workspace_is_refused() {
    let env = env().symlink("../outside", "linkdir");
    permission_error(&env, "view(path='linkdir/secret.txt')");
    permission_error(&env, "view(path='linkdir')");
    permission_error(&env, "create(path='linkdir/planted.txt', file_text='x')");
    permission_error(&env, "glob(pattern='*', paths='linkdir')");
    permission_error(&env, "grep(pattern='SECRET', paths='linkdir')");
    permission_error(&env, "sql(query='create table t(x)', db_path='linkdir/x.db')");
    assert!(!env.outside().join("planted.txt").exists());
    assert!(!env.outside().join("x.db").exists());
    // Walking the workspace does not follow it either.
    assert_eq!(env.stdout_of("print(glob(pattern='**/*'))"), "['inside.txt']\n");
    assert_eq!(env.stdout_of("print(len(grep(pattern='SECRET')))"), "0\n");
}

#[test]
fn symlinks_that_stay_inside_the_workspace_work() {
    let env = env().file("real/data.txt", "data\n").symlink("real", "alias").symlink("real/data.txt", "data-link.txt");
    assert_eq!(env.stdout_of("print(view(path='alias/data.txt'), end='')"), "data\n");
    assert_eq!(env.stdout_of("print(view(path='data-link.txt'), end='')"), "data\n");
    env.stdout_of("edit(path='data-link.txt', old_str='data', new_str='edited')");
    // The link still points at the file, which was edited in place.
    assert!(env.workspace().join("data-link.txt").symlink_metadata().unwrap().file_type().is_symlink());
    assert_eq!(std::fs::read_to_string(env.workspace().join("real/data.txt")).unwrap(), "edited\n");
}

#[test]
fn a_symlink_swapped_in_during_a_run_never_leaks_outside_content() {
    symlink_swap_race(env(), "monty");
}

/// 3 000 views through a link that another thread keeps pointing outside and back: every
/// read is refused or sees the inside file, on `backend` (the tools are the host's on every
/// backend; this checks that the guest bridge adds no path of its own).
pub(crate) fn symlink_swap_race(env: TestEnv, backend: &str) {
    let env = env.file("real/secret.txt", "inside-version").symlink("real", "swap");
    let workspace = env.workspace();
    let outside = env.outside();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let swapper = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let link = workspace.join("swap");
            let temp = workspace.join("swap.tmp");
            let mut flips = 0u32;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let target = if flips.is_multiple_of(2) { outside.clone() } else { workspace.join("real") };
                let _ = std::fs::remove_file(&temp);
                std::os::unix::fs::symlink(&target, &temp).unwrap();
                std::fs::rename(&temp, &link).unwrap();
                flips += 1;
            }
            flips
        })
    };
    let program = "seen = set()\nfor _ in range(3000):\n    try:\n        seen.add(view(path='swap/secret.txt'))\n    \
                   except PermissionError:\n        seen.add('refused')\nprint(sorted(seen))";
    let out = env.run(&["run", "--backend", backend, "--max-tool-calls", "100000"], program);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let flips = swapper.join().unwrap();
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!out.stdout.contains(SECRET), "leaked: {}", out.stdout);
    assert!(out.stdout.contains("refused") || out.stdout.contains("inside-version"), "{}", out.stdout);
    assert!(flips > 10, "the link was swapped only {flips} times");
}

#[test]
fn devices_are_never_read() {
    let env = env().symlink("/dev/zero", "zero");
    permission_error(&env, "view(path='/dev/zero')");
    let started = Instant::now();
    permission_error(&env, "view(path='zero')");
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn a_fifo_is_refused_without_blocking() {
    let env = env();
    let status = std::process::Command::new("mkfifo").arg(env.workspace().join("pipe")).status().unwrap();
    assert!(status.success());
    let started = Instant::now();
    let message = permission_error(&env, "view(path='pipe')");
    assert_eq!(message, "'pipe' is not a regular file (devices, FIFOs and sockets are never read)");
    // Searching a tree that holds a FIFO neither blocks nor reports it.
    assert_eq!(env.stdout_of("print([h['path'] for h in grep(pattern='inside')])"), "['inside.txt']\n");
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn a_grep_pattern_that_looks_like_an_option_is_only_a_pattern() {
    let env = env().file("flags.txt", "use --files here\n-e is a flag\n");
    let out = env.stdout_of(
        "print([h['text'] for h in grep(pattern='--files')])\nprint([h['line'] for h in grep(pattern='-e')])",
    );
    assert_eq!(out, "['use --files here']\n[2]\n");
}

#[test]
fn sql_cannot_attach_or_vacuum_into_files_outside() {
    let env = env();
    let target = env.outside().join("stolen.db");
    let (kind, message) = env.error_of(&format!("sql(query=\"attach database '{}' as x\")", target.display()));
    assert_eq!((kind.as_str(), message.as_str()), ("RuntimeError", "sql error: not authorized"));
    let (kind, _) = env.error_of(&format!("sql(query=\"vacuum into '{}'\")", target.display()));
    assert_eq!(kind, "RuntimeError");
    assert!(!target.exists());
}

#[test]
fn open_pathlib_and_environment_reads_are_confined_or_refused() {
    let env = env().env("CODEACT_TEST_SECRET", "s3cr3t-value");
    permission_error(&env, "open('/etc/passwd').read()");
    permission_error(&env, "import pathlib\npathlib.Path('../outside/secret.txt').read_text()");
    permission_error(&env, "import pathlib\npathlib.Path('/etc/passwd').read_text()");
    permission_error(&env, "import os\nos.getenv('CODEACT_TEST_SECRET')");
    permission_error(&env, "import pathlib\npathlib.Path('new.txt').write_text('x')");
    assert!(!env.workspace().join("new.txt").exists());
    let inside = env.stdout_of("import pathlib\nprint(pathlib.Path('inside.txt').read_text(), end='')");
    assert_eq!(inside, "inside\n");
}

#[test]
fn secrets_in_the_environment_do_not_appear_in_manifests_or_errors() {
    let env = env().env("GITHUB_TOKEN", "ghp_leakcheck123").env("CODEACT_TEST_SECRET", "s3cr3t-value");
    let discover = env.run(&["discover"], "").code(0);
    let instructions = env.run(&["instructions"], "").code(0);
    let failing = env.run_code("import os\nos.environ['GITHUB_TOKEN']");
    for text in [discover.stdout, instructions.stdout, failing.stdout, failing.stderr] {
        assert!(!text.contains("ghp_leakcheck123") && !text.contains("s3cr3t-value"), "{text}");
    }
}

// The review's findings by area (SECURITY.md names the rules each one tests).
mod exclusive;
mod hostcode;
mod install;
mod limits;
mod protected;
mod tools;

/// F2: the program writes `json.py` and `traceback.py`, then calls the user's own drop-in,
/// whose worker imports both: neither is the program's.
#[test]
fn files_the_program_writes_never_reach_the_python_tool_worker() {
    let env = env().env("FAKE_SECRET", "sk-FAKE-1234567890").user_file(
        "tools/where.py",
        "import os, sys\n\ndef run():\n    import json\n    return {'cwd': os.getcwd(), 'isolated': sys.flags.isolated, 'json': json.__file__, 'env': sorted(os.environ)}\n",
    );
    let marker = env.outside().join("hijacked");
    let planted = format!("import os\nopen({:?}, 'w').write('ran')\n", marker.to_str().unwrap());
    let program = format!(
        "create(path='json.py', file_text={planted:?})\ncreate(path='traceback.py', file_text={planted:?})\nprint(where())"
    );
    let out = env.run_code(&program).code(0);
    assert!(!marker.exists(), "the program's json.py ran in the worker");
    let workspace = env.workspace().canonicalize().unwrap();
    assert!(out.stdout.contains("'cwd': '/'"), "{}", out.stdout);
    assert!(out.stdout.contains("'isolated': 1"), "{}", out.stdout);
    assert!(!out.stdout.contains(&format!("{}/json.py", workspace.display())), "{}", out.stdout);
    assert!(!out.stdout.contains("FAKE_SECRET"), "the worker saw the whole environment: {}", out.stdout);
    assert!(out.stdout.contains("'CODEACT_WORKSPACE'"), "{}", out.stdout);
}

/// F9: a repository's symlinks to a device, and tool folders that loop, neither exhaust memory
/// nor hang codeact or its hooks.
#[test]
fn devices_and_loops_in_a_repository_neither_hang_nor_exhaust_codeact() {
    let guarded = |env: &TestEnv, args: &[&str], stdin: &str| {
        let started = Instant::now();
        let out = env.run(args, stdin);
        assert!(started.elapsed() < Duration::from_secs(20), "{args:?} took {:?}", started.elapsed());
        out
    };
    let view = |env: &TestEnv| {
        json!({"sessionId": "s1", "cwd": env.workspace(), "toolName": "grep", "toolArgs": {"pattern": "a"}}).to_string()
    };
    // The project config is /dev/zero: the hook leaves it out at once, and the user's mode holds;
    // `run` says why it cannot start.
    let env = TestEnv::new().symlink("/dev/zero", ".codeact/config.json").env("CODEACT_MODE", "exclusive");
    let out = guarded(&env, &["hook", "pre-tool-use"], &view(&env));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.starts_with("{\"permissionDecision\":\"deny\""), "{}", out.stdout);
    assert!(out.stderr.contains("not a regular file"), "{}", out.stderr);
    let out = guarded(&env, &["run", "--code", "print(1)"], "");
    assert_eq!(out.code, 4, "{}", out.stderr);
    assert!(out.stderr.contains("not a regular file"), "{}", out.stderr);
    // MCP configs and tool files that are devices are reported, not read.
    let env = TestEnv::new().symlink("/dev/zero", ".mcp.json").symlink("/dev/zero", ".codeact/tools/x.md");
    let out = guarded(&env, &["run", "--code", "print(1)"], "");
    assert_eq!((out.code, out.stdout.as_str()), (0, "1\n"), "{}", out.stderr);
    // Tool folders that loop, or lead to the root, are not followed.
    let env = TestEnv::new()
        .symlink(".", ".codeact/tools/a")
        .symlink(".", ".codeact/tools/b")
        .symlink("/", ".codeact/tools/root");
    for args in [&["run", "--code", "print(1)"][..], &["discover"], &["check"]] {
        guarded(&env, args, "");
    }
}

/// The user's own shell tool runs `python3 -c` in the workspace: a `json.py` the program wrote
/// there is not imported (`PYTHONSAFEPATH`).
#[test]
fn a_module_the_program_writes_is_not_imported_by_the_users_host_tools() {
    let env = env().user_file(
        "tools/pyjson.md",
        "---\ntype: custom\nname: pyjson\ndescription: Uses Python.\n---\n## Code\n```sh\npython3 -c 'import json; print(json.dumps(1))'\n```\n",
    );
    let marker = env.outside().join("hijacked");
    let planted = format!("open({:?}, 'w').write('ran')\nimport sys\nsys.exit(3)\n", marker.to_str().unwrap());
    env.run_code(&format!("create(path='json.py', file_text={planted:?})\nprint(pyjson())")).code(0).stdout("1\n");
    assert!(!marker.exists(), "the program's json.py ran in the user's tool");
}
