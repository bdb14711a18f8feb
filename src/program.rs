//! Finding the programs codeact starts by name (`sh`, `node`, `python3`, `gh`, an MCP server's
//! command), and the `PATH` the processes it starts for the user's own tools are given.
//!
//! One rule for all of them: a program is taken only from an absolute `PATH` entry, only when
//! it is an executable regular file, and never from the workspace — neither an entry that lies
//! in it (by the path as written or by where it really leads) nor a file that leads into it.
//! A relative entry (`.`, `./node_modules/.bin`, an empty one) is read in the child's working
//! directory, which is often the workspace, and everything in the workspace may have been
//! written by the program or brought by the repository. That covers interpreters too: a
//! virtualenv's `bin/python3` in the workspace (an activated `.venv`) would run the `.pth`
//! files and import the modules the program planted in its `site-packages`. Python looks for
//! its `pyvenv.cfg` beside the path it was started by and one folder up, so an interpreter
//! found outside the workspace, by a path that does not lead into it, has no environment
//! there.

use crate::platform::{self, Canonical as _};
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

/// Why a program codeact starts was not found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NotFound {
    /// The program asked for.
    pub(crate) program: String,
    /// Copies passed over because they lie in the workspace.
    pub(crate) in_workspace: Vec<PathBuf>,
}

impl std::fmt::Display for NotFound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let program = &self.program;
        match self.in_workspace.first() {
            None => write!(f, "`{program}` is not in any absolute PATH directory"),
            Some(skipped) => write!(
                f,
                "`{program}` was found only in the workspace ({}), where the program can write; codeact \
                 starts no program from there: put one outside it first on PATH",
                skipped.display()
            ),
        }
    }
}

impl std::error::Error for NotFound {}

/// The program codeact runs for `program`: as it is when it names a path (an absolute one, or
/// one relative to the child's working directory that a trusted configuration wrote), else the
/// first executable regular file of that name in an absolute `PATH` entry outside `workspace`.
pub(crate) fn find(program: &str, workspace: Option<&Path>) -> Result<PathBuf, NotFound> {
    if names_a_path(program) {
        return Ok(PathBuf::from(program));
    }
    search(program, std::env::var_os("PATH").as_deref(), workspace, Relative::Skip)
}

/// The file a shell would run for a bare `program`, by the same rule: `None` when there is
/// none, or when a relative entry comes before it, which the shell would read in its current
/// directory (usually the workspace), no place to trust a program from.
#[must_use]
pub(crate) fn shell_would_run(program: &str) -> Option<PathBuf> {
    search(program, std::env::var_os("PATH").as_deref(), None, Relative::Stop).ok()
}

/// The file PowerShell would run for a bare `program`, by its own lookup: in each `PATH` folder
/// in turn, `<program>` first when it has an extension, then `<program>.ps1`, then (on
/// Windows) `<program>` with each `PATHEXT` extension, then `<program>` itself. Any file of
/// those names counts, runnable or not, so that nothing PowerShell might take first is passed
/// over. `None` when there is none, or when a relative entry comes first, which PowerShell reads
/// in its current location.
#[must_use]
pub(crate) fn powershell_would_run(program: &str) -> Option<PathBuf> {
    let extensions = if cfg!(windows) { executable_extensions() } else { &[] };
    powershell_search(program, std::env::var_os("PATH").as_deref(), extensions)
}

/// [`powershell_would_run`] over the `PATH` value `path` and the `PATHEXT` extensions.
fn powershell_search(program: &str, path: Option<&OsStr>, extensions: &[String]) -> Option<PathBuf> {
    if program.is_empty() || program.contains(['/', '\\']) || program == "." || program == ".." {
        return None;
    }
    let has_extension = Path::new(program).extension().is_some();
    let names: Vec<String> = has_extension
        .then(|| program.to_owned())
        .into_iter()
        .chain(std::iter::once(format!("{program}.ps1")))
        .chain(extensions.iter().map(|e| format!("{program}{}", e.to_ascii_lowercase())))
        .chain((!has_extension).then(|| program.to_owned()))
        .collect();
    for dir in path.into_iter().flat_map(std::env::split_paths) {
        if !is_fixed(&dir) {
            return None;
        }
        if let Some(found) = names.iter().map(|name| dir.join(name)).find(|candidate| candidate.is_file()) {
            return Some(found);
        }
    }
    None
}

/// What a search does on a relative `PATH` entry.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Relative {
    /// Passes over it: codeact names the file it starts.
    Skip,
    /// Ends the search without a program: a shell would look there.
    Stop,
}

