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
        ExcType::TimeoutError if message.contains("time limit exceeded") => Some(LimitHit::Time),
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

/// `Type: message` of an exception, cut as messages are.
pub(super) fn summary(exc: &MontyException) -> String {
    shorten(&exc.summary(), MAX_MESSAGE)
}

/// Whether an exception that escaped the program says that Monty lacks what CPython has, rather
/// than that the program is wrong: a feature Monty has not implemented, a module it does not
/// have, an attribute of a module or built-in type, or a built-in name it does not define. On
/// such an error the same program may run as written on CPython. (A program that is wrong in
/// one of these ways fails there too, with CPython's own message.)
pub(super) fn beyond_monty(exc: &MontyException) -> bool {
    let message = exc.message().unwrap_or_default();
    match exc.exc_type() {
        ExcType::NotImplementedError | ExcType::ModuleNotFoundError | ExcType::ImportError => true,
        ExcType::AttributeError => {
            message.starts_with("module '")
                || message.starts_with("type object '")
                || BUILTIN_TYPES.iter().any(|name| {
                    message
                        .strip_prefix('\'')
                        .and_then(|rest| rest.strip_prefix(name))
                        .is_some_and(|rest| rest.starts_with("' object has no attribute"))
                })
        }
        ExcType::NameError => message
            .strip_prefix("name '")
            .and_then(|rest| rest.split_once('\''))
            .is_some_and(|(name, _)| BUILTIN_NAMES.contains(&name)),
        _ => false,
    }
}

/// What Monty runs to the end with another answer than CPython's, raising nothing that says
/// so, as (what a program names to use it, why it goes to CPython). On `auto`, with CPython
/// installed, a program that names one runs there from the start.
const DIFFERS_FROM_CPYTHON: &[(&str, &str)] = &[(
    "strptime",
    "Monty's datetime.strptime rejects formats CPython parses (`%f` after a comma, a time without a date)",
)];

/// Why `program` would print something else on Monty than on CPython without failing, when it
/// names something Monty does differently ([`DIFFERS_FROM_CPYTHON`]). The match is on the text,
/// comments and strings included: a program that only mentions the name runs on CPython too,
/// which costs time, never a wrong answer.
pub(crate) fn differs_from_cpython(program: &str) -> Option<&'static str> {
    DIFFERS_FROM_CPYTHON.iter().find(|(name, _)| program.contains(name)).map(|(_, why)| *why)
}

/// CPython's built-in types whose missing attributes are Monty's.
const BUILTIN_TYPES: &[&str] = &[
    "str",
    "bytes",
    "bytearray",
    "list",
    "dict",
    "set",
    "frozenset",
    "tuple",
    "int",
    "float",
    "complex",
    "bool",
    "range",
    "slice",
    "memoryview",
    "dict_keys",
    "dict_values",
    "dict_items",
    "re.Match",
    "re.Pattern",
];

/// CPython's built-in functions and types, by name.
const BUILTIN_NAMES: &[&str] = &[
    "abs",
    "aiter",
    "all",
    "anext",
    "any",
    "ascii",
    "bin",
    "bool",
    "breakpoint",
    "bytearray",
    "bytes",
    "callable",
    "chr",
    "classmethod",
    "compile",
    "complex",
    "delattr",
    "dict",
    "dir",
    "divmod",
    "enumerate",
    "eval",
    "exec",
    "filter",
    "float",
    "format",
    "frozenset",
    "getattr",
    "globals",
    "hasattr",
    "hash",
    "help",
    "hex",
    "id",
    "input",
    "int",
    "isinstance",
    "issubclass",
    "iter",
    "len",
    "list",
    "locals",
    "map",
    "max",
    "memoryview",
    "min",
    "next",
    "object",
    "oct",
    "open",
    "ord",
    "pow",
    "print",
    "property",
    "range",
    "repr",
    "reversed",
    "round",
    "set",
    "setattr",
    "slice",
    "sorted",
    "staticmethod",
    "str",
    "sum",
    "super",
    "tuple",
    "type",
    "vars",
    "zip",
    "__import__",
    "__build_class__",
    "BaseExceptionGroup",
    "ExceptionGroup",
    "EnvironmentError",
    "IOError",
    "EncodingWarning",
    "PythonFinalizationError",
    "ResourceWarning",
    "UnicodeTranslateError",
    "Ellipsis",
    "NotImplemented",
    "copyright",
    "credits",
    "license",
    "exit",
    "quit",
];

/// What to write instead of Python that Monty rejects, keyed on its message.
fn unsupported_hint(message: &str) -> Option<&'static str> {
    const HINTS: &[(&str, &str)] = &[
        (
            "class inheritance",
            "use a plain class without a base class, and raise built-in exceptions (ValueError, RuntimeError, …) instead of defining exception classes",
        ),
        ("yield", "build and return a list instead of writing a generator"),
        ("'del' statement", "rebind the name, or use dict.pop(key) / list.pop(i)"),
        ("decorator", "call the function directly instead of decorating methods"),
        ("async for", "collect results with asyncio.gather or a plain for loop"),
        ("async with", "use a plain with block or explicit calls"),
    ];
    HINTS.iter().find(|(key, _)| message.contains(key)).map(|(_, hint)| *hint)
}
