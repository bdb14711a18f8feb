//! What the hooks decide: classify the call, then apply the mode to the session's [`Session`].
//!
//! - `off`: allow everything.
//! - `nudge` counts *rounds* of read-only calls per session: the calls of one parallel batch
//!   share the payload's timestamp and count once, and a batch already in flight is never
//!   split. After the Nth round in a row the post-tool-use hook adds a short piece of advice to
//!   the tool's result (the gentle first step); a model that goes on with another read-only
//!   round has that round denied, each call with the codeact program that does exactly what it
//!   asked. A codeact run, a skill load or any other tool ends the streak, and once the model
//!   has run codeact in the session nudge says nothing more: it knows the way.
//! - `exclusive` allows codeact runs and skill loads, and — as the instructions say — one
//!   direct read or edit (`view`, `edit`, `create`) between codeact runs; a second direct call,
//!   any search, shell command or other tool is denied with its codeact program. A shell codeact
//!   run whose workspace or `--file` would be outside the project (`commands::hook::confine`)
//!   is denied too, saying how to run it inside: the model does not choose the sandbox. A
//!   payload the hook cannot read (over [`MAX_PAYLOAD`] or not a tool call) is denied too: the
//!   user asked for enforcement, and a call that cannot be checked cannot be shown to be
//!   codeact. The other modes let such payloads through.

use super::mode::Mode;
use super::payload::{MAX_PAYLOAD, ToolUse, Unreadable};
use std::path::Path;

use super::shell::{Dialect, Invocation, Program, posix_word, powershell_word};
use super::state::Session;
use super::suggest::{self, Runner};
use crate::route::MCP_RUN_TOOLS;

/// Tools that only read, by the names Copilot CLI and other hosts use (Claude Code's tools are
/// renamed to Copilot CLI's as the payload is read).
const READ_ONLY_TOOLS: &[&str] = &["view", "glob", "grep", "rg", "read_file", "file_search", "list_dir"];

/// Tools that read or write one file: what the instructions tell a model to call directly for
/// a single read or edit.
const SINGLE_FILE_TOOLS: &[&str] = &["view", "read_file", "edit", "create"];

/// Tools that load skills or describe tools, and do nothing in the workspace: the hooks let them
/// through in every mode, as they do skills (Claude Code's `ToolSearch` loads the definition of
/// codeact's own `run` tool; `describe` is codeact's).
const NEUTRAL_TOOLS: &[&str] = &[
    "skill",
    "Skill",
    "ToolSearch",
    "codeact-describe",
    "mcp__codeact__describe",
    "mcp__plugin_codeact_codeact__describe",
];

/// What kind of call this is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    Codeact,
    /// A codeact run through the shell whose workspace or program file is outside the project.
    Outside,
    ReadOnly,
    Skill,
    Other,
}

/// The hook's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Decision {
    /// Print nothing: the user's own approval flow goes on.
    Allow,
    Deny {
        reason: String,
    },
}

/// Classifies a call; `identify` says what a shell command's program word names in the shell's
/// dialect (the shells look programs up differently), and `within` whether a codeact run
/// through the shell stays in the project. A `bash` or `shell` command is read as POSIX shell,
/// a `powershell` one as PowerShell ([`Dialect::of_tool`]).
pub(crate) fn classify(
    call: &ToolUse,
    identify: impl Fn(Dialect, &str) -> Program,
    within: impl Fn(&Invocation) -> bool,
) -> Class {
    let tool = call.tool_name.as_str();
    if let Some(dialect) = Dialect::of_tool(tool) {
        let command = call.args.str("command").unwrap_or_default();
        if let Some(run) = dialect.codeact_run(command, |word| identify(dialect, word)) {
            if within(&run) { Class::Codeact } else { Class::Outside }
        } else if dialect.is_read_only(command) {
            Class::ReadOnly
        } else {
            Class::Other
        }
    } else if MCP_RUN_TOOLS.contains(&tool) {
        Class::Codeact
    } else if READ_ONLY_TOOLS.contains(&tool) {
        Class::ReadOnly
    } else if NEUTRAL_TOOLS.contains(&tool) {
        Class::Skill
    } else {
        Class::Other
    }
}

/// What the pre-tool-use hook needs besides the call.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rules<'a> {
    pub(crate) mode: Mode,
    /// Read-only rounds in a row before nudge advises.
    pub(crate) nudge_after: u32,
    /// How suggestions tell the model to run a program.
    pub(crate) runner: Runner<'a>,
    /// The project root, which a codeact run may not leave.
    pub(crate) root: &'a Path,
}

