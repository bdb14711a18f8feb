//! `auto` runs Monty first, and a program Monty cannot run (it does not compile it, or fails on
//! one of its own limits) again from the start on CPython — but only while the program has called
//! nothing but tools that read. `--backend monty` never falls back.

use serde_json::{Value, json};

use crate::support::TestEnv;

/// Each spelling of what Monty lacks and CPython has, with what CPython prints for it.
const BEYOND_MONTY: &[(&str, &str)] = &[
    // Syntax Monty does not compile.
    ("class Failed(Exception):\n    pass\nprint('inherits')", "inherits\n"),
    ("def numbers():\n    yield 1\n    yield 2\nprint(sum(numbers()))", "3\n"),
    ("x = [1, 2]\ndel x[0]\nprint(x)", "[2]\n"),
    // A module Monty does not have.
    ("import textwrap\nprint(textwrap.wrap('a b c d', width=3))", "['a b', 'c d']\n"),
    ("from heapq import nsmallest\nprint(nsmallest(1, [3, 1]))", "[1]\n"),
    // An attribute of a built-in type, and one of a module.
    ("print(sorted(['b', 'A'], key=str.lower))", "['A', 'b']\n"),
];

fn with_cpython() -> TestEnv {
    TestEnv::new().with_wasm()
}

#[test]
#[ignore = "needs the CPython guest wheels in target/guest-wheels (.ci/run fetches them)"]
fn what_monty_cannot_run_runs_on_cpython_and_says_so() {
    let env = with_cpython();
    for (code, printed) in BEYOND_MONTY {
        let (status, value) = env.run_json(code, &[]);
        assert_eq!((status, value["stdout"].as_str()), (0, Some(*printed)), "{code}\n{value}");
        assert_eq!(value["backend"], "wasm", "{code}");
        assert_eq!(value["fallback"]["from"], "monty", "{code}");
        assert!(value["fallback"]["because"].as_str().is_some_and(|why| !why.is_empty()), "{value}");
        // The same program, held to Monty, fails.
        let (status, value) = env.run_json(code, &["--backend", "monty"]);
        assert_eq!((status, &value["backend"]), (1, &json!("monty")), "{code}");
        assert_eq!(value["fallback"], Value::Null);
    }
}

#[test]
#[ignore = "needs the CPython guest wheels in target/guest-wheels (.ci/run fetches them)"]
fn reads_before_the_failure_are_made_again_and_their_output_is_printed_once() {
    let env = with_cpython().file("a.txt", "hello\n");
    let code = "print('start')\ntext = view(path='a.txt')\nn = len(glob(pattern='*.txt'))\n\
                import textwrap\nprint(textwrap.indent(text, '> '), n)";
    let (status, value) = env.run_json(code, &[]);
    assert_eq!(status, 0, "{value}");
    assert_eq!(value["stdout"], "start\n> hello\n 1\n");
    assert_eq!(value["backend"], "wasm");
    assert_eq!(value["tool_calls"], 4, "both runs' calls count: {value}");
}

