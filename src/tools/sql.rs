//! `sql`: `SQLite`, bundled into the binary. `:memory:` is one database shared by every call in a
//! run; a file database must lie inside the workspace, outside its write-protected paths
//! ([`super::protected`]), and SQL cannot reach past it: an authorizer refuses `ATTACH`,
//! `VACUUM INTO` and the pragmas that name a directory (`temp_store_directory`,
//! `data_store_directory`), and every connection is in `SQLite`'s defensive mode with untrusted
//! schemas. `SQLite`'s heap, and each result, is held to the run's memory limit ([`memory`]).
//!
//! A file database is opened through its directory, itself opened beneath the workspace root
//! and held open for as long as the connection: `SQLite` names the database and the journals
//! beside it as `/proc/self/fd/<directory>/<name>` ([`beneath`]), so no directory on the way
//! can be swapped for a symlink between the check and the open, and the last component is
//! opened with `O_NOFOLLOW`.

mod beneath;
mod memory;

use std::collections::HashMap;
use std::time::Instant;

use cap_std::fs::Dir;
use rusqlite::config::DbConfig;
use rusqlite::fallible_iterator::FallibleIterator;
use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
use rusqlite::types::{Value as SqlValue, ValueRef};
use rusqlite::{Connection, Statement};

use super::args::Args;
use super::context::ToolContext;
use super::error::{ErrorKind, ToolError};
use super::handler::Builtin;
use super::spec::{Kind, Param, ParamDefault, ToolSpec};
use super::value::Value;
use super::workspace::{Confined, Entry, Workspace};
use crate::limits::format_size;

/// Most rows one query returns.
const MAX_ROWS: usize = 10_000;

/// What one value in a result is counted as beyond its bytes, against the memory limit.
const VALUE_OVERHEAD: usize = 64;

/// The files `SQLite` creates beside a database: named by appending these to its name.
const BESIDE: [&str; 3] = ["-journal", "-wal", "-shm"];

const MEMORY: &str = ":memory:";

pub(crate) static SQL: Builtin = Builtin {
    spec: ToolSpec {
        name: "sql",
        description: "SQLite; rows as dicts, writes give `[{rows_affected}]`; `:memory:` lasts the whole program.",
        params: &[
            Param::required("query", Kind::Str, "SQL; several statements are allowed when none returns rows"),
            Param::new("db_path", Kind::Str, ParamDefault::Str(MEMORY), "Database file in the workspace, or :memory:"),
            Param::optional("params", Kind::SqlParams, "Values for ? (a list) or :name (a dict) placeholders"),
        ],
        returns: "list[dict]",
        risk: None,
    },
    handler: sql,
};

/// The run's open databases: the in-memory one and any workspace files, each opened once.
#[derive(Debug, Default)]
pub(crate) struct Databases {
    memory: Option<Connection>,
    files: HashMap<Confined, Database>,
}

/// A file database and the directory it was opened through. The fields drop in order: the
/// connection closes before the directory it names its files through.
#[derive(Debug)]
struct Database {
    connection: Connection,
    _dir: Dir,
}

fn sql(ctx: &mut ToolContext, args: &Args<'_>) -> Result<Value, ToolError> {
    let query = args.str("query")?;
    let db_path = args.str("db_path")?;
    let deadline = ctx.deadline;
    let max_memory = ctx.max_memory;
    let warnings = &mut Vec::new();
    let conn = if db_path == MEMORY {
        match &mut ctx.databases.memory {
            Some(conn) => conn,
            slot @ None => slot.insert(authorized(Connection::open_in_memory(), db_path, max_memory)?),
        }
    } else {
        if !beneath::available() {
            return Err(ToolError::new(
                ErrorKind::Os,
                "sql() cannot open file databases here: they are opened through /proc/self/fd, which this \
                 system lacks; use db_path=':memory:'",
            ));
        }
        let (dir, name) = database_file(ctx, db_path)?;
        let key = dir.join(std::path::Path::new(&name)).ok_or_else(|| no_file(db_path))?;
        match ctx.databases.files.entry(key) {
            std::collections::hash_map::Entry::Occupied(slot) => &mut slot.into_mut().connection,
            std::collections::hash_map::Entry::Vacant(slot) => {
                let opened = ctx.workspace.open_dir(&dir)?;
                let connection = authorized(beneath::open(&opened, &name), db_path, max_memory)?;
                &mut slot.insert(Database { connection, _dir: opened }).connection
            }
        }
    };
    conn.progress_handler(10_000, Some(move || Instant::now() >= deadline));
    let result = execute(conn, query, args.get("params"), max_memory, warnings);
    conn.progress_handler(0, None::<fn() -> bool>);
    for warning in warnings.iter() {
        ctx.warn(warning);
    }
    result
}

