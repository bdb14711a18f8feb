//! The files `install` writes ([`Target`]): where each lies, in the repository's `.github` or in
//! `$COPILOT_HOME`, and reading, writing and removing one through directory handles opened one
//! name at a time, so that no link a repository planted is followed.

use std::io::{self, Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{Context as _, Result};
use cap_fs_ext::{DirExt as _, FollowSymlinks, OpenOptionsFollowExt as _};
use cap_std::fs::{Dir, DirBuilder, OpenOptions};

use super::marker::has_marker;
use crate::env;
use crate::platform::{Careful as _, Follow, Modes as _};

/// The most read of an existing file. Generated files are a few KiB; a longer one was edited
/// (its digest cannot match what was read of it) or is not codeact's.
const MAX_READ: u64 = 1024 * 1024;

/// The mode of generated files, and of the directories created for them.
const FILE_MODE: u32 = 0o644;
const DIR_MODE: u32 = 0o755;

/// The instructions file name.
pub(crate) const INSTRUCTIONS_FILE: &str = "codeact.instructions.md";
/// The agent file name.
pub(crate) const AGENT_FILE: &str = "codeact.agent.md";

/// `$COPILOT_HOME`, else `~/.copilot`.
#[must_use]
pub(crate) fn copilot_home() -> Option<PathBuf> {
    env::var(env::COPILOT_HOME)
        .map(PathBuf::from)
        .or_else(|| env::var(env::HOME).map(|home| PathBuf::from(home).join(".copilot")))
}

/// What `install` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileKind {
    Instructions,
    Agent,
}

impl FileKind {
    fn dir(self) -> &'static str {
        match self {
            Self::Instructions => "instructions",
            Self::Agent => "agents",
        }
    }

    fn file(self) -> &'static str {
        match self {
            Self::Instructions => INSTRUCTIONS_FILE,
            Self::Agent => AGENT_FILE,
        }
    }
}

/// One file `install` writes, and the way to it.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub(crate) kind: FileKind,
    /// The file's host path, for messages.
    pub(crate) path: PathBuf,
    /// The directory opened as it is, links followed: the workspace, or a directory of
    /// `$COPILOT_HOME`.
    anchor: PathBuf,
    /// The directories below `anchor`, each opened without following a link.
    beneath: Vec<&'static str>,
}

/// The directory that holds a [`Target`], as far as it could be opened.
#[derive(Debug)]
pub(crate) enum Place {
    /// Open, and no directory below the anchor is a link.
    Dir(Dir),
    /// A directory on the way does not exist.
    Missing,
    /// This directory on the way is a symbolic link.
    Link(PathBuf),
}

/// What is at a [`Target`] now.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Existing {
    Missing,
    /// A symbolic link (never followed).
    Link,
    /// A directory, device, FIFO or socket.
    Special,
    /// A regular file: its text (lossy UTF-8), at most [`MAX_READ`] bytes of it.
    Text(String),
}

/// The files `install` writes: in the repository (`.github/…`) or, with `--global`, in
/// `$COPILOT_HOME` where the CLI loads user-level instructions and agents.
#[must_use]
pub(crate) fn targets(workspace: &Path, global: bool) -> Option<Vec<Target>> {
    let home = if global { Some(copilot_home()?) } else { None };
    let target = |kind: FileKind| match &home {
        Some(home) => Target {
            kind,
            path: home.join(kind.dir()).join(kind.file()),
            anchor: home.join(kind.dir()),
            beneath: Vec::new(),
        },
        None => Target {
            kind,
            path: workspace.join(".github").join(kind.dir()).join(kind.file()),
            anchor: workspace.to_path_buf(),
            beneath: vec![".github", kind.dir()],
        },
    };
    Some(vec![target(FileKind::Instructions), target(FileKind::Agent)])
}

