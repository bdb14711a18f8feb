//! `view`, `create` and `edit`: reading and writing files inside the workspace.

use std::io::{BufRead, BufReader, Read};
use std::time::Instant;

use cap_std::fs::File;

use super::args::Args;
use super::context::{ToolContext, check_deadline};
use super::error::{ErrorKind, ToolError};
use super::handler::Builtin;
use super::spec::{Kind, Param, ToolSpec};
use super::value::Value;
use super::workspace::{Confined, Opened, Workspace, io_error, read_capped};

/// Files larger than this are read whole only through `view_range`.
pub(crate) const MAX_VIEW_BYTES: u64 = 10 * 1024 * 1024;

pub(crate) static VIEW: Builtin = Builtin {
    spec: ToolSpec {
        name: "view",
        description: "File text (`view_range=[start, end]`, 1-based, -1 = end) or a directory listing.",
        params: &[
            Param::required("path", Kind::Str, "File or directory, relative to the workspace"),
            Param::optional(
                "view_range",
                Kind::Range,
                "[start, end] lines, 1-based and inclusive; end -1 means to the end of the file",
            ),
        ],
        returns: "str",
        risk: None,
    },
    handler: view,
};

pub(crate) static CREATE: Builtin = Builtin {
    spec: ToolSpec {
        name: "create",
        description: "Write a new file, creating parent directories; fails if the path exists.",
        params: &[
            Param::required("path", Kind::Str, "New file, relative to the workspace"),
            Param::required("file_text", Kind::Str, "The whole content"),
        ],
        returns: "str",
        risk: None,
    },
    handler: create,
};

pub(crate) static EDIT: Builtin = Builtin {
    spec: ToolSpec {
        name: "edit",
        description: "Replace `old_str`, which must occur exactly once, with `new_str`.",
        params: &[
            Param::required("path", Kind::Str, "File to edit, relative to the workspace"),
            Param::required("old_str", Kind::Str, "Exact text to replace; must be unique in the file"),
            Param::required("new_str", Kind::Str, "Replacement text"),
        ],
        returns: "str",
        risk: None,
    },
    handler: edit,
};

fn view(ctx: &mut ToolContext, args: &Args<'_>) -> Result<Value, ToolError> {
    let rel = ctx.workspace.confine(args.str("path")?)?;
    // One open tells a directory from a file and, for a file, is the handle that is read.
    let (file, len) = match ctx.workspace.open_entry(&rel)? {
        Opened::Dir => return Ok(Value::Str(ctx.workspace.list(&rel)?.join("\n"))),
        Opened::File(file, len) => (file, len),
    };
    match args.get("view_range") {
        Value::List(items) | Value::Tuple(items) => match items.as_slice() {
            [Value::Int(start), Value::Int(end)] => {
                view_lines(file, &rel, (*start, *end), ctx.deadline).map(Value::Str)
            }
            _ => Err(ToolError::type_error("view() argument 'view_range' must be [start, end]")),
        },
        _ => decode(read_capped(file, len, &rel, MAX_VIEW_BYTES)?, &rel).map(Value::Str),
    }
}

/// A whole text file inside the workspace (at most [`MAX_VIEW_BYTES`]).
pub(crate) fn read_text(ws: &Workspace, path: &str) -> Result<String, ToolError> {
    let rel = ws.confine(path)?;
    decode(ws.read(&rel, MAX_VIEW_BYTES)?, &rel)
}

