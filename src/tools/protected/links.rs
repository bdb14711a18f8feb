//! The workspace's symbolic links as the rules see them: every other name a file has through
//! them, and the targets of links whose own names are protected.

use std::path::{Path, PathBuf};

use super::rules::{Hit, Link, Protected, folded, normal, shown};

/// Most names one file is looked up by, through the workspace's links; past it, the file is
/// refused.
const MAX_ALIASES: usize = 256;

impl Protected {
    /// Adds links, keeping them in the order of their paths (so that a file with several
    /// protected names is named the same way on every run) and indexed by their targets.
    pub(super) fn add_links(&mut self, links: impl IntoIterator<Item = Link>) {
        self.links.extend(links);
        self.links.sort_by(|a, b| a.path.cmp(&b.path));
        self.by_target.clear();
        for (index, link) in self.links.iter().enumerate() {
            self.by_target.entry(link.target_names.clone()).or_default().push(index);
        }
    }

    /// The targets of the links whose own names are protected, with the rule that protects
    /// them. (A link protected only through other links is left to [`Self::rule_for`]: looking
    /// each one up would take as long as the links are many, squared.)
    pub(crate) fn protected_targets(&self) -> Vec<(PathBuf, Hit)> {
        self.links
            .iter()
            .filter_map(|link| {
                let hit = self.named_rule_for(&link.path)?;
                let rule = format!("{}, as the target of the link '{}'", hit.rule, shown(&link.path));
                Some((link.target.clone(), Hit { rule, why: hit.why }))
            })
            .collect()
    }
    /// `rel` and every other path that names it through the workspace's links, `rel` first. A
    /// link is used once on the way to each name, so links that loop end.
    pub(super) fn aliases(&self, rel: &Path) -> Result<Vec<PathBuf>, Hit> {
        let mut found: Vec<(PathBuf, Vec<String>, Vec<usize>)> = vec![(normal(rel), folded(rel), Vec::new())];
        let mut at = 0;
        while let Some((path, names, used)) = found.get(at).cloned() {
            at += 1;
            let below = (0..=names.len()).filter_map(|len| self.by_target.get(&names[..len])).flatten();
            for &index in below {
                let link = &self.links[index];
                if used.contains(&index) {
                    continue;
                }
                let mut alias = link.path.clone();
                alias.extend(path.iter().skip(link.target_names.len()));
                let alias_names = folded(&alias);
                if found.iter().any(|(_, known, _)| *known == alias_names) {
                    continue;
                }
                if found.len() >= MAX_ALIASES {
                    return Err(Hit {
                        rule: format!("`{}` (a file with many names)", shown(rel)),
                        why: format!("more than {MAX_ALIASES} paths lead to it through symbolic links"),
                    });
                }
                let mut chain = used.clone();
                chain.push(index);
                found.push((alias, alias_names, chain));
            }
        }
        Ok(found.into_iter().map(|(path, _, _)| path).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(protected: &Protected, path: &str) -> Option<String> {
        protected.rule_for(Path::new(path)).map(|hit| hit.rule)
    }

    fn linked(links: &[(&str, &str)]) -> Protected {
        let mut protected = Protected::default();
        protected.add_links(links.iter().map(|(path, target)| Link {
            path: PathBuf::from(path),
            target: PathBuf::from(target),
            target_names: folded(Path::new(target)),
        }));
        protected
    }

    #[test]
    fn a_file_is_protected_under_every_name_the_links_give_it() {
        let protected = linked(&[
            ("CLAUDE.md", "docs/guide.md"),
            (".vscode", "shared/vscode"),
            (".github", "config/gh"),
            ("config/gh/copilot-instructions.md", "docs/copilot.md"),
            ("notes.md", "docs/notes.md"),
        ]);
        assert_eq!(
            rule(&protected, "docs/guide.md").as_deref(),
            Some("`CLAUDE.md`, as 'CLAUDE.md' through symbolic links")
        );
        assert_eq!(
            rule(&protected, "shared/vscode/tasks.json").as_deref(),
            Some("`.vscode/**`, as '.vscode/tasks.json' through symbolic links")
        );
        // Two links on the way: `.github` to a folder, and a file in it to another file.
        assert_eq!(
            rule(&protected, "docs/copilot.md").as_deref(),
            Some("`.github/copilot-instructions.md`, as '.github/copilot-instructions.md' through symbolic links")
        );
        assert_eq!(rule(&protected, "docs/notes.md"), None);
        assert_eq!(rule(&protected, "shared/other.json"), None);
    }

    #[test]
    fn links_that_loop_end_and_protect_only_what_their_names_say() {
        let protected = linked(&[("loop", ""), ("a/up", ""), ("b/c", "b")]);
        assert_eq!(rule(&protected, "x.txt"), None);
        assert_eq!(rule(&protected, "b/x.txt"), None);
        let dot_git = linked(&[("loop", ""), (".git", "")]);
        assert_eq!(rule(&dot_git, "x.txt").as_deref(), Some("`.git/**`, as '.git/x.txt' through symbolic links"));
    }

    #[test]
    fn a_file_with_too_many_names_is_refused() {
        let links: Vec<(String, &str)> = (0..MAX_ALIASES).map(|n| (format!("l{n}"), "docs/x.md")).collect();
        let links: Vec<(&str, &str)> = links.iter().map(|(path, target)| (path.as_str(), *target)).collect();
        assert!(rule(&linked(&links), "docs/x.md").is_some());
        assert_eq!(rule(&linked(&links[..10]), "docs/x.md"), None);
    }
}
