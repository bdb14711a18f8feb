//! `codeact run --session NAME`: what a program defines is there for the next run of the same
//! session, the state is sealed in codeact's state folder, and `codeact session` lists and
//! removes it.

use std::os::unix::fs::PermissionsExt as _;
use std::path::PathBuf;

use crate::support::TestEnv;

/// The sessions' folder the binary uses in `env` (`$HOME/.local/state/codeact/sessions`).
fn sessions(env: &TestEnv) -> PathBuf {
    env.home().join(".local/state/codeact/sessions")
}

/// Runs `code` in the session `name`; returns the exit code, stdout and stderr.
fn in_session(env: &TestEnv, name: &str, code: &str, flags: &[&str]) -> (i32, String, String) {
    let mut args = vec!["run", "--session", name];
    args.extend_from_slice(flags);
    let out = env.run(&args, code);
    (out.code, out.stdout, out.stderr)
}

#[test]
fn variables_functions_and_imports_stay_for_the_next_run_of_the_same_session() {
    let env = TestEnv::new().file("notes.txt", "one\ntwo\n");
    let (code, out, err) = in_session(
        &env,
        "work",
        "import json\ncount = 41\ndef bump(n):\n    return n + 1\nlines = view(path='notes.txt').splitlines()\nprint('set')",
        &[],
    );
    assert_eq!((code, out.as_str()), (0, "set\n"), "{err}");
    let (code, out, err) = in_session(&env, "work", "print(bump(count), json.dumps(lines))\nlen(lines) * 10", &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "42 [\"one\", \"two\"]\n20\n");

    // Another name is another session, and a run without one keeps nothing.
    let (code, _, err) = in_session(&env, "other", "print(count)", &[]);
    assert_eq!(code, 1);
    assert!(err.contains("NameError"), "{err}");
    let out = env.run_code("print(count)");
    assert!(out.stderr.contains("NameError"), "{}", out.stderr);
    // A tool bound to a name is still that tool.
    let (code, _, err) = in_session(&env, "work", "v = view", &[]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = in_session(&env, "work", "print(v(path='notes.txt'))", &[]);
    assert_eq!((code, out.as_str()), (0, "one\ntwo\n\n"), "{err}");
}

#[test]
fn what_a_failed_program_set_before_it_failed_stays_and_a_syntax_error_changes_nothing() {
    let env = TestEnv::new();
    let (code, _, err) = in_session(&env, "s", "kept = [1, 2]\ndef fail():\n    raise ValueError('late')\nfail()", &[]);
    assert_eq!(code, 1);
    assert!(err.contains("ValueError: late"), "{err}");
    // The program is named as a program run alone is; a function an earlier one defined, by
    // the name of that program in the session.
    assert!(err.contains("File \"<program>\", line 4"), "{err}");
    let (code, _, err) = in_session(&env, "s", "print('again')\nfail()", &[]);
    assert_eq!(code, 1);
    assert!(err.contains("File \"<program>\", line 2") && err.contains("File \"<python-input-0>\", line 3"), "{err}");
    let (code, _, err) = in_session(&env, "s", "kept.append(3)\nprint(kept", &[]);
    assert_eq!(code, 1);
    assert!(err.contains("SyntaxError"), "{err}");
    let (code, out, err) = in_session(&env, "s", "print(kept)", &[]);
    assert_eq!((code, out.as_str()), (0, "[1, 2]\n"), "{err}");
}

#[test]
fn the_limits_are_each_runs_own_and_a_run_stopped_by_one_leaves_the_session_usable() {
    let env = TestEnv::new();
    let (code, _, err) = in_session(&env, "s", "n = 1", &[]);
    assert_eq!(code, 0, "{err}");
    // A loop past its timeout ends that run only.
    let (code, _, err) = in_session(&env, "s", "n = 2\nwhile True:\n    pass", &["--timeout", "1"]);
    assert_eq!(code, 1);
    assert!(err.contains("TimeoutError"), "{err}");
    let (code, out, err) = in_session(&env, "s", "print(n)", &["--timeout", "5"]);
    assert_eq!(code, 0, "{err}");
    assert!(out == "1\n" || out == "2\n", "the session holds what the run had set, or what it held: {out}");
    // The tool-call budget starts again at each run.
    for _ in 0..2 {
        let (code, _, err) =
            in_session(&env, "s", "for _ in range(3):\n    glob(pattern='*')", &["--max-tool-calls", "3"]);
        assert_eq!(code, 0, "{err}");
    }
}

#[test]
fn what_a_session_holds_counts_against_the_memory_limit() {
    let env = TestEnv::new();
    let (code, _, err) = in_session(&env, "big", "blob = 'x' * (40 * 1024 * 1024)", &["--max-memory", "256MiB"]);
    assert_eq!(code, 0, "{err}");
    // 40 MiB held, 16 MiB allowed: the next program is over the limit before it does much.
    let (code, _, err) = in_session(
        &env,
        "big",
        "total = 0\nfor i in range(200000):\n    total += i\nprint(total)",
        &["--max-memory", "16MiB"],
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("MemoryError"), "{err}");
    // With room for it, the state is still there.
    let (code, out, err) = in_session(&env, "big", "print(len(blob))", &["--max-memory", "256MiB"]);
    assert_eq!((code, out.as_str()), (0, "41943040\n"), "{err}");
}

#[test]
fn a_changed_moved_truncated_or_unsealed_session_file_is_refused() {
    let env = TestEnv::new();
    let (code, _, err) = in_session(&env, "a", "secret = 'mine'", &[]);
    assert_eq!(code, 0, "{err}");
    let file = sessions(&env).join("a.session");
    let sealed = std::fs::read(&file).unwrap();
    let refused = |name: &str, why: &str| {
        let (code, out, err) = in_session(&env, name, "print(secret)", &[]);
        assert_eq!(code, 2, "{why}: {out}{err}");
        assert!(err.contains("was changed since") || err.contains("is not a session"), "{why}: {err}");
        assert!(err.contains(&format!("codeact session rm {name}")), "{why}: {err}");
        assert!(!out.contains("mine"), "{why}");
    };

    // One byte of the state changed, at its end and in its middle.
    for at in [sealed.len() - 1, sealed.len() / 2] {
        let mut changed = sealed.clone();
        changed[at] ^= 1;
        std::fs::write(&file, &changed).unwrap();
        refused("a", "a byte of the state changed");
    }
    // The seal changed; the file cut short; the file empty; a state with no seal at all.
    let mut changed = sealed.clone();
    changed[20] ^= 0x80;
    std::fs::write(&file, &changed).unwrap();
    refused("a", "the seal changed");
    std::fs::write(&file, &sealed[..sealed.len() - 10]).unwrap();
    refused("a", "cut short");
    std::fs::write(&file, b"").unwrap();
    refused("a", "empty");
    // The state without the seal and the header: after the version and the workspace, each
    // after its two-byte length.
    let version_end = 50 + usize::from(u16::from_le_bytes([sealed[48], sealed[49]]));
    let workspace_end =
        version_end + 2 + usize::from(u16::from_le_bytes([sealed[version_end], sealed[version_end + 1]]));
    std::fs::write(&file, &sealed[workspace_end..]).unwrap();
    refused("a", "the bare state");
    // Another session's sealed file, copied under this name.
    std::fs::write(&file, &sealed).unwrap();
    std::fs::copy(&file, sessions(&env).join("b.session")).unwrap();
    refused("b", "another name's file");
    // The key replaced: every file sealed with the old one is refused.
    std::fs::write(sessions(&env).join("key"), [7_u8; 32]).unwrap();
    refused("a", "another key");
}

#[test]
fn a_session_file_that_is_a_link_is_refused() {
    let env = TestEnv::new();
    let (code, _, err) = in_session(&env, "a", "x = 1", &[]);
    assert_eq!(code, 0, "{err}");
    let folder = sessions(&env);
    std::fs::rename(folder.join("a.session"), env.outside().join("a.session")).unwrap();
    std::os::unix::fs::symlink(env.outside().join("a.session"), folder.join("a.session")).unwrap();
    let (code, _, err) = in_session(&env, "a", "print(x)", &[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not a regular file"), "{err}");
}

#[test]
fn sessions_are_never_kept_inside_the_workspace() {
    // The state folder inside the workspace, as written, and through a link from outside.
    for through_link in [false, true] {
        let env = TestEnv::new();
        let state = if through_link {
            std::fs::create_dir_all(env.workspace().join("sub")).unwrap();
            std::os::unix::fs::symlink(env.workspace().join("sub"), env.outside().join("link")).unwrap();
            env.outside().join("link/state")
        } else {
            env.workspace().join(".state")
        };
        let env = env.env("XDG_STATE_HOME", state.to_str().unwrap());
        let (code, _, err) = in_session(&env, "s", "x = 1", &[]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("inside the workspace"), "{err}");
        assert!(!state.join("codeact/sessions/s.session").exists());
    }
}

#[test]
fn session_names_and_backends_are_checked() {
    let env = TestEnv::new();
    for name in ["", ".hidden", "a/b", "../up", "x".repeat(65).as_str(), "sp ace"] {
        let (code, _, err) = in_session(&env, name, "x = 1", &[]);
        assert_eq!(code, 2, "{name:?}: {err}");
        assert!(err.contains("cannot name a session"), "{name:?}: {err}");
    }
    let (code, _, err) = in_session(&env, "s", "x = 1", &["--backend", "wasm"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("Monty only"), "{err}");
    assert!(!sessions(&env).join("../up.session").exists());
}

#[test]
fn session_list_and_rm_show_and_remove_what_is_kept() {
    let env = TestEnv::new();
    let out = env.run(&["session", "list"], "");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("no saved sessions"), "{}", out.stderr);
    for name in ["alpha", "beta"] {
        let (code, _, err) = in_session(&env, name, "x = 1", &[]);
        assert_eq!(code, 0, "{err}");
    }
    let out = env.run(&["session", "list"], "");
    let names: Vec<&str> = out.stdout.lines().filter_map(|line| line.split_whitespace().next()).collect();
    assert_eq!(names, ["alpha", "beta"], "{}", out.stdout);
    let out = env.run(&["session", "list", "--json"], "");
    let listed: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(listed["sessions"][1]["name"], "beta");
    assert!(listed["sessions"][1]["bytes"].as_u64().unwrap() > 100);

    let out = env.run(&["session", "rm", "alpha", "gamma"], "");
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("removed the session `alpha`"), "{}", out.stderr);
    assert!(out.stderr.contains("no saved session named `gamma`"), "{}", out.stderr);
    let (code, _, err) = in_session(&env, "alpha", "print(x)", &[]);
    assert_eq!(code, 1);
    assert!(err.contains("NameError"), "a removed session starts afresh: {err}");
    let out = env.run(&["session", "rm", "--all"], "");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!sessions(&env).join("beta.session").exists());
    assert!(sessions(&env).join("key").exists(), "the key stays");
}

#[test]
fn a_session_of_another_workspace_or_with_a_key_others_may_write_is_refused() {
    let env = TestEnv::new();
    let (code, _, err) = in_session(&env, "shared", "secret = 'from ws'", &[]);
    assert_eq!(code, 0, "{err}");
    // The same session name from another workspace, as the other spells it too.
    let other = env.outside().join("other");
    std::fs::create_dir_all(&other).unwrap();
    for workspace in [other.clone(), env.outside().join("other/../other")] {
        let (code, out, err) =
            in_session(&env, "shared", "print(secret)", &["--workspace", workspace.to_str().unwrap()]);
        assert_eq!(code, 2, "{out}{err}");
        assert!(err.contains("is a session of the workspace"), "{err}");
    }
    // The workspace it was saved in, spelled another way, still has it.
    let spelled = env.workspace().join("../ws");
    let (code, out, err) = in_session(&env, "shared", "print(secret)", &["--workspace", spelled.to_str().unwrap()]);
    assert_eq!((code, out.as_str()), (0, "from ws\n"), "{err}");

    // A key, or a session file, that others may write is not codeact's to trust.
    for name in ["key", "shared.session"] {
        let path = sessions(&env).join(name);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
        let (code, _, err) = in_session(&env, "shared", "print(secret)", &[]);
        assert_eq!(code, 2, "{name}: {err}");
        assert!(err.contains("others may write it"), "{name}: {err}");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
}

#[test]
fn a_state_folder_below_a_missing_folder_and_dot_dot_is_taken_to_be_in_the_workspace() {
    let env = TestEnv::new();
    let state = env.outside().join("missing/../../ws/state");
    let env = env.env("XDG_STATE_HOME", state.to_str().unwrap());
    let (code, _, err) = in_session(&env, "s", "x = 1", &[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("inside the workspace"), "{err}");
    assert!(!env.workspace().join("state").exists());
}

#[test]
fn sessions_saved_at_once_by_many_runs_share_one_key() {
    let env = TestEnv::new();
    let children: Vec<_> = (0..8)
        .map(|i| {
            env.command(&["run", "--session", &format!("s{i}"), "--code", "x = 1"])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    for i in 0..8 {
        let (code, out, err) = in_session(&env, &format!("s{i}"), "print(x)", &[]);
        assert_eq!((code, out.as_str()), (0, "1\n"), "{err}");
    }
}
