//! Where git runs a repository's hooks from and keeps its files: the git directory a `.git`
//! entry names (a directory, or a worktree's or submodule's `gitdir:` file), and every
//! `core.hooksPath` in the config files git reads for it — the repository's own, the user's
//! global ones and the system's, with the files they include (all of them, whatever an
//! `includeIf` asks: a folder that may be a hooks folder is protected). Reading is bounded:
//! regular files only, each at most [`crate::bounded::MAX_FILE_BYTES`], at most [`MAX_FILES`]
//! of them; a config that cannot be read that way is an error, and the caller fails safe.
//!
//! This reads; it never runs git, which would run what the repository configures.

use std::path::{Path, PathBuf};

/// Most config files read for one repository, includes included.
const MAX_FILES: usize = 32;

/// What git runs and reads for the repository whose working tree is `worktree`.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Repo {
    /// The git directory and, for a linked worktree, the common one.
    pub(crate) git_dirs: Vec<PathBuf>,
    /// Each `core.hooksPath`, made absolute as git does (relative to the working tree).
    pub(crate) hooks: Vec<PathBuf>,
    /// Every config file git reads for it that exists, included ones too: what they set runs.
    pub(crate) configs: Vec<PathBuf>,
}

/// The repository whose `.git` lies in `worktree`; `Ok` with nothing when there is none.
/// `configs` are the config files git reads for every repository ([`user_configs`]).
pub(crate) fn repo(worktree: &Path, configs: &[PathBuf], home: Option<&Path>) -> Result<Repo, String> {
    let dot_git = worktree.join(".git");
    let Ok(meta) = std::fs::metadata(&dot_git) else { return Ok(Repo::default()) };
    let git_dir = if meta.is_dir() {
        dot_git
    } else {
        let text = read(&dot_git)?.unwrap_or_default();
        match text.lines().next().and_then(|line| line.strip_prefix("gitdir:")) {
            Some(dir) => worktree.join(dir.trim()),
            None => return Ok(Repo::default()),
        }
    };
    let common = match read(&git_dir.join("commondir"))? {
        Some(text) => git_dir.join(text.trim()),
        None => git_dir.clone(),
    };
    let mut files = vec![common.join("config"), git_dir.join("config.worktree")];
    files.extend_from_slice(configs);
    let mut hooks: Vec<PathBuf> = environment_hooks().iter().map(|value| worktree.join(value)).collect();
    let mut read_count = 0;
    let mut read_files = Vec::new();
    while let Some(file) = files.pop() {
        let Some(text) = read(&file)? else { continue };
        read_files.push(file.clone());
        read_count += 1;
        if read_count > MAX_FILES {
            return Err(format!("git's config includes more than {MAX_FILES} files"));
        }
        let values = values(&text);
        let resolve = |value: &str, base: &Path| match (value.strip_prefix("~/"), home) {
            (Some(rest), Some(home)) => home.join(rest),
            _ => base.join(value),
        };
        hooks.extend(values.hooks.iter().map(|value| resolve(value, worktree)));
        let dir = file.parent().unwrap_or(Path::new("/"));
        files.extend(values.includes.iter().map(|value| resolve(value, dir)));
    }
    let mut git_dirs = vec![git_dir];
    if !git_dirs.contains(&common) {
        git_dirs.push(common);
    }
    Ok(Repo { git_dirs, hooks, configs: read_files })
}

/// `core.hooksPath` as the environment sets it for every repository (`GIT_CONFIG_COUNT` with
/// `GIT_CONFIG_KEY_<n>` and `GIT_CONFIG_VALUE_<n>`, and `GIT_CONFIG_PARAMETERS`, where `git -c`
/// passes its settings on).
fn environment_hooks() -> Vec<String> {
    let count = crate::env::var("GIT_CONFIG_COUNT").and_then(|count| count.trim().parse::<usize>().ok()).unwrap_or(0);
    let mut hooks: Vec<String> = (0..count.min(MAX_FILES * 8))
        .filter(|n| {
            crate::env::var(&format!("GIT_CONFIG_KEY_{n}"))
                .is_some_and(|key| key.eq_ignore_ascii_case("core.hookspath"))
        })
        .filter_map(|n| crate::env::var(&format!("GIT_CONFIG_VALUE_{n}")))
        .collect();
    if let Some(parameters) = crate::env::var("GIT_CONFIG_PARAMETERS") {
        hooks.extend(parameter_hooks(&parameters));
    }
    hooks
}

