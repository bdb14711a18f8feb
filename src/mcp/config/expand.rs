//! Variables in config values: `${env:NAME}`, `${NAME}` and `$NAME`; `${NAME:-default}` and
//! `${env:NAME:-default}` as in sh; VS Code's `${workspaceFolder}`, `${workspaceFolderBasename}`
//! and `${userHome}`. VS Code's `${input:ID}` cannot be honoured (codeact never prompts), so an
//! entry using it is a problem rather than a server that gets the placeholder as its secret.
//! Every value put in is noted, so [`Server::redact`] can take it out of any text shown.

use std::cell::RefCell;
use std::path::Path;

use super::entry::{Fault, Server};
use super::env_file::EnvFile;

impl Server {
    /// `text` with every expanded value replaced by the variable that names it.
    #[must_use]
    pub(crate) fn redact(&self, text: &str) -> String {
        let mut out = text.to_owned();
        let mut values: Vec<&(String, String)> = self.expanded.iter().filter(|(_, value)| value.len() >= 4).collect();
        // Longer values first, so a value that contains another is replaced whole.
        values.sort_by_key(|(_, value)| std::cmp::Reverse(value.len()));
        for (name, value) in values {
            out = out.replace(value.as_str(), name);
        }
        out
    }
}

/// What an entry is read for, which decides what happens to what is not there yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Purpose {
    /// To start it: an unset `${env:NAME}` or a missing `envFile` makes it a problem.
    Run,
    /// To show it as configured (`codeact trust`): no `envFile` is read, and what is missing is
    /// no problem (the text shown is the configured one).
    Preview,
    /// To check it (`codeact check`): an unset `${env:NAME}` or a missing `envFile` is a note,
    /// since either may be there where codeact runs.
    Check,
}

/// Which spellings of variables a file's values use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Syntax {
    /// Every spelling above: the editors', Claude Code's, Gemini CLI's.
    Editor,
    /// Only `${env:NAME}` and `${env:NAME:-default}`: what codeact wrote converting a file whose
    /// agent expands nothing else (Codex CLI, OpenCode), so a `$` the user wrote stays as it is.
    EnvOnly,
}

/// What variables expand to, and what an entry is read for.
pub(crate) struct Vars<'a> {
    /// `${workspaceFolder}`, and what a relative `cwd` or `envFile` is relative to.
    pub(super) workspace: &'a Path,
    /// The environment.
    pub(super) lookup: &'a dyn Fn(&str) -> Option<String>,
    pub(super) mode: Purpose,
    /// In [`Purpose::Check`], what would be missing at run time, noted instead of failing.
    notes: RefCell<Vec<Fault>>,
    /// For a workspace config file the user trusts, its env files in the workspace as they were
    /// approved: read from here, never again from disk, so what runs is what was approved.
    pub(super) approved_env_files: Option<Vec<EnvFile>>,
    pub(super) syntax: Syntax,
}

impl<'a> Vars<'a> {
    #[must_use]
    pub(crate) fn new(workspace: &'a Path, lookup: &'a dyn Fn(&str) -> Option<String>, mode: Purpose) -> Self {
        Self {
            workspace,
            lookup,
            mode,
            notes: RefCell::new(Vec::new()),
            approved_env_files: None,
            syntax: Syntax::Editor,
        }
    }

    /// The notes made since the last call (see [`Purpose::Check`]).
    pub(crate) fn take_notes(&self) -> Vec<Fault> {
        self.notes.take()
    }

    /// `fault` about something missing: an error to start a server, a note to check one.
    pub(super) fn missing(&self, fault: Fault) -> Result<(), Fault> {
        if self.mode == Purpose::Run {
            return Err(fault);
        }
        self.notes.borrow_mut().push(fault);
        Ok(())
    }
}

/// Expands `text` for `vars` (see the module's doc). An unset `${env:NAME}` is an error naming
/// it (never a value: no secret is echoed); an unset `$NAME` or `${NAME}` stays as written, so
/// shell text such as `sh -c 'echo $$'` passes through.
#[cfg(test)]
pub(crate) fn expand(text: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let vars = Vars::new(Path::new("/work/proj"), lookup, Purpose::Run);
    expand_into(text, &vars, &mut Vec::new()).map_err(|fault| fault.message)
}

/// `expand`, noting in `expanded` each value put in, with the text that named it.
pub(super) fn expand_into(text: &str, vars: &Vars<'_>, expanded: &mut Vec<(String, String)>) -> Result<String, Fault> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let next = |rest: &str| match vars.syntax {
        Syntax::Editor => rest.find('$'),
        Syntax::EnvOnly => rest.find("${env:"),
    };
    while let Some(at) = next(rest) {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(inner) = after.strip_prefix('{') {
            let end = inner
                .find('}')
                .ok_or_else(|| Fault::new("mcp-variable-invalid", format!("unclosed `${{` in `{text}`")))?;
            let written = &rest[at..at + end + 3];
            out.push_str(&braced(&inner[..end], written, vars, expanded)?);
            rest = &inner[end + 1..];
        } else {
            let end = after.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(after.len());
            let name = &after[..end];
            let written = &rest[at..=at + end];
            match (vars.lookup)(name).filter(|_| !name.is_empty()) {
                Some(value) => {
                    out.push_str(&value);
                    expanded.push((written.to_owned(), value));
                }
                None => out.push_str(written),
            }
            rest = &after[end..];
        }
    }
    out.push_str(rest);
    Ok(out)
}