#[test]
#[ignore = "needs the CPython guest wheels in target/guest-wheels (.ci/run fetches them)"]
fn a_program_that_may_have_changed_something_is_never_run_again() {
    let attempts = [
        ("create(path='made.txt', file_text='x')", "create"),
        ("edit(path='a.txt', old_str='hello', new_str='hello!')", "edit"),
        ("bash(command='echo run >> ran.txt')", "bash"),
        ("sql(query='CREATE TABLE t (x)')", "sql"),
        ("web_fetch(url='http://127.0.0.1:9/', method='POST')", "web_fetch"),
    ];
    for (call, tool) in attempts {
        let env = with_cpython().file("a.txt", "hello\n");
        // Monty compiles the whole program before it runs any of it: what it lacks is met at
        // run time, after the call.
        let code = format!("try:\n    {call}\nexcept Exception:\n    pass\nimport textwrap\n");
        let (status, value) = env.run_json(&code, &[]);
        assert_eq!((status, &value["backend"]), (1, &json!("monty")), "{code}\n{value}");
        let traceback = value["error"]["traceback"].as_str().unwrap();
        assert!(
            traceback.contains(&format!("it had already called {tool}(), which may have changed something"))
                && traceback.contains("--backend wasm"),
            "{traceback}"
        );
    }
    // What ran once is there once.
    let env = with_cpython().file("a.txt", "hello\n");
    let (status, _) = env.run_json("bash(command='echo run >> ran.txt')\nimport textwrap\n", &[]);
    assert_eq!(status, 1);
    assert_eq!(std::fs::read_to_string(env.workspace().join("ran.txt")).unwrap(), "run\n");
    let (status, _) =
        env.run_json("edit(path='a.txt', old_str='hello', new_str='hello!')\nprint(str.lower('A'))\n", &[]);
    assert_eq!(status, 1);
    assert_eq!(std::fs::read_to_string(env.workspace().join("a.txt")).unwrap(), "hello!\n");
}

#[test]
#[ignore = "needs the CPython guest wheels in target/guest-wheels (.ci/run fetches them)"]
fn a_user_tool_counts_as_a_change() {
    let env = with_cpython()
        .file(
            ".codeact/tools/shout.md",
            "---\ntype: custom\nname: shout\ndescription: Upper-cases text.\n---\n# shout\n\n\
             ## Input Schema\n| Name | Type | Description | Required |\n|---|---|---|---|\n\
             | `text` | `string` | Text | `true` |\n\n## Code\n```python\ndef run(text):\n    return text.upper()\n```\n",
        )
        .trusted();
    let (status, value) = env.run_json("print(shout(text='a'))\nimport textwrap\n", &[]);
    assert_eq!(value["stdout"], "A\n", "{value}");
    assert_eq!((status, &value["backend"]), (1, &json!("monty")), "{value}");
    assert!(value["error"]["traceback"].as_str().unwrap().contains("already called shout()"), "{value}");
}

#[test]
#[ignore = "needs the CPython guest wheels in target/guest-wheels (.ci/run fetches them)"]
fn syntax_monty_lacks_falls_back_even_after_a_write_in_the_text_since_nothing_ran() {
    let env = with_cpython();
    let (status, value) =
        env.run_json("create(path='made.txt', file_text='x')\nclass Failed(Exception):\n    pass\n", &[]);
    assert_eq!((status, &value["backend"]), (0, &json!("wasm")), "{value}");
    assert_eq!(std::fs::read_to_string(env.workspace().join("made.txt")).unwrap(), "x");
}

#[test]
#[ignore = "needs the CPython guest wheels in target/guest-wheels (.ci/run fetches them)"]
fn an_error_of_the_program_itself_is_not_run_again() {
    let env = with_cpython();
    for (code, kind) in [
        ("print('a')\n1 / 0", "ZeroDivisionError"),
        ("d = {}\nd['missing']", "KeyError"),
        ("undefined_name", "NameError"),
        ("class Plain:\n    pass\nPlain().missing", "AttributeError"),
        ("raise ValueError('no')", "ValueError"),
    ] {
        let (status, value) = env.run_json(code, &[]);
        assert_eq!((status, &value["backend"], &value["error"]["type"]), (1, &json!("monty"), &json!(kind)), "{code}");
        assert_eq!(value["fallback"], Value::Null);
    }
}