/// The `core.hooksPath` values of `GIT_CONFIG_PARAMETERS`: words quoted as the shell quotes
/// them, each `key=value` (git writes `'key'='value'`, or `'key=value'` before 2.31).
fn parameter_hooks(parameters: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = parameters.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => word.get_or_insert_default().extend(chars.by_ref().take_while(|c| *c != '\'')),
            '\\' => word.get_or_insert_default().extend(chars.next()),
            c if c.is_whitespace() => words.extend(word.take()),
            c => word.get_or_insert_default().push(c),
        }
    }
    words.extend(word);
    words
        .iter()
        .filter_map(|word| word.split_once('='))
        .filter(|(key, _)| key.eq_ignore_ascii_case("core.hookspath"))
        .map(|(_, value)| value.to_owned())
        .collect()
}

/// The config files git reads for every repository: the system's and the user's.
pub(crate) fn user_configs(home: Option<&Path>) -> Vec<PathBuf> {
    // The system's, where git built with each usual prefix reads it (a distribution's, a
    // source build's, Homebrew's), or where `GIT_CONFIG_SYSTEM` names it.
    let mut files: Vec<PathBuf> = match crate::env::var("GIT_CONFIG_SYSTEM") {
        Some(file) => vec![PathBuf::from(file)],
        None => ["/etc/gitconfig", "/usr/local/etc/gitconfig", "/opt/homebrew/etc/gitconfig"].map(PathBuf::from).into(),
    };
    if let Some(file) = crate::env::var("GIT_CONFIG_GLOBAL") {
        files.push(PathBuf::from(file));
        return files;
    }
    files.extend(home.map(|home| home.join(".gitconfig")));
    match crate::env::var("XDG_CONFIG_HOME").filter(|dir| Path::new(dir).is_absolute()) {
        Some(dir) => files.push(Path::new(&dir).join("git/config")),
        None => files.extend(home.map(|home| home.join(".config/git/config"))),
    }
    files
}

/// A config file's text, or `None` when there is none.
fn read(path: &Path) -> Result<Option<String>, String> {
    crate::bounded::read(path, crate::bounded::MAX_FILE_BYTES)
        .map(|bytes| bytes.map(|bytes| String::from_utf8_lossy(&bytes).into_owned()))
        .map_err(|err| format!("cannot read `{}`: {err}", path.display()))
}

/// The values one config file sets that matter here.
#[derive(Debug, Default, PartialEq, Eq)]
struct Values {
    hooks: Vec<String>,
    includes: Vec<String>,
}

/// `core.hooksPath` and the `path` of `include` and `includeIf` sections, as git reads a
/// config file: names in any case, values quoted or not, `\` escapes and line continuations,
/// `#` and `;` comments, and a key on the same line as its section header.
fn values(text: &str) -> Values {
    let mut out = Values::default();
    let mut section = Section::Other;
    let mut chars = text.chars().peekable();
    while chars.peek().is_some() {
        skip_blank(&mut chars);
        match chars.peek() {
            None => break,
            Some('\n') => {
                chars.next();
                continue;
            }
            Some('#' | ';') => {
                skip_line(&mut chars);
                continue;
            }
            Some('[') => {
                chars.next();
                section = header(&mut chars);
                continue;
            }
            Some(_) => {}
        }
        let mut key = String::new();
        while let Some(&c) = chars.peek().filter(|c| c.is_ascii_alphanumeric() || **c == '-') {
            key.push(c.to_ascii_lowercase());
            chars.next();
        }
        skip_blank(&mut chars);
        if key.is_empty() || chars.peek() != Some(&'=') {
            skip_line(&mut chars);
            continue;
        }
        chars.next();
        let value = value(&mut chars);
        match (section, key.as_str()) {
            (Section::Core, "hookspath") if !value.is_empty() => out.hooks.push(value),
            (Section::Include, "path") if !value.is_empty() => out.includes.push(value),
            _ => {}
        }
    }
    out
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Section {
    Core,
    Include,
    Other,
}

/// Reads a section header after its `[`, up to and including its `]`.
fn header(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> Section {
    let mut name = String::new();
    let mut subsection = false;
    while let Some(c) = chars.next() {
        match c {
            ']' | '\n' => break,
            '"' => {
                subsection = true;
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => {
                            chars.next();
                        }
                        '"' | '\n' => break,
                        _ => {}
                    }
                }
            }
            '.' | ' ' | '\t' => subsection = true,
            c if !subsection => name.push(c.to_ascii_lowercase()),
            _ => {}
        }
    }
    match (name.as_str(), subsection) {
        ("core", false) => Section::Core,
        ("include", false) | ("includeif", true) => Section::Include,
        _ => Section::Other,
    }
}

