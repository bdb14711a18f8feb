//! Compatibility with agentschema v0.2 tool files, asserted against the corpus in
//! `tests/fixtures/agentschema/`, written down from the rules of the reference implementation
//! (@soft-boy/agentschema 0.2.0):
//!
//! - `my-agent/` — an agent folder whose `tools/` holds valid, broken and skipped tool files;
//!   `expected.json` gives, for each, the reference's verdict and messages and what
//!   `codeact check --json` must report (rule ids), `schemas.json` the input schema the
//!   reference compiles for each tool it accepts;
//! - `runtime/` — JavaScript tools, a helper and a package, and `calls.json`: calls, what the
//!   reference sends back, and what a codeact program gets.
//!
//! Where codeact differs on purpose, the entry names one of [`EXTENSIONS`].

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::support::{TestEnv, copy_dir, fixtures};

/// Every deliberate difference from agentschema: id → what codeact does instead.
const EXTENSIONS: &[(&str, &str)] = &[
    ("python-code", "```python / ```py code blocks run in the sandbox; their syntax is checked with codeact's parser"),
    ("shell-code", "```sh / ```bash / ```shell code blocks run on the host under sh, the input as JSON on stdin"),
    (
        "name-reserved",
        "a custom tool may not take the name of one of codeact's own tools or Python names (view, sql, print, …)",
    ),
    (
        "secret-patterns",
        "more secret patterns (e.g. a hard-coded `password = \"…\"`), and files that do not parse are scanned too",
    ),
    (
        "argument-checking",
        "call arguments are checked against the input table; a mismatch is a TypeError before the code runs",
    ),
    (
        "schema-strict",
        "a tool's parameters add `additionalProperties: false` and always carry `required` (maybe empty)",
    ),
    (
        "all-problems",
        "check reports every problem of a file at once; agentschema stops at the first parse error of a file",
    ),
    ("utf-8-only", "a tool file must be UTF-8 text; agentschema reads other bytes as U+FFFD"),
    (
        "prebuilt-mapping",
        "pre-built files map onto codeact's own tools (read→view, write→create, bash, edit, glob, grep, web_fetch); \
         web_search has none and gets the warning `prebuilt-unmapped`",
    ),
];

/// The rule ids `codeact check` reports.
const RULES: &[&str] = &[
    "unreadable",
    "frontmatter-missing",
    "frontmatter-unclosed",
    "yaml-invalid",
    "frontmatter-not-mapping",
    "type-invalid",
    "field-unknown",
    "prebuilt-unknown",
    "name-mismatch",
    "name-invalid",
    "name-prebuilt",
    "name-prefix",
    "name-reserved",
    "name-duplicate",
    "description-missing",
    "table-columns",
    "input-no-name",
    "input-duplicate",
    "input-type",
    "input-required",
    "code-missing",
    "code-blocks",
    "code-language",
    "code-syntax",
    "secret",
    "too-many-tools",
];

/// The warning ids `codeact check` reports.
const WARNINGS: &[&str] = &["code-unchecked", "code-section-duplicate", "prebuilt-unmapped"];

fn corpus() -> PathBuf {
    fixtures().join("agentschema")
}

fn agent_folder() -> PathBuf {
    corpus().join("my-agent")
}

fn fixture_json(name: &str) -> Value {
    let path = corpus().join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn entries() -> Vec<Value> {
    fixture_json("expected.json")["entries"].as_array().unwrap().clone()
}

fn strings(value: &Value) -> BTreeSet<String> {
    value.as_array().map(|a| a.iter().map(|v| v.as_str().unwrap().to_owned()).collect()).unwrap_or_default()
}

/// `env` with `node` taken off its `PATH`.
fn without_node(env: TestEnv) -> TestEnv {
    let node = env.root().join("bin/node");
    if node.exists() {
        std::fs::remove_file(node).unwrap();
    }
    env
}

/// `env`, which must have `node` on its `PATH`.
fn with_node(env: TestEnv) -> TestEnv {
    assert!(env.root().join("bin/node").exists(), "node is not on PATH: install node to run this test");
    env
}

/// What `codeact check` said about one file.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Verdict {
    /// `ok`, `error` or `skipped`.
    outcome: String,
    rules: BTreeSet<String>,
    warnings: BTreeSet<String>,
}

impl Verdict {
    fn new(rules: BTreeSet<String>, warnings: BTreeSet<String>) -> Self {
        let verdict = if rules.is_empty() { "ok" } else { "error" };
        Self { outcome: verdict.to_owned(), rules, warnings }
    }
}

