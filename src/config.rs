//! Flags, environment and `config.json` files resolved into one [`Config`].
//!
//! Precedence, highest first: flags, then `CODEACT_*` variables, then
//! `<workspace>/.codeact/config.json`, then the user's `config.json`, then defaults. Unknown
//! keys and wrong types are errors naming the file and the key; nothing in a config file is
//! silently ignored.
//!
//! The project's file comes with the repository, so it may only tighten the user's settings
//! unless the user trusts it (`codeact trust`): it adds to the disabled tools, narrows the
//! enabled ones, lowers limits, makes the hook's mode stricter and narrows the network policy.
//! A key that would loosen them (re-enabling a tool, a weaker mode, higher limits, network
//! allowances, another backend, more tools folders) is ignored, and named, until the file is
//! trusted.
//!
//! `tool_dirs` names folders of tool files: in the user's file relative to the user config dir,
//! in the project's relative to the workspace, which no entry may leave. With the `--tools`
//! folders they give [`Config::tool_dirs`], the one list every command builds its catalogue from
//! (`usertools::folders` orders it and says whose each folder is).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde::Deserialize;

use crate::backend::Choice;
use crate::catalog::ToolFilter;
use crate::guest::GuestInstall;
use crate::hook::mode::Mode;
use crate::limits::{self, Limits};
use crate::platform::Canonical as _;
use crate::tools::network::NetworkPolicy;
use crate::trust::{self, Approved};
use crate::usertools::folders::{self, Base, Named, ToolDir};
use crate::{bounded, dirs, env};

/// The project's config file, relative to the workspace.
pub(crate) const PROJECT_FILE: &str = ".codeact/config.json";

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
    /// What the user approved in this workspace.
    pub(crate) trust: Approved,
    /// The project's config file, when it has keys that loosen the user's settings.
    pub(crate) project: Option<ProjectFile>,
    /// Why the project's config file was left out, when [`Overrides::skip_unusable_project`]
    /// let it be.
    pub(crate) unusable_project: Option<String>,
    /// The folders of tool files, in the order they count, each with whose it is.
    pub(crate) tool_dirs: Vec<ToolDir>,
    /// When codeact fetches the CPython guest by itself.
    pub(crate) guest_install: GuestInstall,
    /// The command that approves what this configuration reads from the workspace:
    /// `codeact trust`, with the same `--tools` folders (a plain `codeact trust` replaces what
    /// was approved with what it reads itself).
    pub(crate) trust_command: String,
    /// The folders asked for, by the flags and the files applied.
    named: Named,
}

/// A project config file that would loosen the user's settings.
#[derive(Debug, Clone)]
pub(crate) struct ProjectFile {
    /// The file's content, as read (what `codeact trust` approves).
    pub(crate) content: Vec<u8>,
    /// The keys that loosen the user's settings, as written (`disabled`, `limits.timeout`, …).
    pub(crate) loosening: Vec<&'static str>,
    /// Whether the user trusts this content, so that every key applies.
    pub(crate) trusted: bool,
    /// Its `tool_dirs`, absolute, which count only when it is trusted.
    pub(crate) tool_dirs: Vec<PathBuf>,
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
    /// `--read-only`.
    pub(crate) read_only: bool,
    /// `--tools` folders, as given (relative to the current directory).
    pub(crate) tools: Vec<PathBuf>,
    /// Leave out a project config file that cannot be read or is invalid (its error is kept in
    /// [`Config::unusable_project`]) instead of failing: the hooks, which a broken repository
    /// file must not switch off.
    pub(crate) skip_unusable_project: bool,
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
    tool_dirs: Option<Vec<String>>,
    guest_install: Option<GuestInstall>,
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
struct ConfigSource {
    path: PathBuf,
    scope: Scope,
    file: ConfigFile,
    content: Vec<u8>,
}

/// Whose a config file is, which says what its `tool_dirs` are relative to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// The user's: relative to the user config dir.
    User,
    /// The project's: relative to the workspace, which they may not leave.
    Project,
}

