//! `sql`: `SQLite`, bundled into the binary. `:memory:` is one database shared by every call in a
//! run; a file database must lie inside the workspace, and SQL cannot reach past it (`ATTACH`
//! and `VACUUM INTO` are refused by an authorizer).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use rusqlite::fallible_iterator::FallibleIterator;
use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
use rusqlite::types::{Value as SqlValue, ValueRef};
use rusqlite::{Connection, OpenFlags, Statement};

use super::args::Args;
use super::context::ToolContext;
use super::error::{ErrorKind, ToolError};
use super::spec::{Default, Kind, Param, ToolSpec};
use super::value::Value;
use super::workspace::{Entry, display};

/// Most rows one query returns.
pub const MAX_ROWS: usize = 10_000;

const MEMORY: &str = ":memory:";

pub static SQL: ToolSpec = ToolSpec {
    name: "sql",
    description: "SQLite; rows as dicts, writes give `[{rows_affected}]`; `:memory:` lasts the whole program.",
    params: &[
        Param {
            name: "query",
            kind: Kind::Str,
            default: Default::Required,
            doc: "SQL; several statements are allowed when none returns rows",
        },
        Param {
            name: "db_path",
            kind: Kind::Str,
            default: Default::Str(MEMORY),
            doc: "Database file in the workspace, or :memory:",
        },
        Param {
            name: "params",
            kind: Kind::SqlParams,
            default: Default::None,
            doc: "Values for ? (a list) or :name (a dict) placeholders",
        },
    ],
    returns: "list[dict]",
    risk: None,
    handler: sql,
};

/// The run's open databases: the in-memory one and any workspace files, each opened once.
#[derive(Debug, Default)]
pub struct Databases {
    open: HashMap<PathBuf, Connection>,
}

fn sql(ctx: &mut ToolContext, args: &Args) -> Result<Value, ToolError> {
    let query = args.str("query")?;
    let db_path = args.str("db_path")?;
    let key = if db_path == MEMORY { PathBuf::from(MEMORY) } else { database_file(ctx, db_path)? };
    let deadline = ctx.deadline;
    let warnings = &mut Vec::new();
    let conn = match ctx.databases.open.entry(key) {
        std::collections::hash_map::Entry::Occupied(slot) => slot.into_mut(),
        std::collections::hash_map::Entry::Vacant(slot) => {
            let conn = open(slot.key(), db_path)?;
            slot.insert(conn)
        }
    };
    conn.progress_handler(10_000, Some(move || Instant::now() >= deadline));
    let result = execute(conn, query, args.get("params"), warnings);
    conn.progress_handler(0, None::<fn() -> bool>);
    for warning in warnings.iter() {
        ctx.warn(warning);
    }
    result
}

/// Resolves a database path inside the workspace: an existing regular file, or a new file in an
/// existing directory. Symlinks are resolved inside the workspace first, and `SQLite` opens the
/// result with `SQLITE_OPEN_NOFOLLOW`.
fn database_file(ctx: &ToolContext, db_path: &str) -> Result<PathBuf, ToolError> {
    let ws = &ctx.workspace;
    let rel = ws.confine(db_path)?;
    let real = match ws.canonical(&rel) {
        Ok(real) => {
            if ws.entry(&real)? != Entry::File {
                return Err(ToolError::value(format!("sql() db_path '{}' is not a regular file", display(&rel))));
            }
            real
        }
        Err(err) if err.kind == ErrorKind::FileNotFound => {
            let parent = rel.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
            let name =
                rel.file_name().ok_or_else(|| ToolError::value(format!("sql() db_path {db_path:?} names no file")))?;
            ws.canonical(parent)?.join(name)
        }
        Err(err) => return Err(err),
    };
    Ok(ws.root().join(real))
}

fn open(path: &Path, shown: &str) -> Result<Connection, ToolError> {
    let conn = if path == Path::new(MEMORY) {
        Connection::open_in_memory()
    } else {
        Connection::open_with_flags(path, OpenFlags::default() | OpenFlags::SQLITE_OPEN_NOFOLLOW)
    }
    .map_err(|e| ToolError::new(ErrorKind::Os, format!("sql() could not open {shown}: {e}")))?;
    conn.authorizer(Some(|context: AuthContext<'_>| match context.action {
        AuthAction::Attach { .. } | AuthAction::Detach { .. } => Authorization::Deny,
        _ => Authorization::Allow,
    }));
    Ok(conn)
}

/// Runs `query`: one statement (rows, or rows affected), or a script of several statements
/// that return no rows. Statements are prepared one at a time, so a script may use a table
/// that an earlier statement creates.
fn execute(conn: &Connection, query: &str, params: &Value, warnings: &mut Vec<String>) -> Result<Value, ToolError> {
    let mut batch = rusqlite::Batch::new(conn, query);
    let Some(mut first) = batch.next().map_err(|e| sql_error(&e))? else {
        return Ok(rows_affected(0));
    };
    bind(&mut first, params)?;
    if first.column_count() > 0 {
        let rows = collect_rows(&mut first, warnings)?;
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

fn collect_rows(statement: &mut Statement<'_>, warnings: &mut Vec<String>) -> Result<Value, ToolError> {
    let names: Vec<String> = statement.column_names().iter().map(|n| (*n).to_owned()).collect();
    let mut rows = statement.raw_query();
    let mut out = Vec::new();
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

fn sql_error(err: &rusqlite::Error) -> ToolError {
    if let rusqlite::Error::SqliteFailure(code, _) = err
        && code.code == rusqlite::ErrorCode::OperationInterrupted
    {
        return ToolError::new(ErrorKind::Timeout, "sql() stopped: the run's time limit was reached");
    }
    ToolError::runtime(format!("sql error: {err}"))
}