/// One problem, as `codeact check --json` gives it.
#[derive(Debug, Clone)]
struct Problem {
    severity: String,
    rule: String,
    message: String,
}

/// `codeact check --json target` in `env`: the `ok` field and the problems by path, relative to
/// `base` where they lie below it.
fn check(env: &TestEnv, target: &Path, base: &Path) -> (bool, BTreeMap<String, Vec<Problem>>) {
    let out = env.run(&["check", "--json", target.to_str().unwrap()], "");
    let value: Value = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("check --json printed no JSON ({e}):\n{}\nstderr:\n{}", out.stdout, out.stderr));
    let ok = value["ok"].as_bool().unwrap();
    assert_eq!(out.code, if ok { 0 } else { 4 }, "exit code vs ok\nstderr:\n{}", out.stderr);
    let mut by_file: BTreeMap<String, Vec<Problem>> = BTreeMap::new();
    for problem in value["problems"].as_array().unwrap() {
        let path = PathBuf::from(problem["path"].as_str().unwrap());
        let file = path.strip_prefix(base).map_or_else(|_| path.display().to_string(), |p| p.display().to_string());
        by_file.entry(file).or_default().push(Problem {
            severity: problem["severity"].as_str().unwrap().to_owned(),
            rule: problem["rule"].as_str().unwrap_or("<no rule>").to_owned(),
            message: problem["message"].as_str().unwrap().to_owned(),
        });
    }
    (ok, by_file)
}

fn verdict_of(problems: &[Problem]) -> Verdict {
    let of = |severity: &str| problems.iter().filter(|p| p.severity == severity).map(|p| p.rule.clone()).collect();
    Verdict::new(of("error"), of("warning"))
}

/// What codeact must say about an entry: as written with node on PATH; without node, each
/// JavaScript tool gets `code-unchecked` and its `code-syntax` turns into that warning.
fn expected_verdict(entry: &Value, node: bool) -> Verdict {
    let codeact = &entry["codeact"];
    let mut rules = strings(&codeact["rules"]);
    let mut warnings = strings(&codeact["warnings"]);
    if !node && entry["javascript"] == true {
        rules.remove("code-syntax");
        warnings.insert("code-unchecked".to_owned());
    }
    let verdict = if codeact["verdict"] == "skipped" {
        "skipped".to_owned()
    } else {
        Verdict::new(rules.clone(), warnings.clone()).outcome
    };
    Verdict { outcome: verdict, rules, warnings }
}

/// Checks `my-agent/tools` and compares every file with `expected.json`; returns one line per
/// difference.
fn corpus_differences(node: bool) -> Vec<String> {
    let env = if node { with_node(TestEnv::new()) } else { without_node(TestEnv::new()) };
    let (ok, mut by_file) = check(&env, &agent_folder().join("tools"), &agent_folder());
    let mut differences = Vec::new();
    if ok {
        differences.push("check says ok; the corpus has errors".to_owned());
    }
    for entry in entries() {
        let file = entry["file"].as_str().unwrap();
        let problems = by_file.remove(file).unwrap_or_default();
        let want = expected_verdict(&entry, node);
        let got = if want.outcome == "skipped" && problems.is_empty() {
            Verdict { outcome: "skipped".to_owned(), ..Verdict::default() }
        } else {
            verdict_of(&problems)
        };
        if got != want {
            differences.push(format!(
                "{file}: want {} {:?} {:?}, got {} {:?} {:?}{}\n    ({})",
                want.outcome,
                want.rules,
                want.warnings,
                got.outcome,
                got.rules,
                got.warnings,
                entry.get("extension").map_or(String::new(), |e| format!(" [extension {e}]")),
                problems.iter().map(|p| format!("{}: {}", p.rule, p.message)).collect::<Vec<_>>().join(" | "),
            ));
        }
        let syntax_unchecked =
            !node && entry["javascript"] == true && strings(&entry["codeact"]["rules"]).contains("code-syntax");
        for mention in strings(&entry["codeact"]["mentions"]) {
            if !syntax_unchecked && !problems.iter().any(|p| p.message.contains(&mention)) {
                differences.push(format!("{file}: no message mentions `{mention}`"));
            }
        }
    }
    for (file, problems) in by_file {
        let shown: Vec<String> = problems.iter().map(|p| format!("{} {}: {}", p.severity, p.rule, p.message)).collect();
        differences.push(format!("{file}: not in expected.json, yet {}", shown.join(" | ")));
    }
    differences
}