/// Reads a value after its `=`, to the end of its (possibly continued) line.
fn value(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> String {
    let mut out = String::new();
    let mut quoted = false;
    // The length of `out` without its trailing blanks outside quotes, which git drops.
    let mut kept = 0;
    skip_blank(chars);
    while let Some(c) = chars.next() {
        match c {
            '\n' => break,
            '"' => quoted = !quoted,
            '\\' => match chars.next() {
                Some('\n') => {}
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('b') => {
                    out.pop();
                }
                Some(other) => out.push(other),
                None => break,
            },
            '#' | ';' if !quoted => {
                skip_line(chars);
                break;
            }
            ' ' | '\t' | '\r' if !quoted => {
                out.push(c);
                continue;
            }
            _ => out.push(c),
        }
        kept = out.len();
    }
    out.truncate(kept);
    out
}

fn skip_blank(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    while chars.next_if(|c| matches!(c, ' ' | '\t' | '\r')).is_some() {}
}

fn skip_line(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    for c in chars.by_ref() {
        if c == '\n' {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hooks(text: &str) -> Vec<String> {
        values(text).hooks
    }

    #[test]
    fn hooks_path_is_read_in_every_spelling_git_accepts() {
        assert_eq!(hooks("[core]\n\thooksPath = .githooks\n"), [".githooks"]);
        assert_eq!(hooks("[Core]\nHOOKSPATH=\"tools/my hooks\" # why\n"), ["tools/my hooks"]);
        assert_eq!(hooks("[core] hookspath = a\\\nb ; comment\n"), ["ab"]);
        assert_eq!(hooks("[core]\n  bare = false\n[core]\nhooksPath = x\n"), ["x"]);
        assert_eq!(
            hooks("[core \"sub\"]\nhooksPath = no\n[alias]\nhooksPath = no\n[core]\r\nhooksPath = yes\r\n"),
            ["yes"]
        );
        assert_eq!(hooks("[core]\n\thooksPath = \"a\\\"b\"\n"), ["a\"b"]);
    }

    #[test]
    fn git_c_settings_are_read_in_both_of_gits_spellings() {
        assert_eq!(parameter_hooks("'core.hooksPath'='h1' 'user.name'='x'"), ["h1"]);
        assert_eq!(parameter_hooks("'user.name=x' 'Core.HooksPath=h 2'"), ["h 2"]);
        assert_eq!(parameter_hooks("'core.hookspath'='it'\\''s'"), ["it's"]);
        assert_eq!(parameter_hooks(""), Vec::<String>::new());
    }

    #[test]
    fn includes_are_read_whatever_their_condition() {
        let found =
            values("[include]\npath = a.inc\n[includeIf \"gitdir:~/work/\"]\n\tpath = ~/b.inc\n[other]\npath = no\n");
        assert_eq!(found.includes, ["a.inc", "~/b.inc"]);
    }

    #[test]
    fn a_worktrees_gitdir_file_and_its_common_dir_are_followed() {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path();
        std::fs::create_dir_all(root.join("main/.git/worktrees/wt")).unwrap();
        std::fs::create_dir_all(root.join("wt")).unwrap();
        std::fs::write(root.join("wt/.git"), format!("gitdir: {}\n", root.join("main/.git/worktrees/wt").display()))
            .unwrap();
        std::fs::write(root.join("main/.git/worktrees/wt/commondir"), "../..\n").unwrap();
        std::fs::write(root.join("main/.git/config"), "[include]\n\tpath = extra\n").unwrap();
        std::fs::write(root.join("main/.git/extra"), "[core]\n\thooksPath = hooks-here\n").unwrap();
        let repo = repo(&root.join("wt"), &[], None).unwrap();
        assert_eq!(repo.hooks, [root.join("wt/hooks-here")]);
        assert_eq!(repo.git_dirs, [root.join("main/.git/worktrees/wt"), root.join("main/.git/worktrees/wt/../..")]);
    }

    #[test]
    fn includes_that_never_end_are_an_error() {
        let temp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(temp.path().join(".git")).unwrap();
        std::fs::write(temp.path().join(".git/config"), "[include]\npath = config\n").unwrap();
        assert!(repo(temp.path(), &[], None).is_err());
    }
}
