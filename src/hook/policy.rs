//! What the pre-tool-use hook decides: classify the call, then apply the mode.
//!
//! - `off`: allow everything.
//! - `nudge`: count consecutive read-only calls per session; the Nth is denied with the exact
//!   codeact command to run instead, and the count starts again. A codeact call or any other
//!   tool resets the count.
//! - `exclusive`: deny everything but codeact runs and skill loads, and any payload the hook
//!   cannot read (over [`MAX_PAYLOAD`] or not a tool call): the user asked for enforcement,
//!   and a call that cannot be checked cannot be shown to be codeact. The other modes let such
//!   payloads through.

use super::mode::Mode;
use super::payload::{MAX_PAYLOAD, ToolUse, Unreadable};
use super::shell::{self, Program};

/// Tools that only read, by the names Copilot CLI and other hosts use.
const READ_ONLY_TOOLS: &[&str] = &["view", "glob", "grep", "rg", "read_file", "file_search", "list_dir"];

/// Tools whose `command` argument is a shell command line.
const SHELL_TOOLS: &[&str] = &["bash", "shell", "powershell"];

/// What kind of call this is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    Codeact,
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

/// Classifies a call; `identify` says what a shell command's program word names.
pub(crate) fn classify(call: &ToolUse, identify: impl Fn(&str) -> Program) -> Class {
    let tool = call.tool_name.as_str();
    if SHELL_TOOLS.contains(&tool) {
        let command = call.args.str("command").unwrap_or_default();
        if shell::is_codeact_run(command, identify) {
            Class::Codeact
        } else if shell::is_read_only(command) {
            Class::ReadOnly
        } else {
            Class::Other
        }
    } else if READ_ONLY_TOOLS.contains(&tool) {
        Class::ReadOnly
    } else if tool == "skill" {
        Class::Skill
    } else {
        Class::Other
    }
}

/// The decision for a call of `class` and the session's new read-only count.
#[must_use]
pub(crate) fn decide(
    mode: Mode,
    class: Class,
    count: u32,
    nudge_after: u32,
    call: &ToolUse,
    command: &str,
) -> (Decision, u32) {
    match (mode, class) {
        (Mode::Off, _)
        | (Mode::Nudge | Mode::Exclusive, Class::Codeact | Class::Skill)
        | (Mode::Nudge, Class::Other) => (Decision::Allow, 0),
        (Mode::Nudge, Class::ReadOnly) => {
            let count = count.saturating_add(1);
            if count >= nudge_after {
                let reason = format!(
                    "codeact: {count} read-only calls in a row. Do the rest of this exploration in one program \
                     (tools are Python functions; print only what you need):\n\n{}",
                    example(call, command)
                );
                (Decision::Deny { reason }, 0)
            } else {
                (Decision::Allow, count)
            }
        }
        (Mode::Exclusive, Class::ReadOnly | Class::Other) => {
            let reason = format!(
                "codeact exclusive mode: `{}` is not available; call the tools from one codeact program instead:\n\n{}",
                call.tool_name,
                example(call, command)
            );
            (Decision::Deny { reason }, 0)
        }
    }
}

/// The decision for a payload the hook could not read: exclusive mode denies it; the other
/// modes, which only steer, let it through.
#[must_use]
pub(crate) fn decide_unreadable(mode: Mode, why: Unreadable, command: &str) -> Decision {
    match mode {
        Mode::Off | Mode::Nudge => Decision::Allow,
        Mode::Exclusive => {
            let what = match why {
                Unreadable::TooLarge => format!("is over {} MiB", MAX_PAYLOAD / (1024 * 1024)),
                Unreadable::Malformed => "is not one the hook can read".to_owned(),
            };
            let reason = format!(
                "codeact exclusive mode: this tool call {what}, so it cannot be checked; call the tools from one \
                 codeact program instead:\n\n{command} <<'PY'\n{GENERIC}\nPY"
            );
            Decision::Deny { reason }
        }
    }
}

/// The program suggested when the denied call has no codeact equivalent.
const GENERIC: &str = "for path in glob(pattern=\"**/*.py\"):\n    print(path, len(view(path=path).splitlines()))";

