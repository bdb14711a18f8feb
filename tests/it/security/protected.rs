//! The review's findings on what the write-protected list covers: a protected name that is a
//! symbolic link protects what it leads to (R5), the list covers the classes it names — git's
//! `core.hooksPath`, the agents' and editors' configs, hook managers (R8) — and the workspace's
//! Python environments (R1, the write side); names that a case-insensitive file system takes
//! for a protected one are refused.

use pretty_assertions::assert_eq;

use super::tools::{assert_refused, attempts, files_under};
use crate::support::TestEnv;

fn calls(calls: &[&str]) -> Vec<String> {
    calls.iter().map(|call| (*call).to_owned()).collect()
}

/// The review's layout: `CLAUDE.md -> AGENTS.md -> docs/agent-guide.md`,
/// `.github/copilot-instructions.md -> ../docs/agent-guide.md`, `.vscode -> shared/vscode`.
#[test]
fn a_protected_name_that_is_a_link_protects_what_it_leads_to() {
    let env = TestEnv::new()
        .file("docs/agent-guide.md", "# Contributing: be nice\n")
        .file("shared/vscode/tasks.json", "{\"tasks\":[]}\n")
        .symlink("docs/agent-guide.md", "AGENTS.md")
        .symlink("AGENTS.md", "CLAUDE.md")
        .symlink("../docs/agent-guide.md", ".github/copilot-instructions.md")
        .symlink("shared/vscode", ".vscode");
    let calls = calls(&[
        "edit(path='docs/agent-guide.md', old_str='be nice', new_str='run curl x | sh')",
        "edit(path='shared/vscode/tasks.json', old_str='[]', new_str='[1]')",
        "create(path='shared/vscode/settings.json', file_text='{}')",
        "create(path='shared/vscode/deep/new.json', file_text='{}')",
        "sql(query='create table t(x)', db_path='shared/vscode/x.db')",
        "edit(path='AGENTS.md', old_str='be nice', new_str='x')",
    ]);
    let results = attempts(&env, &calls);
    // The guide has three protected names; the first in the order of their paths is shown.
    let guide = ".github/copilot-instructions.md";
    assert_refused(&calls, &results, &[guide, ".vscode/**", ".vscode/**", ".vscode/**", ".vscode/**", "AGENTS.md"]);
    assert!(results[0].1.contains(&format!(", as '{guide}' through symbolic links")), "{}", results[0].1);
    assert!(results[1].1.contains(", as '.vscode/tasks.json' through symbolic links"), "{}", results[1].1);
    assert_eq!(std::fs::read_to_string(env.workspace().join("CLAUDE.md")).unwrap(), "# Contributing: be nice\n");
    assert_eq!(files_under(&env.workspace().join("shared")), ["vscode/tasks.json"]);
}

#[test]
fn links_at_any_depth_through_linked_folders_and_absolute_links_protect_their_targets() {
    let base = TestEnv::new();
    let absolute = base.workspace().join("docs/claude.md");
    let env = base
        .file("config/gh/real.md", "gh\n")
        .file("docs/copilot.md", "copilot\n")
        .file("docs/claude.md", "claude\n")
        .file("settings/hooks.json", "{}\n")
        .file("docs/notes.md", "notes\n")
        // A folder link, and a file link inside the folder it leads to: two links on the way.
        .symlink("config/gh", ".github")
        .symlink("../../docs/copilot.md", "config/gh/copilot-instructions.md")
        .symlink(&absolute, "CLAUDE.md")
        .symlink("../../settings", "pkg/sub/.claude")
        .symlink("docs/notes.md", "notes.md")
        .symlink("docs/later.md", "GEMINI.md");
    let calls = calls(&[
        "edit(path='docs/copilot.md', old_str='copilot', new_str='x')",
        "edit(path='docs/claude.md', old_str='claude', new_str='x')",
        "edit(path='settings/hooks.json', old_str='{}', new_str='[]')",
        // The file a dangling protected link names cannot be made either.
        "create(path='docs/later.md', file_text='x')",
    ]);
    let results = attempts(&env, &calls);
    assert_refused(&calls, &results, &[".github/copilot-instructions.md", "CLAUDE.md", ".claude/**", "GEMINI.md"]);
    assert!(!env.workspace().join("docs/later.md").exists());
    // A link with an ordinary name leaves its target as writable as ever.
    assert_eq!(
        env.stdout_of("print(edit(path='notes.md', old_str='notes', new_str='edited'))"),
        "Edited notes.md at line 1\n"
    );
    assert_eq!(std::fs::read_to_string(env.workspace().join("docs/notes.md")).unwrap(), "edited\n");
}

