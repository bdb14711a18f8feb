//! Tool contracts (SPEC §3) that need the host to check: file modes, atomic writes, caps,
//! process groups. The Python corpus covers everyday behaviour.

use std::os::unix::fs::PermissionsExt;

use pretty_assertions::assert_eq;
use serde_json::json;

use crate::support::TestEnv;

#[test]
fn edit_keeps_the_file_mode_and_leaves_no_temp_files() {
    let env = TestEnv::new().file("run.sh", "echo old\n");
    let path = env.workspace().join("run.sh");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(env.stdout_of("print(edit(path='run.sh', old_str='old', new_str='new'))"), "Edited run.sh at line 1\n");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "echo new\n");
    assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o755);
    let names: Vec<String> = std::fs::read_dir(env.workspace())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["run.sh"]);
}

#[test]
fn create_makes_parents_and_refuses_to_overwrite() {
    let env = TestEnv::new().file("keep.txt", "original");
    assert_eq!(
        env.stdout_of("print(create(path='a/b/new.txt', file_text='one\\ntwo\\n'))"),
        "Created a/b/new.txt (2 lines)\n"
    );
    assert_eq!(std::fs::read_to_string(env.workspace().join("a/b/new.txt")).unwrap(), "one\ntwo\n");
    let (kind, message) = env.error_of("create(path='keep.txt', file_text='clobbered')");
    assert_eq!((kind.as_str(), message.as_str()), ("FileExistsError", "file already exists: 'keep.txt'"));
    assert_eq!(std::fs::read_to_string(env.workspace().join("keep.txt")).unwrap(), "original");
}

/// A file whose name is as long as the file system allows is created and edited: the file
/// written beside it first has a short name of its own.
#[test]
fn create_and_edit_take_names_as_long_as_the_file_system_allows() {
    let env = TestEnv::new();
    for length in [200, 240, 255] {
        let name = "n".repeat(length - 4) + ".txt";
        let program = format!(
            "create(path='deep/{name}', file_text='one')\nedit(path='deep/{name}', old_str='one', new_str='two')\n\
             print(view(path='deep/{name}'))"
        );
        assert_eq!(env.stdout_of(&program), "two\n", "a {length}-byte name");
    }
    assert_eq!(std::fs::read_dir(env.workspace().join("deep")).unwrap().count(), 3, "no file left beside them");
}

#[test]
fn view_refuses_files_over_ten_mebibytes_but_reads_their_lines() {
    let line = "0123456789abcdef".repeat(8) + "\n";
    let env = TestEnv::new().file("huge.txt", line.repeat(90_000));
    let (kind, message) = env.error_of("view(path='huge.txt')");
    assert_eq!(kind, "ValueError");
    assert_eq!(
        message,
        "'huge.txt' is 11610000 bytes, over the 10485760-byte limit for one read; pass view_range to read part of it"
    );
    assert_eq!(env.stdout_of("print(len(view(path='huge.txt', view_range=[89999, -1]).splitlines()))"), "2\n");
}

#[test]
fn view_lists_directories_sorted_with_a_slash_after_subdirectories() {
    let env = TestEnv::new().file("b.txt", "").file("a/x.txt", "").file(".hidden", "");
    assert_eq!(env.stdout_of("print(view(path='.'))"), ".hidden\na/\nb.txt\n");
}

#[test]
fn non_utf8_files_raise_unicode_decode_error_naming_the_file() {
    let env = TestEnv::new().file("latin1.txt", b"caf\xe9\n");
    assert_eq!(
        env.error_of("view(path='latin1.txt')"),
        (
            "UnicodeDecodeError".into(),
            "'utf-8' codec can't decode byte 0xe9 in position 3 of 'latin1.txt': the file is not UTF-8 text".into()
        )
    );
}

#[test]
fn glob_returns_at_most_ten_thousand_paths_with_a_warning() {
    let env = TestEnv::new();
    for dir in 0..101 {
        for file in 0..100 {
            let path = env.workspace().join(format!("d{dir:03}/f{file:03}.txt"));
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "").unwrap();
        }
    }
    let (_, value) = env.run_json("r = glob(pattern='**/*.txt')\n[len(r), r[0], r[-1]]", &[]);
    assert_eq!(value["return_value"], json!([10000, "d000/f000.txt", "d099/f099.txt"]));
    assert_eq!(
        value["stderr"],
        json!("glob(\"**/*.txt\"): 10100 files matched; returning the first 10000. Narrow the pattern or paths.\n")
    );
}

