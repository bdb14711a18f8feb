//! [`Protected`]: the rules for one workspace — the named ones, the user's own directories
//! that lie in it, and what its walk found — and the lookup of the rule a path breaks.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

use super::named::{PYTHON_ENV, RULES, matches};
use super::{fold, git, scan};
use crate::paths;
use crate::platform::{self, Canonical as _};

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

/// The rules for one workspace: the named ones, the user's own directories found inside it,
/// and what its walk found ([`Protected::add_found`]).
#[derive(Debug, Clone, Default)]
pub(crate) struct Protected {
    /// The folded names of the workspace's own path: a workspace that is itself a protected
    /// folder (`.git`, `.codeact`, a hooks folder's parent…) or lies in one is protected whole.
    root_names: Vec<String>,
    own: Vec<OwnDir>,
    /// The workspace's symbolic links that stay inside it, in the order of their paths.
    pub(super) links: Vec<Link>,
    /// The links by their targets' folded names.
    pub(super) by_target: HashMap<Vec<String>, Vec<usize>>,
    /// Files and folders a protected link leads to, by what they are on disk: (device, inode).
    identities: Vec<((u64, u64), Hit)>,
    /// Why the rules are not known whole: every write is refused.
    unknown: Option<String>,
}

/// A symbolic link and where it leads, both relative to the root.
#[derive(Debug, Clone)]
pub(super) struct Link {
    pub(super) path: PathBuf,
    pub(super) target: PathBuf,
    /// `target`'s folded names.
    pub(super) target_names: Vec<String>,
}

