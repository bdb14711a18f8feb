//! The `sql` tool itself: its signature, and running a query or a script of statements on an
//! opened database — binding its parameters, collecting its rows under the memory limit, and
//! saying what `SQLite` refused.

use std::time::Instant;

use rusqlite::fallible_iterator::FallibleIterator;
use rusqlite::types::{Value as SqlValue, ValueRef};
use rusqlite::{Connection, Statement};

use super::open::{MEMORY, authorized, database_file, no_file, open_file};
use crate::limits::format_size;
use crate::tools::args::Args;
use crate::tools::context::ToolContext;
use crate::tools::error::{ErrorKind, ToolError};
use crate::tools::handler::Builtin;
use crate::tools::spec::{Kind, Param, ParamDefault, ToolSpec};
use crate::tools::value::Value;

/// Most rows one query returns.
const MAX_ROWS: usize = 10_000;

/// What one value in a result is counted as beyond its bytes, against the memory limit.
const VALUE_OVERHEAD: usize = 64;

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
        let (dir, name) = database_file(&ctx.workspace, db_path)?;
        let key = dir.join(std::path::Path::new(&name)).ok_or_else(|| no_file(db_path))?;
        match ctx.databases.files.entry(key) {
            std::collections::hash_map::Entry::Occupied(mut slot) => {
                if !slot.get().still_at(&ctx.workspace, &dir) {
                    slot.insert(open_file(&ctx.workspace, &dir, &name, db_path, max_memory)?);
                }
                &mut slot.into_mut().connection
            }
            std::collections::hash_map::Entry::Vacant(slot) => {
                &mut slot.insert(open_file(&ctx.workspace, &dir, &name, db_path, max_memory)?).connection
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