impl Target {
    /// Opens the file's directory, without following a link below the anchor; with `create`,
    /// makes the directories that are missing (never [`Place::Missing`] then).
    pub(crate) fn open_dir(&self, create: bool) -> Result<Place> {
        let failed = |at: &Path| format!("failed to open `{}`", at.display());
        if create {
            std::fs::DirBuilder::new()
                .recursive(true)
                .unix_mode(DIR_MODE)
                .create(&self.anchor)
                .with_context(|| format!("failed to create `{}`", self.anchor.display()))?;
        }
        let mut dir = match Dir::open_ambient_dir(&self.anchor, cap_std::ambient_authority()) {
            Err(err) if err.kind() == io::ErrorKind::NotFound && !create => return Ok(Place::Missing),
            opened => opened.with_context(|| failed(&self.anchor))?,
        };
        let mut at = self.anchor.clone();
        for name in &self.beneath {
            at.push(name);
            let opened = match dir.open_dir_nofollow(name) {
                Ok(next) => next,
                // Why the open failed is asked of the held directory, only to report it: the
                // open itself already refused to follow whatever is there.
                Err(err) => match dir.symlink_metadata(name) {
                    Ok(meta) if meta.is_symlink() => return Ok(Place::Link(at)),
                    Err(missing) if missing.kind() == io::ErrorKind::NotFound => {
                        if !create {
                            return Ok(Place::Missing);
                        }
                        let mut builder = DirBuilder::new();
                        builder.unix_mode(DIR_MODE);
                        match dir.create_dir_with(name, &builder) {
                            Err(err) if err.kind() != io::ErrorKind::AlreadyExists => {
                                return Err(err).with_context(|| format!("failed to create `{}`", at.display()));
                            }
                            _ => {}
                        }
                        match dir.open_dir_nofollow(name) {
                            Ok(next) => next,
                            Err(_) if dir.symlink_metadata(name).is_ok_and(|meta| meta.is_symlink()) => {
                                return Ok(Place::Link(at));
                            }
                            Err(err) => return Err(err).with_context(|| failed(&at)),
                        }
                    }
                    _ => return Err(err).with_context(|| failed(&at)),
                },
            };
            dir = opened;
        }
        Ok(Place::Dir(dir))
    }

    /// What is at the file in `dir` (from [`Self::open_dir`]), read without following a link
    /// or blocking on a FIFO.
    pub(crate) fn read(&self, dir: &Dir) -> Result<Existing> {
        let name = self.kind.file();
        let mut options = OpenOptions::new();
        options.read(true).follow(FollowSymlinks::No).careful(Follow::NoLinks);
        let file = match dir.open_with(name, &options) {
            Ok(file) => file,
            Err(err) => {
                return match dir.symlink_metadata(name) {
                    Err(missing) if missing.kind() == io::ErrorKind::NotFound => Ok(Existing::Missing),
                    Ok(meta) if meta.is_symlink() => Ok(Existing::Link),
                    Ok(meta) if !meta.is_file() => Ok(Existing::Special),
                    _ => Err(err).with_context(|| format!("failed to read `{}`", self.path.display())),
                };
            }
        };
        let failed = || format!("failed to read `{}`", self.path.display());
        if !file.metadata().with_context(failed)?.is_file() {
            return Ok(Existing::Special);
        }
        let mut bytes = Vec::new();
        file.take(MAX_READ).read_to_end(&mut bytes).with_context(failed)?;
        Ok(Existing::Text(String::from_utf8_lossy(&bytes).into_owned()))
    }

    /// Writes the file in `dir` atomically: a fresh temporary file beside it, renamed over it.
    pub(crate) fn write(&self, dir: &Dir, bytes: &[u8]) -> Result<()> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let name = self.kind.file();
        let temp = format!(".{name}.{}-{}.tmp", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed));
        let mut options = OpenOptions::new();
        options.write(true).create_new(true).follow(FollowSymlinks::No).unix_mode(FILE_MODE);
        let written = dir.open_with(&temp, &options).and_then(|mut file| {
            let result = file.write_all(bytes).and_then(|()| shared(&file)).and_then(|()| dir.rename(&temp, dir, name));
            if result.is_err() {
                let _ = dir.remove_file(&temp);
            }
            result
        });
        written.with_context(|| format!("failed to write `{}`", self.path.display()))
    }

    /// Removes the file from `dir` (a link would be removed, never followed).
    pub(crate) fn remove(&self, dir: &Dir) -> Result<()> {
        dir.remove_file(self.kind.file()).with_context(|| format!("failed to remove `{}`", self.path.display()))
    }

    /// The text of this instructions file when it carries codeact's marker, reached as
    /// `install` would reach it.
    fn instructions_text(&self) -> Option<String> {
        if self.kind != FileKind::Instructions {
            return None;
        }
        let Ok(Place::Dir(dir)) = self.open_dir(false) else { return None };
        match self.read(&dir) {
            Ok(Existing::Text(text)) if has_marker(&text) => Some(text),
            _ => None,
        }
    }
}

/// Makes a written file readable by everyone, as files in a repository are (0644): the mode
/// asked for at creation passed through the umask.
#[cfg(unix)]
fn shared(file: &cap_std::fs::File) -> io::Result<()> {
    file.set_permissions(<cap_std::fs::Permissions as cap_std::fs::PermissionsExt>::from_mode(FILE_MODE))
}

