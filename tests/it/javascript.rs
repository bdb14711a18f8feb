//! JavaScript tools (a `javascript` code block) run as agentschema 0.2 runs them: a `CommonJS`
//! module of its own `.md` file, `module.exports` called with the input, the result sent as
//! text or JSON, a thrown error's message only, and what the tool prints kept out of the result.
//! Every test needs `node`, linked into each test's `PATH` when the machine has it.

use pretty_assertions::assert_eq;

use crate::support::TestEnv;

/// A tool file `name` with these input-table rows (none: no `## Input Schema`) and this code.
fn tool_file(name: &str, rows: &[&str], code: &str) -> String {
    let schema = if rows.is_empty() {
        String::new()
    } else {
        format!(
            "## Input Schema\n\n| Name | Type | Description | Required |\n|---|---|---|---|\n{}\n\n",
            rows.join("\n")
        )
    };
    format!(
        "---\ntype: custom\nname: {name}\ndescription: A JavaScript tool for the tests.\n---\n\n{schema}## Code\n\n\
         ```javascript\n{code}\n```\n"
    )
}

/// A workspace with the project tool `name` (no inputs), trusted.
fn with_tool(name: &str, code: &str) -> TestEnv {
    TestEnv::new().file(&format!(".codeact/tools/{name}.md"), tool_file(name, &[], code)).trusted()
}

/// The `(type, message)` of the exception calling the no-input tool `name` raises.
fn error_of_tool(name: &str, code: &str) -> (String, String) {
    with_tool(name, code).error_of(&format!("{name}()"))
}

fn error(kind: &str, message: &str) -> (String, String) {
    (kind.to_owned(), message.to_owned())
}

