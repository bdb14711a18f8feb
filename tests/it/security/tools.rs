//! The review's findings on the built-in tools: write-protected paths (F1, R8), the time limit
//! inside one long operation (F8), path races in `sql` and `glob` (F10), `SQLite` pragmas that
//! name a directory (F11), tool memory (F12) and ignore files above the workspace (F21).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::env;
use crate::support::TestEnv;

/// Every write-protected path, as `create` would make it (F1).
const PROTECTED: &[(&str, &str)] = &[
    (".git/config", ".git/**"),
    (".git/hooks/pre-commit", ".git/**"),
    (".codeact/tools/pwn.py", ".codeact/**"),
    (".codeact/tools/x.md", ".codeact/**"),
    (".codeact/config.json", ".codeact/**"),
    (".mcp.json", ".mcp.json"),
    (".vscode/mcp.json", ".vscode/**"),
    (".vscode/tasks.json", ".vscode/**"),
    (".github/copilot/mcp.json", ".github/copilot/**"),
    (".github/hooks/hooks.json", ".github/hooks/**"),
    (".github/instructions/codeact.instructions.md", ".github/instructions/**"),
    (".github/agents/codeact.agent.md", ".github/agents/**"),
    (".claude/settings.json", ".claude/**"),
    (".envrc", ".envrc"),
    (".github/instructions/team.instructions.md", ".github/instructions/**"),
    (".github/agents/deploy.agent.md", ".github/agents/**"),
    (".github/prompts/release.prompt.md", ".github/prompts/**"),
    (".github/copilot-instructions.md", ".github/copilot-instructions.md"),
    ("AGENTS.md", "AGENTS.md"),
    ("CLAUDE.md", "CLAUDE.md"),
    (".husky/pre-commit", ".husky/**"),
    (".pre-commit-config.yaml", ".pre-commit-config.yaml"),
    ("GEMINI.md", "GEMINI.md"),
    (".github/skills/setup/SKILL.md", ".github/skills/**"),
    (".gemini/settings.json", ".gemini/**"),
    (".cursor/mcp.json", ".cursor/**"),
    (".codex/config.toml", ".codex/**"),
    ("proj.code-workspace", "*.code-workspace"),
    (".devcontainer/devcontainer.json", ".devcontainer/**"),
    ("lefthook.yml", "lefthook.*"),
    (".lintstagedrc.json", ".lintstagedrc*"),
    (".venv/lib/python3.12/site-packages/x.pth", ".venv/**"),
    (".direnv/python-3.12/bin/activate", ".direnv/**"),
    ("AGENTS.override.md", "AGENTS.override.md"),
    (".github/chatmodes/plan.chatmode.md", ".github/chatmodes/**"),
];

/// Runs `calls` (Python expressions) in one program and returns, for each, `["ok", result]` or
/// `[exception type, message]`.
pub(super) fn attempts(env: &TestEnv, calls: &[String]) -> Vec<(String, String)> {
    let list = calls.iter().map(|call| format!("lambda: {call}")).collect::<Vec<_>>().join(",\n    ");
    let program = format!(
        "out = []\nfor call in [\n    {list},\n]:\n    try:\n        out.append(['ok', str(call())])\n    \
         except Exception as e:\n        out.append([type(e).__name__, str(e)])\nout"
    );
    let (code, value) = env.run_json(&program, &[]);
    assert_eq!(code, 0, "{value}");
    value["return_value"]
        .as_array()
        .unwrap()
        .iter()
        .map(|pair| (pair[0].as_str().unwrap().to_owned(), pair[1].as_str().unwrap().to_owned()))
        .collect()
}

/// Asserts that every attempt was refused with a `PermissionError` naming `rules[i]`.
pub(super) fn assert_refused(calls: &[String], results: &[(String, String)], rules: &[&str]) {
    assert_eq!(results.len(), calls.len());
    for ((call, (kind, message)), rule) in calls.iter().zip(results).zip(rules) {
        assert_eq!(kind, "PermissionError", "{call}: {message}");
        assert!(message.contains(&format!("write-protected by the rule `{rule}`")), "{call}: {message}");
        assert!(message.contains("hint: "), "{call}: {message}");
    }
}

