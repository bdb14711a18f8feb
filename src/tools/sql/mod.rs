//! `sql`: `SQLite`, bundled into the binary. `:memory:` is one database shared by every call in a
//! run; a file database must lie inside the workspace, outside its write-protected paths
//! ([`super::protected`]), and SQL cannot reach past it: an authorizer refuses `ATTACH`,
//! `VACUUM INTO` and the pragmas that name a directory (`temp_store_directory`,
//! `data_store_directory`), and every connection is in `SQLite`'s defensive mode with untrusted
//! schemas. `SQLite`'s heap, and each result, is held to the run's memory limit ([`memory`]).
//!
//! A file database is opened through its directory, itself opened beneath the workspace root
//! and held open for as long as the connection: `SQLite` names the database and the journals
//! beside it as `/codeact-held/<directory>/<name>`, which its system calls resolve in that
//! directory ([`held`], [`beneath`]), so no directory on the way can be swapped for a symlink
//! between the check and the open, and no file is opened through a symlink. This holds on every
//! Unix. On Windows every folder from the root to the database's is opened without following a
//! reparse point and held so that none can be renamed or removed ([`pinned`]), and the path
//! through them is given to `SQLite`.

#[cfg(unix)]
mod beneath;
#[cfg(unix)]
mod held;
mod memory;
mod open;
#[cfg(windows)]
mod pinned;
mod query;

pub(crate) use open::Databases;
pub(crate) use query::SQL;
