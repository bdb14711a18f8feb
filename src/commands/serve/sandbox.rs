//! What the agent says of its own sandbox, read from each `tools/call`: a run is read-only when
//! the agent runs read-only, so that codeact does not write where the agent itself may not.
//!
//! Only Codex CLI says (no other agent sends a server its mode, in its environment or its
//! messages):
//! - `_meta["codex/sandbox-state"]` (or its older name `codex/sandbox-state-meta`), sent to a
//!   server that declares the experimental capability [`CAPABILITY`]: the permission profile
//!   of the turn. Read-only is a managed profile with a restricted file system and no entry
//!   that may write.
//! - `_meta["x-codex-turn-metadata"].sandbox_mode`, sent on every call: `"read-only"`,
//!   `"workspace-write"` or `"danger-full-access"`.
//!
//! A client can only make a run stricter this way: no signal, or one not understood, leaves the
//! server as it was started.

use serde_json::Value as Json;

/// The experimental capability that asks Codex for its sandbox state on every call.
pub(super) const CAPABILITY: &str = "codex/sandbox-state";

/// Whether the `_meta` of a `tools/call` says the agent runs read-only.
pub(super) fn says_read_only(meta: &serde_json::Map<String, Json>) -> bool {
    let state = meta.get(CAPABILITY).or_else(|| meta.get("codex/sandbox-state-meta"));
    if let Some(profile) = state.and_then(|state| state.get("permissionProfile")) {
        return restricted_to_reading(profile);
    }
    meta.get("x-codex-turn-metadata").and_then(|turn| turn.get("sandbox_mode")).and_then(Json::as_str)
        == Some("read-only")
}

/// A managed permission profile whose file system is restricted with no entry that writes.
fn restricted_to_reading(profile: &Json) -> bool {
    let file_system = &profile["file_system"];
    profile["type"] == "managed"
        && file_system["type"] == "restricted"
        && file_system["entries"]
            .as_array()
            .is_some_and(|entries| entries.iter().all(|entry| entry["access"] != "write"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn meta(value: &Json) -> serde_json::Map<String, Json> {
        value.as_object().cloned().unwrap_or_default()
    }

    /// The profiles Codex 0.171 sends under `-s read-only`, `-s workspace-write` and
    /// `-s danger-full-access`.
    fn profile(sandbox: &str) -> Json {
        let read_root = json!({"path": {"type": "special", "value": {"kind": "root"}}, "access": "read"});
        match sandbox {
            "read-only" => json!({"type": "managed",
                "file_system": {"type": "restricted", "entries": [read_root]}, "network": "restricted"}),
            "workspace-write" => json!({"type": "managed", "file_system": {"type": "restricted", "entries": [
                read_root,
                {"path": {"type": "path", "path": "/work"}, "access": "write"},
                {"path": {"type": "special", "value": {"kind": "slash_tmp"}}, "access": "write"},
            ]}, "network": "restricted"}),
            _ => json!({"type": "disabled"}),
        }
    }

    #[test]
    fn codexs_sandbox_state_says_read_only_only_for_a_profile_that_writes_nowhere() {
        for (sandbox, read_only) in [("read-only", true), ("workspace-write", false), ("danger-full-access", false)] {
            for key in ["codex/sandbox-state", "codex/sandbox-state-meta"] {
                let state = json!({key: {"permissionProfile": profile(sandbox), "sandboxCwd": "file:///work"}});
                assert_eq!(says_read_only(&meta(&state)), read_only, "{sandbox} under {key}");
            }
        }
        // The state wins over the turn's metadata when both are there.
        let both = json!({"codex/sandbox-state": {"permissionProfile": profile("workspace-write")},
            "x-codex-turn-metadata": {"sandbox_mode": "read-only"}});
        assert!(!says_read_only(&meta(&both)));
    }

    #[test]
    fn the_turn_metadata_alone_says_read_only_and_anything_else_says_nothing() {
        for (mode, read_only) in [("read-only", true), ("workspace-write", false), ("danger-full-access", false)] {
            let turn = json!({"x-codex-turn-metadata": {"sandbox_mode": mode, "sandbox": "seccomp"}});
            assert_eq!(says_read_only(&meta(&turn)), read_only, "{mode}");
        }
        for other in [
            json!({}),
            json!({"progressToken": 1}),
            json!({"codex/sandbox-state": "read-only"}),
            json!({"codex/sandbox-state": {"permissionProfile": {"type": "managed", "file_system": {"type": "restricted"}}}}),
            json!({"x-codex-turn-metadata": {"sandbox_mode": ["read-only"]}}),
        ] {
            assert!(!says_read_only(&meta(&other)), "{other}");
        }
    }
}