#[test]
fn glob_skips_default_excludes_only_below_the_search_root() {
    let env = TestEnv::new().file("node_modules/dep/a.js", "").file("src/b.js", "").file("build/c.js", "");
    assert_eq!(env.stdout_of("print(glob(pattern='**/*.js'))"), "['src/b.js']\n");
    assert_eq!(env.stdout_of("print(glob(pattern='**/*.js', paths='node_modules'))"), "['node_modules/dep/a.js']\n");
    assert_eq!(
        env.stdout_of("print(glob(pattern='**/*.js', exclude_dirs=[]))"),
        "['build/c.js', 'node_modules/dep/a.js', 'src/b.js']\n"
    );
}

#[test]
fn grep_reports_context_lines_with_their_numbers() {
    let env = TestEnv::new().file("a.txt", "one\ntwo\nTARGET\nfour\nfive\n");
    let (_, value) = env.run_json("grep(pattern='TARGET', context_lines=1)", &[]);
    assert_eq!(
        value["return_value"],
        json!([{"path": "a.txt", "line": 3, "text": "TARGET",
                "context": [{"line": 2, "text": "two"}, {"line": 4, "text": "four"}]}])
    );
}

#[test]
fn grep_skips_binary_files() {
    let env = TestEnv::new().file("bin.dat", b"TODO\x00\x01\x02").file("text.txt", "TODO\n");
    assert_eq!(env.stdout_of("print([h['path'] for h in grep(pattern='TODO')])"), "['text.txt']\n");
}

#[test]
fn bash_caps_each_stream_at_one_mebibyte() {
    let env = TestEnv::new();
    let out = env.stdout_of(
        "r = bash(command='head -c 3000000 /dev/zero | tr \"\\\\0\" x')\nprint(len(r['stdout']), r['stdout'][-90:])",
    );
    assert_eq!(
        out,
        "1048649 xxxxxxxxxxxxxxxxx\n[… 1951424 more bytes of stdout dropped: streams are capped at 1 MiB …]\n\n"
    );
}

#[test]
fn bash_runs_in_the_workspace_and_reports_exit_codes() {
    let env = TestEnv::new().file("marker.txt", "");
    let (_, value) = env.run_json("bash(command='ls; echo oops >&2; exit 3')", &[]);
    assert_eq!(value["return_value"], json!({"stdout": "marker.txt\n", "stderr": "oops\n", "returncode": 3}));
}

#[test]
fn bash_kills_the_whole_process_group_at_its_timeout() {
    let env = TestEnv::new();
    // Time for a busy machine to start the shell and its child before the timeout strikes.
    let code = "bash(command='sleep 60 & echo $! > child.pid; sleep 60; echo done', timeout=3)";
    let (kind, message) = env.error_of(code);
    assert_eq!(kind, "TimeoutError");
    assert_eq!(message, "bash() command timed out (timeout=3s); its process group was killed");
    let pid = std::fs::read_to_string(env.workspace().join("child.pid")).unwrap();
    assert!(!crate::support::process_alive(&pid), "the background child {pid} outlived the timeout");
}

#[test]
fn bash_keeps_what_it_read_when_a_background_process_holds_its_output_open() {
    let env = TestEnv::new();
    // The detached child leaves the group, so the kill at the end of the call misses it, and
    // it holds both pipes open for a few seconds more.
    let code = "r = bash(command=\"echo kept; echo also >&2; python3 -c 'import os, time; os.setsid(); \
                time.sleep(8)' & echo $! > child.pid; sleep 0.3\")\nprint(repr(r['stdout']), repr(r['stderr']))";
    let out = env.stdout_of(code);
    let pid = std::fs::read_to_string(env.workspace().join("child.pid")).unwrap();
    let _ = std::process::Command::new("kill").arg("-9").arg(pid.trim()).status();
    assert_eq!(
        out,
        "'kept\\n[the rest of stdout not collected: a background process kept it open]' \
         'also\\n[the rest of stderr not collected: a background process kept it open]'\n"
    );
}

#[test]
fn bash_times_out_a_command_whose_leader_left_its_process_group() {
    let env = TestEnv::new();
    // The leader joins codeact's own process group, which the kill of its group cannot reach.
    let code = "bash(command=\"exec python3 -c 'import os, time; os.setpgid(0, os.getpgid(os.getppid())); \
                print(\\\"moved\\\", flush=True); time.sleep(60)'\", timeout=3)";
    let (status, value) = env.run_json(code, &["--timeout", "30"]);
    assert_eq!(status, 1, "{value}");
    assert_eq!(
        (value["error"]["type"].as_str().unwrap(), value["error"]["message"].as_str().unwrap()),
        (
            "TimeoutError",
            "bash() command timed out (timeout=3s); its process group was killed\npartial stdout:\nmoved\n"
        )
    );
}