fn assert_no_differences(what: &str, differences: &[String]) {
    assert!(differences.is_empty(), "{what}: {} difference(s):\n{}", differences.len(), differences.join("\n"));
}

#[test]
#[ignore = "needs node (the CI machine has it)"]
fn check_gives_every_corpus_file_the_expected_verdict_and_rules() {
    assert_no_differences("check with node", &corpus_differences(true));
}

#[test]
fn without_node_javascript_is_reported_unchecked_and_everything_else_is_the_same() {
    assert_no_differences("check without node", &corpus_differences(false));
}

#[test]
fn checking_the_agent_folder_is_checking_its_tools_folder() {
    let env = without_node(TestEnv::new());
    let folder = agent_folder();
    let summary = |target: &Path| {
        let (ok, by_file) = check(&env, target, &folder);
        let files: BTreeMap<String, Vec<String>> = by_file
            .into_iter()
            .map(|(file, problems)| {
                (file, problems.iter().map(|p| format!("{} {} {}", p.severity, p.rule, p.message)).collect())
            })
            .collect();
        (ok, files)
    };
    assert_eq!(summary(&folder), summary(&folder.join("tools")));
}

/// A valid custom JavaScript tool named `name`.
fn tool_file(name: &str) -> String {
    format!(
        "---\ntype: custom\nname: {name}\ndescription: Tool {name}.\n---\n\n## Code\n\n```javascript\nmodule.exports = async () => 1;\n```\n"
    )
}

/// `codeact check` of a `tools/` folder with `customs` custom tools and the pre-built files
/// `prebuilt`: the `too-many-tools` problems, and any other error.
fn check_tool_count(customs: usize, prebuilt: &[&str]) -> (usize, Vec<String>) {
    let mut env = without_node(TestEnv::new());
    for i in 1..=customs {
        env = env.file(&format!("many/tools/t_{i:03}.md"), tool_file(&format!("t_{i:03}")));
    }
    for name in prebuilt {
        env = env.file(&format!("many/tools/built-in/{name}.md"), "---\ntype: agent_toolset_20260401\n---\n");
    }
    let tools = env.workspace().join("many/tools");
    let (_, by_file) = check(&env, &tools, &tools);
    let problems: Vec<(String, Problem)> =
        by_file.into_iter().flat_map(|(file, problems)| problems.into_iter().map(move |p| (file.clone(), p))).collect();
    let too_many = problems.iter().filter(|(_, p)| p.rule == "too-many-tools").count();
    let others = problems
        .iter()
        .filter(|(_, p)| p.severity == "error" && p.rule != "too-many-tools")
        .map(|(file, p)| format!("{file}: {} {}", p.rule, p.message))
        .collect();
    (too_many, others)
}

#[test]
fn more_than_256_tools_is_an_error_and_the_prebuilt_tools_count_as_one() {
    assert_eq!(check_tool_count(257, &[]), (1, vec![]), "257 custom tools");
    assert_eq!(check_tool_count(256, &[]), (0, vec![]), "256 custom tools");
    assert_eq!(check_tool_count(255, &["read", "bash"]), (0, vec![]), "255 custom tools and the toolset");
    assert_eq!(check_tool_count(256, &["read", "bash"]), (1, vec![]), "256 custom tools and the toolset");
}

/// agentschema has no message for a tool file it cannot read: `readFileSync` throws and the
/// check stops. codeact reports it as `unreadable` and goes on.
#[test]
fn a_tool_file_that_cannot_be_read_is_unreadable_and_the_others_are_still_checked() {
    let env =
        without_node(TestEnv::new()).file("agent/tools/fine.md", tool_file("fine")).file("agent/a_folder/x.txt", "");
    let tools = env.workspace().join("agent/tools");
    std::os::unix::fs::symlink(env.workspace().join("agent/a_folder"), tools.join("linked.md")).unwrap();
    std::fs::write(tools.join("broken.md"), "no frontmatter\n").unwrap();
    let (_, by_file) = check(&env, &tools, &tools);
    let rules: BTreeMap<String, Verdict> =
        by_file.iter().map(|(file, problems)| (file.clone(), verdict_of(problems))).collect();
    let unchecked = BTreeSet::from(["code-unchecked".to_owned()]);
    assert_eq!(
        rules,
        BTreeMap::from([
            ("broken.md".to_owned(), Verdict::new(BTreeSet::from(["frontmatter-missing".to_owned()]), BTreeSet::new())),
            ("fine.md".to_owned(), Verdict::new(BTreeSet::new(), unchecked)),
            ("linked.md".to_owned(), Verdict::new(BTreeSet::from(["unreadable".to_owned()]), BTreeSet::new())),
        ])
    );
}