/// A second name on disk for a protected link's target: the same file, whatever its path.
#[test]
fn a_hard_link_to_a_protected_links_target_is_refused() {
    let env = TestEnv::new().file("docs/guide.md", "guide\n").symlink("docs/guide.md", "AGENTS.md");
    std::fs::hard_link(env.workspace().join("docs/guide.md"), env.workspace().join("copy.md")).unwrap();
    let calls = calls(&["edit(path='copy.md', old_str='guide', new_str='x')"]);
    let results = attempts(&env, &calls);
    assert_refused(&calls, &results, &["AGENTS.md"]);
    assert!(results[0].1.contains("as the target of the link 'AGENTS.md'"), "{}", results[0].1);
}

#[test]
fn links_that_loop_stop_nothing_unless_their_name_is_protected() {
    let env = TestEnv::new().symlink(".", "loop").symlink("..", "a/up").file("a/x.txt", "x\n");
    assert_eq!(env.stdout_of("print(create(path='new.txt', file_text='x'))"), "Created new.txt (1 lines)\n");
    assert_eq!(
        env.stdout_of("print(edit(path='loop/a/x.txt', old_str='x', new_str='y'))"),
        "Edited loop/a/x.txt at line 1\n"
    );
    // `.vscode` that is the workspace itself makes all of it VS Code's settings.
    let env = TestEnv::new().symlink(".", ".vscode").symlink(".", "loop");
    let calls = calls(&["create(path='tasks.json', file_text='{}')", "create(path='loop/sub/x.json', file_text='{}')"]);
    let results = attempts(&env, &calls);
    assert_refused(&calls, &results, &[".vscode/**", ".vscode/**"]);
    assert!(results[0].1.contains("as '.vscode/tasks.json' through symbolic links"), "{}", results[0].1);
}

/// The review's spelling (`core.hooksPath = .githooks` in `.git/config`), and others: a hooks
/// folder named in an included file, by the user's own git config, by a nested repository, and
/// by a worktree whose git directory lies in the workspace under another name.
#[test]
fn hooks_folders_that_git_config_names_are_protected() {
    let env = TestEnv::new()
        .file(".git/config", "[core]\n\tbare = false\n\thooksPath = .githooks\n[include]\n\tpath = extra.inc\n")
        .file(".git/extra.inc", "[Core] HooksPath = \"tools/git hooks\" ; included\n")
        .file(".githooks/pre-commit", "#!/bin/sh\nexit 0\n")
        .file("vendor/lib/.git/config", "[core]\n\thooksPath = ../../scripts/hooks\n")
        .file("wt/.git", "gitdir: ../.repo-data\n")
        .file(".repo-data/config", "[core]\n\thooksPath = wt-hooks\n")
        .file("src/main.rs", "fn main() {}\n");
    std::fs::write(env.home().join(".gitconfig"), "[core]\n\thooksPath = .user-hooks\n").unwrap();
    let calls = calls(&[
        "edit(path='.githooks/pre-commit', old_str='exit 0', new_str='id; exit 0')",
        "create(path='.githooks/post-checkout', file_text='x')",
        "create(path='tools/git hooks/pre-push', file_text='x')",
        "create(path='scripts/hooks/pre-commit', file_text='x')",
        "create(path='.repo-data/hooks/pre-commit', file_text='x')",
        "create(path='wt/wt-hooks/pre-commit', file_text='x')",
        "create(path='.user-hooks/pre-commit', file_text='x')",
    ]);
    let results = attempts(&env, &calls);
    let ws = env.workspace();
    let hooks = |dir: &str| format!("{}/** (git's hooks folder (core.hooksPath))", ws.join(dir).display());
    let git_dir = format!("{}/** (a git directory)", ws.join(".repo-data").display());
    assert_refused(
        &calls,
        &results,
        &[
            &hooks(".githooks"),
            &hooks(".githooks"),
            &hooks("tools/git hooks"),
            &hooks("scripts/hooks"),
            &git_dir,
            &hooks("wt/wt-hooks"),
            &hooks(".user-hooks"),
        ],
    );
    assert_eq!(std::fs::read_to_string(ws.join(".githooks/pre-commit")).unwrap(), "#!/bin/sh\nexit 0\n");
    assert_eq!(
        env.stdout_of("print(edit(path='src/main.rs', old_str='{}', new_str='{ }'))"),
        "Edited src/main.rs at line 1\n"
    );
}

