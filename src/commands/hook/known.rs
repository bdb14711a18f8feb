//! What counts as codeact is decided here, against the file system: the program word of a
//! shell call must be this very binary or the plugin's launcher, by canonical path. A word
//! with a slash must be absolute; a bare `codeact` is looked up on the hook's `PATH` as the
//! shell would, and refused when a relative entry (the shell's current directory) comes first.
//! PowerShell looks a bare name up its own way ([`program::powershell_would_run`]), takes `\`
//! as a separator too, and runs the plugin's PowerShell launcher, `bin/codeact.ps1`.

use std::cell::OnceCell;
use std::path::{Path, PathBuf};

use crate::env;
use crate::hook::shell::{Dialect, Program};
use crate::platform::Canonical as _;
use crate::program;

/// The files a shell call may run and still count as codeact, by canonical path; each is
/// looked up only when a command needs it.
pub(super) struct Known {
    /// This binary, canonical (as [`reach::current_binary`](crate::commands::reach::current_binary) gives it).
    binary: Option<PathBuf>,
    /// The plugin's launcher, `<plugin root>/bin/codeact`, canonical.
    launcher: OnceCell<Option<PathBuf>>,
    /// The plugin's PowerShell launcher, `<plugin root>/bin/codeact.ps1`, canonical.
    powershell_launcher: OnceCell<Option<PathBuf>>,
}

impl Known {
    pub(super) fn new(binary: &str) -> Self {
        let binary = Path::new(binary);
        Self {
            binary: binary.is_absolute().then(|| binary.to_path_buf()),
            launcher: OnceCell::new(),
            powershell_launcher: OnceCell::new(),
        }
    }

    /// What a literal program word names in `dialect`'s shell.
    pub(super) fn identify(&self, dialect: Dialect, word: &str) -> Program {
        match dialect {
            Dialect::Posix => self.identify_posix(word),
            Dialect::PowerShell => self.identify_powershell(word),
        }
    }

    /// What a POSIX shell runs for `word`.
    fn identify_posix(&self, word: &str) -> Program {
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
        self.compare(&file, launcher(&self.launcher, "codeact"))
    }

    /// What PowerShell runs for `word`: a path (with `/` or `\\`) must be absolute, and the only
    /// bare names are `codeact` and `codeact.exe`, in any case.
    fn identify_powershell(&self, word: &str) -> Program {
        let file = if word.contains(['/', '\\']) {
            let path = Path::new(word);
            if !path.is_absolute() {
                return Program::Other;
            }
            path.to_path_buf()
        } else if word.eq_ignore_ascii_case("codeact") || word.eq_ignore_ascii_case("codeact.exe") {
            match program::powershell_would_run(word) {
                Some(file) => file,
                None => return Program::Other,
            }
        } else {
            return Program::Other;
        };
        self.compare(&file, launcher(&self.powershell_launcher, "codeact.ps1"))
    }

    /// Whether `file` is this binary or `launcher`, by canonical path.
    fn compare(&self, file: &Path, launcher: Option<&PathBuf>) -> Program {
        if self.binary.as_deref() == Some(file) {
            return Program::Codeact;
        }
        let Ok(file) = file.canonical() else { return Program::Other };
        if self.binary.as_ref() == Some(&file) {
            Program::Codeact
        } else if launcher.is_some_and(|launcher| *launcher == file) {
            Program::Launcher
        } else {
            Program::Other
        }
    }
}

/// The plugin's launcher called `name` in its `bin` folder, canonical, looked up once in `cell`.
fn launcher<'a>(cell: &'a OnceCell<Option<PathBuf>>, name: &str) -> Option<&'a PathBuf> {
    cell.get_or_init(|| {
        let root = env::PLUGIN_ROOTS.iter().find_map(|name| env::var(name)).map(PathBuf::from)?;
        root.is_absolute().then(|| root.join("bin").join(name).canonical().ok()).flatten()
    })
    .as_ref()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn powershell_names_the_binary_by_an_absolute_path_or_one_of_its_bare_names_only() {
        let dir = tempfile::tempdir().unwrap();
        // Not canonical on Windows, whose canonical paths are verbatim (`\\?\C:\…`), a spelling
        // no one types.
        let base = if cfg!(windows) { dir.path().to_path_buf() } else { dir.path().canonical().unwrap() };
        let binary = base.join("codeact");
        std::fs::write(&binary, "").unwrap();
        let known = Known::new(&binary.to_string_lossy());
        let absolute = binary.to_string_lossy();
        assert_eq!(known.identify(Dialect::PowerShell, &absolute), Program::Codeact);
        #[cfg(unix)]
        assert_eq!(known.identify(Dialect::Posix, &absolute), Program::Codeact);
        for word in [".\\codeact", "./codeact", "sub\\codeact", "codeact.cmd", "codeact.ps1", "sh", "bash"] {
            assert_eq!(known.identify(Dialect::PowerShell, word), Program::Other, "{word}");
        }
    }
}