/// The pre-tool-use decision for a call of `class`, and the session's new state.
#[must_use]
pub(crate) fn decide(rules: Rules<'_>, class: Class, session: Session, call: &ToolUse) -> (Decision, Session) {
    match (rules.mode, class) {
        (Mode::Off, _) => (Decision::Allow, session),
        (Mode::Nudge | Mode::Exclusive, Class::Codeact) => {
            (Decision::Allow, Session { used_codeact: true, ..Session::default() })
        }
        (Mode::Nudge | Mode::Exclusive, Class::Skill) | (Mode::Nudge, Class::Other | Class::Outside) => {
            (Decision::Allow, Session { used_codeact: session.used_codeact, ..Session::default() })
        }
        (Mode::Nudge, Class::ReadOnly) => nudge(rules, session, call),
        (Mode::Exclusive, Class::Outside) => (deny_outside(rules, call), session),
        (Mode::Exclusive, Class::ReadOnly | Class::Other) => exclusive(rules, session, call),
    }
}

fn nudge(rules: Rules<'_>, session: Session, call: &ToolUse) -> (Decision, Session) {
    let same_batch = call.timestamp.is_some_and(|t| t == session.batch);
    if same_batch {
        // The rest of a batch already in flight: it goes as its first call went.
        let decision = if session.denying { deny_nudge(rules, call) } else { Decision::Allow };
        return (decision, session);
    }
    let rounds = session.rounds.saturating_add(1);
    let next = Session { rounds, batch: call.timestamp.unwrap_or(0), denying: false, ..session };
    if !session.used_codeact && rounds > rules.nudge_after {
        // The streak starts again: a model that neither runs the program nor stops reading is
        // advised, then denied, once more.
        (deny_nudge(rules, call), Session { rounds: 0, advised: false, denying: true, ..next })
    } else {
        (Decision::Allow, next)
    }
}

fn deny_nudge(rules: Rules<'_>, call: &ToolUse) -> Decision {
    let reason = format!(
        "codeact: {} rounds of read-only calls in a row. Do this and the rest of the exploration in one \
         program (tools are Python functions; print only what you need):\n\n{}",
        rules.nudge_after.saturating_add(1),
        suggest::command(call, rules.runner)
    );
    Decision::Deny { reason }
}

fn exclusive(rules: Rules<'_>, session: Session, call: &ToolUse) -> (Decision, Session) {
    let single = SINGLE_FILE_TOOLS.contains(&call.tool_name.as_str());
    if single && session.rounds == 0 {
        return (Decision::Allow, Session { rounds: 1, batch: call.timestamp.unwrap_or(0), ..session });
    }
    let why = if single {
        "a second direct call in a row is not allowed (one read or edit between programs)".to_owned()
    } else {
        format!("`{}` is not available", call.tool_name)
    };
    let reason = format!(
        "codeact exclusive mode: {why}; run it as a codeact program:\n\n{}",
        suggest::command(call, rules.runner)
    );
    (Decision::Deny { reason }, session)
}

/// The denial of a codeact run that would leave the project, with how to run it inside: after a
/// `cd` in a POSIX shell, with `--workspace` in PowerShell (whose classifier takes no
/// `Set-Location` before the run).
fn deny_outside(rules: Rules<'_>, call: &ToolUse) -> Decision {
    let root = rules.root.to_string_lossy();
    let how = match (rules.runner, suggest::dialect(call)) {
        (Runner::Shell(command), Dialect::Posix) => format!("`cd {} && {command} <<'PY'`", posix_word(&root)),
        (Runner::Shell(command), Dialect::PowerShell) => {
            format!("`@'` … `'@ | {command} --workspace {}`", powershell_word(&root))
        }
        (Runner::Mcp, _) => "codeact's `run` tool".to_owned(),
    };
    let reason = format!(
        "codeact exclusive mode: a codeact run's workspace must be the project (`{root}`) and its `--file` inside \
         it, and a `cd` before it must go to an absolute or `./` path without `..`, `~` or variables; run the \
         program there with {how}"
    );
    Decision::Deny { reason }
}