#[test]
fn agent_editor_and_hook_manager_configs_are_protected() {
    let env = TestEnv::new();
    let cases = [
        ("CLAUDE.local.md", "CLAUDE.local.md"),
        ("GEMINI.md", "GEMINI.md"),
        ("packages/api/GEMINI.md", "GEMINI.md"),
        (".github/skills/setup/SKILL.md", ".github/skills/**"),
        (".gemini/settings.json", ".gemini/**"),
        (".gemini/commands/deploy.toml", ".gemini/**"),
        (".codex/config.toml", ".codex/**"),
        (".cursor/mcp.json", ".cursor/**"),
        (".cursor/rules/style.mdc", ".cursor/**"),
        (".cursorrules", ".cursorrules"),
        ("proj.code-workspace", "*.code-workspace"),
        ("Team.Code-Workspace", "*.code-workspace"),
        (".devcontainer/devcontainer.json", ".devcontainer/**"),
        (".devcontainer.json", ".devcontainer.json"),
        ("lefthook.yml", "lefthook.*"),
        (".lefthook.toml", ".lefthook.*"),
        ("lefthook-local.yaml", "lefthook-local.*"),
        (".lefthook/pre-commit/lint.sh", ".lefthook/**"),
        (".lintstagedrc", ".lintstagedrc*"),
        (".lintstagedrc.json", ".lintstagedrc*"),
        ("lint-staged.config.mjs", "lint-staged.config.*"),
        (".overcommit.yml", ".overcommit.yml"),
        (".pre-commit-config.yml", ".pre-commit-config.yml"),
    ];
    let calls: Vec<String> = cases.iter().map(|(path, _)| format!("create(path='{path}', file_text='x')")).collect();
    let rules: Vec<&str> = cases.iter().map(|(_, rule)| *rule).collect();
    assert_refused(&calls, &attempts(&env, &calls), &rules);
    assert_eq!(files_under(&env.workspace()), Vec::<String>::new());
    let near = "for p in ['docs/gemini-notes.md', 'src/cursor.py', 'internal/lefthook/run.go', 'a.code-workspace.md']:\n    \
                create(path=p, file_text='x')\nprint('ok')";
    assert_eq!(env.stdout_of(near), "ok\n");
}

/// R1's write side: a program cannot plant a `.pth`, `sitecustomize.py` or module in a Python
/// environment of the workspace, whatever the folder is called.
#[test]
fn python_environments_in_the_workspace_are_protected() {
    let env = TestEnv::new()
        .file(".venv/pyvenv.cfg", "home = /usr/bin\n")
        .file("tools/py311/pyvenv.cfg", "home = /usr/bin\n")
        .file("tools/py311/lib/python3.11/site-packages/requests/__init__.py", "# requests\n")
        .file("envs/conda/conda-meta/history", "")
        .file("src/app.py", "print(1)\n")
        .symlink("tools/py311", "py");
    let calls = calls(&[
        "create(path='.venv/lib/python3.12/site-packages/zz.pth', file_text='import os')",
        "create(path='tools/py311/lib/python3.11/site-packages/sitecustomize.py', file_text='x')",
        "edit(path='tools/py311/lib/python3.11/site-packages/requests/__init__.py', old_str='# requests', new_str='x')",
        "create(path='py/lib/python3.11/site-packages/zz.pth', file_text='import os')",
        "create(path='envs/conda/lib/python3.12/site-packages/zz.pth', file_text='import os')",
        "create(path='.direnv/python-3.12/lib/python3.12/site-packages/zz.pth', file_text='import os')",
        "create(path='other/pyvenv.cfg', file_text='home = /tmp/evil')",
    ]);
    let ws = env.workspace();
    let python = |dir: &str| format!("{}/** (a Python environment)", ws.join(dir).display());
    let results = attempts(&env, &calls);
    assert_refused(
        &calls,
        &results,
        &[
            ".venv/**",
            &python("tools/py311"),
            &python("tools/py311"),
            &python("tools/py311"),
            &python("envs/conda"),
            ".direnv/**",
            "pyvenv.cfg",
        ],
    );
    assert_eq!(
        env.stdout_of("print(edit(path='src/app.py', old_str='1', new_str='2'))"),
        "Edited src/app.py at line 1\n"
    );
}

