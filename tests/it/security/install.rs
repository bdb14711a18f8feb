//! F7: a repository's `.github`, `.github/instructions` or `.github/agents`, or the generated
//! file itself, is a symbolic link. `install` writes nothing through it and `uninstall` removes
//! nothing through it; the error names the link. `--global` writes the user's own directory,
//! whose directory links are followed, but never through a linked file.

use std::path::Path;

use pretty_assertions::assert_eq;

use crate::support::TestEnv;

const LINK_HINT: &str =
    "hint: codeact follows no link in the repository, which could point anywhere: make it a real directory\n";

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<_> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

/// The text of a file codeact generated, from a `--global` install in a scratch environment.
fn generated(file: &str) -> String {
    let env = TestEnv::new();
    env.run(&["install", "--global", "--agent"], "").code(0);
    std::fs::read_to_string(env.home().join(".copilot").join(file)).unwrap()
}

fn refused_through(env: &TestEnv, args: &[&str], verb: &str, link: &str) {
    env.run(args, "").code(1).stdout("").stderr(&format!(
        "error: refusing to {verb} through `{}`: it is a symbolic link\n{LINK_HINT}",
        env.workspace().join(link).display()
    ));
}

#[test]
fn a_repository_cannot_make_install_write_the_global_instructions_and_agent() {
    // The review's repro: the repository's directories point at the user's `$COPILOT_HOME`.
    let env = TestEnv::new().file(".github/README.md", "");
    let global = env.home().join(".copilot");
    for dir in ["instructions", "agents"] {
        std::fs::create_dir_all(global.join(dir)).unwrap();
    }
    let env = env
        .symlink(global.join("instructions"), ".github/instructions")
        .symlink(global.join("agents"), ".github/agents");
    refused_through(&env, &["install"], "write", ".github/instructions");
    refused_through(&env, &["install", "--dry-run"], "write", ".github/instructions");
    assert_eq!(names(&global.join("instructions")), Vec::<String>::new());
    assert_eq!(names(&global.join("agents")), Vec::<String>::new());
    // The session-start hook does not take a file reached through the link for an install.
    std::fs::write(
        global.join("instructions/codeact.instructions.md"),
        generated("instructions/codeact.instructions.md"),
    )
    .unwrap();
    std::fs::write(global.join("agents/codeact.agent.md"), generated("agents/codeact.agent.md")).unwrap();
    refused_through(&env, &["uninstall"], "remove", ".github/instructions");
    assert_eq!(names(&global.join("instructions")), ["codeact.instructions.md"]);
    assert_eq!(names(&global.join("agents")), ["codeact.agent.md"]);
}

#[test]
fn install_and_uninstall_go_through_no_symlinked_agents_directory() {
    let env = TestEnv::new().symlink("../../outside/agents", ".github/agents");
    std::fs::create_dir_all(env.outside().join("agents")).unwrap();
    refused_through(&env, &["install", "--agent"], "write", ".github/agents");
    assert_eq!(names(&env.outside().join("agents")), Vec::<String>::new());
    assert!(!env.workspace().join(".github/instructions").exists(), "nothing is written when one target is refused");
    std::fs::write(env.outside().join("agents/codeact.agent.md"), generated("agents/codeact.agent.md")).unwrap();
    refused_through(&env, &["uninstall"], "remove", ".github/agents");
    assert_eq!(names(&env.outside().join("agents")), ["codeact.agent.md"]);
}

#[test]
fn install_creates_nothing_through_a_dangling_symlink() {
    let env = TestEnv::new().symlink("../../outside/made-by-install", ".github/instructions");
    refused_through(&env, &["install"], "write", ".github/instructions");
    assert!(!env.outside().join("made-by-install").exists());
    assert!(!env.outside().exists() || names(&env.outside()).is_empty());
}

#[test]
fn a_symlinked_github_directory_is_refused() {
    let env = TestEnv::new().symlink("../outside/gh", ".github");
    std::fs::create_dir_all(env.outside().join("gh/instructions")).unwrap();
    std::fs::create_dir_all(env.outside().join("gh/agents")).unwrap();
    refused_through(&env, &["install"], "write", ".github");
    assert_eq!(names(&env.outside().join("gh/instructions")), Vec::<String>::new());
    assert_eq!(names(&env.outside().join("gh/agents")), Vec::<String>::new());
    let instructions = env.outside().join("gh/instructions/codeact.instructions.md");
    std::fs::write(&instructions, generated("instructions/codeact.instructions.md")).unwrap();
    refused_through(&env, &["uninstall"], "remove", ".github");
    assert!(instructions.exists());
}

