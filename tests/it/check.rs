//! `codeact check` over the tool-file corpus in `tests/fixtures/tools/`: good files have no
//! problems; each bad file gets exactly the expected messages (snapshot), several per file.

use pretty_assertions::assert_eq;
use serde_json::Value;

use crate::support::{TestEnv, fixtures};

#[test]
fn good_tool_files_have_no_problems() {
    let good = fixtures().join("tools/good");
    TestEnv::new()
        .run(&["check", good.to_str().unwrap()], "")
        .code(0)
        .stdout("")
        .stderr("0 error(s), 0 warning(s) in 1 location(s) checked\n");
}

#[test]
fn bad_tool_files_get_every_problem_with_its_line() {
    let bad = fixtures().join("tools/bad");
    let out = TestEnv::new().run(&["check", bad.to_str().unwrap()], "").code(4);
    let shown = out.stdout.replace(&format!("{}/", bad.display()), "");
    insta::assert_snapshot!("check_bad_tools", shown);
    assert_eq!(out.stderr, "20 error(s), 0 warning(s) in 1 location(s) checked\n");
}

#[test]
fn check_reports_json_too() {
    let bad = fixtures().join("tools/bad/secret_tool.md");
    let out = TestEnv::new().run(&["check", "--json", bad.to_str().unwrap()], "").code(4);
    let value: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(value["ok"], Value::Bool(false));
    let lines: Vec<u64> = value["problems"].as_array().unwrap().iter().map(|p| p["line"].as_u64().unwrap()).collect();
    assert_eq!(lines, [8, 9]);
}

#[test]
fn without_paths_check_reads_the_user_and_project_config_dirs() {
    let env = TestEnv::new()
        .user_config(r#"{"limits": {"timeout": 5}}"#)
        .project_config(r#"{"limits": {"timeot": 5}}"#)
        .file(".codeact/tools/deep/nested/no_frontmatter.md", "## Code\n```sh\necho\n```\n");
    let out = env.run(&["check"], "").code(4);
    let project = env.workspace().join(".codeact");
    assert_eq!(
        out.stdout,
        format!(
            "{0}/config.json:1: key `limits.timeot`: unknown field `timeot`, expected one of `timeout`, `max_memory`, \
             `max_output`, `max_tool_calls` at line 1 column 20\n\
             {0}/tools/deep/nested/no_frontmatter.md:1: must start with YAML frontmatter between `---` lines: the first \
             line is exactly `---`\n",
            project.display()
        )
    );
}

#[test]
fn a_node_code_block_is_a_problem_with_its_line_as_agentschema_says() {
    let text = "---\ntype: custom\nname: echo\ndescription: Echo the text back.\n---\n\n## Code\n\n```node\n\
                module.exports = async ({ text }) => text;\n```\n";
    let env = TestEnv::new().file("tools/echo.md", text);
    let out = env.run(&["check", "tools"], "").code(4);
    let shown = out.stdout.replace(&format!("{}/", env.workspace().display()), "");
    assert_eq!(
        shown,
        "tools/echo.md:9: the code must be JavaScript (```javascript), not `node`; codeact also runs ```python, \
         ```sh and ```bash\n"
    );
    assert_eq!(out.stderr, "1 error(s), 0 warning(s) in 1 location(s) checked\n");
}