/// [`find`] over the `PATH` value `path`.
fn search(
    program: &str,
    path: Option<&OsStr>,
    workspace: Option<&Path>,
    relative: Relative,
) -> Result<PathBuf, NotFound> {
    let mut not_found = NotFound { program: program.to_owned(), in_workspace: Vec::new() };
    if program.is_empty() || program == "." || program == ".." || names_a_path(program) {
        return Err(not_found);
    }
    let names = file_names(program);
    let workspace = workspace.map(Place::new);
    for dir in path.into_iter().flat_map(std::env::split_paths) {
        if !is_fixed(&dir) {
            if relative == Relative::Stop {
                return Err(not_found);
            }
            continue;
        }
        let Some(candidate) = names.iter().map(|name| dir.join(name)).find(|file| is_executable(file)) else {
            continue;
        };
        let inside = workspace.as_ref().is_some_and(|workspace| workspace.holds(&dir) || workspace.holds(&candidate));
        if inside {
            not_found.in_workspace.push(candidate);
            continue;
        }
        return Ok(candidate);
    }
    Err(not_found)
}

/// The `PATH` for a process codeact starts for the user's own tools: the absolute entries of
/// `path` that lie outside `workspace`, so that a name the tool runs is not found among the
/// repository's files either.
#[must_use]
pub(crate) fn child_path(path: &OsStr, workspace: Option<&Path>) -> OsString {
    let workspace = workspace.map(Place::new);
    let kept: Vec<PathBuf> = std::env::split_paths(path)
        .filter(|dir| is_fixed(dir))
        .filter(|dir| workspace.as_ref().is_none_or(|workspace| !workspace.holds(dir)))
        .collect();
    std::env::join_paths(kept).unwrap_or_default()
}

/// Whether `dir` names the same folder for every process: an absolute path, and not one of the
/// kernel's per-process folders (`/proc/self/cwd` is each process's working directory, `/dev/fd`
/// its open files), which are relative entries in disguise.
#[must_use]
pub(crate) fn is_fixed(dir: &Path) -> bool {
    dir.is_absolute() && !["/proc", "/dev/fd"].iter().any(|special| dir.starts_with(special))
}

/// Whether a program word names a file by its path rather than by a name to look up.
fn names_a_path(program: &str) -> bool {
    program.contains('/') || (cfg!(windows) && (program.contains('\\') || program.contains(':')))
}

/// The file names a bare `program` may have in a `PATH` entry: itself on Unix. On Windows,
/// itself when it ends in an extension `PATHEXT` lists, else itself with each of them, in
/// order, as `cmd.exe` looks.
fn file_names(program: &str) -> Vec<String> {
    if cfg!(windows) && !has_executable_extension(Path::new(program)) {
        return executable_extensions().iter().map(|ext| format!("{program}{ext}")).collect();
    }
    vec![program.to_owned()]
}

/// The extensions this process's `PATHEXT` lists, read once.
fn executable_extensions() -> &'static [String] {
    static EXTENSIONS: std::sync::LazyLock<Vec<String>> =
        std::sync::LazyLock::new(|| parse_extensions(&std::env::var("PATHEXT").unwrap_or_default()));
    &EXTENSIONS
}

/// The extensions the `PATHEXT` value `listed` names (`.COM;.EXE;.BAT;.CMD` when it names none).
fn parse_extensions(listed: &str) -> Vec<String> {
    let mut extensions: Vec<String> = listed
        .split(';')
        .map(str::trim)
        .filter(|ext| ext.starts_with('.') && ext.len() > 1)
        .map(str::to_owned)
        .collect();
    if extensions.is_empty() {
        extensions = [".COM", ".EXE", ".BAT", ".CMD"].map(str::to_owned).to_vec();
    }
    extensions
}

/// Whether `path` ends in an extension `PATHEXT` lists, compared without case.
fn has_executable_extension(path: &Path) -> bool {
    let Some(ext) = path.extension().and_then(OsStr::to_str) else { return false };
    executable_extensions().iter().any(|listed| listed[1..].eq_ignore_ascii_case(ext))
}

/// Whether `path` is a regular file (after links) that someone may execute: by its mode on
/// Unix, by its extension on Windows.
#[must_use]
pub(crate) fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|meta| meta.is_file() && may_execute(path, &meta))
}

#[cfg(unix)]
fn may_execute(_path: &Path, meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    meta.permissions().mode() & 0o111 != 0
}

