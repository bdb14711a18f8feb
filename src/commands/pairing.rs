//! The plugin and the binary it runs must be one version: the plugin's hooks, skill and MCP
//! configuration call the binary's commands as that version has them. They are installed apart
//! (the plugin by the agent, the binary by npm, pip, uv or cargo), so they can drift.

use std::path::{Path, PathBuf};

use crate::env;

/// A plugin of another version than this binary.
pub(crate) struct Mismatch {
    /// The plugin's manifest.
    pub(crate) manifest: PathBuf,
    /// The version it declares.
    pub(crate) plugin: String,
}

impl Mismatch {
    /// One sentence for the user: both versions and the commands that pair them again.
    #[must_use]
    pub(crate) fn message(&self) -> String {
        let plugin = &self.plugin;
        format!(
            "the codeact plugin is version {plugin} (`{}`) but the codeact binary is {}; install the binary of the \
             plugin's version (`npm install -g codeact@{plugin}` or `pip install codeact=={plugin}`) or update the plugin",
            self.manifest.display(),
            env!("CARGO_PKG_VERSION"),
        )
    }
}

/// The plugin that started this process, when its version is not this binary's: found through
/// the launcher that ran this binary (`<root>/bin/codeact`), else the plugin root the agent gives
/// its hooks. `None` when no plugin started it, or its manifest has no readable version.
#[must_use]
pub(crate) fn plugin_mismatch() -> Option<Mismatch> {
    let from_launcher = env::var(env::LAUNCHER)
        .map(PathBuf::from)
        .filter(|launcher| launcher.is_absolute())
        .and_then(|launcher| Some(launcher.parent()?.parent()?.to_path_buf()));
    let roots =
        from_launcher.into_iter().chain(env::PLUGIN_ROOTS.iter().filter_map(|name| env::var(name)).map(PathBuf::from));
    let (manifest, plugin) = roots.filter(|root| root.is_absolute()).find_map(|root| declared_version(&root))?;
    (plugin != env!("CARGO_PKG_VERSION")).then_some(Mismatch { manifest, plugin })
}

/// The version in a plugin's manifest: Copilot CLI's `plugin.json` at the root, or Claude Code's
/// in `.claude-plugin/`.
fn declared_version(root: &Path) -> Option<(PathBuf, String)> {
    ["plugin.json", ".claude-plugin/plugin.json"].iter().find_map(|name| {
        let manifest = root.join(name);
        let text = std::fs::read_to_string(&manifest).ok()?;
        let json: serde_json::Value = serde_json::from_str(&text).ok()?;
        let version = json.get("version")?.as_str()?.to_owned();
        Some((manifest, version))
    })
}