/// Resolves a database path inside the workspace to its directory (symlinks resolved inside the
/// workspace) and its file name: an existing regular file, or a new file in an existing
/// directory. A write-protected path is refused, as given and as resolved, and so is one whose
/// journal, WAL or shared-memory file would be.
fn database_file(ctx: &ToolContext, db_path: &str) -> Result<(Confined, std::ffi::OsString), ToolError> {
    let ws = &ctx.workspace;
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

fn no_file(db_path: &str) -> ToolError {
    ToolError::value(format!("sql() db_path {db_path:?} names no file"))
}

/// An opened connection, with SQL that reaches other files refused and its memory limited.
fn authorized(opened: rusqlite::Result<Connection>, shown: &str, max_memory: usize) -> Result<Connection, ToolError> {
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

/// Runs `query`: one statement (rows, or rows affected), or a script of several statements
/// that return no rows. Statements are prepared one at a time, so a script may use a table
/// that an earlier statement creates.
fn execute(
    conn: &Connection,
    query: &str,
    params: &Value,
    max_memory: usize,
    warnings: &mut Vec<String>,
) -> Result<Value, ToolError> {
    let mut batch = rusqlite::Batch::new(conn, query);
    let Some(mut first) = batch.next().map_err(|e| sql_error(&e))? else {
        return Ok(rows_affected(0));
    };
    bind(&mut first, params)?;
    if first.column_count() > 0 {
        let rows = collect_rows(&mut first, max_memory, warnings)?;
        if batch.next().map_err(|e| sql_error(&e))?.is_some() {
            return Err(ToolError::value(
                "sql() a query that returns rows must be the only statement; run the others in their own sql() call",
            ));
        }
        return Ok(rows);
    }
    let mut changed = first.raw_execute().map_err(|e| sql_error(&e))? as u64;
    while let Some(mut statement) = batch.next().map_err(|e| sql_error(&e))? {
        if *params != Value::None {
            return Err(ToolError::value("sql() params work with a single statement; run the statements one by one"));
        }
        if statement.column_count() > 0 {
            return Err(ToolError::value(
                "sql() a script of several statements must not return rows; run the SELECT as its own sql() call",
            ));
        }
        changed += statement.raw_execute().map_err(|e| sql_error(&e))? as u64;
    }
    Ok(rows_affected(changed))
}

fn rows_affected(count: u64) -> Value {
    Value::List(vec![Value::dict([("rows_affected", Value::Int(i64::try_from(count).unwrap_or(i64::MAX)))])])
}

/// The rows, at most [`MAX_ROWS`] of them, refused with `MemoryError` once they would hold more
/// than `max_memory` bytes.
fn collect_rows(
    statement: &mut Statement<'_>,
    max_memory: usize,
    warnings: &mut Vec<String>,
) -> Result<Value, ToolError> {
    let names: Vec<String> = statement.column_names().iter().map(|n| (*n).to_owned()).collect();
    let mut rows = statement.raw_query();
    let mut out = Vec::new();
    let mut held = 0usize;
    while let Some(row) = rows.next().map_err(|e| sql_error(&e))? {
        if out.len() == MAX_ROWS {
            warnings.push(format!(
                "sql(): more than {MAX_ROWS} rows; returned the first {MAX_ROWS}. Add LIMIT or aggregate in SQL."
            ));
            break;
        }
        let mut fields = Vec::with_capacity(names.len());
        for (index, name) in names.iter().enumerate() {
            let value = row.get_ref(index).map_err(|e| sql_error(&e))?;
            held = held.saturating_add(VALUE_OVERHEAD + name.len() + value_bytes(value));
            if held > max_memory {
                return Err(ToolError::new(
                    ErrorKind::Memory,
                    format!(
                        "sql() result is larger than the run's memory limit ({}); select fewer rows or columns, \
                         or aggregate in SQL",
                        format_size(max_memory)
                    ),
                ));
            }
            fields.push((name.clone(), from_sql(value)));
        }
        out.push(Value::dict(fields));
    }
    Ok(Value::List(out))
}

fn bind(statement: &mut Statement<'_>, params: &Value) -> Result<(), ToolError> {
    match params {
        Value::None => Ok(()),
        Value::List(items) | Value::Tuple(items) => {
            for (index, item) in items.iter().enumerate() {
                statement.raw_bind_parameter(index + 1, to_sql(item)?).map_err(|e| sql_error(&e))?;
            }
            Ok(())
        }
        Value::Dict(pairs) => {
            for (key, item) in pairs {
                let Value::Str(key) = key else {
                    return Err(ToolError::type_error("sql() params dict keys must be str"));
                };
                let name = if key.starts_with([':', '@', '$']) { key.clone() } else { format!(":{key}") };
                let index = statement
                    .parameter_index(&name)
                    .map_err(|e| sql_error(&e))?
                    .ok_or_else(|| ToolError::value(format!("sql() query has no parameter named {name}")))?;
                statement.raw_bind_parameter(index, to_sql(item)?).map_err(|e| sql_error(&e))?;
            }
            Ok(())
        }
        other => {
            Err(ToolError::type_error(format!("sql() params must be a list or a dict, not {}", other.type_name())))
        }
    }
}

fn to_sql(value: &Value) -> Result<SqlValue, ToolError> {
    Ok(match value {
        Value::None => SqlValue::Null,
        Value::Bool(b) => SqlValue::Integer(i64::from(*b)),
        Value::Int(i) => SqlValue::Integer(*i),
        Value::Float(f) => SqlValue::Real(*f),
        Value::Str(s) => SqlValue::Text(s.clone()),
        Value::Bytes(b) => SqlValue::Blob(b.clone()),
        other => {
            return Err(ToolError::type_error(format!(
                "sql() parameter values must be None, bool, int, float, str or bytes, not {}",
                other.type_name()
            )));
        }
    })
}

fn from_sql(value: ValueRef<'_>) -> Value {
    match value {
        ValueRef::Null => Value::None,
        ValueRef::Integer(i) => Value::Int(i),
        ValueRef::Real(f) => Value::Float(f),
        ValueRef::Text(t) => Value::Str(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Value::Bytes(b.to_vec()),
    }
}

/// The bytes a value's text or blob holds.
fn value_bytes(value: ValueRef<'_>) -> usize {
    match value {
        ValueRef::Text(bytes) | ValueRef::Blob(bytes) => bytes.len(),
        ValueRef::Null | ValueRef::Integer(_) | ValueRef::Real(_) => 0,
    }
}

fn sql_error(err: &rusqlite::Error) -> ToolError {
    if let rusqlite::Error::SqliteFailure(code, _) = err {
        match code.code {
            rusqlite::ErrorCode::OperationInterrupted => {
                return ToolError::new(ErrorKind::Timeout, "sql() stopped: the run's time limit was reached");
            }
            rusqlite::ErrorCode::OutOfMemory | rusqlite::ErrorCode::TooBig => {
                return ToolError::new(
                    ErrorKind::Memory,
                    format!(
                        "sql() needs more memory than the run's limit allows ({err}); raise --max-memory or ask for less"
                    ),
                );
            }
            _ => {}
        }
    }
    ToolError::runtime(format!("sql error: {err}"))
}