#[cfg(windows)]
fn may_execute(path: &Path, _meta: &std::fs::Metadata) -> bool {
    has_executable_extension(path)
}

/// The workspace, by the path it was named by and by where that leads.
struct Place {
    named: PathBuf,
    real: Option<PathBuf>,
}

impl Place {
    fn new(path: &Path) -> Self {
        let named = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        Self { real: named.canonical().ok(), named }
    }

    /// Whether `path` lies in the workspace, as written or where it really leads.
    fn holds(&self, path: &Path) -> bool {
        let real = path.canonical().ok();
        [Some(self.named.as_path()), self.real.as_deref()].into_iter().flatten().any(|place| {
            platform::is_within(path, place) || real.as_deref().is_some_and(|real| platform::is_within(real, place))
        })
    }
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use std::os::unix::fs::{PermissionsExt as _, symlink};

    use super::*;

    fn executable(path: &Path) -> std::io::Result<()> {
        std::fs::create_dir_all(path.parent().unwrap_or(path))?;
        std::fs::write(path, "#!/bin/sh\n")?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
    }

    fn path_of(dirs: &[&Path]) -> OsString {
        std::env::join_paths(dirs).unwrap_or_default()
    }

    /// `dir` as a relative path from the current directory.
    fn relative_to_here(dir: &Path) -> std::io::Result<PathBuf> {
        let here = std::env::current_dir()?.canonical()?;
        let ups = here.components().count() - 1;
        let mut relative: PathBuf = std::iter::repeat_n("..", ups).collect();
        relative.extend(dir.canonical()?.components().skip(1));
        Ok(relative)
    }

    #[test]
    fn powershell_takes_the_first_folder_with_any_file_of_the_name_and_a_script_before_a_program() {
        let root = tempfile::tempdir().unwrap();
        let (first, second) = (root.path().join("first"), root.path().join("second"));
        executable(&second.join("codeact.exe")).unwrap();
        let path = path_of(&[&first, &second]);
        let found = |extensions: &[String]| powershell_search("codeact", Some(&path), extensions);
        assert_eq!(found(&parse_extensions(".COM;.EXE")), Some(second.join("codeact.exe")));
        // An unset `PATHEXT` means Windows' own list.
        assert_eq!(found(&parse_extensions("")), Some(second.join("codeact.exe")));
        // Outside Windows no extension is tried: `codeact.exe` is not `codeact`.
        assert_eq!(found(&[]), None);
        // A script of the name in an earlier folder is what PowerShell runs, executable or not.
        std::fs::create_dir_all(&first).unwrap();
        std::fs::write(first.join("codeact.ps1"), "").unwrap();
        assert_eq!(found(&parse_extensions(".COM;.EXE")), Some(first.join("codeact.ps1")));
        // In one folder, the script comes before the program, and a name with an extension
        // before both.
        std::fs::write(second.join("codeact.ps1"), "").unwrap();
        let path = path_of(&[&second]);
        let exe = parse_extensions(".EXE");
        assert_eq!(powershell_search("codeact", Some(&path), &exe), Some(second.join("codeact.ps1")));
        assert_eq!(powershell_search("codeact.exe", Some(&path), &exe), Some(second.join("codeact.exe")));
        // A relative entry first: PowerShell would look in its current location.
        let path = path_of(&[Path::new("rel"), &second]);
        assert_eq!(powershell_search("codeact.exe", Some(&path), &exe), None);
        assert_eq!(powershell_search("..", Some(&path), &exe), None);
    }

    #[test]
    fn relative_entries_are_never_searched() {
        let root = tempfile::tempdir().unwrap();
        let planted = root.path().join("ws/node_modules/.bin");
        let outside = root.path().join("outside");
        executable(&planted.join("tool")).unwrap();
        executable(&outside.join("tool")).unwrap();
        let relative = relative_to_here(&planted).unwrap();
        // The relative entry does lead to the planted copy from here.
        assert!(is_executable(&relative.join("tool")));
        let path = path_of(&[&relative, Path::new(""), &outside]);
        assert_eq!(search("tool", Some(&path), None, Relative::Skip).unwrap(), outside.join("tool"));
        // As the shell would read it, the relative entry comes first: no program to trust.
        assert!(search("tool", Some(&path), None, Relative::Stop).is_err());
        let path = path_of(&[&outside, &relative]);
        assert_eq!(search("tool", Some(&path), None, Relative::Stop).unwrap(), outside.join("tool"));
    }