/// The rule a path breaks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hit {
    pub(crate) rule: String,
    pub(crate) why: String,
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
        let mut protected = Self { root_names: folded(root), ..Self::default() };
        for (dir, what, why) in own {
            if let Some(dir) = dir {
                protected.add_own(root, &dir, what, why, false);
            }
        }
        // Every agent's own MCP configuration: codeact and the agent start what it names. Its
        // folder with it (an agent reads instructions and settings beside it), except the home
        // folder itself, of which only the file.
        let home = crate::env::var(crate::env::HOME).map(PathBuf::from);
        for (_, file) in crate::dirs::agent_mcp_files(&crate::env::var) {
            let folder = file.parent().filter(|folder| Some(*folder) != home.as_deref());
            let why = "an agent and codeact start the MCP servers it names";
            protected.add_own(root, folder.unwrap_or(&file), "an agent's MCP configuration", why, false);
        }
        if let Some(home) = crate::env::var(crate::env::HOME) {
            let why = "shells, git, ssh and other programs run or trust what is there";
            protected.add_own(root, Path::new(&home), "the home directory's dot-files", why, true);
        }
        // A workspace inside a Python environment (its `site-packages`, say) is part of it.
        for dir in root.ancestors().skip(1) {
            if dir.join("pyvenv.cfg").is_file() || dir.join("conda-meta").is_dir() {
                protected.add_own(root, dir, "a Python environment", PYTHON_ENV, false);
            }
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
        for folder in dir.ancestors().take_while(|folder| platform::is_within(folder, root)) {
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
        for candidate in [paths::lexical(&given), real(&given)] {
            let names = folded(&candidate);
            let (inside, dot_entries) = if names.starts_with(&root_names) {
                (names[root_names.len()..].to_vec(), dot_entries)
            } else if root_names.starts_with(&names)
                && (!dot_entries || root_names.get(names.len()).is_some_and(|name| name.starts_with('.')))
            {
                // The workspace lies in the folder (for the home directory: in one of its
                // dot-folders): all of it is protected.
                (Vec::new(), false)
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

    /// Adds what the walk of the workspace at `root` found: Python environments, the git
    /// directories and hooks folders of the repositories in it and of the one around it, and
    /// its links, each with the target `resolve` gives it (`None` for one that leads outside,
    /// where no tool writes). A walk or a git config that could not be read whole leaves the
    /// rules unknown.
    pub(crate) fn add_found(
        &mut self,
        root: &Path,
        found: scan::Found,
        mut resolve: impl FnMut(&Path) -> Option<PathBuf>,
    ) {
        self.unknown = found.incomplete;
        for env in &found.envs {
            self.add_own(root, &root.join(env), "a Python environment", PYTHON_ENV, false);
        }
        let home = crate::env::var(crate::env::HOME).map(PathBuf::from);
        let configs = git::user_configs(home.as_deref());
        let around = root.ancestors().skip(1).find(|dir| dir.join(".git").symlink_metadata().is_ok());
        for worktree in found.repos.iter().map(|rel| root.join(rel)).chain(around.map(Path::to_path_buf)) {
            match git::repo(&worktree, &configs, home.as_deref()) {
                Ok(repo) => {
                    for dir in repo.git_dirs.iter().map(|dir| paths::lexical(dir)) {
                        self.add_own(
                            root,
                            &dir,
                            "a git directory",
                            "git runs the commands its config and hooks name",
                            false,
                        );
                    }
                    for file in repo.configs.iter().map(|file| paths::lexical(file)) {
                        self.add_own(root, &file, "a git config file", "git runs the commands it names", false);
                    }
                    for dir in repo.hooks.iter().map(|dir| paths::lexical(dir)) {
                        self.add_own(
                            root,
                            &dir,
                            "git's hooks folder (core.hooksPath)",
                            "git runs the hooks there",
                            false,
                        );
                    }
                }
                Err(err) => self.unknown = Some(err),
            }
        }
        let links = found.links.into_iter().filter_map(|path| {
            let target = resolve(&path)?;
            Some(Link { target_names: folded(&target), path, target })
        });
        self.add_links(links);
    }
    /// Protects the file or folder that is `identity` on disk, wherever it is reached from.
    pub(crate) fn add_identity(&mut self, identity: (u64, u64), hit: Hit) {
        self.identities.push((identity, hit));
    }

    /// The rule that protects what is `identity` on disk, if one does.
    #[must_use]
    pub(crate) fn rule_for_identity(&self, identity: (u64, u64)) -> Option<Hit> {
        self.identities.iter().find(|(id, _)| *id == identity).map(|(_, hit)| hit.clone())
    }

    /// The rule that protects `rel` (relative to the root, normalised), under any name the
    /// workspace's links give it, if one does.
    #[must_use]
    pub(crate) fn rule_for(&self, rel: &Path) -> Option<Hit> {
        if let Some(why) = &self.unknown {
            return Some(Hit {
                rule: "`**` (every path)".to_owned(),
                why: format!(
                    "{why}: too much to find every link, hooks folder and Python environment that would \
                     make a path protected"
                ),
            });
        }
        let aliases = match self.aliases(rel) {
            Ok(aliases) => aliases,
            Err(hit) => return Some(hit),
        };
        aliases.iter().enumerate().find_map(|(at, alias)| {
            let hit = self.named_rule_for(alias)?;
            if at == 0 {
                return Some(hit);
            }
            let rule = format!("{}, as '{}' through symbolic links", hit.rule, shown(alias));
            Some(Hit { rule, why: hit.why })
        })
    }
    /// The named rule or own directory that protects `rel` as it is named. The named rules
    /// match the whole path, the workspace's own included: a program run with `.git` or
    /// `.codeact` as its workspace must not find their files unprotected.
    pub(super) fn named_rule_for(&self, rel: &Path) -> Option<Hit> {
        let names = folded(rel);
        let whole = [self.root_names.as_slice(), names.as_slice()].concat();
        for rule in RULES {
            let matched = whole
                .windows(rule.names.len())
                .any(|window| window.iter().zip(rule.names).all(|(name, pattern)| matches(pattern, name)));
            if matched {
                return Some(Hit { rule: format!("`{}`", rule.shown), why: rule.why.to_owned() });
            }
        }
        self.own
            .iter()
            .find(|dir| {
                names.starts_with(&dir.names)
                    && (!dir.dot_entries || names.get(dir.names.len()).is_some_and(|name| name.starts_with('.')))
            })
            .map(|dir| Hit { rule: format!("`{}`", dir.shown), why: dir.why.to_owned() })
    }
}

/// `path` with only its plain names.
pub(super) fn normal(path: &Path) -> PathBuf {
    path.components().filter(|component| matches!(component, Component::Normal(_))).collect()
}

/// A relative path as messages show it.
pub(super) fn shown(path: &Path) -> String {
    let text = path.to_string_lossy().replace('\\', "/");
    if text.is_empty() { ".".to_owned() } else { text }
}

/// A path's names as they are compared ([`fold::fold`]).
pub(super) fn folded(path: &Path) -> Vec<String> {
    path.components()
        .filter_map(|component| match component {
            Component::Normal(name) => Some(fold::fold(&name.to_string_lossy())),
            Component::RootDir | Component::Prefix(_) => Some("/".to_owned()),
            Component::CurDir | Component::ParentDir => None,
        })
        .collect()
}

/// Where `path` really is: its longest existing ancestor canonicalised, the rest appended.
fn real(path: &Path) -> PathBuf {
    let mut missing = Vec::new();
    let mut at = paths::lexical(path);
    loop {
        if let Ok(found) = at.canonical() {
            return missing.iter().rev().fold(found, |path, name: &std::ffi::OsString| path.join(name));
        }
        match (at.file_name().map(std::ffi::OsStr::to_os_string), at.parent()) {
            (Some(name), Some(parent)) => {
                missing.push(name);
                at = parent.to_path_buf();
            }
            _ => return paths::lexical(path),
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
            (".pre-commit-config.yml", "`.pre-commit-config.yml`"),
            ("lefthook.yml", "`lefthook.*`"),
            ("pkg/.lefthook.toml", "`.lefthook.*`"),
            ("lefthook-local.yaml", "`lefthook-local.*`"),
            (".lefthook/pre-commit/lint.sh", "`.lefthook/**`"),
            (".lintstagedrc", "`.lintstagedrc*`"),
            (".lintstagedrc.mjs", "`.lintstagedrc*`"),
            ("lint-staged.config.cjs", "`lint-staged.config.*`"),
            (".overcommit.yml", "`.overcommit.yml`"),
            ("CLAUDE.local.md", "`CLAUDE.local.md`"),
            ("docs/GEMINI.md", "`GEMINI.md`"),
            (".gemini/settings.json", "`.gemini/**`"),
            (".codex/config.toml", "`.codex/**`"),
            (".cursor/mcp.json", "`.cursor/**`"),
            (".cursorrules", "`.cursorrules`"),
            (".github/skills/setup/SKILL.md", "`.github/skills/**`"),
            ("team.code-workspace", "`*.code-workspace`"),
            (".devcontainer/devcontainer.json", "`.devcontainer/**`"),
            (".devcontainer.json", "`.devcontainer.json`"),
            (".direnv/python-3.12/lib/python3.12/site-packages/x.pth", "`.direnv/**`"),
            (".venv/lib/python3.12/site-packages/x.pth", "`.venv/**`"),
            ("envs/py/pyvenv.cfg", "`pyvenv.cfg`"),
            ("envs/new/conda-meta/history", "`conda-meta/**`"),
            (".v\u{17f}code/tasks.json", "`.vscode/**`"),
            ("AGENTS.md::$DATA", "`AGENTS.md`"),
        ] {
            assert_eq!(rule(&protected, path).as_deref(), Some(expected), "{path}");
        }
    }

    #[test]
    fn ordinary_paths_and_near_misses_are_writable() {
        let protected = Protected::default();
        for path in [
            ".gitignore",
            ".github/workflows/ci.yml",
            "src/git/config",
            "copilot/x",
            ".envrc.example",
            "a.py",
            "internal/lefthook/run.go",
            "src/cursor.py",
            "notes.code-workspace.md",
            "venv.md",
            ".github/skills.md",
        ] {
            assert_eq!(rule(&protected, path), None, "{path}");
        }
    }

    #[test]
    fn the_users_directories_are_protected_inside_the_workspace_or_around_it() {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path().canonical().unwrap();
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
