//! The hook payloads Copilot CLI and Claude Code send on stdin. Copilot CLI's are read in every
//! form seen in the wild: `toolArgs` as an object, as a JSON-encoded string, or as a raw string
//! (freeform tools such as `apply_patch`), and the `snake_case` spelling (`tool_name`,
//! `tool_input`).
//!
//! In Claude Code's payloads, its tools and their arguments are named as Copilot CLI
//! names the same tools (`Read` with `file_path` is `view` with `path`), so that the policy and
//! the suggestions know one vocabulary, and the answer is written in Claude Code's form
//! ([`Agent`]). Which host sent a payload is what the hook's command line says (`--host`); a
//! hook configured without it tells by the parsed payload alone, never by its raw bytes, which
//! a tool argument writes.

use serde_json::{Map, Value};

/// Largest payload read; anything bigger is not parsed (exclusive mode then denies the call,
/// the other modes allow it).
pub(crate) const MAX_PAYLOAD: usize = 1024 * 1024;

/// Why a payload could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unreadable {
    /// Over [`MAX_PAYLOAD`].
    TooLarge,
    /// Not JSON, not an object, or without a tool name.
    Malformed,
}

/// The agent that sent a payload, which decides the form of the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub(crate) enum Agent {
    /// Copilot CLI: answers are top-level fields.
    #[default]
    Copilot,
    /// Claude Code: answers go in `hookSpecificOutput`.
    Claude,
}

/// Claude Code's arguments of a tool, renamed as Copilot CLI names them: (Claude's, Copilot's).
type Renames = &'static [(&'static str, &'static str)];

/// Claude Code's tools, as the Copilot CLI tools of the same job, and their arguments renamed:
/// (Claude's tool, Copilot's tool, renames).
const CLAUDE_TOOLS: &[(&str, &str, Renames)] = &[
    ("Bash", "bash", &[]),
    ("Read", "view", &[("file_path", "path")]),
    ("Grep", "grep", &[]),
    ("Glob", "glob", &[]),
    ("Edit", "edit", &[("file_path", "path"), ("old_string", "old_str"), ("new_string", "new_str")]),
    ("Write", "create", &[("file_path", "path"), ("content", "file_text")]),
];

/// A `preToolUse` or `postToolUse` payload.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolUse {
    pub(crate) host: Agent,
    pub(crate) session_id: Option<String>,
    /// Milliseconds; Copilot CLI gives every call of one parallel batch the same one.
    pub(crate) timestamp: Option<u64>,
    pub(crate) cwd: Option<String>,
    pub(crate) tool_name: String,
    pub(crate) args: ToolArgs,
}

/// A tool's arguments.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ToolArgs {
    Object(Map<String, Value>),
    /// A freeform tool's text (or arguments that were not JSON).
    Raw(String),
    None,
}

impl ToolArgs {
    /// A string argument by name.
    #[must_use]
    pub(crate) fn str(&self, name: &str) -> Option<&str> {
        match self {
            Self::Object(map) => map.get(name).and_then(Value::as_str),
            Self::Raw(_) | Self::None => None,
        }
    }
}

/// A `sessionStart` payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SessionStart {
    pub(crate) session_id: Option<String>,
    pub(crate) cwd: Option<String>,
}

fn field<'a>(object: &'a Map<String, Value>, names: &[&str]) -> Option<&'a Value> {
    names.iter().find_map(|name| object.get(*name))
}

fn string(object: &Map<String, Value>, names: &[&str]) -> Option<String> {
    field(object, names).and_then(Value::as_str).map(str::to_owned)
}

fn object(input: &[u8]) -> Result<Map<String, Value>, Unreadable> {
    if input.len() > MAX_PAYLOAD {
        return Err(Unreadable::TooLarge);
    }
    match serde_json::from_slice(input) {
        Ok(Value::Object(map)) => Ok(map),
        _ => Err(Unreadable::Malformed),
    }
}