impl Config {
    /// Resolves the configuration: files, then the environment, then `overrides`.
    pub(crate) fn load(overrides: &Overrides) -> Result<Self> {
        let flags = folders::flags(&overrides.tools)?;
        let workspace = resolve_workspace(overrides.workspace.as_deref())?;
        let user_dir = dirs::config();
        let trust = trust::approved(&workspace);
        let named = Named { flags, user_config: user_dir.clone(), ..Named::default() };
        let mut config = Self {
            workspace,
            user_dir,
            backend: Choice::Auto,
            limits: Limits::default(),
            tools: ToolFilter::default(),
            mode: Mode::Off,
            nudge_after: NUDGE_AFTER,
            network: NetworkPolicy::default(),
            trust,
            project: None,
            unusable_project: None,
            tool_dirs: Vec::new(),
            guest_install: GuestInstall::default(),
            trust_command: String::new(),
            named,
        };
        // Later sources win: user, then project, then environment, then flags.
        if let Some(dir) = &config.user_dir
            && let Some(source) = read_source(&dir.join("config.json"), Scope::User)?
        {
            config.apply(&source)?;
        }
        let project = read_source(&config.workspace.join(PROJECT_FILE), Scope::Project)
            .and_then(|source| source.map(|source| config.apply_project(source)).transpose());
        match project {
            Err(err) if overrides.skip_unusable_project => config.unusable_project = Some(format!("{err:#}")),
            result => drop(result?),
        }
        if let Some(list) = env::var(env::TOOLS) {
            config.tools.allow = Some(split_list(&list));
        }
        if let Some(list) = env::var(env::DISABLE) {
            config.tools.deny = split_list(&list);
        }
        if let Some(mode) = env::var(env::MODE) {
            config.mode = Mode::parse(&mode)
                .ok_or_else(|| InvalidConfig(format!("{}={mode:?} is not a mode ({})", env::MODE, Mode::names())))?;
        }
        // clap reads `CODEACT_BACKEND` with `--backend`, so a command that has that flag finds
        // the variable in `overrides`; this is for those that have none (the hooks, `trust`).
        if overrides.backend.is_none()
            && let Some(backend) = env::var(env::BACKEND)
        {
            config.backend = backend_variable(&backend)?;
        }
        if let Some(value) = env::var(env::GUEST_INSTALL) {
            config.guest_install = GuestInstall::parse(&value).ok_or_else(|| {
                InvalidConfig(format!("{}={value:?} is not one of suggest, auto, never", env::GUEST_INSTALL))
            })?;
        }
        if let Some(after) = env::var(env::NUDGE_AFTER) {
            config.nudge_after = after.parse().ok().filter(|n| *n > 0).unwrap_or(NUDGE_AFTER);
        }
        config.apply_overrides(overrides);
        config.tool_dirs = folders::tool_dirs(&config.workspace, &config.named);
        let (workspace, user_dir) = (&config.workspace, config.user_dir.as_deref());
        let workspace_flags = overrides.tools.iter().zip(&config.named.flags).filter_map(|(given, path)| {
            (folders::origin(workspace, user_dir, path) == folders::Origin::Workspace).then_some(given)
        });
        config.trust_command = trust_command(workspace_flags);
        Ok(config)
    }

    /// The tools folders as they are once the user trusts the project's config file too: what
    /// `codeact trust` lists and approves.
    #[must_use]
    pub(crate) fn tool_dirs_once_trusted(&self) -> Vec<ToolDir> {
        let mut named = self.named.clone();
        if let Some(project) = &self.project {
            named.project.clone_from(&project.tool_dirs);
        }
        folders::tool_dirs(&self.workspace, &named)
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
        limits.read_only |= overrides.read_only;
    }

    /// Applies the project's file: every key when the user trusts it, otherwise only what
    /// tightens the settings so far.
    fn apply_project(&mut self, source: ConfigSource) -> Result<()> {
        let mut loose = self.clone();
        loose.apply(&source)?;
        let mut tight = self.clone();
        tight.tighten(&loose);
        let loosening = loose.differences(&tight);
        if loosening.is_empty() {
            *self = tight;
            return Ok(());
        }
        let trusted = self.trust.trusts(PROJECT_FILE, &source.content);
        let tool_dirs = loose.named.project.clone();
        *self = if trusted { loose } else { tight };
        self.project = Some(ProjectFile { content: source.content, loosening, trusted, tool_dirs });
        Ok(())
    }

    /// Takes from `given` (these settings with a file applied as written) only what tightens
    /// them: disabled tools are added, enabled ones narrowed, limits lowered, the mode made
    /// stricter, the network policy narrowed, fetching CPython restrained. The backend and the
    /// tools folders stay.
    fn tighten(&mut self, given: &Self) {
        if let Some(enabled) = &given.tools.allow {
            self.tools.allow = Some(match &self.tools.allow {
                Some(allow) => enabled.iter().filter(|name| allow.contains(name)).cloned().collect(),
                None => enabled.clone(),
            });
        }
        for name in &given.tools.deny {
            if !self.tools.deny.contains(name) {
                self.tools.deny.push(name.clone());
            }
        }
        self.mode = self.mode.max(given.mode);
        self.guest_install = self.guest_install.min(given.guest_install);
        self.network.allow_private &= given.network.allow_private;
        let hosts = &given.network.allowed_hosts;
        self.network.allowed_hosts.retain(|host| hosts.contains(host));
        let (limits, given) = (&mut self.limits, &given.limits);
        limits.timeout = limits.timeout.min(given.timeout);
        limits.max_memory = limits.max_memory.min(given.max_memory);
        limits.max_output = limits.max_output.min(given.max_output);
        limits.max_tool_calls = limits.max_tool_calls.min(given.max_tool_calls);
    }

