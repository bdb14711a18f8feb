//! Whether the user's Copilot CLI loads codeact's plugin: enabled from a marketplace
//! (`enabledPlugins` in `$COPILOT_HOME/settings.json` names `codeact@MARKETPLACE`), or installed
//! directly (a copy beneath `$COPILOT_HOME/installed-plugins/` whose `plugin.json` names
//! `codeact`). The plugin serves codeact's MCP `run` tool, so instructions written beside it
//! name that tool rather than a shell command: the model is told one way, not two.

use std::path::Path;

use serde_json::Value;

use crate::bounded;

/// The plugin's name in its manifest and in `enabledPlugins`.
const NAME: &str = "codeact";

/// Whether the Copilot CLI whose home is `home` loads codeact's plugin.
#[must_use]
pub(crate) fn plugin_enabled(home: &Path) -> bool {
    enabled_in_settings(home) || installed_directly(home)
}

fn read_json(path: &Path) -> Option<Value> {
    let text = bounded::read(path, bounded::MAX_FILE_BYTES).ok()??;
    serde_json::from_slice(&text).ok()
}

fn enabled_in_settings(home: &Path) -> bool {
    let Some(settings) = read_json(&home.join("settings.json")) else { return false };
    settings["enabledPlugins"].as_object().is_some_and(|plugins| {
        plugins
            .iter()
            .any(|(key, on)| key.split_once('@').is_some_and(|(name, _)| name == NAME) && on == &Value::Bool(true))
    })
}

fn installed_directly(home: &Path) -> bool {
    let Ok(sources) = std::fs::read_dir(home.join("installed-plugins")) else { return false };
    sources.flatten().filter(|source| source.path().is_dir()).any(|source| {
        std::fs::read_dir(source.path()).into_iter().flatten().flatten().any(|plugin| {
            ["plugin.json", ".plugin/plugin.json", ".github/plugin/plugin.json", ".claude-plugin/plugin.json"]
                .iter()
                .filter_map(|manifest| read_json(&plugin.path().join(manifest)))
                .any(|manifest| manifest["name"] == NAME)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plugin_is_found_enabled_from_a_marketplace_or_installed_directly() {
        let home = tempfile::tempdir().unwrap();
        assert!(!plugin_enabled(home.path()));
        let settings = home.path().join("settings.json");
        std::fs::write(&settings, r#"{"enabledPlugins": {"codeact@codeact": false, "other@x": true}}"#).unwrap();
        assert!(!plugin_enabled(home.path()));
        std::fs::write(&settings, r#"{"enabledPlugins": {"codeact@my-market": true}}"#).unwrap();
        assert!(plugin_enabled(home.path()));
        std::fs::write(&settings, "{ not json").unwrap();
        assert!(!plugin_enabled(home.path()));
        let copy = home.path().join("installed-plugins/_direct/p");
        std::fs::create_dir_all(&copy).unwrap();
        std::fs::write(copy.join("plugin.json"), r#"{"name": "not-codeact"}"#).unwrap();
        assert!(!plugin_enabled(home.path()));
        std::fs::write(copy.join("plugin.json"), r#"{"name": "codeact", "version": "0.1.0"}"#).unwrap();
        assert!(plugin_enabled(home.path()));
    }
}
