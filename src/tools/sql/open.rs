//! Opening a database for the `sql` tool: where a file database may lie (inside the workspace,
//! not on a write-protected path, nor its journals), and the connection every query goes
//! through, with SQL that reaches other files refused and its memory held to the run's limit.
//! [`Databases`] keeps each one open for the rest of the run.

use std::collections::HashMap;

use rusqlite::Connection;
use rusqlite::config::DbConfig;
use rusqlite::hooks::{AuthAction, AuthContext, Authorization};

use super::memory;
use crate::tools::error::{ErrorKind, ToolError};
use crate::tools::workspace::{Confined, Entry, Workspace};

/// The files `SQLite` creates beside a database: named by appending these to its name.
const BESIDE: [&str; 3] = ["-journal", "-wal", "-shm"];

pub(super) const MEMORY: &str = ":memory:";

/// The run's open databases: the in-memory one and any workspace files, each opened once.
#[derive(Debug, Default)]
pub(crate) struct Databases {
    pub(super) memory: Option<Connection>,
    pub(super) files: HashMap<Confined, Database>,
}

/// A file database and the directory it was opened through. The fields drop in order: the
/// connection closes before the directory it names its files through.
#[derive(Debug)]
pub(super) struct Database {
    pub(super) connection: Connection,
    #[cfg(unix)]
    dir: super::held::HeldDir,
    #[cfg(windows)]
    _dir: super::pinned::PinnedDir,
}

impl Database {
    /// Whether `dir` still names the directory this database was opened through: a folder
    /// moved away during the run (and another put in its place) is not written through its
    /// old name.
    #[cfg(unix)]
    pub(super) fn still_at(&self, ws: &Workspace, dir: &Confined) -> bool {
        ws.open_dir(dir).is_ok_and(|now| self.dir.is(&now))
    }

    /// On Windows the folders on the way are pinned ([`super::pinned`]): none can have moved.
    #[cfg(windows)]
    #[expect(clippy::unused_self, reason = "Unix asks the database's held folder")]
    pub(super) fn still_at(&self, _ws: &Workspace, _dir: &Confined) -> bool {
        true
    }
}

/// Resolves a database path inside the workspace to its directory (symlinks resolved inside the
/// workspace) and its file name: an existing regular file, or a new file in an existing
/// directory. A write-protected path is refused, as given and as resolved, and so is one whose
/// journal, WAL or shared-memory file would be.
pub(super) fn database_file(ws: &Workspace, db_path: &str) -> Result<(Confined, std::ffi::OsString), ToolError> {
    let rel = ws.confine(db_path)?;
    // The path as given first: a protected directory that does not exist yet is refused too.
    check_writable(ws, &rel, &rel, db_path)?;
    let real = match ws.canonical(&rel) {
        Ok(real) => {
            if ws.entry(&real)? != Entry::File {
                return Err(ToolError::value(format!("sql() db_path '{}' is not a regular file", rel.shown())));
            }
            real
        }
        Err(err) if err.kind == ErrorKind::FileNotFound => {
            let name = rel.as_path().file_name().ok_or_else(|| no_file(db_path))?;
            let parent = ws.canonical(&rel.parent())?;
            parent.join(std::path::Path::new(name)).ok_or_else(|| no_file(db_path))?
        }
        Err(err) => return Err(err),
    };
    check_writable(ws, &rel, &real, db_path)?;
    let name = real.as_path().file_name().ok_or_else(|| no_file(db_path))?.to_os_string();
    Ok((real.parent(), name))
}