    #[test]
    fn an_entry_in_the_workspace_is_passed_over_by_either_spelling() {
        let root = tempfile::tempdir().unwrap();
        let workspace = root.path().join("ws");
        let system = root.path().join("usr/bin");
        executable(&workspace.join(".venv/bin/python3")).unwrap();
        executable(&system.join("python3")).unwrap();
        // The same folder, named through a link from outside.
        symlink(workspace.join(".venv/bin"), root.path().join("linked-bin")).unwrap();
        let path = path_of(&[&workspace.join(".venv/bin"), &root.path().join("linked-bin"), &system]);
        let found = search("python3", Some(&path), Some(&workspace), Relative::Skip);
        assert_eq!(found.unwrap(), system.join("python3"));
        let path = path_of(&[&workspace.join(".venv/bin")]);
        let err = search("python3", Some(&path), Some(&workspace), Relative::Skip).unwrap_err();
        assert_eq!(err.in_workspace, [workspace.join(".venv/bin/python3")]);
        assert!(err.to_string().contains("only in the workspace"), "{err}");
    }

    #[test]
    fn a_file_that_leads_into_the_workspace_is_passed_over() {
        let root = tempfile::tempdir().unwrap();
        let workspace = root.path().join("ws");
        let bin = root.path().join("bin");
        executable(&workspace.join("tools/node")).unwrap();
        std::fs::create_dir_all(&bin).unwrap();
        symlink(workspace.join("tools/node"), bin.join("node")).unwrap();
        let err = search("node", Some(&path_of(&[&bin])), Some(&workspace), Relative::Skip).unwrap_err();
        assert_eq!(err.in_workspace, [bin.join("node")]);
    }

    #[test]
    fn only_executable_regular_files_count() {
        let root = tempfile::tempdir().unwrap();
        let first = root.path().join("first");
        let second = root.path().join("second");
        std::fs::create_dir_all(first.join("gh")).unwrap();
        std::fs::write(first.join("sh"), "not executable").unwrap();
        executable(&second.join("gh")).unwrap();
        executable(&second.join("sh")).unwrap();
        let path = path_of(&[&first, &second]);
        assert_eq!(search("gh", Some(&path), None, Relative::Skip).unwrap(), second.join("gh"));
        assert_eq!(search("sh", Some(&path), None, Relative::Skip).unwrap(), second.join("sh"));
        assert!(search("", Some(&path), None, Relative::Skip).is_err());
        assert!(search("sh", None, None, Relative::Skip).is_err());
    }

    #[test]
    fn the_child_path_keeps_absolute_entries_outside_the_workspace() {
        let root = tempfile::tempdir().unwrap();
        let workspace = root.path().join("ws");
        std::fs::create_dir_all(workspace.join("bin")).unwrap();
        let outside = root.path().join("bin");
        let path = OsString::from(format!(
            ".:{}:{}:node_modules/.bin::{}",
            workspace.join("bin").display(),
            outside.display(),
            workspace.join("missing").display()
        ));
        assert_eq!(child_path(&path, Some(&workspace)), outside.as_os_str());
        let path = OsString::from(format!("{}:.:/proc/self/cwd/bin:/proc/1/cwd:/dev/fd/3", outside.display()));
        assert_eq!(child_path(&path, None), outside.as_os_str());
    }
}

#[cfg(test)]
#[cfg(windows)]
mod windows_tests {
    use super::*;

    /// A folder of the workspace in a `PATH` entry, written in another case and with a real
    /// path that keeps `\\?\` (longer than 260 characters), is still the workspace's.
    #[test]
    fn an_entry_in_the_workspace_is_passed_over_in_any_case_and_any_length() {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path().canonical().unwrap();
        let workspace = root.join("ws");
        let deep = (0..5).fold(workspace.clone(), |dir, i| dir.join(format!("{i}{}", "d".repeat(59))));
        let system = root.join("system");
        for dir in [deep.join("bin"), system.clone()] {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("tool.exe"), "").unwrap();
        }
        assert!(deep.as_os_str().len() > 260);
        let entry = PathBuf::from(deep.join("bin").to_string_lossy().to_uppercase());
        for entry in [entry.clone(), PathBuf::from(format!(r"\\?\{}", entry.display()))] {
            let path = std::env::join_paths([&entry, &system]).unwrap();
            let found = search("tool", Some(&path), Some(&workspace), Relative::Skip).unwrap();
            assert_eq!(found, system.join("tool.exe"), "{}", entry.display());
        }
    }
}
