//! What counts as codeact is decided here, against the file system: the program word of a
//! shell call must be this very binary or the plugin's launcher, by canonical path. A word
//! with a slash must be absolute; a bare `codeact` is looked up on the hook's `PATH` as the
//! shell would, and refused when a relative entry (the shell's current directory) comes first.

use std::cell::OnceCell;
use std::path::{Path, PathBuf};

use crate::env;
use crate::hook::shell::Program;
use crate::program;

/// The files a shell call may run and still count as codeact, by canonical path; each is
/// looked up only when a command needs it.
pub(super) struct Known {
    /// This binary, canonical (as [`reach::current_binary`](crate::commands::reach::current_binary) gives it).
    binary: Option<PathBuf>,
    /// The plugin's launcher, `<plugin root>/bin/codeact`, canonical.
    launcher: OnceCell<Option<PathBuf>>,
}

impl Known {
    pub(super) fn new(binary: &str) -> Self {
        let binary = Path::new(binary);
        Self { binary: binary.is_absolute().then(|| binary.to_path_buf()), launcher: OnceCell::new() }
    }

    /// What a literal program word names.
    pub(super) fn identify(&self, word: &str) -> Program {
        let file = if word.contains('/') {
            // A relative path names a file in the shell's current directory, usually the
            // workspace, where codeact's own `create` can put a file called `codeact`.
            if !word.starts_with('/') {
                return Program::Other;
            }
            PathBuf::from(word)
        } else {
            match word {
                "sh" | "bash" => {
                    return if program::shell_would_run(word).is_some() { Program::Shell } else { Program::Other };
                }
                "codeact" => match program::shell_would_run(word) {
                    Some(file) => file,
                    None => return Program::Other,
                },
                _ => return Program::Other,
            }
        };
        if self.binary.as_ref() == Some(&file) {
            return Program::Codeact;
        }
        let Ok(file) = file.canonicalize() else { return Program::Other };
        if self.binary.as_ref() == Some(&file) {
            Program::Codeact
        } else if self.launcher().is_some_and(|launcher| *launcher == file) {
            Program::Launcher
        } else {
            Program::Other
        }
    }

    fn launcher(&self) -> Option<&PathBuf> {
        self.launcher
            .get_or_init(|| {
                let root = env::PLUGIN_ROOTS.iter().find_map(|name| env::var(name)).map(PathBuf::from)?;
                root.is_absolute().then(|| root.join("bin").join("codeact").canonicalize().ok()).flatten()
            })
            .as_ref()
    }
}