/// Opens the database `name` in `dir`, through the directory held open ([`super::held`]).
#[cfg(unix)]
pub(super) fn open_file(
    ws: &Workspace,
    dir: &Confined,
    name: &std::ffi::OsStr,
    shown: &str,
    max_memory: usize,
) -> Result<Database, ToolError> {
    let held = super::held::HeldDir::new(ws.open_dir(dir)?);
    if held.shared(name) {
        return Err(ToolError::new(
            ErrorKind::Permission,
            format!(
                "sql() does not open {shown:?}: another hard link names the same file, and SQLite writes a \
                 database in place (copy it to a file of its own first)"
            ),
        ));
    }
    let connection = authorized(super::beneath::open(&held, name), shown, max_memory)?;
    Ok(Database { connection, dir: held })
}

/// Opens the database `name` in `dir`, through the folders pinned on the way ([`super::pinned`]).
#[cfg(windows)]
pub(super) fn open_file(
    ws: &Workspace,
    dir: &Confined,
    name: &std::ffi::OsStr,
    shown: &str,
    max_memory: usize,
) -> Result<Database, ToolError> {
    let pinned = super::pinned::PinnedDir::new(ws.root(), dir.as_path())
        .map_err(|err| ToolError::new(ErrorKind::Permission, format!("sql() does not open {shown:?}: {err}")))?;
    if pinned.shared(name) {
        return Err(ToolError::new(
            ErrorKind::Permission,
            format!(
                "sql() does not open {shown:?}: it is a link, or another hard link names the same file, and SQLite \
                 writes a database in place (copy it to a file of its own first)"
            ),
        ));
    }
    let connection = authorized(pinned.open(name), shown, max_memory)?;
    Ok(Database { connection, _dir: pinned })
}

/// Refuses a database, or a file `SQLite` would make beside it, on a write-protected path.
fn check_writable(ws: &Workspace, rel: &Confined, real: &Confined, db_path: &str) -> Result<(), ToolError> {
    ws.check_writable(rel, real)?;
    for suffix in BESIDE {
        let beside = |path: &Confined| {
            let mut name = path.as_path().file_name().unwrap_or_default().to_os_string();
            name.push(suffix);
            path.parent().join(std::path::Path::new(&name)).ok_or_else(|| no_file(db_path))
        };
        ws.check_writable(&beside(rel)?, &beside(real)?)?;
    }
    Ok(())
}

pub(super) fn no_file(db_path: &str) -> ToolError {
    ToolError::value(format!("sql() db_path {db_path:?} names no file"))
}

/// An opened connection, with SQL that reaches other files refused and its memory limited.
pub(super) fn authorized(
    opened: rusqlite::Result<Connection>,
    shown: &str,
    max_memory: usize,
) -> Result<Connection, ToolError> {
    let failed = |e: rusqlite::Error| ToolError::new(ErrorKind::Os, format!("sql() could not open {shown}: {e}"));
    let conn = opened.map_err(failed)?;
    // Defensive mode refuses what corrupts a database file on purpose (writable_schema, raw
    // page writes); an untrusted schema cannot run functions with side effects from a view or
    // trigger that a repository's database file brings.
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true).map_err(failed)?;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_TRUSTED_SCHEMA, false).map_err(failed)?;
    memory::limit(&conn, max_memory);
    // Temporary tables and indices stay in memory, under the heap limit, rather than in files in
    // the system's temporary directory; the program cannot change that.
    conn.pragma_update(None, "temp_store", "MEMORY").map_err(failed)?;
    conn.authorizer(Some(|context: AuthContext<'_>| match context.action {
        AuthAction::Attach { .. } | AuthAction::Detach { .. } => Authorization::Deny,
        AuthAction::Pragma { pragma_name, .. } if names_a_directory(pragma_name) => Authorization::Deny,
        _ => Authorization::Allow,
    }));
    Ok(conn)
}

/// The pragmas that point `SQLite` at a directory of the program's choice, where it would
/// create its temporary files (or, on Windows, its databases), and the one that would move its
/// temporary data out of memory into files.
fn names_a_directory(pragma: &str) -> bool {
    ["temp_store_directory", "data_store_directory", "temp_store"].iter().any(|name| pragma.eq_ignore_ascii_case(name))
}
