//! Flags, environment and `config.json` files resolved into one [`Config`].
//!
//! Precedence, highest first: flags, then `CODEACT_*` variables, then
//! `<workspace>/.codeact/config.json`, then the user's `config.json`, then defaults. Unknown
//! keys and wrong types are errors naming the file and the key; nothing in a config file is
//! silently ignored.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde::Deserialize;

use crate::backend::Choice;
use crate::catalog::ToolFilter;
use crate::hook::mode::Mode;
use crate::limits::{self, Limits};
use crate::tools::network::NetworkPolicy;
use crate::{dirs, env};

/// Everything a command needs to know, resolved once.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    /// The workspace root, canonical.
    pub(crate) workspace: PathBuf,
    /// The user's config directory, when there is one.
    pub(crate) user_dir: Option<PathBuf>,
    /// The backend asked for (`auto` until a backend is selected).
    pub(crate) backend: Choice,
    pub(crate) limits: Limits,
    pub(crate) tools: ToolFilter,
    /// The hook's enforcement mode.
    pub(crate) mode: Mode,
    /// In nudge mode, the consecutive read-only call that is denied.
    pub(crate) nudge_after: u32,
    pub(crate) network: NetworkPolicy,
}

/// Default for `CODEACT_NUDGE_AFTER`.
const NUDGE_AFTER: u32 = 3;

/// What the command line sets, above every other source.
#[derive(Debug, Clone, Default)]
pub(crate) struct Overrides {
    pub(crate) backend: Option<Choice>,
    pub(crate) workspace: Option<PathBuf>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) max_memory: Option<usize>,
    pub(crate) max_output: Option<usize>,
    pub(crate) max_tool_calls: Option<u64>,
}

/// One `config.json`, exactly as written. Every field is optional; unknown ones are errors.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    enabled: Option<Vec<String>>,
    disabled: Option<Vec<String>>,
    backend: Option<Choice>,
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

impl Config {
    /// Resolves the configuration: files, then the environment, then `overrides`.
    pub(crate) fn load(overrides: &Overrides) -> Result<Self> {
        let workspace = resolve_workspace(overrides.workspace.as_deref())?;
        let user_dir = dirs::config();
        let mut sources = Vec::new();
        if let Some(dir) = &user_dir {
            sources.extend(read_source(&dir.join("config.json"))?);
        }
        sources.extend(read_source(&workspace.join(".codeact").join("config.json"))?);
        // Later sources win: user, then project, then environment, then flags.
        let mut config = Self {
            workspace,
            user_dir,
            backend: Choice::Auto,
            limits: Limits::default(),
            tools: ToolFilter::default(),
            mode: Mode::Off,
            nudge_after: NUDGE_AFTER,
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
        if let Some(backend) = env::var(env::BACKEND) {
            config.backend = <Choice as clap::ValueEnum>::from_str(&backend, true).map_err(|_| {
                InvalidConfig(format!("{}={backend:?} is not a backend (auto, monty, wasm)", env::BACKEND))
            })?;
        }
        if let Some(after) = env::var(env::NUDGE_AFTER) {
            config.nudge_after = after.parse().ok().filter(|n| *n > 0).unwrap_or(NUDGE_AFTER);
        }
        config.apply_overrides(overrides);
        Ok(config)
    }

    fn apply_overrides(&mut self, overrides: &Overrides) {
        if let Some(backend) = overrides.backend {
            self.backend = backend;
        }
        let limits = &mut self.limits;
        if let Some(timeout) = overrides.timeout {
            limits.timeout = timeout;
        }
        if let Some(bytes) = overrides.max_memory {
            limits.max_memory = bytes;
        }
        if let Some(bytes) = overrides.max_output {
            limits.max_output = bytes;
        }
        if let Some(calls) = overrides.max_tool_calls {
            limits.max_tool_calls = calls;
        }
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
pub(crate) fn check_text(text: &str) -> Result<(), String> {
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
pub(crate) struct InvalidConfig(pub(crate) String);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_keys_are_named() {
        let err = parse_config(r#"{"limits": {"timeot": 3}}"#).unwrap_err();
        assert!(err.starts_with("key `limits.timeot`: unknown field `timeot`"), "{err}");
    }

    #[test]
    fn wrong_types_are_named() {
        let err = parse_config(r#"{"enabled": "view"}"#).unwrap_err();
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
}