/// Every file under `dir`, relative to it, sorted.
/// How many folders lie below `dir`, at any depth (symlinks not followed).
fn folders_under(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|entry| entry.file_type().unwrap().is_dir())
        .map(|entry| 1 + folders_under(&entry.path()))
        .sum()
}

pub(super) fn files_under(dir: &Path) -> Vec<String> {
    fn walk(dir: &Path, base: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if entry.file_type().unwrap().is_dir() {
                walk(&path, base, out);
            } else {
                out.push(path.strip_prefix(base).unwrap().display().to_string());
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

#[test]
fn create_and_sql_refuse_every_write_protected_path() {
    let env = TestEnv::new().file(".git/HEAD", "ref: refs/heads/main\n");
    let mut calls: Vec<String> =
        PROTECTED.iter().map(|(path, _)| format!("create(path='{path}', file_text='planted')")).collect();
    let mut rules: Vec<&str> = PROTECTED.iter().map(|(_, rule)| *rule).collect();
    for (path, rule) in [(".git/x.db", ".git/**"), (".codeact/state.db", ".codeact/**"), (".vscode/a.db", ".vscode/**")]
    {
        calls.push(format!("sql(query='create table t(x)', db_path='{path}')"));
        rules.push(rule);
    }
    let results = attempts(&env, &calls);
    assert_refused(&calls, &results, &rules);
    // Nothing was written, not even the directories on the way.
    assert_eq!(files_under(&env.workspace()), [".git/HEAD"]);
    assert_eq!(std::fs::read_dir(env.workspace().join(".git")).unwrap().count(), 1);
}

#[test]
fn edit_refuses_protected_files_that_view_grep_and_glob_still_read() {
    // codeact reads its own project config at start; every other file may hold anything.
    let protected: Vec<(&str, &str)> =
        PROTECTED.iter().copied().filter(|(path, _)| *path != ".codeact/config.json").collect();
    let mut env = TestEnv::new().project_config(r#"{"disabled": ["bash"]}"#);
    for (path, _) in &protected {
        env = env.file(path, "[core]\n\tbare = false\n");
    }
    let calls: Vec<String> = protected
        .iter()
        .map(|(path, _)| format!("edit(path='{path}', old_str='[core]', new_str='[core]\\n\\tfsmonitor = \"id\"')"))
        .collect();
    let rules: Vec<&str> = protected.iter().map(|(_, rule)| *rule).collect();
    assert_refused(&calls, &attempts(&env, &calls), &rules);
    for (path, _) in &protected {
        assert_eq!(std::fs::read_to_string(env.workspace().join(path)).unwrap(), "[core]\n\tbare = false\n", "{path}");
    }
    // Reading stays allowed.
    let reads: Vec<String> = protected.iter().map(|(path, _)| format!("view(path='{path}')")).collect();
    for ((kind, text), (path, _)) in attempts(&env, &reads).iter().zip(&protected) {
        assert_eq!((kind.as_str(), text.as_str()), ("ok", "[core]\n\tbare = false\n"), "{path}");
    }
    let hits = env.stdout_of("print(len(grep(pattern='bare', paths=['.git', '.codeact', '.mcp.json', '.envrc'])))");
    assert_eq!(hits, "6\n");
    let config = env.stdout_of("print(view(path='.codeact/config.json'))");
    assert_eq!(config, "{\"disabled\": [\"bash\"]}\n");
    let (kind, _) = env.error_of("edit(path='.codeact/config.json', old_str='bash', new_str='sql')");
    assert_eq!(kind, "PermissionError");
    let found = env.stdout_of("print(glob(pattern='**/*.json', paths='.codeact'))");
    assert_eq!(found, "['.codeact/config.json']\n");
}

#[test]
fn protected_paths_are_found_after_dot_dot_case_changes_and_symlinks() {
    let env = TestEnv::new()
        .file(".git/config", "[core]\n")
        .file(".codeact/config.json", "{}")
        .file("a/keep.txt", "")
        .symlink(".git/config", "innocent.txt")
        .symlink(".git", "gitdir")
        .symlink(".codeact", "settings")
        .symlink("../.github", "a/gh");
    let calls: Vec<String> = [
        "edit(path='a/../.git/config', old_str='[core]', new_str='[core]\\n\\tfsmonitor = \"id\"')",
        "create(path='a/../.codeact/tools/x.py', file_text='x')",
        "create(path='.GIT/hooks/pre-commit', file_text='x')",
        "create(path='.Codeact/tools/x.py', file_text='x')",
        "create(path='.VSCode/tasks.json', file_text='x')",
        "create(path='.git./config', file_text='x')",
        "create(path='.Envrc', file_text='x')",
        "create(path='sub/.claude/settings.json', file_text='x')",
        "edit(path='innocent.txt', old_str='[core]', new_str='[core]\\n\\tfsmonitor = \"id\"')",
        "create(path='gitdir/hooks/post-checkout', file_text='x')",
        "create(path='settings/tools/x.py', file_text='x')",
        "create(path='a/gh/hooks/hooks.json', file_text='x')",
        "sql(query='create table t(x)', db_path='settings/x.db')",
        "sql(query='create table t(x)', db_path='gitdir/x.db')",
    ]
    .map(str::to_owned)
    .to_vec();
    let rules = [
        ".git/**",
        ".codeact/**",
        ".git/**",
        ".codeact/**",
        ".vscode/**",
        ".git/**",
        ".envrc",
        ".claude/**",
        ".git/**",
        ".git/**",
        ".codeact/**",
        ".github/hooks/**",
        ".codeact/**",
        ".git/**",
    ];
    let results = attempts(&env, &calls);
    assert_refused(&calls, &results, &rules);
    assert_eq!(results[8].1.split(" is write").next(), Some("'innocent.txt' leads to '.git/config', which"));
    assert_eq!(std::fs::read_to_string(env.workspace().join(".git/config")).unwrap(), "[core]\n");
    let mut left = files_under(&env.workspace());
    left.retain(|path| !["innocent.txt", "gitdir", "settings", "a/gh"].contains(&path.as_str()));
    assert_eq!(left, [".codeact/config.json", ".git/config", "a/keep.txt"]);
    // Reading through the same links works.
    assert_eq!(env.stdout_of("print(view(path='innocent.txt'), end='')"), "[core]\n");
}

#[test]
fn the_user_config_dir_and_copilot_home_are_protected_when_they_lie_in_the_workspace() {
    let base = TestEnv::new();
    let workspace = base.workspace();
    let env = base
        .env("CODEACT_CONFIG_DIR", &workspace.join("conf/codeact").display().to_string())
        .env("COPILOT_HOME", &workspace.join("copilot-home").display().to_string());
    let calls: Vec<String> = [
        "create(path='conf/codeact/tools/x.py', file_text='x')",
        "create(path='Conf/Codeact/config.json', file_text='x')",
        "create(path='copilot-home/instructions/x.instructions.md', file_text='x')",
        "sql(query='create table t(x)', db_path='copilot-home/x.db')",
    ]
    .map(str::to_owned)
    .to_vec();
    let conf = format!("{}/** (the user config dir)", workspace.join("conf/codeact").display());
    let copilot = format!("{}/** (Copilot's home ($COPILOT_HOME))", workspace.join("copilot-home").display());
    assert_refused(&calls, &attempts(&env, &calls), &[&conf, &conf, &copilot, &copilot]);
    assert_eq!(
        env.stdout_of("print(create(path='conf/other.txt', file_text='x'))"),
        "Created conf/other.txt (1 lines)\n"
    );
    // A workspace inside Copilot's home is protected whole.
    let inside = TestEnv::new();
    let home = inside.root().display().to_string();
    let inside = inside.env("COPILOT_HOME", &home);
    let calls = vec!["create(path='notes.txt', file_text='x')".to_owned()];
    let rule = format!("{home}/** (Copilot's home ($COPILOT_HOME))");
    assert_refused(&calls, &attempts(&inside, &calls), &[&rule]);
    assert!(!inside.workspace().join("notes.txt").exists());
}

#[test]
fn grep_stops_at_the_deadline_inside_one_large_file() {
    // About 0.5 MB/s for this pattern: the file alone takes about 20 s to search.
    let env = TestEnv::new().file("big.txt", "héllo wörld ".repeat(900_000));
    let started = Instant::now();
    let (code, value) =
        env.run_json(r"grep(pattern=r'(?:\b\w+\b\s){10}\b\w{12}\b', paths='big.txt')", &["--timeout", "1"]);
    let took = started.elapsed();
    // Raised by grep itself, at the program's line, not by the run being stopped from outside.
    assert_eq!(
        (code, value["error"]["type"].as_str(), value["error"]["line"].as_i64()),
        (1, Some("TimeoutError"), Some(1)),
        "{value}"
    );
    assert!(took < Duration::from_secs(8), "grep ran {took:?} past a 1 s limit");
    // Many lines: the search looks at the deadline between reads too.
    let env = TestEnv::new().file("many.txt", format!("{}\n", "héllo wörld ".repeat(10)).repeat(90_000));
    let started = Instant::now();
    let (_, value) = env.run_json(r"grep(pattern=r'(?:\b\w+\b\s){10}\b\w{12}\b')", &["--timeout", "1"]);
    assert_eq!(
        (value["error"]["type"].as_str(), value["error"]["line"].as_i64()),
        (Some("TimeoutError"), Some(1)),
        "{value}"
    );
    assert!(started.elapsed() < Duration::from_secs(8), "grep ran {:?} past a 1 s limit", started.elapsed());
}

#[test]
fn web_fetch_of_deeply_nested_html_ends_within_the_time_limit() {
    let base = crate::web::server();
    let env = crate::web::allowed();
    let started = Instant::now();
    let out = env.run(&["run", "--timeout", "5"], &format!("print(web_fetch(url='{base}/deep/200000').strip())"));
    assert!(started.elapsed() < Duration::from_secs(15), "web_fetch ran {:?} past a 5 s limit", started.elapsed());
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, "deep text\n");
}

/// Runs `program` while the directory `d` and the symlink `d_link` in the workspace are swapped
/// over and over, as a concurrent writer could; the swaps must have been many.
fn run_while_swapping(env: &TestEnv, program: &str) -> crate::support::Output {
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = swap_until(&env.workspace(), &stop);
    let out = env.run(&["run", "--timeout", "60", "--max-tool-calls", "1000000"], program);
    stop.store(true, Ordering::Relaxed);
    let swaps = swapper.join().unwrap();
    assert!(swaps > 100, "only {swaps} swaps");
    out
}

/// Swaps the directory `d` and the symlink `d_link` in the workspace with
/// `renameat2(RENAME_EXCHANGE)` until `stop`; returns the number of swaps.
fn swap_until(workspace: &Path, stop: &Arc<AtomicBool>) -> std::thread::JoinHandle<u64> {
    let (workspace, stop) = (workspace.to_path_buf(), stop.clone());
    std::thread::spawn(move || {
        let dir = rustix::fs::open(&workspace, rustix::fs::OFlags::DIRECTORY, rustix::fs::Mode::empty()).unwrap();
        let mut swaps = 0;
        while !stop.load(Ordering::Relaxed) {
            rustix::fs::renameat_with(&dir, "d", &dir, "d_link", rustix::fs::RenameFlags::EXCHANGE).unwrap();
            swaps += 1;
        }
        swaps
    })
}

/// A workspace with `d/` and `d_link -> outside/racedir`, which holds a name found only there.
fn race_env() -> TestEnv {
    let env = env().file("d/inside_name.txt", "x").outside_file("racedir/outside_only_name.txt", "x");
    let target = env.outside().join("racedir");
    env.symlink(target, "d_link")
}

/// 1500 databases made in `d/`, each tried whatever the others did; prints how many were made.
const SQL_IN_D: &str = "made = 0\nfor i in range(1500):\n    try:\n        \
                        sql(query='CREATE TABLE IF NOT EXISTS t(x)', db_path=f'd/db_{i}.db')\n        made += 1\n    \
                        except Exception:\n        pass\nprint(made)";

/// The program printed a count of writes made, and some were: the race did not only refuse.
fn assert_some_made(out: &crate::support::Output) {
    let made: u64 = out.stdout.trim().parse().unwrap_or(0);
    assert!(made > 0, "nothing was written: {}{}", out.stdout, out.stderr);
}

#[test]
fn sql_under_a_directory_symlink_swap_creates_nothing_outside() {
    let env = race_env();
    let out = run_while_swapping(&env, SQL_IN_D);
    assert_eq!(files_under(&env.outside().join("racedir")), ["outside_only_name.txt"]);
    assert_some_made(&out);
}

/// A folder swapped for a link to a protected folder inside the workspace, between the check of
/// a database's path and its open: the folder is opened name by name without following a link,
/// so nothing lands in `.git`.
#[test]
fn sql_under_a_directory_swapped_for_a_link_to_a_protected_folder_writes_nothing_there() {
    for link in [".git", "./.git", ".vscode"] {
        let env = env().file("d/inside_name.txt", "x").file(".git/HEAD", "ref: refs/heads/main\n");
        let env = env.file(".vscode/settings.json", "{}").symlink(link, "d_link");
        let protected = env.workspace().join(link.trim_start_matches("./"));
        let before = files_under(&protected);
        let out = run_while_swapping(&env, SQL_IN_D);
        assert_eq!(files_under(&protected), before, "a database landed in {link} through the swapped folder");
        assert_some_made(&out);
    }
}

/// `create` and `edit` under the same swap: each writes through its folder opened where the
/// check found it, following no link, so nothing lands in `.git`.
#[test]
fn create_and_edit_under_a_directory_swapped_for_a_link_to_a_protected_folder_write_nothing_there() {
    let mut env = env().file("d/inside_name.txt", "x").file(".git/HEAD", "ref: refs/heads/main\n");
    for i in 0..1500 {
        env = env.file(&format!("d/e{i}.txt"), "old").file(&format!(".git/e{i}.txt"), "old");
    }
    let env = env.symlink(".git", "d_link");
    let git = env.workspace().join(".git");
    // Every file with its bytes, and every folder (an empty one too).
    let contents = || -> (Vec<(String, Vec<u8>)>, usize) {
        let files = files_under(&git).into_iter().map(|name| (name.clone(), std::fs::read(git.join(&name)).unwrap()));
        (files.collect(), folders_under(&git))
    };
    let before = contents();
    let program = "done = 0\nfor i in range(1500):\n    for call in [lambda: create(path=f'd/c{i}.txt', file_text='new'), \
                   lambda: create(path=f'd/n{i}/m/x.txt', file_text='new'), \
                   lambda: edit(path=f'd/e{i}.txt', old_str='old', new_str='new')]:\n        try:\n            \
                   call()\n            done += 1\n        except Exception:\n            pass\nprint(done)";
    let out = run_while_swapping(&env, program);
    assert!(contents() == before, "a write landed in .git through the swapped folder");
    assert_some_made(&out);
}

/// A database's folder moved away during the run, another made in its place: the next query
/// opens the database the path names now, and nothing more is written where the folder went.
#[test]
fn sql_writes_no_more_through_a_folder_moved_out_of_the_workspace() {
    for moved_to in ["OUT/sub", "WS/.git/sub"] {
        let env = env().file(".git/HEAD", "ref: refs/heads/main\n");
        let to = moved_to
            .replace("OUT", &env.outside().display().to_string())
            .replace("WS", &env.workspace().display().to_string());
        std::fs::create_dir_all(env.workspace().join("sub")).unwrap();
        let program = format!(
            "sql(query='create table t(x)', db_path='sub/x.db')\n\
             bash(command=\"mv sub '{to}' && mkdir sub\")\n\
             for mode in ['delete', 'wal']:\n    \
                 sql(query=f'pragma journal_mode={{mode}}', db_path='sub/x.db')\n    \
                 sql(query='create table if not exists t(x); insert into t values (2)', db_path='sub/x.db')\n\
             print(sql(query='select count(*) as n from t', db_path='sub/x.db'))"
        );
        let out = env.run(&["run"], &program);
        assert_eq!(out.stdout, "[{'n': 2}]\n", "{moved_to}: {}", out.stderr);
        let moved = std::path::Path::new(&to);
        assert_eq!(files_under(moved), ["x.db"], "{moved_to}: written after it moved");
        std::fs::copy(moved.join("x.db"), env.workspace().join("moved.db")).unwrap();
        let rows = env.stdout_of("print(sql(query='select count(*) as n from t', db_path='moved.db'))");
        assert_eq!(rows, "[{'n': 0}]\n", "{moved_to}: rows written after it moved");
    }
}

/// A FIFO where `SQLite` would open a journal or a WAL is never opened as its file (a device
/// node there would be written through; a FIFO blocked the run until its time limit): the
/// query is refused, or `SQLite` removes the name and makes a journal of its own.
#[test]
fn sql_opens_no_fifo_beside_the_database() {
    for (suffix, mode) in [("-journal", "delete"), ("-journal", "persist"), ("-wal", "wal"), ("-shm", "wal")] {
        let env = env();
        env.stdout_of(&format!(
            "sql(query='pragma journal_mode={mode}', db_path='app.db')\n_ = sql(query='create table t(x)', db_path='app.db')"
        ));
        let fifo = env.workspace().join(format!("app.db{suffix}"));
        let _ = std::fs::remove_file(&fifo);
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o644)).unwrap();
        let program = format!(
            "try:\n    sql(query='pragma journal_mode={mode}', db_path='app.db')\n    \
             sql(query='insert into t values (1)', db_path='app.db')\n    \
             print('wrote')\nexcept Exception as exc:\n    print('refused')"
        );
        let (code, value) = env.run_json(&program, &["--timeout", "20"]);
        let case = format!("{suffix} {mode}: {value}");
        assert_eq!((code, &value["error"]), (0, &Value::Null), "{case}");
        assert!(["wrote\n", "refused\n"].contains(&value["stdout"].as_str().unwrap_or_default()), "{case}");
    }
}

#[test]
fn sql_writes_no_journal_through_a_symlink_beside_the_database() {
    // Each file SQLite makes beside a database, planted as a link to a file outside, beside a
    // new database and beside one that exists (which SQLite reads its journals for).
    for (suffix, mode) in [("-journal", "persist"), ("-journal", "delete"), ("-wal", "wal"), ("-shm", "wal")] {
        for existing in [false, true] {
            let env = env().outside_file("victim", "untouched");
            let victim = env.outside().join("victim");
            if existing {
                let program = format!(
                    "sql(query='pragma journal_mode={mode}', db_path='app.db')\n\
                     _ = sql(query='create table t(x)', db_path='app.db')"
                );
                env.stdout_of(&program);
                let _ = std::fs::remove_file(env.workspace().join(format!("app.db{suffix}")));
            }
            let env = env.symlink(&victim, &format!("app.db{suffix}"));
            let program = format!(
                "try:\n    sql(query='pragma journal_mode={mode}', db_path='app.db')\n    \
                 sql(query='create table if not exists t(x); insert into t values (1)', db_path='app.db')\n    \
                 print('wrote')\nexcept Exception as exc:\n    print('refused', exc)"
            );
            let before = files_under(&env.outside());
            let out = env.run(&["run"], &program);
            let case = format!("{suffix} {mode}, existing {existing}: {}{}", out.stdout, out.stderr);
            assert_eq!(std::fs::read_to_string(&victim).unwrap(), "untouched", "{case}");
            assert_eq!(files_under(&env.outside()), before, "{case}");
        }
    }
}

#[test]
fn sql_writes_no_file_that_another_hard_link_names() {
    // The database itself: a link to a file outside, and one to a protected file.
    let linked = env().outside_file("outside.db", "").file("AGENTS.md", "");
    std::fs::hard_link(linked.outside().join("outside.db"), linked.workspace().join("link.db")).unwrap();
    std::fs::hard_link(linked.workspace().join("AGENTS.md"), linked.workspace().join("notes.db")).unwrap();
    for db in ["link.db", "notes.db"] {
        let (kind, message) = linked.error_of(&format!("sql(query='create table pwn(x)', db_path='{db}')"));
        assert_eq!(kind, "PermissionError", "{db}: {message}");
        assert!(message.contains("another hard link"), "{message}");
    }
    assert_eq!(std::fs::read(linked.outside().join("outside.db")).unwrap(), b"");
    assert_eq!(std::fs::read(linked.workspace().join("AGENTS.md")).unwrap(), b"");
    // A journal, a WAL or a shared-memory file beside a database of its own, linked to a file
    // outside: SQLite opens those itself, and is refused them too.
    for (suffix, mode) in [("-journal", "persist"), ("-wal", "wal"), ("-shm", "wal")] {
        let env = env().outside_file("victim", "untouched");
        let program = format!(
            "sql(query='pragma journal_mode={mode}', db_path='app.db')\n_ = sql(query='create table t(x)', db_path='app.db')"
        );
        env.stdout_of(&program);
        let beside = env.workspace().join(format!("app.db{suffix}"));
        let _ = std::fs::remove_file(&beside);
        std::fs::hard_link(env.outside().join("victim"), &beside).unwrap();
        let program = format!(
            "try:\n    sql(query='pragma journal_mode={mode}', db_path='app.db')\n    \
             sql(query='insert into t values (1)', db_path='app.db')\n    print('wrote')\n\
             except Exception as exc:\n    print('refused', exc)"
        );
        let out = env.run(&["run"], &program);
        let said = format!("{suffix}: {}{}", out.stdout, out.stderr);
        assert_eq!(std::fs::read_to_string(env.outside().join("victim")).unwrap(), "untouched", "{said}");
    }
}

#[test]
fn glob_under_a_directory_symlink_swap_lists_nothing_outside() {
    let env = race_env();
    let program = "seen = set()\nfor i in range(1500):\n    for call in [lambda: glob(pattern='**/*', paths='d'), \
                   lambda: glob(pattern='d/*')]:\n        try:\n            seen.update(call())\n        \
                   except Exception:\n            pass\nprint(sorted(seen))";
    let out = run_while_swapping(&env, program);
    assert!(!out.stdout.contains("outside_only_name"), "listed a name from outside: {}", out.stdout);
    assert!(out.stdout.contains("d/inside_name.txt"), "{}{}", out.stdout, out.stderr);
}

#[test]
fn sql_refuses_pragmas_that_name_a_directory_and_runs_defensively() {
    let env = env();
    let tmpdir = env.outside().join("tmpdir");
    std::fs::create_dir_all(&tmpdir).unwrap();
    let dir = tmpdir.display();
    let calls: Vec<String> = [
        format!("sql(query=\"PRAGMA temp_store_directory = '{dir}'\")"),
        format!("sql(query=\"pragma TEMP_STORE_DIRECTORY='{dir}'\")"),
        format!("sql(query=\"PRAGMA data_store_directory = '{dir}'\")"),
        "sql(query='PRAGMA temp_store_directory')".to_owned(),
        "sql(query='PRAGMA temp_store = FILE')".to_owned(),
        "sql(query='CREATE TEMP TABLE big(x)')".to_owned(),
        "sql(query='WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i < 20000) \
         INSERT INTO big SELECT randomblob(100) FROM c')"
            .to_owned(),
        "sql(query='CREATE TABLE t(x); PRAGMA writable_schema = ON', db_path='w.db')".to_owned(),
        "sql(query=\"UPDATE sqlite_schema SET sql = 'CREATE TABLE t(y)' WHERE name = 't'\", db_path='w.db')".to_owned(),
    ]
    .to_vec();
    let results = attempts(&env, &calls);
    for result in &results[..5] {
        assert_eq!(result, &("RuntimeError".to_owned(), "sql error: not authorized".to_owned()));
    }
    assert_eq!(results[5].0, "ok");
    assert_eq!(results[6], ("ok".to_owned(), "[{'rows_affected': 20000}]".to_owned()));
    assert_eq!(results[8].0, "RuntimeError", "{:?}", results[8]);
    assert_eq!(files_under(&tmpdir), Vec::<String>::new());
}

#[test]
fn sql_memory_is_held_to_the_memory_limit() {
    let env = env();
    let calls: Vec<String> = [
        "sql(query='SELECT length(randomblob(900000000)) AS m')",
        "sql(query='WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i < 100) \
         SELECT randomblob(1000000) AS b FROM c')",
        "sql(query='SELECT length(randomblob(1000)) AS m')",
    ]
    .map(str::to_owned)
    .to_vec();
    let list = calls.iter().map(|call| format!("lambda: {call}")).collect::<Vec<_>>().join(", ");
    let program = format!(
        "out = []\nfor call in [{list}]:\n    try:\n        out.append(['ok', str(call())])\n    \
         except Exception as e:\n        out.append([type(e).__name__, str(e)])\nout"
    );
    let started = Instant::now();
    let (code, value) = env.run_json(&program, &["--max-memory", "64MiB"]);
    assert_eq!(code, 0, "{value}");
    assert!(started.elapsed() < Duration::from_secs(20));
    let results = &value["return_value"];
    assert_eq!(results[0][0], "MemoryError", "{value}");
    assert!(results[0][1].as_str().unwrap().starts_with("sql() needs more memory than the run's limit allows"));
    assert_eq!(
        results[1],
        json!([
            "MemoryError",
            "sql() result is larger than the run's memory limit (64 MiB); select fewer rows or columns, or aggregate in SQL"
        ])
    );
    assert_eq!(results[2], json!(["ok", "[{'m': 1000}]"]));
}

#[test]
fn view_range_on_one_huge_line_fails_fast() {
    let env = env();
    let file = std::fs::File::create(env.workspace().join("sparse.txt")).unwrap();
    file.set_len(20 * 1024 * 1024 * 1024).unwrap();
    let started = Instant::now();
    let (kind, message) = env.error_of("view(path='sparse.txt', view_range=[1, 1])");
    assert_eq!(
        (kind.as_str(), message.as_str()),
        ("ValueError", "line 1 of 'sparse.txt' is longer than 10485760 bytes, more than view() returns at once")
    );
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    // Skipping to a later line reads the line without keeping it, until the time limit.
    let started = Instant::now();
    let (_, value) = env.run_json("view(path='sparse.txt', view_range=[2, 2])", &["--timeout", "1"]);
    assert_eq!(
        (value["error"]["type"].as_str(), value["error"]["line"].as_i64()),
        (Some("TimeoutError"), Some(1)),
        "{value}"
    );
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
}

#[test]
fn grep_reads_no_ignore_files_above_the_workspace() {
    let env = TestEnv::new()
        .file("a.secret", "TODO above\n")
        .file("b.global", "TODO global\n")
        .file("c.log", "TODO log\n")
        .file("sub/d.log", "TODO log\n")
        .file("sub/e.txt", "TODO text\n")
        .file("f.excluded", "TODO excluded\n")
        .file(".gitignore", "*.log\n")
        .file(".git/info/exclude", "*.excluded\n");
    // Ignore files the host has above the workspace, and git's global excludes.
    std::fs::write(env.root().join(".gitignore"), "*.secret\n").unwrap();
    std::fs::write(env.root().join(".ignore"), "*.secret\n").unwrap();
    std::fs::create_dir_all(env.home().join(".config/git")).unwrap();
    std::fs::write(env.home().join(".config/git/ignore"), "*.global\n").unwrap();
    let paths = |code: &str| -> Value {
        let (_, value) = env.run_json(code, &[]);
        value["return_value"].clone()
    };
    assert_eq!(paths("[h['path'] for h in grep(pattern='TODO')]"), json!(["a.secret", "b.global", "sub/e.txt"]));
    // The workspace's own ignore files still apply to a search below them.
    assert_eq!(paths("[h['path'] for h in grep(pattern='TODO', paths='sub')]"), json!(["sub/e.txt"]));
}

/// A workspace that is the home directory: the program cannot plant a git config, a shell
/// profile, an ssh key or a compiled guest in codeact's cache, and ordinary files stay writable.
#[test]
fn the_home_directorys_dot_files_are_protected_when_the_workspace_holds_them() {
    let env = TestEnv::new();
    let home = env.home().canonicalize().unwrap();
    let program = "out = []\nfor path in ['.gitconfig', '.bashrc', '.ssh/authorized_keys', '.config/git/config', \
                   '.cache/codeact/guest.cwasm', '.local/state/codeact/trust.json', 'notes.txt']:\n    try:\n        \
                   create(path=path, file_text='planted')\n        out.append(path + ' written')\n    except \
                   PermissionError:\n        out.append(path + ' refused')\nprint(out)";
    let out = env.run(&["run", "--workspace", home.to_str().unwrap(), "--code", program], "");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout,
        "['.gitconfig refused', '.bashrc refused', '.ssh/authorized_keys refused', '.config/git/config refused', \
         '.cache/codeact/guest.cwasm refused', '.local/state/codeact/trust.json refused', 'notes.txt written']\n"
    );
    assert!(!home.join(".gitconfig").exists());
}