/// What the post-tool-use hook adds to `call`'s result: nudge's advice, once a streak, after
/// the round that reached the limit; the session's new state.
#[must_use]
pub(crate) fn advise(rules: Rules<'_>, class: Class, session: Session, call: &ToolUse) -> (Option<String>, Session) {
    let due = rules.mode == Mode::Nudge
        && class == Class::ReadOnly
        && !session.used_codeact
        && !session.advised
        && session.rounds >= rules.nudge_after;
    if !due {
        return (None, session);
    }
    let how = match rules.runner {
        Runner::Shell(command) => format!(":\n{}", suggest::fed(suggest::dialect(call), command, "…")),
        Runner::Mcp => ", passed as `code` to codeact's `run` tool.".to_owned(),
    };
    let advice = format!(
        "codeact: {} rounds of read-only calls in a row. From two dependent calls on, one program is cheaper: do \
         the rest in one, with the tools as Python functions, printing only what you need{how}",
        session.rounds
    );
    (Some(advice), Session { advised: true, ..session })
}

/// The decision for a payload the hook could not read: exclusive mode denies it; the other
/// modes, which only steer, let it through.
#[must_use]
pub(crate) fn decide_unreadable(mode: Mode, why: Unreadable, runner: Runner<'_>) -> Decision {
    match mode {
        Mode::Off | Mode::Nudge => Decision::Allow,
        Mode::Exclusive => {
            let what = match why {
                Unreadable::TooLarge => format!("is over {} MiB", MAX_PAYLOAD / (1024 * 1024)),
                Unreadable::Malformed => "is not one the hook can read".to_owned(),
            };
            let with = match runner {
                Runner::Shell(command) => format!("`{command} <<'PY'`"),
                Runner::Mcp => "codeact's `run` tool".to_owned(),
            };
            let reason = format!(
                "codeact exclusive mode: this tool call {what}, so it cannot be checked; run what it does as one \
                 codeact program with {with}"
            );
            Decision::Deny { reason }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::hook::payload::tool_use;

    fn call_at(tool: &str, args: &serde_json::Value, timestamp: u64) -> ToolUse {
        let payload = json!({"sessionId": "s", "timestamp": timestamp, "toolName": tool, "toolArgs": args}).to_string();
        tool_use(payload.as_bytes(), None).unwrap()
    }

    fn call(tool: &str, args: &serde_json::Value) -> ToolUse {
        call_at(tool, args, 1)
    }

    fn codeact(_: Dialect, word: &str) -> Program {
        if word == "codeact" { Program::Codeact } else { Program::Other }
    }

    /// [`classify`], where every codeact run stays in the project unless it names `--workspace`.
    fn class(call: &ToolUse) -> Class {
        classify(call, codeact, |run| !run.args.iter().any(|arg| arg.starts_with("--workspace")))
    }

    fn nudge_rules() -> Rules<'static> {
        Rules { mode: Mode::Nudge, nudge_after: 3, runner: Runner::Shell("codeact run"), root: Path::new("/repo") }
    }

    fn exclusive_rules() -> Rules<'static> {
        Rules { mode: Mode::Exclusive, ..nudge_rules() }
    }

    fn denied(decision: &Decision) -> bool {
        matches!(decision, Decision::Deny { .. })
    }

    #[test]
    fn calls_are_classified_by_tool_and_command() {
        assert_eq!(class(&call("view", &json!({"path": "a"}))), Class::ReadOnly);
        assert_eq!(class(&call("bash", &json!({"command": "cat a | head"}))), Class::ReadOnly);
        assert_eq!(class(&call("bash", &json!({"command": "codeact run <<'PY'\n1\nPY"}))), Class::Codeact);
        assert_eq!(class(&call("bash", &json!({"command": "echo codeact run"}))), Class::Other);
        assert_eq!(class(&call("skill", &json!({"skill": "x"}))), Class::Skill);
        assert_eq!(class(&call("ToolSearch", &json!({"query": "select:x"}))), Class::Skill);
        assert_eq!(class(&call("codeact-run", &json!({"code": "1"}))), Class::Codeact);
        assert_eq!(class(&call("apply_patch", &json!("*** Begin Patch"))), Class::Other);
    }

    #[test]
    fn powershell_commands_are_read_as_powershell() {
        let powershell = |command: &str| class(&call("powershell", &json!({"command": command})));
        assert_eq!(powershell("Get-Content a | Select-String x"), Class::ReadOnly);
        assert_eq!(powershell("@'\nprint(1)\n'@ | codeact run"), Class::Codeact);
        assert_eq!(powershell("@'\nprint(1)\n'@ | codeact run --workspace C:\\elsewhere"), Class::Outside);
        assert_eq!(powershell("@'\nprint(1)\n'@ | codeact run; Remove-Item x"), Class::Other);
        // Each shell's own spelling is nothing to the other.
        assert_eq!(powershell("codeact run <<'PY'\nprint(1)\nPY"), Class::Other);
        assert_eq!(powershell("cat a | head"), Class::Other);
        assert_eq!(class(&call("bash", &json!({"command": "@'\nprint(1)\n'@ | codeact run"}))), Class::Other);
        // The program word is looked up as PowerShell looks it up.
        let dialects = std::cell::RefCell::new(Vec::new());
        let identify = |dialect, word: &str| {
            dialects.borrow_mut().push(dialect);
            codeact(dialect, word)
        };
        let run = call("powershell", &json!({"command": "codeact run --code 1"}));
        assert_eq!(classify(&run, identify, |_| true), Class::Codeact);
        assert_eq!(dialects.into_inner(), [Dialect::PowerShell]);
    }

    /// Runs `calls` (tool, timestamp) through nudge's pre and post hooks; what each pre decided
    /// and whether a post advised.
    fn nudge_run(calls: &[(&str, u64)]) -> Vec<(bool, bool)> {
        let mut session = Session::default();
        let mut seen = Vec::new();
        for (tool, timestamp) in calls {
            let call = call_at(tool, &json!({"path": "src/a.py", "command": "codeact run <<'PY'\n1\nPY"}), *timestamp);
            let kind = class(&call);
            let (decision, next) = decide(nudge_rules(), kind, session, &call);
            session = next;
            let mut advised = false;
            if !denied(&decision) {
                let (advice, next) = advise(nudge_rules(), kind, session, &call);
                session = next;
                advised = advice.is_some();
            }
            seen.push((denied(&decision), advised));
        }
        seen
    }

    #[test]
    fn nudge_advises_after_the_third_round_and_denies_the_fourth() {
        let calls: Vec<(&str, u64)> = (1..=8).map(|t| ("view", t)).collect();
        let seen = nudge_run(&calls);
        let (quiet, advised, denied) = ((false, false), (false, true), (true, false));
        assert_eq!(seen, [quiet, quiet, advised, denied, quiet, quiet, advised, denied]);
    }

    #[test]
    fn a_parallel_batch_counts_once_and_is_never_split() {
        let batch = [("view", 1), ("view", 2), ("view", 2), ("view", 2), ("view", 2), ("view", 2)];
        assert_eq!(nudge_run(&batch).iter().filter(|(deny, _)| *deny).count(), 0);
        // A denied round is denied whole.
        let seen = nudge_run(&[("view", 1), ("view", 2), ("view", 3), ("view", 4), ("view", 4), ("view", 4)]);
        assert_eq!(seen[3..], [(true, false), (true, false), (true, false)]);
    }

    #[test]
    fn after_one_codeact_run_nudge_stays_quiet() {
        let mut calls = vec![("bash", 1)];
        calls.extend((2..12).map(|t| ("view", t)));
        assert!(nudge_run(&calls).iter().all(|seen| *seen == (false, false)));
    }

    #[test]
    fn the_deny_reason_carries_the_exact_program() {
        let view = call_at("view", &json!({"path": "src/a.py", "view_range": [2, 3]}), 9);
        let session = Session { rounds: 3, batch: 8, advised: true, ..Session::default() };
        let (decision, _) = decide(nudge_rules(), Class::ReadOnly, session, &view);
        // Copilot CLI's shell is PowerShell on Windows: the program is shown in its form there.
        let program = if cfg!(windows) {
            "@'\nprint(view(path=\"src/a.py\", view_range=[2, 3]))\n'@ | codeact run"
        } else {
            "codeact run <<'PY'\nprint(view(path=\"src/a.py\", view_range=[2, 3]))\nPY"
        };
        let reason = format!(
            "codeact: 4 rounds of read-only calls in a row. Do this and the rest of the exploration in one program \
             (tools are Python functions; print only what you need):\n\n{program}"
        );
        assert_eq!(decision, Decision::Deny { reason });
    }

    #[test]
    fn any_other_call_ends_the_streak() {
        let edit = call("edit", &json!({}));
        let session = Session { rounds: 3, batch: 1, advised: true, ..Session::default() };
        assert_eq!(decide(nudge_rules(), Class::Other, session, &edit), (Decision::Allow, Session::default()));
    }

    #[test]
    fn exclusive_allows_codeact_skills_and_one_direct_read_or_edit_between_runs() {
        let view = call_at("view", &json!({"path": "a"}), 1);
        let edit = call_at("edit", &json!({"path": "a", "old_str": "x", "new_str": "y"}), 2);
        let grep = call_at("grep", &json!({"pattern": "x"}), 1);
        let fresh = Session::default();
        assert_eq!(decide(exclusive_rules(), Class::Codeact, fresh, &view).0, Decision::Allow);
        assert_eq!(decide(exclusive_rules(), Class::Skill, fresh, &view).0, Decision::Allow);
        let (first, after) = decide(exclusive_rules(), Class::ReadOnly, fresh, &view);
        assert_eq!(first, Decision::Allow);
        let (second, _) = decide(exclusive_rules(), Class::Other, after, &edit);
        let Decision::Deny { reason } = second else { panic!("a second direct call was allowed") };
        assert!(reason.contains("print(edit(path=\"a\", old_str=\"x\", new_str=\"y\"))"), "{reason}");
        let (_, reset) = decide(exclusive_rules(), Class::Codeact, after, &view);
        assert_eq!(decide(exclusive_rules(), Class::Other, reset, &edit).0, Decision::Allow);
        assert!(denied(&decide(exclusive_rules(), Class::ReadOnly, fresh, &grep).0));
        let shell = call("bash", &json!({"command": "npm test"}));
        assert!(denied(&decide(exclusive_rules(), Class::Other, fresh, &shell).0));
    }

    #[test]
    fn a_codeact_run_outside_the_project_is_denied_in_exclusive_mode_only() {
        let outside = call("bash", &json!({"command": "codeact run --workspace / --code 1"}));
        assert_eq!(class(&outside), Class::Outside);
        let (decision, after) = decide(exclusive_rules(), Class::Outside, Session::default(), &outside);
        assert_eq!(
            decision,
            Decision::Deny {
                reason: "codeact exclusive mode: a codeact run's workspace must be the project (`/repo`) and its \
                         `--file` inside it, and a `cd` before it must go to an absolute or `./` path without `..`, \
                         `~` or variables; run the program there with `cd /repo && codeact run <<'PY'`"
                    .into()
            }
        );
        assert!(!after.used_codeact);
        assert_eq!(decide(nudge_rules(), Class::Outside, Session::default(), &outside).0, Decision::Allow);
        let spaced = Rules { root: Path::new("/my repo/it's"), ..exclusive_rules() };
        let Decision::Deny { reason } = decide(spaced, Class::Outside, Session::default(), &outside).0 else {
            panic!("allowed")
        };
        assert!(reason.ends_with(r"`cd '/my repo/it'\''s' && codeact run <<'PY'`"), "{reason}");
    }

    #[test]
    fn powershell_is_told_to_name_the_workspace_and_feed_a_here_string() {
        let outside = call("powershell", &json!({"command": "codeact run --workspace C:\\elsewhere --code 1"}));
        let rules = Rules { root: Path::new(r"C:\my repo\it's"), ..exclusive_rules() };
        let Decision::Deny { reason } = decide(rules, Class::Outside, Session::default(), &outside).0 else {
            panic!("allowed")
        };
        assert!(reason.ends_with(r"`@'` … `'@ | codeact run --workspace 'C:\my repo\it''s'`"), "{reason}");
        let session = Session { rounds: 3, batch: 1, ..Session::default() };
        let (advice, _) = advise(nudge_rules(), Class::ReadOnly, session, &outside);
        assert!(advice.is_some_and(|advice| advice.ends_with(":\n@'\n…\n'@ | codeact run")));
    }

    #[test]
    fn off_allows_everything() {
        let view = call("view", &json!({"path": "a"}));
        let session = Session { rounds: 9, ..Session::default() };
        let rules = Rules { mode: Mode::Off, ..nudge_rules() };
        assert_eq!(decide(rules, Class::ReadOnly, session, &view), (Decision::Allow, session));
        assert_eq!(advise(rules, Class::ReadOnly, session, &view).0, None);
    }

    #[test]
    fn exclusive_denies_what_it_cannot_read_and_the_other_modes_allow_it() {
        for why in [Unreadable::TooLarge, Unreadable::Malformed] {
            assert_eq!(decide_unreadable(Mode::Off, why, Runner::Shell("c")), Decision::Allow);
            assert_eq!(decide_unreadable(Mode::Nudge, why, Runner::Mcp), Decision::Allow);
        }
        assert_eq!(
            decide_unreadable(Mode::Exclusive, Unreadable::TooLarge, Runner::Shell("codeact run")),
            Decision::Deny {
                reason: "codeact exclusive mode: this tool call is over 1 MiB, so it cannot be checked; run what it \
                         does as one codeact program with `codeact run <<'PY'`"
                    .into()
            }
        );
    }
}