/// Who sent a parsed payload: a Claude Code payload names its event as a top-level
/// `hook_event_name`, which Copilot CLI's never does and no tool argument can add.
fn host_of(map: &Map<String, Value>) -> Agent {
    if map.contains_key("hook_event_name") { Agent::Claude } else { Agent::Copilot }
}

/// Parses a `preToolUse` or `postToolUse` payload sent by `host` (told by the payload when
/// `None`), saying why when it cannot.
pub(crate) fn tool_use(input: &[u8], host: Option<Agent>) -> Result<ToolUse, Unreadable> {
    let map = object(input)?;
    let mut tool_name = string(&map, &["toolName", "tool_name"]).ok_or(Unreadable::Malformed)?;
    let mut args = match field(&map, &["toolArgs", "tool_args", "tool_input", "toolInput"]) {
        Some(Value::Object(args)) => ToolArgs::Object(args.clone()),
        Some(Value::String(text)) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(args)) => ToolArgs::Object(args),
            _ => ToolArgs::Raw(text.clone()),
        },
        _ => ToolArgs::None,
    };
    let host = host.unwrap_or_else(|| host_of(&map));
    if host == Agent::Claude {
        as_copilot_names(&mut tool_name, &mut args);
    }
    Ok(ToolUse {
        host,
        session_id: string(&map, &["sessionId", "session_id"]),
        timestamp: field(&map, &["timestamp"]).and_then(Value::as_u64),
        cwd: string(&map, &["cwd"]),
        tool_name,
        args,
    })
}

/// A Claude Code tool and its arguments, named as Copilot CLI names the tool of the same job
/// ([`CLAUDE_TOOLS`]); a tool it does not know keeps its name.
fn as_copilot_names(tool_name: &mut String, args: &mut ToolArgs) {
    let Some((claude, copilot, renames)) = CLAUDE_TOOLS.iter().find(|(claude, ..)| claude == tool_name) else {
        return;
    };
    if let ToolArgs::Object(object) = args {
        if *claude == "Read" {
            read_range(object);
        }
        for (from, to) in *renames {
            if let Some(value) = object.remove(*from) {
                object.insert((*to).to_owned(), value);
            }
        }
    }
    *tool_name = (*copilot).to_owned();
}

/// Claude Code's `Read` takes the first line (`offset`, from 1) and a line count (`limit`);
/// `view` takes `view_range`, `[first, last]` with -1 for the end.
fn read_range(args: &mut Map<String, Value>) {
    let offset = args.remove("offset").and_then(|v| v.as_i64()).filter(|n| *n >= 1);
    let limit = args.remove("limit").and_then(|v| v.as_i64()).filter(|n| *n >= 1);
    let first = offset.unwrap_or(1);
    let range = match (offset, limit) {
        (None, None) => return,
        (_, Some(limit)) => [first, first.saturating_add(limit - 1)],
        (Some(_), None) => [first, -1],
    };
    args.insert("view_range".into(), Value::from(range.to_vec()));
}

