//! `SQLite`'s memory under the run's limit (`--max-memory`): a hard limit on its heap, so a
//! query such as `SELECT randomblob(900000000)` fails with `MemoryError` instead of growing the
//! process, and the same bound on the length of any one string or blob.

use rusqlite::{Connection, ffi};

/// Holds `SQLite` (every connection in the process) to `max_memory` bytes of heap, and `conn`
/// to values no longer than that.
#[expect(unsafe_code, reason = "SQLite's heap and length limits are set through its C API")]
pub(super) fn limit(conn: &Connection, max_memory: usize) {
    let heap = i64::try_from(max_memory).unwrap_or(i64::MAX);
    // SAFETY: `sqlite3_hard_heap_limit64` only stores a process-wide number under SQLite's own
    // mutex; it may be called at any time, from any thread.
    unsafe { ffi::sqlite3_hard_heap_limit64(heap) };
    let length = i32::try_from(max_memory).unwrap_or(i32::MAX);
    // SAFETY: `conn.handle()` is the open connection's own handle, used only for this call
    // while `conn` is borrowed; `sqlite3_limit` on an open connection has no other requirement
    // (a value above the compiled-in maximum is lowered to it).
    unsafe { ffi::sqlite3_limit(conn.handle(), ffi::SQLITE_LIMIT_LENGTH, length) };
}
