//! `github_api`: offered only where it can work, and its endpoint never becomes an option.
//! A stand-in `gh` on `PATH` records what it was asked.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::support::TestEnv;

/// A workspace whose `PATH` starts with a fake `gh` that echoes its arguments and stdin as JSON.
fn with_fake_gh() -> TestEnv {
    let env = TestEnv::new();
    let bin = env.root().join("fake-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let script = "#!/bin/sh\ninput=$(cat)\nfor last; do :; done\nif [ \"$last\" = fail ]; then echo 'HTTP 404: Not Found' >&2; exit 1; fi\n\
                  printf '{\"args\": ['; sep=''; for a in \"$@\"; do printf '%s\"%s\"' \"$sep\" \"$a\"; sep=', '; done\n\
                  printf '], \"stdin\": %s}\\n' \"${input:-null}\"\n";
    std::fs::write(bin.join("gh"), script).unwrap();
    std::fs::set_permissions(bin.join("gh"), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.display(), env.path());
    env.env("PATH", &path)
}

fn tool_names(env: &TestEnv) -> Vec<String> {
    let manifest: Value = serde_json::from_str(&env.run(&["discover"], "").code(0).stdout).unwrap();
    manifest["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
}

#[test]
fn github_api_is_offered_only_with_gh_or_a_token() {
    let bare = TestEnv::new();
    assert!(!tool_names(&bare).contains(&"github_api".to_owned()));
    assert_eq!(bare.error_of("github_api(endpoint='user')").0, "NameError");
    assert!(tool_names(&with_fake_gh()).contains(&"github_api".to_owned()));
    let token = TestEnv::new().env("GITHUB_TOKEN", "ghp_example");
    assert!(tool_names(&token).contains(&"github_api".to_owned()));
}

/// A `gh` that lies in the workspace is no way to reach GitHub: with no other `gh` and no
/// token, `github_api` is not offered, and the workspace's `gh` never runs.
#[test]
fn a_gh_only_the_workspace_has_is_neither_offered_nor_run() {
    for folder in ["bin", ".venv/bin", "node_modules/.bin"] {
        let env = TestEnv::new();
        let marker = env.outside().join("gh-ran");
        let bin = env.workspace().join(folder);
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::write(bin.join("gh"), format!("#!/bin/sh\necho \"$*\" >> '{}'\necho '{{}}'\n", marker.display()))
            .unwrap();
        std::fs::set_permissions(bin.join("gh"), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let path = format!("{}:{}", bin.display(), env.path());
        let env = env.env("PATH", &path);
        assert!(!tool_names(&env).contains(&"github_api".to_owned()), "offered through {folder}/gh");
        assert_eq!(env.error_of("github_api(endpoint='user')").0, "NameError");
        assert!(!marker.exists(), "the workspace's {folder}/gh ran");
    }
}

#[test]
fn gh_gets_the_endpoint_after_a_double_dash() {
    let env = with_fake_gh();
    let (_, value) = env.run_json("github_api(endpoint='/repos/o/r/issues')", &[]);
    assert_eq!(
        value["return_value"],
        json!({"args": ["api", "--method", "GET", "--", "repos/o/r/issues"], "stdin": null})
    );
    let (_, value) = env.run_json("github_api(endpoint='repos/o/r/issues', method='post', body={'title': 'x'})", &[]);
    assert_eq!(
        value["return_value"],
        json!({"args": ["api", "--method", "POST", "--input", "-", "--", "repos/o/r/issues"], "stdin": {"title": "x"}})
    );
}

#[test]
fn an_endpoint_can_never_become_an_option_or_a_url() {
    let env = with_fake_gh();
    for endpoint in ["--paginate", "-X", "https://evil.example/x", "../../x", ""] {
        let (kind, message) = env.error_of(&format!("github_api(endpoint={endpoint:?})"));
        assert_eq!(kind, "ValueError", "{endpoint}: {message}");
    }
    let (kind, _) = env.error_of("github_api(endpoint='user', method='--help')");
    assert_eq!(kind, "ValueError");
}

#[test]
fn gh_failures_raise_os_error_with_its_message() {
    let env = with_fake_gh();
    let (kind, message) = env.error_of("github_api(endpoint='fail')");
    assert_eq!((kind.as_str(), message.as_str()), ("OSError", "github_api() GET fail failed: HTTP 404: Not Found"));
}