    /// The keys whose settings differ between `self` and `other`.
    fn differences(&self, other: &Self) -> Vec<&'static str> {
        let same_set = |a: &[String], b: &[String]| a.iter().all(|x| b.contains(x)) && b.iter().all(|x| a.contains(x));
        let allow_same = match (&self.tools.allow, &other.tools.allow) {
            (Some(a), Some(b)) => same_set(a, b),
            (a, b) => a.is_none() && b.is_none(),
        };
        let checks = [
            ("enabled", allow_same),
            ("disabled", same_set(&self.tools.deny, &other.tools.deny)),
            ("backend", self.backend == other.backend),
            ("mode", self.mode == other.mode),
            ("network.allow_private", self.network.allow_private == other.network.allow_private),
            ("network.allowed_hosts", same_set(&self.network.allowed_hosts, &other.network.allowed_hosts)),
            ("limits.timeout", self.limits.timeout == other.limits.timeout),
            ("limits.max_memory", self.limits.max_memory == other.limits.max_memory),
            ("limits.max_output", self.limits.max_output == other.limits.max_output),
            ("limits.max_tool_calls", self.limits.max_tool_calls == other.limits.max_tool_calls),
            ("tool_dirs", self.named.project == other.named.project),
            ("guest_install", self.guest_install == other.guest_install),
        ];
        checks.into_iter().filter(|(_, same)| !same).map(|(key, _)| key).collect()
    }

    /// What this configuration ignores until the user trusts it: the project file's loosening
    /// keys, when it has any and is not trusted.
    #[must_use]
    pub(crate) fn ignored(&self) -> Option<String> {
        let project = self.project.as_ref().filter(|project| !project.trusted)?;
        Some(format!("{PROJECT_FILE} ({})", project.loosening.join(", ")))
    }

    fn apply(&mut self, source: &ConfigSource) -> Result<()> {
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
        if let Some(guest_install) = file.guest_install {
            self.guest_install = guest_install;
        }
        if let Some(entries) = &file.tool_dirs {
            let (base, list) = match source.scope {
                Scope::User => (Base::UserConfig(source.path.parent().unwrap_or(Path::new("."))), &mut self.named.user),
                Scope::Project => (Base::Workspace(&self.workspace), &mut self.named.project),
            };
            let resolved: Result<Vec<PathBuf>, String> =
                entries.iter().map(|entry| folders::config_entry(base, entry)).collect();
            *list = resolved.map_err(|message| invalid(&path, "tool_dirs", &message))?;
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
    let canonical = dir.canonical().with_context(|| format!("workspace `{}` is not accessible", dir.display()))?;
    if !canonical.is_dir() {
        bail!("workspace `{}` is not a directory", dir.display());
    }
    Ok(canonical)
}

/// `codeact trust` with `--tools` for each of `tools`, as given, quoted for a POSIX shell.
fn trust_command<'a>(tools: impl Iterator<Item = &'a PathBuf>) -> String {
    let mut command = "codeact trust".to_owned();
    for dir in tools {
        let dir = dir.to_string_lossy();
        let plain = !dir.is_empty() && dir.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+,:@%".contains(c));
        if plain {
            let _ = write!(command, " --tools {dir}");
        } else {
            let _ = write!(command, " --tools '{}'", dir.replace('\'', r"'\''"));
        }
    }
    command
}

/// Reads one config file if it exists. Errors name the file, the key and the position.
fn read_source(path: &Path, scope: Scope) -> Result<Option<ConfigSource>> {
    let content = match bounded::read(path, bounded::MAX_FILE_BYTES) {
        Ok(Some(content)) => content,
        Ok(None) => return Ok(None),
        Err(err) => return Err(InvalidConfig(format!("cannot read `{}`: {err}", path.display())).into()),
    };
    let text = std::str::from_utf8(&content)
        .map_err(|_| InvalidConfig(format!("invalid configuration in `{}`: not UTF-8 text", path.display())))?;
    let file = parse_config(text)
        .map_err(|message| InvalidConfig(format!("invalid configuration in `{}`: {message}", path.display())))?;
    Ok(Some(ConfigSource { path: path.to_path_buf(), scope, file, content }))
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

/// The backend `CODEACT_BACKEND` names, read by the parser clap reads `--backend` with.
fn backend_variable(value: &str) -> Result<Choice, InvalidConfig> {
    <Choice as clap::ValueEnum>::from_str(value, false)
        .map_err(|_| InvalidConfig(format!("{}={value:?} is not a backend ({})", env::BACKEND, Choice::names())))
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
    fn a_backend_the_variable_names_that_does_not_exist_is_refused_with_every_backend_listed() {
        let err = backend_variable("bogus").unwrap_err();
        assert_eq!(err.to_string(), r#"CODEACT_BACKEND="bogus" is not a backend (auto, monty, wasm, hyperlight)"#);
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