#[test]
fn even_a_symlink_that_stays_in_the_repository_is_refused() {
    // No link is followed, not only those that leave: the directory is not what it says it is.
    let env = TestEnv::new().file("docs/README.md", "").symlink("../docs", ".github/agents");
    refused_through(&env, &["install", "--agent"], "write", ".github/agents");
    assert_eq!(names(&env.workspace().join("docs")), ["README.md"]);
    let env = TestEnv::new().file("real-github/instructions/.keep", "").symlink("real-github", ".github");
    refused_through(&env, &["install"], "write", ".github");
    assert_eq!(names(&env.workspace().join("real-github/instructions")), [".keep"]);
    let env =
        env.file("real-github/instructions/codeact.instructions.md", generated("instructions/codeact.instructions.md"));
    refused_through(&env, &["uninstall"], "remove", ".github");
    assert_eq!(names(&env.workspace().join("real-github/instructions")), [".keep", "codeact.instructions.md"]);
    let notes = generated("instructions/codeact.instructions.md");
    let env = TestEnv::new()
        .file("docs/notes.md", &notes)
        .symlink("../../docs/notes.md", ".github/instructions/codeact.instructions.md");
    let out = env.run(&["install"], "").code(1);
    let link = env.workspace().join(".github/instructions/codeact.instructions.md");
    assert!(
        out.stderr.starts_with(&format!("error: refusing to overwrite `{}`: it is a symbolic link\n", link.display()))
    );
    assert_eq!(std::fs::read_to_string(env.workspace().join("docs/notes.md")).unwrap(), notes);
}

#[test]
fn a_symlinked_generated_file_is_refused_and_what_it_points_to_is_untouched() {
    // With the marker, and without: the link is neither written through nor replaced.
    for text in [generated("instructions/codeact.instructions.md"), "the user's own file\n".to_owned()] {
        let env = TestEnv::new()
            .outside_file("victim.md", &text)
            .symlink("../../../outside/victim.md", ".github/instructions/codeact.instructions.md");
        let link = env.workspace().join(".github/instructions/codeact.instructions.md");
        env.run(&["install"], "").code(1).stderr(&format!(
            "error: refusing to overwrite `{}`: it is a symbolic link\n\
             hint: codeact writes a regular file there and never through a link: remove the link\n",
            link.display()
        ));
        assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
        assert!(!env.workspace().join(".github/agents").exists());
        env.run(&["uninstall"], "").code(0).stderr(&format!(
            "warning: left `{}`: it is a symbolic link, which codeact never writes\n",
            link.display()
        ));
        assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read_to_string(env.outside().join("victim.md")).unwrap(), text);
    }
}

#[test]
fn the_session_start_hook_ignores_instructions_reached_through_a_link() {
    let env = TestEnv::new()
        .outside_file("instructions/codeact.instructions.md", generated("instructions/codeact.instructions.md"))
        .symlink("../../outside/instructions", ".github/instructions");
    let payload = serde_json::json!({"sessionId": "s", "cwd": env.workspace(), "source": "new"}).to_string();
    let out = env.run(&["hook", "session-start"], &payload).code(0);
    assert!(out.stdout.contains("additionalContext"), "{}", out.stdout);
}

#[test]
fn global_install_follows_the_users_own_directory_links_but_never_a_linked_file() {
    let env = TestEnv::new();
    let dotfiles = env.home().join("dotfiles/copilot-instructions");
    std::fs::create_dir_all(&dotfiles).unwrap();
    std::fs::create_dir_all(env.home().join(".copilot")).unwrap();
    std::os::unix::fs::symlink(&dotfiles, env.home().join(".copilot/instructions")).unwrap();
    env.run(&["install", "--global"], "").code(0);
    assert_eq!(names(&dotfiles), ["codeact.instructions.md"]);
    env.run(&["uninstall", "--global"], "").code(0);
    assert_eq!(names(&dotfiles), Vec::<String>::new());

    let target = env.home().join("elsewhere.md");
    std::fs::write(&target, generated("instructions/codeact.instructions.md")).unwrap();
    let file = env.home().join(".copilot/instructions/codeact.instructions.md");
    std::os::unix::fs::symlink(&target, &file).unwrap();
    let out = env.run(&["install", "--global", "--agent"], "").code(1);
    assert!(
        out.stderr.starts_with(&format!("error: refusing to overwrite `{}`: it is a symbolic link\n", file.display()))
    );
    assert!(file.symlink_metadata().unwrap().file_type().is_symlink());
    let agents = env.home().join(".copilot/agents");
    assert!(!agents.exists() || names(&agents).is_empty(), "nothing is written when one file is refused");
}
