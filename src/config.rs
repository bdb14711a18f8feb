//! Flags, environment and `config.json` files resolved into one [`Config`].
//!
//! Precedence, highest first: flags, then `CODEACT_*` variables, then
//! `<workspace>/.codeact/config.json`, then the user's `config.json`, then defaults. Unknown keys and wrong types are errors naming the
//! file and the key; nothing in a config file is silently ignored.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::Deserialize;

use crate::cli::{BackendChoice, CommonArgs, RunArgs};
use crate::env;
use crate::sandbox::limits::{self, Limits};

/// Everything a command needs to know, resolved once.
#[derive(Debug, Clone)]
pub struct Config {
    /// The workspace root, canonical.
    pub workspace: PathBuf,
    /// The backend asked for (`auto` until a backend is selected).
    pub backend: BackendChoice,
    pub limits: Limits,
    pub tools: ToolFilter,
    /// The hook's enforcement mode.
    pub mode: Mode,
    pub network: NetworkPolicy,
}

/// Which tools are offered: an optional allow-list, then a deny-list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolFilter {
    pub allow: Option<Vec<String>>,
    pub deny: Vec<String>,
}

impl ToolFilter {
    /// Whether the tool `name` may be offered.
    #[must_use]
    pub fn allows(&self, name: &str) -> bool {
        let allowed = self.allow.as_ref().is_none_or(|allow| allow.iter().any(|n| n == name));
        allowed && !self.deny.iter().any(|n| n == name)
    }
}

/// The hook's enforcement mode (used by the Copilot integration).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Off,
    Nudge,
    Exclusive,
}

impl Mode {
    /// Parses `off`, `nudge` or `exclusive` (any case).
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        match text.trim().to_ascii_lowercase().as_str() {
            "off" => Some(Self::Off),
            "nudge" => Some(Self::Nudge),
            "exclusive" => Some(Self::Exclusive),
            _ => None,
        }
    }
}

/// One `config.json`, exactly as written. Every field is optional; unknown ones are errors.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    enabled: Option<Vec<String>>,
    disabled: Option<Vec<String>>,
    backend: Option<BackendChoice>,
    limits: Option<LimitsFile>,
    network: Option<NetworkFile>,
    mode: Option<Mode>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct LimitsFile {
    timeout: Option<f64>,
    max_memory: Option<SizeValue>,
    max_output: Option<u64>,
    max_tool_calls: Option<u64>,
}

/// Network policy for the web tools.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct NetworkFile {
    allow_private: Option<bool>,
    allowed_hosts: Option<Vec<String>>,
}

/// Where `web_fetch` may connect. By default only public addresses: loopback, private,
/// link-local, unique-local and cloud-metadata addresses are refused.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NetworkPolicy {
    /// Allow loopback, private and link-local addresses (never cloud metadata endpoints).
    pub allow_private: bool,
    /// Hosts (names or addresses) allowed whatever they resolve to.
    pub allowed_hosts: Vec<String>,
}

/// A size written as a number of bytes or a string such as `"512MiB"`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum SizeValue {
    Bytes(u64),
    Text(String),
}

/// A parsed config file and where it came from.
struct Source {
    path: PathBuf,
    file: ConfigFile,
}

/// The user's config directory: `$CODEACT_CONFIG_DIR`, `$XDG_CONFIG_HOME/codeact`, `~/.config/codeact`.
#[must_use]
pub fn user_dir() -> Option<PathBuf> {
    env::codeact_dir(Some(env::CONFIG_DIR), "XDG_CONFIG_HOME", ".config")
}

impl Config {
    /// Resolves the configuration for a command that runs programs.
    pub fn for_run(args: &RunArgs) -> Result<Self> {
        let mut config = Self::load(&args.common)?;
        let limits = &mut config.limits;
        if let Some(timeout) = args.timeout {
            limits.timeout = timeout;
        }
        if let Some(bytes) = args.max_memory {
            limits.max_memory = bytes;
        }
        if let Some(bytes) = args.max_output {
            limits.max_output = bytes;
        }
        if let Some(calls) = args.max_tool_calls {
            limits.max_tool_calls = calls;
        }
        Ok(config)
    }

    /// Resolves the configuration shared by every workspace command.
    pub fn load(common: &CommonArgs) -> Result<Self> {
        let workspace = resolve_workspace(common.workspace.as_deref())?;
        let mut sources = Vec::new();
        if let Some(dir) = user_dir() {
            sources.extend(read_source(&dir.join("config.json"))?);
        }
        sources.extend(read_source(&workspace.join(".codeact").join("config.json"))?);
        // Later sources win: user, then project, then environment, then flags.
        let mut config = Self {
            workspace,
            backend: BackendChoice::Auto,
            limits: Limits::default(),
            tools: ToolFilter::default(),
            mode: Mode::Off,
            network: NetworkPolicy::default(),
        };
        for source in &sources {
            config.apply(source)?;
        }
        if let Some(list) = env::var(env::TOOLS) {
            config.tools.allow = Some(split_list(&list));
        }
        if let Some(list) = env::var(env::DISABLE) {
            config.tools.deny = split_list(&list);
        }
        if let Some(mode) = env::var(env::MODE) {
            config.mode = Mode::parse(&mode).ok_or_else(|| {
                InvalidConfig(format!("{}={mode:?} is not a mode (off, nudge, exclusive)", env::MODE))
            })?;
        }
        if let Some(backend) = common.backend {
            config.backend = backend;
        }
        Ok(config)
    }