#[test]
#[ignore = "needs node (the CI machine has it)"]
fn require_finds_a_package_in_the_agent_folders_node_modules() {
    let env = TestEnv::new()
        .file(".codeact/node_modules/shout-case/package.json", r#"{"name": "shout-case", "main": "shout.js"}"#)
        .file(".codeact/node_modules/shout-case/shout.js", "module.exports = (s) => s.toUpperCase() + '!';")
        .file(
            ".codeact/tools/shout.md",
            tool_file(
                "shout",
                &["| `text` | `string` | What to shout | `true` |"],
                "const shout = require('shout-case');\nmodule.exports = async ({ text }) => shout(text);",
            ),
        )
        .trusted();
    assert_eq!(env.stdout_of("print(shout(text='hey'))"), "HEY!\n");
}

#[test]
#[ignore = "needs node (the CI machine has it)"]
fn require_of_a_relative_file_is_relative_to_the_tool_file() {
    let env = TestEnv::new()
        .file(".codeact/tools/greetings/words.js", "module.exports = { hello: 'hello from a helper' };")
        .file(
            ".codeact/tools/greetings/greet.md",
            tool_file("greet", &[], "const { hello } = require('./words.js');\nmodule.exports = () => hello;"),
        )
        .trusted();
    assert_eq!(env.stdout_of("print(greet())"), "hello from a helper\n");
}

#[test]
#[ignore = "needs node (the CI machine has it)"]
fn filename_and_dirname_name_the_tool_file_itself() {
    let env = with_tool("where", "module.exports = () => ({ file: __filename, dir: __dirname });");
    let tools = env.workspace().join(".codeact/tools");
    let expected = format!("{}\n{}\n", tools.join("where.md").display(), tools.display());
    assert_eq!(env.stdout_of("found = where()\nprint(found['file'])\nprint(found['dir'])"), expected);
}

#[test]
#[ignore = "needs node (the CI machine has it)"]
fn the_tool_runs_in_the_workspace() {
    let env = with_tool("cwd", "module.exports = () => process.cwd();");
    assert_eq!(env.stdout_of("print(cwd())"), format!("{}\n", env.workspace().display()));
}

#[test]
#[ignore = "needs node (the CI machine has it)"]
fn what_a_tool_prints_goes_to_codeacts_stderr_never_into_its_result() {
    let env = with_tool(
        "chatty",
        "const fs = require('fs');\n\
         module.exports = async () => {\n\
           console.log('from console.log');\n\
           process.stdout.write('from process.stdout.write\\n');\n\
           console.error('from console.error');\n\
           fs.writeSync(1, 'from fd 1\\n');\n\
           return { n: 1 };\n\
         };",
    );
    let out = env.run_code("result = chatty()\nprint(type(result).__name__, result)").code(0);
    assert_eq!(
        (out.stdout.as_str(), out.stderr.as_str()),
        (
            "dict {'n': 1}\n",
            // console and process.stdout in order on stderr; a raw write to fd 1 after them.
            "from console.log\nfrom process.stdout.write\nfrom console.error\nfrom fd 1\n"
        )
    );
}

#[test]
#[ignore = "needs node (the CI machine has it)"]
fn what_a_tool_prints_is_capped_on_stderr() {
    let env = with_tool("loud", "module.exports = () => { process.stdout.write('x'.repeat(20000)); return 'done'; };");
    let out = env.run_code("print(loud())").code(0).stdout("done\n");
    let marker = "\n[… 11808 more bytes loud() printed were dropped …]\n";
    assert_eq!(out.stderr, format!("{}{marker}", "x".repeat(8192)));
}

#[test]
#[ignore = "needs node (the CI machine has it)"]
fn results_come_back_as_agentschema_sends_them() {
    let code = "const results = {\n\
        string: 'text', object: { a: [1, 2], b: { c: null } }, number: 42, float: 1.5, boolean: true,\n\
        array: [1, 'x'], null: null, undefined: undefined, function: () => 1, nan: NaN,\n\
        date: new Date(Date.UTC(2020, 0, 1)), json_looking_string: '{\"a\": 1}',\n\
      };\n\
      module.exports = async ({ kind }) => results[kind];";
    let env = TestEnv::new()
        .file(".codeact/tools/kinds.md", tool_file("kinds", &["| `kind` | `string` | Which result | `true` |"], code))
        .trusted();
    let program = "for kind in ['string', 'object', 'number', 'float', 'boolean', 'array', 'null', 'undefined', \
                   'function', 'nan', 'date', 'json_looking_string']:\n    print(kind, repr(kinds(kind=kind)))";
    assert_eq!(
        env.stdout_of(program),
        "string 'text'\n\
         object {'a': [1, 2], 'b': {'c': None}}\n\
         number 42\n\
         float 1.5\n\
         boolean True\n\
         array [1, 'x']\n\
         null None\n\
         undefined ''\n\
         function ''\n\
         nan None\n\
         date '2020-01-01T00:00:00.000Z'\n\
         json_looking_string '{\"a\": 1}'\n"
    );
}

#[test]
#[ignore = "needs node (the CI machine has it)"]
fn a_plain_function_that_is_not_async_works() {
    let env = TestEnv::new()
        .file(
            ".codeact/tools/add.md",
            tool_file(
                "add",
                &["| `a` | `number` | First | `true` |", "| `b` | `number` | Second | `true` |"],
                "module.exports = function ({ a, b }) { return a + b; };",
            ),
        )
        .trusted();
    assert_eq!(env.stdout_of("print(add(a=2, b=3))"), "5\n");
}

#[test]
#[ignore = "needs node (the CI machine has it)"]
fn a_thrown_error_is_a_runtime_error_with_its_message_alone() {
    assert_eq!(
        error_of_tool("throws", "module.exports = async () => { throw new Error('boom'); };"),
        error("RuntimeError", "boom")
    );
}

#[test]
#[ignore = "needs node (the CI machine has it)"]
fn a_thrown_string_and_a_rejected_promise_are_runtime_errors_too() {
    assert_eq!(
        error_of_tool("throws_string", "module.exports = () => { throw 'oops'; };"),
        error("RuntimeError", "oops")
    );
    assert_eq!(
        error_of_tool("rejects", "module.exports = () => Promise.reject(new TypeError('  nope  '));"),
        error("RuntimeError", "nope")
    );
}

#[test]
#[ignore = "needs node (the CI machine has it)"]
fn a_bigint_result_fails_as_json_stringify_fails() {
    assert_eq!(
        error_of_tool("big", "module.exports = async () => 10n ** 30n;"),
        error("RuntimeError", "Do not know how to serialize a BigInt")
    );
}

#[test]
#[ignore = "needs node (the CI machine has it)"]
fn module_exports_that_is_not_a_function_is_named_by_its_file() {
    assert_eq!(
        error_of_tool("notfn", "module.exports = { run: async () => 1 };"),
        error("RuntimeError", ".codeact/tools/notfn.md: module.exports must be a function")
    );
}

#[test]
#[ignore = "needs node (the CI machine has it)"]
fn code_that_does_not_parse_fails_at_run_time_with_v8s_message() {
    assert_eq!(
        error_of_tool("esm", "export default async () => 'esm';"),
        error("RuntimeError", "Unexpected token 'export'")
    );
    assert_eq!(
        error_of_tool("tla", "const p = await Promise.resolve('x');\nmodule.exports = async () => p;"),
        error("RuntimeError", "await is only valid in async functions and the top level bodies of modules")
    );
}

#[test]
#[ignore = "needs node (the CI machine has it)"]
fn a_tool_that_leaves_a_timer_running_still_returns_at_once() {
    let env = with_tool("ticking", "module.exports = () => { setInterval(() => {}, 1000); return 'back'; };");
    let started = std::time::Instant::now();
    assert_eq!(env.stdout_of("print(ticking())"), "back\n");
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "took {:?}", started.elapsed());
}