#[test]
fn sql_caps_results_at_ten_thousand_rows_with_a_warning() {
    let program = "sql(query='create table t(x)')\nsql(query='with recursive c(n) as (select 1 union all select n+1 from c \
                   where n < 10005) insert into t select n from c')\nlen(sql(query='select x from t'))";
    let (_, value) = TestEnv::new().run_json(program, &[]);
    assert_eq!(value["return_value"], json!(10000));
    assert_eq!(
        value["stderr"],
        json!("sql(): more than 10000 rows; returned the first 10000. Add LIMIT or aggregate in SQL.\n")
    );
}

#[test]
fn sql_file_databases_persist_inside_the_workspace() {
    let env = TestEnv::new().file("data/.keep", "");
    env.stdout_of("sql(query='create table t(x); insert into t values (1), (2)', db_path='data/app.db')");
    assert!(env.workspace().join("data/app.db").is_file());
    assert_eq!(env.stdout_of("print(sql(query='select sum(x) as s from t', db_path='data/app.db'))"), "[{'s': 3}]\n");
}

#[test]
fn sql_keeps_its_journals_beside_the_database_in_each_journal_mode() {
    let env = TestEnv::new().file("data/.keep", "");
    // A WAL database has its log and shared memory beside it while it is open; a persistent
    // rollback journal stays beside it after the commit.
    let program = "sql(query='pragma journal_mode=wal', db_path='data/wal.db')\n\
                   sql(query='create table t(x); insert into t values (1)', db_path='data/wal.db')\n\
                   print(sorted(glob(pattern='data/wal.db*')))\n\
                   sql(query='pragma journal_mode=persist', db_path='data/kept.db')\n\
                   _ = sql(query='create table t(x); insert into t values (2)', db_path='data/kept.db')";
    assert_eq!(env.stdout_of(program), "['data/wal.db', 'data/wal.db-shm', 'data/wal.db-wal']\n");
    assert!(env.workspace().join("data/kept.db-journal").is_file());
    let program = "print(sql(query='select x from t', db_path='data/wal.db'), \
                   sql(query='select x from t', db_path='data/kept.db'))";
    assert_eq!(env.stdout_of(program), "[{'x': 1}] [{'x': 2}]\n");
}

#[test]
fn sql_opens_a_database_whose_real_name_is_not_utf8() {
    use std::os::unix::ffi::{OsStrExt as _, OsStringExt as _};
    let env = TestEnv::new();
    let real = env.workspace().join(std::ffi::OsStr::from_bytes(b"caf\xe9.db"));
    std::fs::write(&real, b"").unwrap();
    std::os::unix::fs::symlink(real.file_name().unwrap(), env.workspace().join("link.db")).unwrap();
    env.stdout_of("sql(query='create table t(x); insert into t values (7)', db_path='link.db')");
    assert!(std::fs::metadata(&real).unwrap().len() > 0, "the database went elsewhere");
    let mut names: Vec<_> = std::fs::read_dir(env.workspace()).unwrap().map(|e| e.unwrap().file_name()).collect();
    names.sort();
    assert_eq!(names, [std::ffi::OsString::from_vec(b"caf\xe9.db".to_vec()), "link.db".into()]);
}

#[test]
fn none_passed_for_a_parameter_with_a_default_value_means_the_default() {
    let env = TestEnv::new().file("src/a.py", "x = 1\n").file("b.txt", "x\n");
    let program = r#"
where = None
print([m["path"] for m in grep("x", paths=where)])
print([m["path"] for m in grep("x", None, None, None, None, None)])
print(len(grep(pattern="x", ignore_case=None, context_lines=None, max_results=None)))
print(glob("**/*.py", paths=None))
print(glob(pattern="*.txt", paths=where, exclude_dirs=None))
print(sql("select 1 as one", db_path=None))
print(bash("echo hi", timeout=None)["stdout"], end="")
"#;
    assert_eq!(
        env.stdout_of(program),
        "['b.txt', 'src/a.py']\n['b.txt', 'src/a.py']\n2\n['src/a.py']\n['b.txt']\n[{'one': 1}]\nhi\n"
    );
    let (kind, message) = env.error_of("grep(None)");
    assert_eq!((kind.as_str(), message.as_str()), ("TypeError", "grep() argument 'pattern' must be str, not NoneType"));
}