/// The value of `${inner}`, which is `written` in the text.
fn braced(inner: &str, written: &str, vars: &Vars<'_>, expanded: &mut Vec<(String, String)>) -> Result<String, Fault> {
    if inner.starts_with("input:") {
        return Err(Fault::new(
            "mcp-input-variable",
            format!(
                "VS Code input variables (`{written}`) are not supported: codeact cannot prompt; put the value in \
                 an environment variable and write `${{env:NAME}}`"
            ),
        ));
    }
    let mut noted = |value: String| {
        expanded.push((written.to_owned(), value.clone()));
        value
    };
    let folder = match inner {
        "workspaceFolder" => Some(vars.workspace.display().to_string()),
        "workspaceFolderBasename" => {
            Some(vars.workspace.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default())
        }
        _ => None,
    };
    if let Some(folder) = folder {
        return Ok(noted(folder));
    }
    if inner == "userHome" {
        let Some(home) = (vars.lookup)("HOME") else {
            vars.missing(Fault::new("mcp-env-unset", "`${userHome}` needs `HOME`, which is not set"))?;
            return Ok(String::new());
        };
        return Ok(noted(home));
    }
    let (name, required) = inner.strip_prefix("env:").map_or((inner, false), |name| (name, true));
    let (name, default) = name.split_once(":-").map_or((name, None), |(name, default)| (name, Some(default)));
    let value = (vars.lookup)(name).filter(|_| !name.is_empty());
    match (value, default) {
        // As in sh, an empty value takes the default too; the default is as written.
        (Some(value), Some(_)) if !value.is_empty() => Ok(noted(value)),
        (_, Some(default)) => Ok(default.to_owned()),
        (Some(value), None) => Ok(noted(value)),
        (None, None) if required => {
            vars.missing(Fault::new("mcp-env-unset", format!("environment variable `{name}` is not set")))?;
            Ok(String::new())
        }
        (None, None) => Ok(written.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::super::entry::{ServerEntry, Transport, entry};
    use super::super::fixtures::{env, load_servers, only_server};
    use super::*;

    #[test]
    fn every_variable_spelling_expands() {
        assert_eq!(expand("Bearer ${env:TOKEN}", &env), Ok("Bearer t0k".into()));
        assert_eq!(expand("${HOME}/x:$HOME", &env), Ok("/home/u/x:/home/u".into()));
        assert_eq!(expand("echo $$ $0 ${MISSING} $", &env), Ok("echo $$ $0 ${MISSING} $".into()));
        assert_eq!(expand("a $ b", &env), Ok("a $ b".into()));
        assert_eq!(expand("${env:MISSING}", &env), Err("environment variable `MISSING` is not set".into()));
        assert_eq!(expand("${MISSING", &env), Err("unclosed `${` in `${MISSING`".into()));
    }

    #[test]
    fn defaults_apply_when_a_variable_is_unset_or_empty_and_are_not_expanded() {
        assert_eq!(expand("${MISSING:-fallback}", &env), Ok("fallback".into()));
        assert_eq!(expand("${env:MISSING:-fallback}", &env), Ok("fallback".into()));
        assert_eq!(expand("${EMPTY:-fallback} ${env:EMPTY:-x}", &env), Ok("fallback x".into()));
        assert_eq!(expand("${TOKEN:-fallback} ${env:TOKEN:-x}", &env), Ok("t0k t0k".into()));
        assert_eq!(expand("${MISSING:-}", &env), Ok(String::new()));
        assert_eq!(expand("${MISSING:-$TOKEN}", &env), Ok("$TOKEN".into()));
        // Without a default, an empty value is a value.
        assert_eq!(expand("[${env:EMPTY}]", &env), Ok("[]".into()));
    }

    #[test]
    fn vs_code_variables_name_the_workspace_and_the_home() {
        assert_eq!(
            expand("${workspaceFolder}/bin:${workspaceFolderBasename}:${userHome}", &env),
            Ok("/work/proj/bin:proj:/home/u".into())
        );
        assert_eq!(expand("${userHome}", &|_| None), Err("`${userHome}` needs `HOME`, which is not set".into()));
    }

    #[test]
    fn input_variables_are_refused_with_what_to_write_instead() {
        assert_eq!(
            expand("Bearer ${input:tok}", &env),
            Err("VS Code input variables (`${input:tok}`) are not supported: codeact cannot prompt; put the value in \
                 an environment variable and write `${env:NAME}`"
                .into())
        );
    }

    #[test]
    fn expanded_values_are_redacted_longest_first() {
        let (_temp, loaded) = load_servers(
            &json!({"s": {"command": "x", "args": ["${env:SECRET}", "${userHome}", "${workspaceFolder}"]}}),
            &[],
        );
        let server = only_server(&loaded);
        let Transport::Stdio { args, .. } = &server.transport else { panic!("not stdio") };
        let text = format!("failed: {} in {} at {}/x", args[0], args[1], args[2]);
        assert_eq!(server.redact(&text), "failed: ${env:SECRET} in ${userHome} at ${workspaceFolder}/x");
    }

    #[test]
    fn checking_notes_what_may_be_there_at_run_time_instead_of_failing() {
        let vars = Vars::new(Path::new("/nowhere"), &env, Purpose::Check);
        let value = json!({"command": "x", "args": ["${env:UNSET}"], "envFile": ".env"});
        assert!(matches!(entry("s", &value, Path::new(""), &vars), Ok(ServerEntry::Server(_))));
        assert_eq!(
            vars.take_notes(),
            [
                Fault::new("mcp-env-unset", "environment variable `UNSET` is not set"),
                Fault::new("mcp-env-file", "`envFile` `.env` cannot be read: no such file"),
            ]
        );
        assert_eq!(vars.take_notes(), []);
    }
}