/// A written file on Windows is readable as its folder's ACL says, as the repository's are.
#[cfg(windows)]
#[expect(clippy::unnecessary_wraps, reason = "Unix sets the file's mode here, which can fail")]
fn shared(_file: &cap_std::fs::File) -> io::Result<()> {
    Ok(())
}

/// The installed instructions file (repository level first, then user level) that brings
/// codeact's instructions into a session started in `cwd`: its path and text. A file reached
/// through a link in the repository does not count: `install` would not have written it.
#[must_use]
pub(crate) fn installed_instructions(cwd: &Path) -> Option<(PathBuf, String)> {
    let candidates = [targets(cwd, false), targets(cwd, true)];
    candidates
        .into_iter()
        .flatten()
        .flatten()
        .find_map(|target| target.instructions_text().map(|text| (target.path.clone(), text)))
}

/// The command line a generated file tells the model to run, without ` run --backend …`: the
/// words before it on the line that opens the example's here-document.
#[must_use]
pub(crate) fn command_in(text: &str) -> Option<&str> {
    text.lines().find_map(|line| {
        let head = line.strip_suffix(" <<'PY'")?;
        head.rfind(" run --backend ").map(|at| &head[..at])
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_is_read_back_from_the_example() {
        let text = "# title\n```bash\nsh '/a b/bin/codeact' run --backend monty <<'PY'\nprint(1)\nPY\n```\n";
        assert_eq!(command_in(text), Some("sh '/a b/bin/codeact'"));
        assert_eq!(command_in("codeact run <<'PY'\n"), None);
    }

    #[test]
    fn repository_targets_are_reached_beneath_the_workspace() {
        let targets = targets(Path::new("/ws"), false).unwrap();
        let shown: Vec<_> = targets.iter().map(|t| (t.kind, t.path.clone(), t.beneath.clone())).collect();
        assert_eq!(
            shown,
            [
                (
                    FileKind::Instructions,
                    PathBuf::from("/ws/.github/instructions/codeact.instructions.md"),
                    vec![".github", "instructions"]
                ),
                (FileKind::Agent, PathBuf::from("/ws/.github/agents/codeact.agent.md"), vec![".github", "agents"]),
            ]
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_symlinked_directory_on_the_way_is_reported_and_never_created_through() {
        let temp = tempfile::tempdir().unwrap();
        let ws = temp.path().join("ws");
        let outside = temp.path().join("outside");
        std::fs::create_dir_all(ws.join(".github")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, ws.join(".github/agents")).unwrap();
        let [instructions, agent] = <[Target; 2]>::try_from(targets(&ws, false).unwrap()).unwrap();
        assert!(matches!(instructions.open_dir(false).unwrap(), Place::Missing));
        assert!(matches!(instructions.open_dir(true).unwrap(), Place::Dir(_)));
        for create in [false, true] {
            match agent.open_dir(create).unwrap() {
                Place::Link(link) => assert_eq!(link, ws.join(".github/agents")),
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    }

    #[test]
    fn a_file_is_written_replaced_and_removed_through_its_directory() {
        let temp = tempfile::tempdir().unwrap();
        let [target, _] = <[Target; 2]>::try_from(targets(temp.path(), false).unwrap()).unwrap();
        let Place::Dir(dir) = target.open_dir(true).unwrap() else { panic!("not opened") };
        assert_eq!(target.read(&dir).unwrap(), Existing::Missing);
        target.write(&dir, b"one").unwrap();
        target.write(&dir, b"two").unwrap();
        assert_eq!(target.read(&dir).unwrap(), Existing::Text("two".into()));
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt as _;
            assert_eq!(std::fs::metadata(&target.path).unwrap().mode() & 0o777, 0o644);
        }
        let names: Vec<_> =
            std::fs::read_dir(target.path.parent().unwrap()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, [INSTRUCTIONS_FILE], "no temporary file is left behind");
        target.remove(&dir).unwrap();
        assert_eq!(target.read(&dir).unwrap(), Existing::Missing);
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("/dev/zero", &target.path).unwrap();
            assert_eq!(target.read(&dir).unwrap(), Existing::Link);
            std::fs::remove_file(&target.path).unwrap();
        }
        std::fs::create_dir(&target.path).unwrap();
        assert_eq!(target.read(&dir).unwrap(), Existing::Special);
    }
}