#[test]
fn without_cpython_monty_s_error_says_what_would_run_it_and_the_user_hears_it_once() {
    let env = TestEnv::new().env("CODEACT_GUEST_INSTALL", "suggest");
    let code = "class Failed(Exception):\n    pass\n";
    let first = env.run(&["run"], code);
    assert_eq!(first.code, 1);
    assert!(first.stderr.contains("NotImplementedError"), "{}", first.stderr);
    assert!(
        first.stderr.contains("CPython, which would, is not installed (`codeact guest install` installs it)"),
        "{}",
        first.stderr
    );
    let said = "a program Monty cannot run would run on CPython";
    assert_eq!(first.stderr.matches(said).count(), 1, "{}", first.stderr);
    let second = env.run(&["run"], code);
    assert!(second.stderr.contains("`codeact guest install` installs it"), "{}", second.stderr);
    assert!(!second.stderr.contains(said), "said once: {}", second.stderr);
    // Held to Monty, there is nothing to say.
    let strict = TestEnv::new().env("CODEACT_GUEST_INSTALL", "suggest").run(&["run", "--backend", "monty"], code);
    assert_eq!(strict.code, 1);
    assert!(!strict.stderr.contains("codeact:"), "{}", strict.stderr);
    // A user who said never hears nothing; the model still reads what would run it.
    let never = TestEnv::new().env("CODEACT_GUEST_INSTALL", "never").run(&["run"], code);
    assert!(never.stderr.contains("`codeact guest install` installs it"), "{}", never.stderr);
    assert!(!never.stderr.contains(said), "{}", never.stderr);
}

/// With `guest_install: "auto"`, the first program that needs CPython starts installing it in
/// the background, and says so; the run itself does not wait for it. The download goes to a
/// proxy that refuses it, so the install fails at once, into its log.
#[test]
fn with_auto_install_a_program_that_needs_cpython_starts_installing_it() {
    let env = TestEnv::new()
        .env("CODEACT_GUEST_INSTALL", "")
        .env("HTTPS_PROXY", "http://127.0.0.1:9")
        .env("https_proxy", "http://127.0.0.1:9")
        .user_config(r#"{"guest_install": "auto"}"#);
    let code = "import textwrap\nprint(textwrap.wrap('a b', 1))";
    let out = env.run(&["run"], code);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.contains("codeact: Monty cannot run this program"), "{}", out.stderr);
    assert!(out.stderr.contains("ModuleNotFoundError"), "{}", out.stderr);
    assert!(out.stderr.contains("is being installed in the background (`codeact guest install`)"), "{}", out.stderr);
    let log = env.home().join(".local/state/codeact/guest-install.log");
    assert!(out.stderr.contains(&log.display().to_string()), "{}", out.stderr);
    // The install runs on after the run: wait (generously) for it to give up.
    let waited = std::time::Instant::now();
    let text = loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if text.contains("error:") || waited.elapsed() > std::time::Duration::from_secs(120) {
            break text;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert!(text.contains("installing CPython") && text.contains("from PyPI"), "{text}");
    assert!(text.contains("error:"), "{text}");
    let mode = std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&log).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600);
    // A run soon after a failed install starts no other, and says so; the log is as it was.
    let again = env.run(&["run"], code);
    assert!(again.stderr.contains("could not be installed in the background lately"), "{}", again.stderr);
    assert_eq!(std::fs::read_to_string(&log).unwrap_or_default(), text);
    // While an install holds the lock, none other starts either.
    let lock = std::fs::File::open(log.with_file_name("guest-install.lock")).unwrap();
    lock.lock().unwrap();
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options().write(true).open(&log).unwrap().set_modified(old).unwrap();
    let held = env.run(&["run"], code);
    assert!(held.stderr.contains("is being installed in the background"), "{}", held.stderr);
    assert_eq!(std::fs::read_to_string(&log).unwrap_or_default(), text);
    drop(lock);
    // A log that is a link is not written through.
    let elsewhere = env.outside().join("elsewhere.txt");
    std::fs::write(&elsewhere, "kept\n").unwrap();
    std::fs::File::options().write(true).open(&elsewhere).unwrap().set_modified(old).unwrap();
    std::fs::remove_file(&log).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &log).unwrap();
    let linked = env.run(&["run"], code);
    assert!(linked.stderr.contains("could not be installed in the background ("), "{}", linked.stderr);
    assert_eq!(std::fs::read_to_string(&elsewhere).unwrap(), "kept\n");
    // A project cannot ask for it without the user's trust: it only ever restrains the setting.
    let project =
        TestEnv::new().env("CODEACT_GUEST_INSTALL", "").file(".codeact/config.json", r#"{"guest_install": "auto"}"#);
    let out = project.run(&["run"], code);
    assert!(!out.stderr.contains("in the background"), "{}", out.stderr);
    assert!(out.stderr.contains(".codeact/config.json (guest_install)"), "{}", out.stderr);
}