    fn apply(&mut self, source: &Source) -> Result<()> {
        let file = &source.file;
        let path = source.path.display().to_string();
        if let Some(enabled) = &file.enabled {
            self.tools.allow = Some(enabled.clone());
        }
        if let Some(disabled) = &file.disabled {
            self.tools.deny.clone_from(disabled);
        }
        if let Some(backend) = file.backend {
            self.backend = backend;
        }
        if let Some(mode) = file.mode {
            self.mode = mode;
        }
        if let Some(network) = &file.network {
            if let Some(allow) = network.allow_private {
                self.network.allow_private = allow;
            }
            if let Some(hosts) = &network.allowed_hosts {
                self.network.allowed_hosts.clone_from(hosts);
            }
        }
        if let Some(limits_file) = &file.limits {
            if let Some(seconds) = limits_file.timeout {
                self.limits.timeout =
                    limits::parse_timeout(seconds).map_err(|e| invalid(&path, "limits.timeout", &e))?;
            }
            if let Some(size) = &limits_file.max_memory {
                let parsed = match size {
                    SizeValue::Bytes(bytes) => usize::try_from(*bytes).map_err(|e| e.to_string()),
                    SizeValue::Text(text) => limits::parse_size(text),
                };
                self.limits.max_memory = parsed.map_err(|e| invalid(&path, "limits.max_memory", &e))?;
            }
            if let Some(bytes) = limits_file.max_output {
                self.limits.max_output =
                    usize::try_from(bytes).map_err(|e| invalid(&path, "limits.max_output", &e.to_string()))?;
            }
            if let Some(calls) = limits_file.max_tool_calls {
                self.limits.max_tool_calls = calls;
            }
        }
        Ok(())
    }
}

/// The workspace directory, made absolute and canonical; it must exist.
fn resolve_workspace(flag: Option<&Path>) -> Result<PathBuf> {
    let dir = match flag {
        Some(dir) => dir.to_path_buf(),
        None => std::env::current_dir().context("failed to read the current directory")?,
    };
    let canonical = dir.canonicalize().with_context(|| format!("workspace `{}` is not accessible", dir.display()))?;
    if !canonical.is_dir() {
        bail!("workspace `{}` is not a directory", dir.display());
    }
    Ok(canonical)
}

/// Reads one config file if it exists. Errors name the file, the key and the position.
fn read_source(path: &Path) -> Result<Option<Source>> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(err).with_context(|| format!("failed to read `{}`", path.display())),
    };
    let file = parse_config(&text)
        .map_err(|message| InvalidConfig(format!("invalid configuration in `{}`: {message}", path.display())))?;
    Ok(Some(Source { path: path.to_path_buf(), file }))
}

/// Checks the text of a `config.json`: `Err` names the key and the position.
pub fn check_text(text: &str) -> Result<(), String> {
    parse_config(text).map(|_| ())
}

/// Parses config text, naming the offending key in the error (`key `limits.timeout`: …`).
fn parse_config(text: &str) -> Result<ConfigFile, String> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(&mut deserializer).map_err(|err| {
        let key = err.path().to_string();
        let inner = err.into_inner();
        if key == "." || key.is_empty() { inner.to_string() } else { format!("key `{key}`: {inner}") }
    })
}

fn split_list(list: &str) -> Vec<String> {
    list.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned).collect()
}

/// An error in a config file's `key`.
fn invalid(path: &str, key: &str, message: &str) -> anyhow::Error {
    InvalidConfig(format!("invalid configuration in `{path}`: key `{key}`: {message}")).into()
}

/// Marks config errors so the error printer picks exit code 4.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct InvalidConfig(pub String);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_keys_are_named() {
        let err = parse_config(r#"{"limits": {"timeot": 3}}"#).err().unwrap_or_default();
        assert!(err.starts_with("key `limits.timeot`: unknown field `timeot`"), "{err}");
    }

    #[test]
    fn wrong_types_are_named() {
        let err = parse_config(r#"{"enabled": "view"}"#).err().unwrap_or_default();
        assert!(err.starts_with("key `enabled`: invalid type: string \"view\""), "{err}");
    }

    #[test]
    fn sizes_may_be_numbers_or_strings() {
        let file = parse_config(r#"{"limits": {"max_memory": "1GiB"}}"#);
        assert!(matches!(
            file,
            Ok(ConfigFile { limits: Some(LimitsFile { max_memory: Some(SizeValue::Text(_)), .. }), .. })
        ));
    }

    #[test]
    fn deny_list_beats_allow_list() {
        let filter = ToolFilter { allow: Some(vec!["view".into(), "bash".into()]), deny: vec!["bash".into()] };
        assert!(filter.allows("view"));
        assert!(!filter.allows("bash"));
        assert!(!filter.allows("grep"));
    }
}