#[test]
#[ignore = "needs node (the CI machine has it)"]
fn node_ending_without_an_answer_is_a_runtime_error_naming_the_tool() {
    assert_eq!(
        error_of_tool("quits", "module.exports = () => { console.error('bye'); process.exit(3); };"),
        error("RuntimeError", "quits() failed (exited with status 3): node ended without an answer:\nbye")
    );
}

#[test]
#[ignore = "needs node (the CI machine has it)"]
fn a_promise_that_can_never_settle_is_an_error_at_once() {
    assert_eq!(
        error_of_tool("stuck", "module.exports = () => new Promise(() => {});"),
        error("RuntimeError", "the tool's promise never settled")
    );
}

#[test]
#[ignore = "needs node (the CI machine has it)"]
fn a_tool_that_outlasts_the_run_is_stopped() {
    let env = with_tool("slow", "module.exports = () => new Promise((done) => setTimeout(done, 60000));");
    let (status, value) = env.run_json("slow()", &["--timeout", "2"]);
    assert_eq!(
        (status, value["error"]["type"].as_str(), value["error"]["message"].as_str()),
        (1, Some("TimeoutError"), Some("time limit of 2s exceeded (raise it with --timeout)"))
    );
}

/// A tool loads modules only from its tools folder, the `node_modules/` codeact write-protects
/// for it, or outside the workspace: nothing it loads is a file the program may have written.
#[test]
#[ignore = "needs node (the CI machine has it)"]
fn a_tool_loads_no_module_the_program_could_have_written() {
    let helper = "module.exports = (s) => s + ' from a writable file';";
    let code = |asked: &str| format!("const h = require('{asked}');\nmodule.exports = () => h('x');");
    let refused = |env: TestEnv, asked: &str, leads_to: &str| {
        let env = env.file(".codeact/tools/t.md", tool_file("t", &[], &code(asked))).trusted();
        let (kind, message) = env.error_of("t()");
        assert_eq!(kind, "RuntimeError", "{asked}: {message}");
        assert!(
            message.contains(&format!("cannot load \"{asked}\": it leads to {leads_to}, a file of the workspace")),
            "{message}"
        );
    };
    // npm's workspace link into the project, from the packages codeact protects.
    refused(
        TestEnv::new().file("lib/helper/index.js", helper).symlink("../lib/helper", "node_modules/helper"),
        "helper",
        "lib/helper/index.js",
    );
    // A package whose `main` leads out of node_modules.
    refused(
        TestEnv::new().file("lib/helper/index.js", helper).file(
            ".codeact/node_modules/helper/package.json",
            r#"{"name": "helper", "main": "../../../lib/helper/index.js"}"#,
        ),
        "helper",
        "lib/helper/index.js",
    );
    // A relative path out of the tools folder, and node_modules itself a link into the project.
    refused(TestEnv::new().file("src/util.js", helper), "../../src/util.js", "src/util.js");
    refused(
        TestEnv::new().file("shared/helper/index.js", helper).symlink("../shared", ".codeact/node_modules"),
        "helper",
        "shared/helper/index.js",
    );
    // A package outside the workspace is the user's, and loads.
    let env = TestEnv::new().outside_file("pkg/index.js", helper);
    let outside = env.outside().join("pkg/index.js").display().to_string();
    let env = env.file(".codeact/tools/t.md", tool_file("t", &[], &code(&outside))).trusted();
    assert_eq!(env.stdout_of("print(t())"), "x from a writable file\n");
}

/// An ES module a tool `require()`s imports what the guard may not see on every Node: what it
/// imports from the workspace never runs (the call fails instead).
#[test]
#[ignore = "needs node (the CI machine has it)"]
fn an_es_module_a_tool_requires_imports_nothing_the_program_could_have_written() {
    let env = TestEnv::new();
    let marker = env.outside().join("helper-ran");
    let helper = format!(
        "import fs from 'node:fs';\nfs.writeFileSync({:?}, 'ran');\nexport const up = (s) => s;\n",
        marker.display().to_string()
    );
    // No `"type": "module"`, and no `import` at the start of a line: Node knows it by its syntax.
    let env = env
        .file(".codeact/node_modules/a/package.json", r#"{"name": "a", "main": "index.js"}"#)
        .file(
            ".codeact/node_modules/a/index.js",
            "/**/import { up } from '../../../lib/h.mjs'; export const title = (s) => up(s);\n",
        )
        .file("lib/h.mjs", helper)
        .file(
            ".codeact/tools/t.md",
            tool_file("t", &[], "const { title } = require('a');\nmodule.exports = () => title('x');"),
        )
        .trusted();
    let (kind, message) = env.error_of("t()");
    assert_eq!(kind, "RuntimeError", "{message}");
    assert!(!marker.exists(), "the workspace's module ran: {message}");
}
