//! The write-protected paths: files that make the host run something or tell an agent what to
//! do — git's config and hooks, codeact's own config and tools, MCP server lists, editor and
//! agent settings, direnv's `.envrc` — and codeact's and Copilot's own directories when they
//! lie in the workspace. A program may read them; `create`, `edit` and `sql` never write them,
//! so a program cannot plant what the next run, the next `git status` or the next chat would
//! execute.
//!
//! The rules are matched on every write, by [`Protected::rule_for`], against the path as the
//! program gave it and against where it really leads (symlinks inside the workspace resolved):
//! the workspace asks before anything is written. Names are compared case-insensitively and
//! without trailing dots and spaces, which case-insensitive and Windows file systems ignore,
//! so `.GIT/config` is `.git/config` wherever it would be the same file. The named rules match
//! at any depth: a subdirectory becomes a workspace of its own once it is opened as one, so
//! `sub/.codeact/tools/x.py` is as dangerous as `.codeact/tools/x.py`.

use std::path::{Component, Path, PathBuf};

/// A path no tool writes, and why.
#[derive(Debug, Clone, Copy)]
struct Rule {
    /// The rule as it is shown.
    shown: &'static str,
    /// The names it matches, each the start of a path or below any directory.
    names: &'static [&'static str],
    why: &'static str,
}

/// Every named rule. A path is protected when its names contain a rule's names in a row.
const RULES: &[Rule] = &[
    Rule { shown: ".git/**", names: &[".git"], why: "git runs the commands its config and hooks name" },
    Rule { shown: ".codeact/**", names: &[".codeact"], why: "codeact loads its config and tools from there" },
    Rule { shown: ".mcp.json", names: &[".mcp.json"], why: "it starts MCP servers" },
    Rule { shown: ".vscode/**", names: &[".vscode"], why: "VS Code runs the tasks and MCP servers set there" },
    Rule {
        shown: ".github/copilot/**",
        names: &[".github", "copilot"],
        why: "Copilot loads MCP servers and settings from there",
    },
    Rule { shown: ".github/hooks/**", names: &[".github", "hooks"], why: "Copilot runs the hooks there" },
    Rule {
        shown: ".github/instructions/**",
        names: &[".github", "instructions"],
        why: "Copilot reads them as instructions in every session",
    },
    Rule { shown: ".github/agents/**", names: &[".github", "agents"], why: "Copilot loads them as agents" },
    Rule { shown: ".github/prompts/**", names: &[".github", "prompts"], why: "Copilot offers them as prompts" },
    Rule {
        shown: ".github/copilot-instructions.md",
        names: &[".github", "copilot-instructions.md"],
        why: "Copilot reads it as instructions in every session",
    },
    Rule { shown: "AGENTS.md", names: &["agents.md"], why: "coding agents read it as instructions" },
    Rule { shown: "CLAUDE.md", names: &["claude.md"], why: "Claude Code reads it as instructions" },
    Rule { shown: ".claude/**", names: &[".claude"], why: "Claude Code runs the hooks and loads the settings there" },
    Rule { shown: ".envrc", names: &[".envrc"], why: "direnv runs it in the shell" },
    Rule { shown: ".husky/**", names: &[".husky"], why: "git runs the hooks there on commit" },
    Rule {
        shown: ".pre-commit-config.yaml",
        names: &[".pre-commit-config.yaml"],
        why: "pre-commit runs the commands it names on commit",
    },
];

/// A directory of the user's, protected with everything in it while it lies in the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
struct OwnDir {
    /// The rule as it is shown: the directory as configured, and what it is.
    shown: String,
    /// Its folded names below the workspace root; none when the workspace lies inside it.
    names: Vec<String>,
    /// Only the dot-files and dot-directories directly in it (the home directory).
    dot_entries: bool,
    why: &'static str,
}

/// The rules for one workspace: the named ones, and the user's own directories found inside it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Protected {
    own: Vec<OwnDir>,
}

/// The rule a path breaks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hit {
    pub(crate) rule: String,
    pub(crate) why: &'static str,
}