/// A codeact command doing what the denied call did, so the model can run it as is.
fn example(call: &ToolUse, command: &str) -> String {
    let quote = |text: &str| serde_json::to_string(text).unwrap_or_else(|_| "\"\"".into());
    let args = &call.args;
    let body = match call.tool_name.as_str() {
        "view" | "read_file" if args.str("path").is_some() => {
            format!("print(view(path={}))", quote(args.str("path").unwrap_or_default()))
        }
        "glob" | "file_search" if args.str("pattern").is_some() => {
            format!("print(glob(pattern={}))", quote(args.str("pattern").unwrap_or_default()))
        }
        "grep" | "rg" if args.str("pattern").is_some() => format!(
            "for m in grep(pattern={}):\n    print(m[\"path\"], m[\"line\"], m[\"text\"])",
            quote(args.str("pattern").unwrap_or_default())
        ),
        _ => GENERIC.to_owned(),
    };
    format!("{command} <<'PY'\n{body}\nPY")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::hook::payload::tool_use;

    fn call(tool: &str, args: &serde_json::Value) -> ToolUse {
        let payload = json!({"sessionId": "s", "toolName": tool, "toolArgs": args}).to_string();
        tool_use(payload.as_bytes()).unwrap()
    }

    fn codeact(word: &str) -> Program {
        if word == "codeact" { Program::Codeact } else { Program::Other }
    }

    #[test]
    fn calls_are_classified_by_tool_and_command() {
        assert_eq!(classify(&call("view", &json!({"path": "a"})), codeact), Class::ReadOnly);
        assert_eq!(classify(&call("bash", &json!({"command": "cat a | head"})), codeact), Class::ReadOnly);
        assert_eq!(classify(&call("bash", &json!({"command": "codeact run <<'PY'\n1\nPY"})), codeact), Class::Codeact);
        assert_eq!(classify(&call("bash", &json!({"command": "echo codeact run"})), codeact), Class::Other);
        assert_eq!(classify(&call("skill", &json!({"skill": "x"})), codeact), Class::Skill);
        assert_eq!(classify(&call("apply_patch", &json!("*** Begin Patch")), codeact), Class::Other);
    }

    #[test]
    fn nudge_denies_the_third_read_only_call_and_starts_again() {
        let view = call("view", &json!({"path": "src/a.py"}));
        let (first, count) = decide(Mode::Nudge, Class::ReadOnly, 0, 3, &view, "codeact run");
        let (second, count) = decide(Mode::Nudge, Class::ReadOnly, count, 3, &view, "codeact run");
        let (third, count) = decide(Mode::Nudge, Class::ReadOnly, count, 3, &view, "codeact run");
        assert_eq!((first, second), (Decision::Allow, Decision::Allow));
        assert_eq!(
            third,
            Decision::Deny {
                reason: "codeact: 3 read-only calls in a row. Do the rest of this exploration in one program (tools \
                         are Python functions; print only what you need):\n\ncodeact run <<'PY'\nprint(view(path=\"src/a.py\"))\nPY"
                    .into()
            }
        );
        assert_eq!(count, 0);
    }

    #[test]
    fn any_other_call_resets_the_nudge_count() {
        let edit = call("edit", &json!({}));
        assert_eq!(decide(Mode::Nudge, Class::Other, 2, 3, &edit, "codeact run"), (Decision::Allow, 0));
        assert_eq!(decide(Mode::Nudge, Class::Codeact, 2, 3, &edit, "codeact run"), (Decision::Allow, 0));
    }

    #[test]
    fn exclusive_allows_only_codeact_and_skills() {
        let view = call("view", &json!({"path": "a"}));
        assert_eq!(decide(Mode::Exclusive, Class::Codeact, 0, 3, &view, "c").0, Decision::Allow);
        assert_eq!(decide(Mode::Exclusive, Class::Skill, 0, 3, &view, "c").0, Decision::Allow);
        assert!(matches!(decide(Mode::Exclusive, Class::ReadOnly, 0, 3, &view, "c").0, Decision::Deny { .. }));
        assert!(matches!(decide(Mode::Exclusive, Class::Other, 0, 3, &view, "c").0, Decision::Deny { .. }));
    }

    #[test]
    fn off_allows_everything() {
        let view = call("view", &json!({"path": "a"}));
        assert_eq!(decide(Mode::Off, Class::ReadOnly, 9, 3, &view, "c"), (Decision::Allow, 0));
    }

    #[test]
    fn exclusive_denies_what_it_cannot_read_and_the_other_modes_allow_it() {
        for why in [Unreadable::TooLarge, Unreadable::Malformed] {
            assert_eq!(decide_unreadable(Mode::Off, why, "c"), Decision::Allow);
            assert_eq!(decide_unreadable(Mode::Nudge, why, "c"), Decision::Allow);
        }
        assert_eq!(
            decide_unreadable(Mode::Exclusive, Unreadable::TooLarge, "codeact run"),
            Decision::Deny {
                reason: format!(
                    "codeact exclusive mode: this tool call is over 1 MiB, so it cannot be checked; call the tools \
                     from one codeact program instead:\n\ncodeact run <<'PY'\n{GENERIC}\nPY"
                )
            }
        );
    }
}