/// Lines `start..=end` (1-based; `end == -1` means to the end), streamed so large files work.
/// At most [`MAX_VIEW_BYTES`] are kept, a line longer than that included: a file of one huge
/// line fails after that many bytes, not after reading it all. Lines before `start` are skipped
/// without being kept, looking at the deadline as they go.
fn view_lines(file: File, rel: &Confined, (start, end): (i64, i64), deadline: Instant) -> Result<String, ToolError> {
    if start < 1 || (end != -1 && end < start) {
        return Err(ToolError::value(format!(
            "view_range [{start}, {end}] is invalid: start must be >= 1 and end >= start (or -1 for the end of the file)"
        )));
    }
    let mut reader = BufReader::with_capacity(64 * 1024, file);
    let mut out = Vec::new();
    let mut number: i64 = 0;
    loop {
        if number + 1 < start {
            if skip_line(&mut reader, rel, deadline)? == 0 {
                break;
            }
            number += 1;
            continue;
        }
        let before = out.len();
        let room = (MAX_VIEW_BYTES + 1).saturating_sub(before as u64);
        let read = (&mut reader).take(room).read_until(b'\n', &mut out).map_err(|e| io_error(&e, rel))?;
        if read == 0 {
            break;
        }
        number += 1;
        if out.len() as u64 > MAX_VIEW_BYTES {
            return Err(ToolError::value(if before == 0 {
                format!(
                    "line {number} of '{}' is longer than {MAX_VIEW_BYTES} bytes, more than view() returns at once",
                    rel.shown()
                )
            } else {
                format!(
                    "lines {start}..{end} of '{}' are over {MAX_VIEW_BYTES} bytes; ask for fewer lines",
                    rel.shown()
                )
            }));
        }
        if end != -1 && number >= end {
            break;
        }
        check_deadline(deadline, "view")?;
    }
    if number < start {
        return Err(ToolError::value(format!(
            "view_range starts at line {start} but '{}' has {number} lines",
            rel.shown()
        )));
    }
    decode(out, rel)
}

/// Reads past one line without keeping it; the bytes it read (0 at the end of the file).
fn skip_line(reader: &mut impl BufRead, rel: &Confined, deadline: Instant) -> Result<usize, ToolError> {
    let mut total = 0;
    loop {
        let (found, used) = {
            let buf = reader.fill_buf().map_err(|e| io_error(&e, rel))?;
            if buf.is_empty() {
                return Ok(total);
            }
            match buf.iter().position(|byte| *byte == b'\n') {
                Some(at) => (true, at + 1),
                None => (false, buf.len()),
            }
        };
        reader.consume(used);
        total += used;
        if found {
            return Ok(total);
        }
        check_deadline(deadline, "view")?;
    }
}

fn create(ctx: &mut ToolContext, args: &Args<'_>) -> Result<Value, ToolError> {
    let path = args.str("path")?;
    let text = args.str("file_text")?;
    let rel = ctx.workspace.confine(path)?;
    ctx.workspace.create_new(&rel, text.as_bytes())?;
    Ok(Value::Str(format!("Created {} ({} lines)", rel.shown(), count_lines(text))))
}

fn edit(ctx: &mut ToolContext, args: &Args<'_>) -> Result<Value, ToolError> {
    let old = args.str("old_str")?;
    let new = args.str("new_str")?;
    let rel = ctx.workspace.confine(args.str("path")?)?;
    if old.is_empty() {
        return Err(ToolError::value("edit() old_str must not be empty; to write a whole file use create()"));
    }
    // Edit the file a symlink points to (inside the workspace), never replace the link itself.
    let real = ctx.workspace.canonical(&rel)?;
    ctx.workspace.check_writable(&rel, &real)?;
    let text = decode(ctx.workspace.read(&real, MAX_VIEW_BYTES)?, &rel)?;
    let count = text.matches(old).count();
    match count {
        0 => {
            return Err(ToolError::value(format!(
                "old_str was not found in {}; view the file and copy the text exactly, including whitespace",
                rel.shown()
            )));
        }
        1 => {}
        n => {
            return Err(ToolError::value(format!(
                "old_str occurs {n} times in {}; include more surrounding text so it occurs exactly once",
                rel.shown()
            )));
        }
    }
    let at = text.find(old).unwrap_or(0);
    let line = text[..at].matches('\n').count() + 1;
    let updated = text.replacen(old, new, 1);
    ctx.workspace.replace(&real, updated.as_bytes())?;
    Ok(Value::Str(format!("Edited {} at line {line}", rel.shown())))
}

/// Decodes UTF-8, or raises `UnicodeDecodeError` naming the file and the first bad byte.
fn decode(bytes: Vec<u8>, rel: &Confined) -> Result<String, ToolError> {
    String::from_utf8(bytes).map_err(|err| {
        let at = err.utf8_error().valid_up_to();
        let byte = err.as_bytes().get(at).copied().unwrap_or(0);
        ToolError::new(
            ErrorKind::UnicodeDecode,
            format!(
                "'utf-8' codec can't decode byte 0x{byte:02x} in position {at} of '{}': the file is not UTF-8 text",
                rel.shown()
            ),
        )
    })
}

/// Lines as an editor counts them: a final line without a newline still counts.
fn count_lines(text: &str) -> usize {
    let newlines = text.matches('\n').count();
    if text.is_empty() || text.ends_with('\n') { newlines } else { newlines + 1 }
}
