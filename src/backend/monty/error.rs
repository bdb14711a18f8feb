//! Monty's exceptions and codeact's errors, both ways: a tool error as the Python exception of
//! the same name, a limit as the uncatchable one that ends the run, and an exception that
//! escaped the program as a short traceback with what to write instead of unsupported syntax.

use std::fmt::Write as _;

use monty_types::{ExcType, MontyException, StackFrame};

use crate::sandbox::capture::shorten;
use crate::sandbox::outcome::MAX_MESSAGE;
use crate::sandbox::{Host, LimitHit, ProgramError};
use crate::tools::{ErrorKind, ToolError};

/// The name tracebacks give the program.
pub(super) const SCRIPT_NAME: &str = "<program>";

/// The uncatchable exception that ends a run at a limit.
pub(super) fn limit_exception(host: &Host, hit: LimitHit) -> MontyException {
    exception(&host.limit_error(hit))
}

/// A tool error as the Python exception of the same name.
pub(super) fn exception(err: &ToolError) -> MontyException {
    let exc_type = match err.kind {
        ErrorKind::FileNotFound => ExcType::FileNotFoundError,
        ErrorKind::FileExists => ExcType::FileExistsError,
        ErrorKind::Permission => ExcType::PermissionError,
        ErrorKind::IsADirectory => ExcType::IsADirectoryError,
        ErrorKind::NotADirectory => ExcType::NotADirectoryError,
        ErrorKind::UnicodeDecode => ExcType::UnicodeDecodeError,
        ErrorKind::Os => ExcType::OSError,
        ErrorKind::Value => ExcType::ValueError,
        ErrorKind::Type => ExcType::TypeError,
        ErrorKind::Timeout => ExcType::TimeoutError,
        ErrorKind::Runtime => ExcType::RuntimeError,
        ErrorKind::Name => ExcType::NameError,
        ErrorKind::Memory => ExcType::MemoryError,
    };
    MontyException::new(exc_type, Some(err.message.clone()))
}

/// A syntax error, or syntax Monty does not support, with what to write instead.
pub(super) fn compile_error(exc: &MontyException, program: &str) -> ProgramError {
    let frame = exc.traceback().last();
    let line = frame.map(|f| f.start.line);
    let kind = exc.exc_type().to_string();
    let mut message = exc.message().unwrap_or_default().to_owned();
    if let Some(hint) = unsupported_hint(&message) {
        message = format!("{message}; {hint}");
    }
    let mut traceback = format!("  File \"{SCRIPT_NAME}\"");
    if let Some(frame) = frame {
        let _ = writeln!(traceback, ", line {}", frame.start.line);
        let source = program.lines().nth(frame.start.line.saturating_sub(1) as usize).unwrap_or_default();
        let trimmed = source.trim_start();
        let indent = source.len() - trimmed.len();
        let column = (frame.start.column as usize).saturating_sub(1).saturating_sub(indent);
        let _ = writeln!(traceback, "    {trimmed}\n    {}^", " ".repeat(column.min(trimmed.chars().count())));
    } else {
        traceback.push('\n');
    }
    let _ = write!(traceback, "{kind}: {}", shorten(&message, MAX_MESSAGE));
    ProgramError::new(kind, &message, line, &traceback)
}

/// An exception that escaped the program, with limit messages made specific.
pub(super) fn runtime_error(exc: &MontyException, host: &Host) -> ProgramError {
    let mut kind = exc.exc_type().to_string();
    // Cut before the traceback is built from it: its last line is `Type: message`.
    let mut message = shorten(exc.message().unwrap_or_default(), MAX_MESSAGE);
    // Monty's own limit messages do not say which setting to change.
    let hit = match exc.exc_type() {
        ExcType::TimeoutError if message.starts_with("time limit exceeded") => Some(LimitHit::Time),
        ExcType::MemoryError if message.starts_with("memory limit exceeded") => Some(LimitHit::Memory),
        _ => None,
    };
    if let Some(hit) = hit {
        let limit = host.limit_error(hit);
        limit.kind.python_name().clone_into(&mut kind);
        message = limit.message;
    } else if let Some(hint) = unsupported_hint(&message) {
        message = format!("{message}; {hint}");
    }
    let frames: Vec<StackFrame> = exc.traceback().to_vec();
    let line = frames.last().map(|f| f.start.line);
    let shown = MontyException::with_traceback(exc.exc_type(), Some(message.clone()), frames).to_string();
    let shown =
        if exc.exc_type().to_string() == kind { shown } else { shown.replacen(&exc.exc_type().to_string(), &kind, 1) };
    ProgramError::new(kind, &message, line, &shown)
}

/// What to write instead of Python that Monty rejects, keyed on its message.
fn unsupported_hint(message: &str) -> Option<&'static str> {
    const HINTS: &[(&str, &str)] = &[
        (
            "class inheritance",
            "use a plain class without a base class, and raise built-in exceptions (ValueError, RuntimeError, …) instead of defining exception classes",
        ),
        ("yield", "build and return a list instead of writing a generator"),
        ("'del' statement", "rebind the name, or use dict.pop(key) / list.pop(i)"),
        ("pattern matching", "use if/elif/else"),
        ("decorator", "call the function directly instead of decorating methods"),
        ("async for", "collect results with asyncio.gather or a plain for loop"),
        ("async with", "use a plain with block or explicit calls"),
        ("for %:", "use an f-string (f\"{x:5d}\") or str.format instead of % formatting"),
    ];
    HINTS.iter().find(|(key, _)| message.contains(key)).map(|(_, hint)| *hint)
}
