//! `discover` and `instructions`: generated from the same registry, snapshotted whole.

use pretty_assertions::assert_eq;

use crate::support::TestEnv;

fn filters(env: &TestEnv) -> Vec<(String, &'static str)> {
    vec![
        (regex::escape(&env.workspace().display().to_string()), "[WORKSPACE]"),
        (regex::escape(*crate::support::BIN), "[BIN]"),
    ]
}

#[test]
fn discover_lists_every_tool_with_schema_and_return_type() {
    let env = TestEnv::new();
    let out = env.run(&["discover"], "").code(0);
    let settings = insta::Settings::clone_current();
    let mut settings = settings;
    for (pattern, replacement) in filters(&env) {
        settings.add_filter(&pattern, replacement);
    }
    settings.bind(|| insta::assert_snapshot!("discover", out.stdout));
}

#[test]
fn discover_leaves_out_disabled_tools() {
    let env = TestEnv::new().env("CODEACT_DISABLE", "bash,sql,create,edit,web_fetch");
    let out = env.run(&["discover"], "").code(0);
    let manifest: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let names: Vec<&str> = manifest["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["view", "glob", "grep"]);
}

#[test]
fn instructions_render_the_reference_for_monty() {
    let env = TestEnv::new();
    let out = env.run(&["instructions"], "").code(0);
    let mut settings = insta::Settings::clone_current();
    for (pattern, replacement) in filters(&env) {
        settings.add_filter(&pattern, replacement);
    }
    settings.bind(|| insta::assert_snapshot!("instructions", out.stdout));
}

#[test]
fn instructions_follow_the_configured_limits_and_tools() {
    let env = TestEnv::new().env("CODEACT_TOOLS", "view,grep").project_config(r#"{"limits": {"timeout": 5}}"#);
    let out = env.run(&["instructions"], "").code(0);
    let tools: Vec<&str> = out.stdout.lines().filter(|l| l.starts_with("- `")).collect();
    assert_eq!(tools.len(), 2, "{}", out.stdout);
    assert!(out.stdout.contains("limits 5s, 512 MiB, 10000 calls."), "{}", out.stdout);
}