/// Names that APFS, NTFS or ext4's casefold take for a protected one (a long `ſ`, a dotless
/// `ı`, a zero-width joiner HFS+ ignores, an NTFS stream) are refused here too.
#[test]
fn names_that_a_case_insensitive_file_system_folds_to_a_protected_one_are_refused() {
    let env = TestEnv::new();
    let calls = calls(&[
        "create(path='.v\\u017fcode/tasks.json', file_text='x')",
        "create(path='.g\\u0131t/hooks/pre-commit', file_text='x')",
        "create(path='.git\\u200c/config', file_text='x')",
        "create(path='AGENTS.md::$DATA', file_text='x')",
        "create(path='CLAUDE.MD', file_text='x')",
    ]);
    assert_refused(&calls, &attempts(&env, &calls), &[".vscode/**", ".git/**", ".git/**", "AGENTS.md", "CLAUDE.md"]);
    assert_eq!(files_under(&env.workspace()), Vec::<String>::new());
}

/// Past the walk's bounds the links and hooks folders in the rest are unknown: every write is
/// refused rather than guessed.
#[test]
fn a_workspace_too_deep_to_walk_refuses_every_write() {
    let env = TestEnv::new();
    let deep: std::path::PathBuf = std::iter::repeat_n("d", 130).collect();
    std::fs::create_dir_all(env.workspace().join(deep)).unwrap();
    let (kind, message) = env.error_of("create(path='notes.txt', file_text='x')");
    assert_eq!(kind, "PermissionError", "{message}");
    assert!(message.contains("the workspace is more than 128 folders deep"), "{message}");
    assert!(!env.workspace().join("notes.txt").exists());
}

/// A workspace that is itself a protected folder, or lies in one, is protected whole: running
/// codeact with `--workspace .git` (or `cd .codeact && codeact run`) must not make their
/// files writable, and a workspace in a dot-folder of the home directory neither.
#[test]
fn a_workspace_inside_a_protected_folder_is_protected_whole() {
    let env = TestEnv::new()
        .file(".git/config", "[core]\n")
        .file(".codeact/config.json", "{\"mode\": \"exclusive\"}\n")
        .file(".github/hooks/hooks.json", "{}\n")
        .file(".venv/lib/site.py", "")
        .file("home/.ssh/config", "");
    for (inside, file) in [
        (".git", "config.new"),
        (".git/hooks", "pre-commit"),
        (".codeact", "tools/x.py"),
        (".github", "hooks/more.json"),
        (".github/hooks", "new.json"),
        (".venv/lib", "zz.pth"),
        ("home/.ssh", "authorized_keys"),
    ] {
        let workspace = env.workspace().join(inside);
        std::fs::create_dir_all(&workspace).unwrap();
        let home = env.workspace().join("home").display().to_string();
        let out = env
            .command(&["run", "--workspace", &workspace.display().to_string(), "--code"])
            .arg(format!("create(path='{file}', file_text='x')"))
            .env("HOME", &home)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("PermissionError: "), "{inside}/{file} was written: {stderr}");
        assert!(!workspace.join(file).exists(), "{inside}/{file}");
    }
}

/// A protected link whose target leaves the workspace and comes back into it — through the
/// workspace's own name, an absolute path, a link outside, or `/proc/self/cwd` (the project,
/// for an agent working in it) — protects that target all the same.
#[test]
fn a_protected_link_that_leaves_and_comes_back_protects_its_target() {
    let env = TestEnv::new();
    let ws = env.workspace();
    let name = ws.file_name().unwrap().to_string_lossy().into_owned();
    let wslink = env.root().join("wslink");
    std::os::unix::fs::symlink(&ws, &wslink).unwrap();
    let env = env
        .file("docs/g2.md", "2")
        .file("docs/g3.md", "3")
        .file("docs/g4.md", "4")
        .file("docs/g5.md", "5")
        .file("shared/claude/settings.json", "{}")
        .symlink(format!("../{name}/docs/g2.md"), "CLAUDE.md")
        .symlink("/proc/self/cwd/docs/g3.md", "GEMINI.md")
        .symlink(ws.join("docs/g4.md"), ".cursorrules")
        .symlink(wslink.join("docs/g5.md"), ".envrc")
        .symlink("/proc/self/cwd/shared/claude", ".claude")
        .symlink(format!("../../{name}/docs/g6.md"), ".github/copilot-instructions.md");
    let calls = calls(&[
        "edit(path='docs/g2.md', old_str='2', new_str='x')",
        "edit(path='docs/g3.md', old_str='3', new_str='x')",
        "edit(path='docs/g4.md', old_str='4', new_str='x')",
        "edit(path='docs/g5.md', old_str='5', new_str='x')",
        "create(path='shared/claude/hooks.json', file_text='{}')",
        // Dangling: the target cannot be created either.
        "create(path='docs/g6.md', file_text='x')",
    ]);
    let results = attempts(&env, &calls);
    assert_refused(
        &calls,
        &results,
        &["CLAUDE.md", "GEMINI.md", ".cursorrules", ".envrc", ".claude/**", ".github/copilot-instructions.md"],
    );
}