impl Protected {
    /// The rules for the workspace at `root` (canonical): the named ones, plus codeact's own
    /// directories and Copilot's home (`$COPILOT_HOME`) when they lie in it, and the dot-files of
    /// the home directory (shell profiles, git's and ssh's config) when it does.
    #[must_use]
    pub(crate) fn for_root(root: &Path) -> Self {
        let own = [
            (crate::dirs::config(), "the user config dir", "codeact loads the user's config and tools from there"),
            (crate::dirs::state(), "codeact's state dir", "codeact records the workspaces the user trusts there"),
            (crate::dirs::cache(), "codeact's cache dir", "codeact runs the compiled guest it caches there"),
            (crate::dirs::data(), "codeact's data dir", "codeact keeps what it installs there"),
            (crate::dirs::runtime(), "codeact's runtime dir", "the hooks keep their state there"),
            (
                crate::copilot::copilot_home(),
                "Copilot's home ($COPILOT_HOME)",
                "Copilot loads global instructions, agents and settings from there",
            ),
        ];
        let mut protected = Self::default();
        for (dir, what, why) in own {
            if let Some(dir) = dir {
                protected.add_own(root, &dir, what, why, false);
            }
        }
        if let Some(home) = crate::env::var(crate::env::HOME) {
            let why = "shells, git, ssh and other programs run or trust what is there";
            protected.add_own(root, Path::new(&home), "the home directory's dot-files", why, true);
        }
        protected
    }

    /// Protects a folder of tool files that lies in the workspace at `root`, with everything
    /// in it, and where a JavaScript tool's `require()` finds packages from there: the
    /// `node_modules/` and `package.json` of each folder from it up to `root`. The program must
    /// not change what a tool runs, in this run or the next.
    pub(crate) fn add_tool_dir(&mut self, root: &Path, dir: &Path) {
        let why = "codeact runs the tools there on the host";
        self.add_own(root, dir, "a tools folder", why, false);
        let packages = "a JavaScript tool's require() loads packages from there";
        for folder in dir.ancestors().take_while(|folder| folder.starts_with(root)) {
            for name in ["node_modules", "package.json"] {
                self.add_own(root, &folder.join(name), "packages of a tools folder", packages, false);
            }
        }
    }

    /// Protects `dir` (as given, and where it really is) when it lies in `root`, or `root`
    /// lies in it.
    fn add_own(&mut self, root: &Path, dir: &Path, what: &str, why: &'static str, dot_entries: bool) {
        let Ok(given) = std::path::absolute(dir) else { return };
        let root_names = folded(root);
        for candidate in [lexical(&given), real(&given)] {
            let names = folded(&candidate);
            let inside = if names.starts_with(&root_names) {
                names[root_names.len()..].to_vec()
            } else if root_names.starts_with(&names) && !dot_entries {
                Vec::new()
            } else {
                continue;
            };
            let shown = if dot_entries {
                format!("{}/.* ({what})", dir.display())
            } else {
                format!("{}/** ({what})", dir.display())
            };
            let rule = OwnDir { shown, names: inside, dot_entries, why };
            if !self.own.contains(&rule) {
                self.own.push(rule);
            }
        }
    }

    /// The rule that protects `rel` (relative to the root, normalised), if one does.
    #[must_use]
    pub(crate) fn rule_for(&self, rel: &Path) -> Option<Hit> {
        let names = folded(rel);
        for rule in RULES {
            if names.windows(rule.names.len()).any(|window| window.iter().zip(rule.names).all(|(a, b)| a == b)) {
                return Some(Hit { rule: format!("`{}`", rule.shown), why: rule.why });
            }
        }
        self.own
            .iter()
            .find(|dir| {
                names.starts_with(&dir.names)
                    && (!dir.dot_entries || names.get(dir.names.len()).is_some_and(|name| name.starts_with('.')))
            })
            .map(|dir| Hit { rule: format!("`{}`", dir.shown), why: dir.why })
    }
}