/// Parses a `sessionStart` payload; `None` for anything malformed.
#[must_use]
pub(crate) fn session_start(input: &[u8]) -> Option<SessionStart> {
    let map = object(input).ok()?;
    Some(SessionStart { session_id: string(&map, &["sessionId", "session_id"]), cwd: string(&map, &["cwd"]) })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn args(value: &Value) -> ToolArgs {
        tool_use(value.to_string().as_bytes(), None).map_or(ToolArgs::None, |t| t.args)
    }

    #[test]
    fn tool_args_may_be_an_object_a_json_string_or_raw_text() {
        let object = json!({"toolName": "bash", "toolArgs": {"command": "ls"}});
        let encoded = json!({"toolName": "bash", "toolArgs": "{\"command\": \"ls\"}"});
        let raw = json!({"toolName": "apply_patch", "toolArgs": "*** Begin Patch"});
        assert_eq!(args(&object).str("command"), Some("ls"));
        assert_eq!(args(&encoded).str("command"), Some("ls"));
        assert_eq!(args(&raw), ToolArgs::Raw("*** Begin Patch".into()));
    }

    #[test]
    fn snake_case_payloads_are_accepted() {
        let payload = json!({"session_id": "s1", "tool_name": "view", "tool_input": {"path": "a"}}).to_string();
        let parsed = tool_use(payload.as_bytes(), None);
        assert_eq!(parsed.as_ref().map(|t| t.tool_name.as_str()), Ok("view"));
        assert_eq!(parsed.ok().and_then(|t| t.session_id), Some("s1".into()));
    }

    #[test]
    fn claude_code_payloads_name_tools_and_arguments_as_copilot_cli_does() {
        let payload = json!({
            "session_id": "s", "hook_event_name": "PreToolUse", "cwd": "/w",
            "tool_name": "Edit", "tool_input": {"file_path": "a.py", "old_string": "x", "new_string": "y"}
        });
        let parsed = tool_use(payload.to_string().as_bytes(), None).unwrap();
        assert_eq!((parsed.host, parsed.tool_name.as_str()), (Agent::Claude, "edit"));
        assert_eq!(
            parsed.args,
            ToolArgs::Object(json!({"path": "a.py", "old_str": "x", "new_str": "y"}).as_object().unwrap().clone())
        );
        let unknown = json!({"hook_event_name": "PreToolUse", "tool_name": "WebSearch", "tool_input": {"query": "q"}});
        assert_eq!(tool_use(unknown.to_string().as_bytes(), None).unwrap().tool_name, "WebSearch");
        let read = json!({"hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": {"file_path": "a", "offset": 5, "limit": 10}});
        let parsed = tool_use(read.to_string().as_bytes(), None).unwrap();
        assert_eq!(
            parsed.args,
            ToolArgs::Object(json!({"path": "a", "view_range": [5, 14]}).as_object().unwrap().clone())
        );
        let copilot = json!({"toolName": "Read", "toolArgs": {"file_path": "a"}});
        let parsed = tool_use(copilot.to_string().as_bytes(), None).unwrap();
        assert_eq!(
            (parsed.host, parsed.tool_name.as_str(), parsed.args.str("file_path")),
            (Agent::Copilot, "Read", Some("a"))
        );
    }

    #[test]
    fn the_host_is_told_by_the_parsed_payload_or_the_command_line_never_by_a_tool_argument() {
        let host = |value: &Value, given| tool_use(value.to_string().as_bytes(), given).unwrap().host;
        // A tool argument that holds the words Claude Code's payloads carry is still Copilot's.
        let copilot = json!({"toolName": "create", "toolArgs": {"path": "a\"hook_event_name", "hook_event_name": "x"}});
        assert_eq!(host(&copilot, None), Agent::Copilot);
        let claude = json!({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}});
        assert_eq!(host(&claude, None), Agent::Claude);
        // The command line wins, and names the tools in its host's vocabulary.
        assert_eq!(host(&claude, Some(Agent::Copilot)), Agent::Copilot);
        let parsed = tool_use(claude.to_string().as_bytes(), Some(Agent::Copilot)).unwrap();
        assert_eq!(parsed.tool_name, "Bash");
        let bare = json!({"tool_name": "Bash", "tool_input": {"command": "ls"}});
        let parsed = tool_use(bare.to_string().as_bytes(), Some(Agent::Claude)).unwrap();
        assert_eq!((parsed.host, parsed.tool_name.as_str()), (Agent::Claude, "bash"));
    }

    #[test]
    fn garbage_empty_and_huge_payloads_are_rejected_with_the_reason() {
        assert_eq!(tool_use(b"", None), Err(Unreadable::Malformed));
        assert_eq!(tool_use(b"not json", None), Err(Unreadable::Malformed));
        assert_eq!(tool_use(b"[1, 2]", None), Err(Unreadable::Malformed));
        assert_eq!(tool_use(br#"{"toolArgs": {}}"#, None), Err(Unreadable::Malformed));
        let huge = format!(r#"{{"toolName": "bash", "toolArgs": {{"command": "{}"}}}}"#, "x".repeat(MAX_PAYLOAD));
        assert_eq!(tool_use(huge.as_bytes(), None), Err(Unreadable::TooLarge));
        assert_eq!(session_start(huge.as_bytes()), None);
    }
}