/// agentschema's `run` runs a folder's tools only when the whole folder passes `check`.
#[test]
#[ignore = "needs node (the CI machine has it)"]
fn the_runtime_folder_passes_check_with_one_warning_for_its_two_code_sections() {
    let env = with_node(TestEnv::new());
    let tools = corpus().join("runtime/tools");
    let (ok, by_file) = check(&env, &tools, &tools);
    let found: Vec<(String, String, String)> = by_file
        .into_iter()
        .flat_map(|(file, problems)| problems.into_iter().map(move |p| (file.clone(), p.severity, p.rule)))
        .collect();
    assert!(ok, "{found:?}");
    assert_eq!(
        found,
        [("rt_dup_code_section.md".to_owned(), "warning".to_owned(), "code-section-duplicate".to_owned())]
    );
}

/// `name=json.loads("…")` for each input, so any JSON value reaches the tool as given.
fn python_arguments(input: &Value) -> String {
    input
        .as_object()
        .unwrap()
        .iter()
        .map(|(name, value)| format!("{name}=json.loads({})", serde_json::to_string(&value.to_string()).unwrap()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The program that makes every call of `calls` and prints one JSON line for each: the value,
/// or the exception's type and message.
fn calls_program(calls: &[Value]) -> String {
    let mut program = String::from(
        "import json\n\n\
         def show(i, call):\n    \
             try:\n        \
                 value = call()\n    \
             except Exception as e:\n        \
                 print(json.dumps({'i': i, 'error': {'type': type(e).__name__, 'message': str(e)}}))\n        \
                 return\n    \
             print(json.dumps({'i': i, 'value': value}))\n\n",
    );
    for (i, call) in calls.iter().enumerate() {
        let tool = call["tool"].as_str().unwrap();
        let _ = writeln!(program, "show({i}, lambda: {tool}({}))", python_arguments(&call["input"]));
    }
    program
}

#[test]
#[ignore = "needs node (the CI machine has it)"]
fn javascript_tools_return_what_agentschema_sends_back() {
    let env = with_node(TestEnv::new());
    copy_dir(&corpus().join("runtime"), &env.workspace().join(".codeact"));
    let env = env.trusted();
    let calls = fixture_json("calls.json")["calls"].as_array().unwrap().clone();
    let (code, result) = env.run_json(&calls_program(&calls), &["--backend", "monty", "--timeout", "120"]);
    assert_eq!(code, 0, "{result}");
    assert_eq!(result["error"], Value::Null, "the program failed: {result}");
    let mut differences = Vec::new();
    let mut lines = Vec::new();
    for line in result["stdout"].as_str().unwrap().lines() {
        match serde_json::from_str::<Value>(line) {
            Ok(value) => lines.push(value),
            Err(_) => differences.push(format!("a line of the program's output is not its own: {line:?}")),
        }
    }
    for (i, call) in calls.iter().enumerate() {
        let got = lines.iter().find(|line| line["i"] == i).cloned().unwrap_or(Value::Null);
        let mut got = got.as_object().cloned().unwrap_or_default();
        got.remove("i");
        let got = Value::Object(got);
        let want = &call["codeact"];
        if &got != want {
            differences.push(format!(
                "{}({}): want {want}, got {got}{}  (agentschema: {})",
                call["tool"].as_str().unwrap(),
                call["input"],
                call.get("extension").map_or(String::new(), |e| format!(" [extension {e}]")),
                call["agentschema"],
            ));
        }
    }
    assert_no_differences("JavaScript calls", &differences);
}

/// The reference's `input_schema` as codeact writes it ([`EXTENSIONS`] `schema-strict`).
fn strict(schema: &Value) -> Value {
    let mut schema = schema.as_object().unwrap().clone();
    schema.entry("required").or_insert_with(|| json!([]));
    schema.insert("additionalProperties".to_owned(), Value::Bool(false));
    Value::Object(schema)
}

/// JavaScript tools are offered only where node is on PATH.
#[test]
#[ignore = "needs node (the CI machine has it)"]
fn discover_gives_each_tool_the_input_schema_agentschema_compiles() {
    let env = with_node(TestEnv::new());
    copy_dir(&agent_folder().join("tools"), &env.workspace().join(".codeact/tools"));
    let env = env.trusted();
    let out = env.run(&["discover"], "").code(0);
    let manifest: Value = serde_json::from_str(&out.stdout).unwrap();
    let tools_dir = env.workspace().join(".codeact/tools");
    let user_tools: BTreeMap<String, Value> = manifest["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|tool| tool.get("source").is_some())
        .map(|tool| (tool["name"].as_str().unwrap().to_owned(), tool.clone()))
        .collect();
    let verdicts: BTreeMap<String, String> = entries()
        .iter()
        .map(|e| (e["file"].as_str().unwrap().to_owned(), e["codeact"]["verdict"].as_str().unwrap().to_owned()))
        .collect();
    let mut differences = Vec::new();
    for expected in fixture_json("schemas.json")["tools"].as_array().unwrap() {
        let (file, name) = (expected["file"].as_str().unwrap(), expected["name"].as_str().unwrap());
        if verdicts[file] != "ok" {
            continue;
        }
        let Some(tool) = user_tools.get(name) else {
            differences.push(format!("{file}: `{name}` is not listed"));
            continue;
        };
        let source = tools_dir.join(file.strip_prefix("tools/").unwrap());
        if tool["source"] != source.display().to_string() {
            differences.push(format!("{file}: `{name}` comes from {}", tool["source"]));
        }
        let want = strict(&expected["input_schema"]);
        if tool["parameters"] != want {
            differences.push(format!("{file}: parameters\n    want {want}\n    got  {}", tool["parameters"]));
        }
    }
    for tool in user_tools.values() {
        let source = tool["source"].as_str().unwrap();
        if source.contains("/built-in/") {
            differences.push(format!("a pre-built file is listed as a user tool: {source}"));
        }
    }
    for entry in entries().iter().filter(|e| e["codeact"]["verdict"] == "skipped") {
        let file = entry["file"].as_str().unwrap().strip_prefix("tools/").unwrap();
        if out.stderr.contains(file) || out.stdout.contains(&tools_dir.join(file).display().to_string()) {
            differences.push(format!("skipped file {file} is looked at: {}", out.stderr));
        }
    }
    assert_no_differences("discover", &differences);
}

/// Every file under `dir`, relative to `base`, hidden ones included.
fn all_files(dir: &Path, base: &Path, out: &mut BTreeSet<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            all_files(&path, base, out);
        } else {
            out.insert(path.strip_prefix(base).unwrap().display().to_string());
        }
    }
}

#[test]
fn the_corpus_lists_each_of_its_files_once_with_known_rules_and_extensions() {
    let entries = entries();
    let listed: Vec<String> = entries.iter().map(|e| e["file"].as_str().unwrap().to_owned()).collect();
    let unique: BTreeSet<String> = listed.iter().cloned().collect();
    assert_eq!(unique.len(), listed.len(), "a file is listed twice");
    let mut present = BTreeSet::new();
    all_files(&agent_folder().join("tools"), &agent_folder(), &mut present);
    assert_eq!(unique, present, "expected.json vs the files of my-agent/tools/");

    let mut used = BTreeSet::new();
    for entry in &entries {
        let file = entry["file"].as_str().unwrap();
        let codeact = &entry["codeact"];
        for rule in strings(&codeact["rules"]) {
            assert!(RULES.contains(&rule.as_str()), "{file}: unknown rule `{rule}`");
        }
        for warning in strings(&codeact["warnings"]) {
            assert!(WARNINGS.contains(&warning.as_str()), "{file}: unknown warning `{warning}`");
        }
        let (ours, theirs) = (codeact["verdict"].as_str().unwrap(), entry["agentschema"]["verdict"].as_str().unwrap());
        let extension = entry.get("extension").and_then(Value::as_str);
        assert!(
            ours == theirs || extension.is_some(),
            "{file}: codeact says {ours}, agentschema {theirs}, and no extension explains it"
        );
        used.extend(extension.map(str::to_owned));
    }
    let calls = fixture_json("calls.json");
    for call in calls["calls"].as_array().unwrap() {
        let same_kind = (call["agentschema"]["isError"] == true) == call["codeact"].get("error").is_some();
        assert!(same_kind || call.get("extension").is_some(), "{call}: ok vs error, and no extension explains it");
        used.extend(call.get("extension").and_then(Value::as_str).map(str::to_owned));
    }
    used.extend(fixture_json("schemas.json")["extension"].as_str().map(str::to_owned));

    let table: BTreeSet<String> = EXTENSIONS.iter().map(|(id, _)| (*id).to_owned()).collect();
    assert_eq!(table.len(), EXTENSIONS.len(), "an extension is in the table twice");
    assert_eq!(used, table, "the extensions the fixtures use vs the table");
}