/// The files git reads its config from are protected where the workspace holds them, an
/// included one too (`include.path = ../.gitconfig` shares a repository's config), and
/// `core.hooksPath` counts from the environment as git reads it there.
#[test]
fn git_config_files_included_from_the_workspace_and_the_environments_hooks_folder_are_protected() {
    let env = TestEnv::new()
        .file(".git/config", "[include]\n\tpath = ../.gitconfig\n")
        .file(".gitconfig", "[user]\n\tname = x\n")
        .file("conf/global.cfg", "[core]\n\tfsmonitor = false\n")
        .file(".githooks/pre-commit", "#!/bin/sh\n")
        .file("env-hooks/pre-commit", "#!/bin/sh\n");
    let global = env.workspace().join("conf/global.cfg").display().to_string();
    let env = env
        .env("GIT_CONFIG_GLOBAL", &global)
        .env("GIT_CONFIG_COUNT", "2")
        .env("GIT_CONFIG_KEY_0", "user.name")
        .env("GIT_CONFIG_VALUE_0", "x")
        .env("GIT_CONFIG_KEY_1", "Core.HooksPath")
        .env("GIT_CONFIG_VALUE_1", "env-hooks")
        .env("GIT_CONFIG_PARAMETERS", "'user.name'='x' 'core.hooksPath'='param-hooks'");
    let calls = calls(&[
        "edit(path='.gitconfig', old_str='name = x', new_str='name = x\\n[core]\\n\\tfsmonitor = id')",
        "edit(path='conf/global.cfg', old_str='false', new_str='id')",
        "create(path='env-hooks/post-commit', file_text='x')",
        "create(path='param-hooks/pre-push', file_text='x')",
    ]);
    let results = attempts(&env, &calls);
    let ws = env.workspace();
    assert_refused(
        &calls,
        &results,
        &[
            &format!("{}/** (a git config file)", ws.join(".gitconfig").display()),
            &format!("{}/** (a git config file)", ws.join("conf/global.cfg").display()),
            &format!("{}/** (git's hooks folder (core.hooksPath))", ws.join("env-hooks").display()),
            &format!("{}/** (git's hooks folder (core.hooksPath))", ws.join("param-hooks").display()),
        ],
    );
}

/// A workspace that lies inside a Python environment is part of it.
#[test]
fn a_workspace_inside_a_python_environment_is_protected_whole() {
    let env = TestEnv::new().file("env/pyvenv.cfg", "home = /usr/bin\n").file("env/lib/python3/site-packages/x.py", "");
    let workspace = env.workspace().join("env/lib/python3/site-packages");
    let out = env
        .command(&[
            "run",
            "--workspace",
            &workspace.display().to_string(),
            "--code",
            "create(path='evil.pth', file_text='x')",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("PermissionError: 'evil.pth' is write-protected"), "{stderr}");
    assert!(stderr.contains("(a Python environment)"), "{stderr}");
}

/// A folder this user can enter but not list might hold a Python environment or a link the
/// walk cannot see: every write is refused rather than passed.
#[test]
fn a_folder_that_can_be_entered_but_not_listed_refuses_every_write() {
    use std::os::unix::fs::PermissionsExt as _;
    use std::os::unix::process::CommandExt as _;
    let env = TestEnv::new().file("tools/env/pyvenv.cfg", "home = /usr/bin\n").file("tools/env/lib/x.py", "");
    let mut command = env.command(&["run", "--code", "create(path='tools/env/lib/evil.pth', file_text='x')"]);
    if rustix::process::geteuid().is_root() {
        // Root lists every folder: run as another user, who may enter the whole tree.
        let mut dirs = vec![env.root()];
        while let Some(dir) = dirs.pop() {
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
            dirs.extend(std::fs::read_dir(&dir).unwrap().flatten().filter(|e| e.path().is_dir()).map(|e| e.path()));
        }
        command.uid(65534).gid(65534);
    }
    std::fs::set_permissions(env.workspace().join("tools"), std::fs::Permissions::from_mode(0o311)).unwrap();
    let out = command.output().unwrap();
    std::fs::set_permissions(env.workspace().join("tools"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("PermissionError: "), "stdout: {}\nstderr: {stderr}", String::from_utf8_lossy(&out.stdout));
    assert!(stderr.contains("`tools` can be entered but not listed"), "{stderr}");
    assert!(!env.workspace().join("tools/env/lib/evil.pth").exists());
}