/// A path's names as they are compared: lowercase, without trailing dots and spaces.
fn folded(path: &Path) -> Vec<String> {
    path.components()
        .filter_map(|component| match component {
            Component::Normal(name) => Some(fold(&name.to_string_lossy())),
            Component::RootDir | Component::Prefix(_) => Some("/".to_owned()),
            Component::CurDir | Component::ParentDir => None,
        })
        .collect()
}

fn fold(name: &str) -> String {
    name.to_lowercase().trim_end_matches(['.', ' ']).to_owned()
}

/// `path` with `.` and `..` resolved by name.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Where `path` really is: its longest existing ancestor canonicalised, the rest appended.
fn real(path: &Path) -> PathBuf {
    let mut missing = Vec::new();
    let mut at = lexical(path);
    loop {
        if let Ok(found) = std::fs::canonicalize(&at) {
            return missing.iter().rev().fold(found, |path, name: &std::ffi::OsString| path.join(name));
        }
        match (at.file_name().map(std::ffi::OsStr::to_os_string), at.parent()) {
            (Some(name), Some(parent)) => {
                missing.push(name);
                at = parent.to_path_buf();
            }
            _ => return lexical(path),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(protected: &Protected, path: &str) -> Option<String> {
        protected.rule_for(Path::new(path)).map(|hit| hit.rule)
    }

    #[test]
    fn named_rules_match_at_any_depth_and_in_any_case() {
        let protected = Protected::default();
        for (path, expected) in [
            (".git", "`.git/**`"),
            (".git/config", "`.git/**`"),
            (".GIT/Hooks/pre-commit", "`.git/**`"),
            ("vendor/lib/.git/config", "`.git/**`"),
            (".git./config", "`.git/**`"),
            (".codeact/tools/x.py", "`.codeact/**`"),
            (".mcp.json", "`.mcp.json`"),
            (".vscode/mcp.json", "`.vscode/**`"),
            (".github/copilot/mcp.json", "`.github/copilot/**`"),
            (".github/hooks/hooks.json", "`.github/hooks/**`"),
            (".github/instructions/codeact.instructions.md", "`.github/instructions/**`"),
            (".github/instructions/other.instructions.md", "`.github/instructions/**`"),
            (".github/agents/codeact.agent.md", "`.github/agents/**`"),
            (".github/copilot-instructions.md", "`.github/copilot-instructions.md`"),
            ("AGENTS.md", "`AGENTS.md`"),
            (".husky/pre-commit", "`.husky/**`"),
            (".pre-commit-config.yaml", "`.pre-commit-config.yaml`"),
            (".claude/settings.json", "`.claude/**`"),
            (".envrc", "`.envrc`"),
            ("sub/.envrc", "`.envrc`"),
        ] {
            assert_eq!(rule(&protected, path).as_deref(), Some(expected), "{path}");
        }
    }

    #[test]
    fn ordinary_paths_and_near_misses_are_writable() {
        let protected = Protected::default();
        for path in [".gitignore", ".github/workflows/ci.yml", "src/git/config", "copilot/x", ".envrc.example", "a.py"]
        {
            assert_eq!(rule(&protected, path), None, "{path}");
        }
    }

    #[test]
    fn the_users_directories_are_protected_inside_the_workspace_or_around_it() {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path().canonicalize().unwrap();
        let mut protected = Protected::default();
        protected.add_own(&root, &root.join("home/.config/codeact"), "the user config dir", "why", false);
        assert_eq!(
            rule(&protected, "home/.config/codeact/tools/x.py"),
            Some(format!("`{}/** (the user config dir)`", root.join("home/.config/codeact").display()))
        );
        assert!(rule(&protected, "HOME/.Config/codeact/config.json").is_some());
        assert_eq!(rule(&protected, "home/.config/other"), None);
        let mut around = Protected::default();
        around.add_own(&root.join("ws"), &root, "Copilot's home ($COPILOT_HOME)", "why", false);
        assert!(rule(&around, "anything.txt").is_some());
        let mut elsewhere = Protected::default();
        elsewhere.add_own(&root.join("ws"), &root.join("other"), "the user config dir", "why", false);
        assert_eq!(rule(&elsewhere, "other/x"), None);
    }
}