#[test]
fn open_reads_workspace_files_on_monty() {
    let env = TestEnv::new().file("notes.txt", "one\ntwo\n").file("data.bin", b"\x00\xff");
    let program = "\
print(repr(open('notes.txt').read()))
with open('notes.txt') as f:
    print(f.readline(), end='')
    print(f.readlines())
print(open('data.bin', 'rb').read())
import os, pathlib
print(pathlib.Path('notes.txt').read_text() == open('./notes.txt', 'r').read(), sorted(os.listdir('.')))
";
    assert_eq!(
        env.stdout_of(program),
        "'one\\ntwo\\n'\none\n['two\\n']\nb'\\x00\\xff'\nTrue ['data.bin', 'notes.txt']\n"
    );
    let errors: Vec<(String, String)> =
        ["open('missing.txt')", "open('.')"].into_iter().map(|code| env.error_of(code)).collect();
    assert_eq!(
        errors,
        [
            ("FileNotFoundError".to_owned(), "no such file or directory: 'missing.txt'".to_owned()),
            ("IsADirectoryError".to_owned(), "is a directory: '.'".to_owned()),
        ]
    );
}

#[test]
fn where_view_is_disabled_monty_reads_no_file_through_open_pathlib_or_os() {
    let programs = [
        ("open('notes.txt').read()", "open() with mode 'r'"),
        ("open('notes.txt', 'rb').read()", "open() with mode 'rb'"),
        ("import pathlib\npathlib.Path('notes.txt').read_text()", "Path.read_text"),
        ("import pathlib\npathlib.Path('notes.txt').read_bytes()", "Path.read_bytes"),
        ("import pathlib\npathlib.Path('notes.txt').exists()", "Path.exists"),
        ("import pathlib\npathlib.Path('.').is_dir()", "Path.is_dir"),
        ("import os\nos.listdir('.')", "Path.iterdir"),
    ];
    let denied = TestEnv::new().file("notes.txt", "secret\n").env("CODEACT_DISABLE", "view");
    let allowed_without_view = TestEnv::new().file("notes.txt", "secret\n").env("CODEACT_TOOLS", "glob,grep");
    let configured = TestEnv::new().file("notes.txt", "secret\n").user_config(r#"{"disabled": ["view"]}"#);
    for env in [&denied, &allowed_without_view, &configured] {
        for (program, name) in programs {
            assert_eq!(
                env.error_of(program),
                (
                    "PermissionError".to_owned(),
                    format!("{name} reads files as view does, and view is disabled by configuration")
                ),
                "{program}"
            );
        }
    }
    assert_eq!(
        TestEnv::new().file("notes.txt", "secret\n").stdout_of("print(open('notes.txt').read(), end='')"),
        "secret\n"
    );
}

#[test]
fn open_for_writing_is_refused_on_monty_like_every_write() {
    let env = TestEnv::new().file("notes.txt", "keep\n");
    let instead = "is not available inside codeact; write files with create(path=…, file_text=…) or \
                   edit(path=…, old_str=…, new_str=…)";
    let refusals: Vec<(String, String)> = [
        "open('notes.txt', 'w')",
        "open('new.txt', 'a')",
        "open('new.bin', 'wb').write(b'x')",
        "import pathlib\npathlib.Path('new.txt').write_text('x')",
    ]
    .into_iter()
    .map(|code| env.error_of(code))
    .collect();
    let expected: Vec<(String, String)> =
        ["open() with mode 'w'", "open() with mode 'a'", "open() with mode 'wb'", "Path.write_text"]
            .into_iter()
            .map(|name| ("PermissionError".to_owned(), format!("{name} {instead}")))
            .collect();
    assert_eq!(refusals, expected);
    assert_eq!(std::fs::read_to_string(env.workspace().join("notes.txt")).unwrap(), "keep\n");
    let names: Vec<String> = std::fs::read_dir(env.workspace())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["notes.txt"]);
}

#[test]
fn open_on_monty_reads_nothing_outside_the_workspace() {
    let env = TestEnv::new().outside_file("secret.txt", "OUTSIDE-SECRET").file("inside.txt", "inside\n");
    let (outside, folder) = (env.outside().join("secret.txt"), env.outside());
    let env = env.symlink(&outside, "link.txt").symlink(folder, "out");
    let attempts = [
        "open('../outside/secret.txt').read()".to_owned(),
        "open('sub/../../outside/secret.txt').read()".to_owned(),
        format!("open({:?}).read()", outside.display().to_string()),
        "open('/etc/passwd').read()".to_owned(),
        "open('link.txt').read()".to_owned(),
        "open('out/secret.txt', 'rb').read()".to_owned(),
    ];
    for code in attempts {
        let (kind, message) = env.error_of(&code);
        assert_eq!(kind, "PermissionError", "{code}: {message}");
        assert!(!message.contains("OUTSIDE-SECRET"), "{code}: {message}");
    }
    assert_eq!(env.stdout_of("print(open('inside.txt').read(), end='')"), "inside\n");
}