/// What Monty runs with another answer than CPython's, raising nothing (its `strptime` rejects
/// formats CPython parses, which a program catching `ValueError` takes for bad data), goes to
/// CPython from the start on `auto`, in any spelling that names it.
#[test]
#[ignore = "needs the CPython guest wheels in target/guest-wheels (.ci/run fetches them)"]
fn what_monty_does_differently_runs_on_cpython_from_the_start() {
    let env = with_cpython().file("times.txt", "08:58:02,117\nnot a time\n09:03:13,310\n");
    for code in [
        "from datetime import datetime\nparsed = []\nfor line in view(path='times.txt').splitlines():\n    \
         try:\n        parsed.append(datetime.strptime(line, '%H:%M:%S,%f').time())\n    except ValueError:\n        \
         pass\nprint(parsed)",
        "import datetime as dt\nparse = dt.datetime.strptime\nprint(parse('09:03', '%H:%M').minute)",
    ] {
        let (status, value) = env.run_json(code, &[]);
        assert_eq!(status, 0, "{value}");
        assert_eq!(value["backend"], "wasm", "{value}");
        assert!(value["fallback"]["because"].as_str().is_some_and(|why| why.contains("strptime")), "{value}");
        // Held to Monty, it runs there, with Monty's answer.
        let (_, value) = env.run_json(code, &["--backend", "monty"]);
        assert_eq!(value["backend"], "monty");
    }
    let (_, value) = env.run_json(
        "from datetime import datetime\nparsed = []\nfor line in view(path='times.txt').splitlines():\n    \
         try:\n        parsed.append(str(datetime.strptime(line, '%H:%M:%S,%f').time()))\n    except ValueError:\n        \
         pass\nprint(parsed)",
        &[],
    );
    assert_eq!(value["stdout"], "['08:58:02.117000', '09:03:13.310000']\n", "{value}");
    assert_eq!(value["tool_calls"], 1, "the program ran once: {value}");
}

/// Without CPython, such a program runs on Monty as before.
#[test]
fn without_cpython_what_monty_does_differently_still_runs_on_monty() {
    let (status, value) = TestEnv::new()
        .run_json("from datetime import datetime\nprint(datetime.strptime('2024-03-14', '%Y-%m-%d').day)", &[]);
    assert_eq!((status, &value["backend"], &value["stdout"]), (0, &json!("monty"), &json!("14\n")), "{value}");
    assert_eq!(value["fallback"], Value::Null);
}

/// The tool-call budget holds for both runs together: the reads Monty made count when CPython
/// makes them again.
#[test]
#[ignore = "needs the CPython guest wheels in target/guest-wheels (.ci/run fetches them)"]
fn the_tool_call_budget_counts_both_runs() {
    let env = with_cpython().file("a.txt", "hello\n");
    let code = "for _ in range(2):\n    view(path='a.txt')\nimport textwrap\nprint('done')";
    let (status, value) = env.run_json(code, &["--max-tool-calls", "3"]);
    assert_eq!((status, &value["backend"]), (1, &json!("wasm")), "{value}");
    assert!(value["error"]["message"].as_str().is_some_and(|m| m.contains("tool-call")), "{value}");
    let (status, value) = env.run_json(code, &["--max-tool-calls", "4"]);
    assert_eq!((status, &value["stdout"], &value["tool_calls"]), (0, &json!("done\n"), &json!(4)), "{value}");
}
