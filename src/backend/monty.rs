//! The Monty backend: Python on pydantic's embedded interpreter. This is the only file that
//! names `monty` or `monty_types` items, so an upgrade of Monty touches nothing else.
//!
//! A run is Monty's pause/resume loop: every call of a name the program did not define pauses
//! the interpreter and reaches [`Host::call`]; `open()`, `pathlib` and `os.getenv` pause as OS
//! calls, of which only read-only file access inside the workspace is served. The wall-clock
//! deadline is re-armed at every pause (Monty's own clock stops while the host works), memory is
//! counted by `monty-alloc` while the interpreter runs, and the loop runs on a thread with a
//! large stack so deep recursion ends in `RecursionError`, not a crash.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

use monty::{FunctionCall, MontyRun, NameLookup, OsCall, RunProgress};
use monty_types::{
    CompileOptions, ExcType, ExtFunctionResult, MontyException, MontyObject, NameLookupResult, OsFunctionCall,
    PrintWriter, PrintWriterCallback, ResourceLimits, ResourceTracker, StackFrame,
};

use crate::sandbox::{Capture, Dispatch, Host, LimitHit, Outcome, ProgramError, outcome::MAX_TRACEBACK};
use crate::tools::workspace::Entry;
use crate::tools::{ErrorKind, ToolError, Value, files};

/// The name tracebacks give the program.
const SCRIPT_NAME: &str = "<program>";

/// Stack for the interpreter thread: deep recursion must reach `RecursionError` first.
const STACK_BYTES: usize = 256 * 1024 * 1024;

/// The Monty version compiled in.
pub const VERSION: &str = monty_types::MONTY_VERSION;

/// The first syntax problem in `code` as Monty parses it: (1-based line, message).
#[must_use]
pub fn syntax_error(code: &str) -> Option<(usize, String)> {
    let exc = MontyRun::new(code.to_owned(), SCRIPT_NAME, Vec::new(), CompileOptions::default()).err()?;
    let line = exc.traceback().last().map_or(1, |f| f.start.line as usize);
    Some((line, exc.summary()))
}

/// Runs `program` to completion against `host`.
pub fn run(program: &str, host: &mut Host) -> Outcome {
    let mut capture = Capture::new(host.limits.max_output);
    let result = std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("monty".into())
            .stack_size(STACK_BYTES)
            .spawn_scoped(scope, || execute(program, host, &mut capture))
            .map(std::thread::ScopedJoinHandle::join)
    });
    disarm_memory();
    let (return_value, return_repr, error) = match result {
        Ok(Ok(Ok(MontyObject::None))) => (None, None, None),
        Ok(Ok(Ok(value))) => {
            let repr = python_repr(&value);
            (Some(to_value(value)), Some(repr), None)
        }
        Ok(Ok(Err(error))) => (None, None, Some(error)),
        Ok(Err(_)) | Err(_) => (None, None, Some(internal_error("the interpreter stopped unexpectedly"))),
    };
    let (stdout, truncated) = capture.finish();
    Outcome {
        stdout,
        truncated,
        stderr: std::mem::take(&mut host.ctx.stderr),
        return_value,
        return_repr,
        error,
        backend: "monty",
        duration: host.started.elapsed(),
        tool_calls: host.tool_calls,
    }
}

/// Compiles and drives the program; runs on the interpreter thread.
fn execute(program: &str, host: &mut Host, capture: &mut Capture) -> Result<MontyObject, ProgramError> {
    host.python = Some(run_tool);
    let runner = MontyRun::new(program.to_owned(), SCRIPT_NAME, Vec::new(), CompileOptions::default())
        .map_err(|exc| compile_error(&exc, program))?;
    drive(runner, Vec::new(), host, capture)
}

/// Runs the Python code of a user tool inside the sandbox: its `run` function is called with
/// `input` as keywords, with the same tools, limits and confinement as the program. What it
/// prints goes to the program's stderr.
pub fn run_tool(name: &str, code: &str, input: Value, host: &mut Host) -> Result<Value, ToolError> {
    let source = format!("{code}\nrun(**__codeact_input)");
    let runner = MontyRun::new(
        source.clone(),
        &format!("<tool {name}>"),
        vec!["__codeact_input".into()],
        CompileOptions::default(),
    )
    .map_err(|exc| ToolError::runtime(format!("{name}(): {}", compile_error(&exc, &source).message)))?;
    let mut capture = Capture::new(host.limits.max_output);
    let result = drive(runner, vec![from_value(input)], host, &mut capture);
    // The caller is in the middle of a tool call, with the memory limit off.
    disarm_memory();
    let (printed, _) = capture.finish();
    if !printed.is_empty() {
        host.ctx.warn(printed.trim_end());
    }
    match result {
        Ok(value) => Ok(to_value(value)),
        Err(error) => {
            Err(ToolError::new(ErrorKind::from_python_name(&error.kind), format!("{name}(): {}", error.message)))
        }
    }
}

/// Drives a compiled program to completion.
fn drive(
    runner: MontyRun,
    inputs: Vec<MontyObject>,
    host: &mut Host,
    capture: &mut Capture,
) -> Result<MontyObject, ProgramError> {
    let mut printer = Printer { capture };
    let memory_armed = arm_memory(host.limits.max_memory);
    let mut limits =
        ResourceLimits::default().max_duration(remaining(host)).max_recursion_depth(host.limits.max_recursion);
    if memory_armed {
        limits = limits.max_memory(host.limits.max_memory);
    }
    let mut progress = runner
        .start(inputs, ResourceTracker::new(limits), PrintWriter::Callback(&mut printer))
        .map_err(|exc| runtime_error(&exc, host));
    loop {
        let step = match progress {
            Err(error) => return Err(error),
            Ok(RunProgress::Complete(value)) => return Ok(value),
            Ok(RunProgress::FunctionCall(call)) => function_call(call, host, &mut printer, memory_armed),
            Ok(RunProgress::NameLookup(lookup)) => name_lookup(lookup, host, &mut printer),
            Ok(RunProgress::OsCall(call)) => os_call(call, host, &mut printer),
            Ok(RunProgress::ResolveFutures(futures)) => {
                // Every host call is answered at once, so no future is ever left pending.
                let exc =
                    MontyException::new(ExcType::RuntimeError, Some("awaited a host call that never started".into()));
                futures.abort(exc, PrintWriter::Callback(&mut printer))
            }
        };
        progress = step.map_err(|exc| runtime_error(&exc, host));
    }
}

fn function_call(
    mut call: FunctionCall,
    host: &mut Host,
    printer: &mut Printer<'_>,
    memory_armed: bool,
) -> Result<RunProgress, MontyException> {
    if call.object_id.is_some() {
        let exc =
            MontyException::new(ExcType::TypeError, Some(format!("'{}' is not callable here", call.function_name)));
        return call.resume(exc, PrintWriter::Callback(printer));
    }
    let positional = std::mem::take(&mut call.args).into_iter().map(to_value).collect();
    let keywords =
        std::mem::take(&mut call.kwargs).into_iter().map(|(key, value)| (key_name(key), to_value(value))).collect();
    // Tool buffers are the host's, not the program's: do not count them against its memory.
    disarm_memory();
    let dispatch = host.call(&call.function_name, positional, keywords);
    if memory_armed {
        arm_memory(host.limits.max_memory);
    }
    match dispatch {
        Dispatch::Return(value) => {
            let object = from_value(value);
            // A result too large for the remaining budget must not cross the allocator's hard limit.
            if call.tracker().check_allocation(object.deep_host_size()).is_err() {
                return call.abort(limit_exception(host, LimitHit::Memory), PrintWriter::Callback(printer));
            }
            call.tracker_mut().set_max_duration(remaining(host));
            call.resume(ExtFunctionResult::Return(object), PrintWriter::Callback(printer))
        }
        Dispatch::Raise(err) => {
            call.tracker_mut().set_max_duration(remaining(host));
            call.resume(ExtFunctionResult::Error(exception(&err)), PrintWriter::Callback(printer))
        }
        Dispatch::Stop(hit) => call.abort(limit_exception(host, hit), PrintWriter::Callback(printer)),
    }
}

/// A bare reference to a tool (`f = view`) resolves to a callable; anything else is a `NameError`.
fn name_lookup(lookup: NameLookup, host: &Host, printer: &mut Printer<'_>) -> Result<RunProgress, MontyException> {
    let answer = if lookup.object_id().is_none() && host.has_tool(&lookup.name) {
        NameLookupResult::Value(MontyObject::Function { name: lookup.name.clone(), docstring: None })
    } else if lookup.object_id().is_some() {
        NameLookupResult::Undefined
    } else {
        NameLookupResult::Error(exception(&host.unknown_name(&lookup.name)))
    };
    lookup.resume(answer, PrintWriter::Callback(printer))
}

/// `open()`, `pathlib` and `os` calls: read-only file access inside the workspace is served
/// through the same confinement as the tools; everything else is refused with what to use instead.
fn os_call(call: OsCall, host: &mut Host, printer: &mut Printer<'_>) -> Result<RunProgress, MontyException> {
    if host.past_deadline() {
        return call.abort(limit_exception(host, LimitHit::Time), PrintWriter::Callback(printer));
    }
    if let Err(hit) = host.count_call() {
        return call.abort(limit_exception(host, hit), PrintWriter::Callback(printer));
    }
    let ws = &host.ctx.workspace;
    let probe = |path: &str, want: Option<Entry>| -> Result<MontyObject, ToolError> {
        let rel = ws.confine(path)?;
        match ws.entry(&rel) {
            Ok(entry) => Ok(MontyObject::Bool(want.is_none_or(|w| w == entry))),
            Err(err) if matches!(err.kind, ErrorKind::FileNotFound | ErrorKind::NotADirectory) => {
                Ok(MontyObject::Bool(false))
            }
            Err(err) => Err(err),
        }
    };
    let answer = match &call.function_call {
        OsFunctionCall::Exists(path) => probe(path, None),
        OsFunctionCall::IsFile(path) => probe(path, Some(Entry::File)),
        OsFunctionCall::IsDir(path) => probe(path, Some(Entry::Dir)),
        OsFunctionCall::ReadText(path) => files::read_text(&host.ctx, path).map(MontyObject::String),
        OsFunctionCall::ReadBytes(path) => {
            ws.confine(path).and_then(|rel| ws.read(&rel, files::MAX_VIEW_BYTES)).map(MontyObject::Bytes)
        }
        OsFunctionCall::Iterdir(path) => ws.confine(path).and_then(|rel| ws.list(&rel)).map(|names| {
            let base = path.trim_end_matches('/');
            MontyObject::List(
                names
                    .into_iter()
                    .map(|name| MontyObject::Path(format!("{base}/{}", name.trim_end_matches('/'))))
                    .collect(),
            )
        }),
        OsFunctionCall::Getenv(_) | OsFunctionCall::GetEnviron => Err(ToolError::permission(
            "environment variables are not readable inside codeact; pass values in the program text",
        )),
        OsFunctionCall::Open(_)
        | OsFunctionCall::IsSymlink(_)
        | OsFunctionCall::Stat(_)
        | OsFunctionCall::Resolve(_)
        | OsFunctionCall::Absolute(_) => Err(ToolError::permission(format!(
            "{} is not available inside codeact; read files with view(path=…) and list them with glob(pattern=…)",
            call.function_call.name()
        ))),
        OsFunctionCall::WriteText(_)
        | OsFunctionCall::AppendText(_)
        | OsFunctionCall::WriteBytes(_)
        | OsFunctionCall::AppendBytes(_)
        | OsFunctionCall::Mkdir(_)
        | OsFunctionCall::Unlink(_)
        | OsFunctionCall::Rmdir(_)
        | OsFunctionCall::Rename(_) => Err(ToolError::permission(format!(
            "{} is not available inside codeact; write files with create(path=…, file_text=…) or edit(path=…, old_str=…, new_str=…)",
            call.function_call.name()
        ))),
        OsFunctionCall::DateToday | OsFunctionCall::DateTimeNow(_) => Err(ToolError::runtime(format!(
            "{} is not available inside codeact; run bash(command='date') if you need the time",
            call.function_call.name()
        ))),
    };
    let result = match answer {
        Ok(object) => ExtFunctionResult::Return(object),
        Err(err) => ExtFunctionResult::Error(exception(&err)),
    };
    call.resume(result, PrintWriter::Callback(printer))
}

/// Sends `print()` output into the run's output budget.
struct Printer<'a> {
    capture: &'a mut Capture,
}

impl PrintWriterCallback for Printer<'_> {
    fn stdout_write(&mut self, output: Cow<'_, str>) -> Result<(), MontyException> {
        self.capture.push(&output);
        Ok(())
    }

    fn stdout_push(&mut self, end: char) -> Result<(), MontyException> {
        self.capture.push(end.encode_utf8(&mut [0; 4]));
        Ok(())
    }
}

fn remaining(host: &Host) -> Duration {
    host.ctx.deadline.saturating_duration_since(Instant::now())
}

/// Arms `monty-alloc`'s limit; false when its allocator is not installed (library tests).
fn arm_memory(bytes: usize) -> bool {
    monty_alloc::set_limit(Some(bytes), false).is_ok()
}

fn disarm_memory() {
    let _ = monty_alloc::set_limit(None, false);
}

/// The uncatchable exception that ends a run at a limit.
fn limit_exception(host: &Host, hit: LimitHit) -> MontyException {
    let (kind, message) = host.limit_message(hit);
    let exc_type = match kind {
        "TimeoutError" => ExcType::TimeoutError,
        "MemoryError" => ExcType::MemoryError,
        _ => ExcType::RuntimeError,
    };
    MontyException::new(exc_type, Some(message))
}

/// A tool error as the Python exception of the same name.
fn exception(err: &ToolError) -> MontyException {
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
    };
    MontyException::new(exc_type, Some(err.message.clone()))
}

/// A syntax error, or syntax Monty does not support, with what to write instead.
fn compile_error(exc: &MontyException, program: &str) -> ProgramError {
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
    let _ = write!(traceback, "{kind}: {message}");
    ProgramError { kind, message, line, traceback }
}

/// An exception that escaped the program, with limit messages made specific.
fn runtime_error(exc: &MontyException, host: &Host) -> ProgramError {
    let mut kind = exc.exc_type().to_string();
    let mut message = exc.message().unwrap_or_default().to_owned();
    // Monty's own limit messages do not say which setting to change.
    let hit = match exc.exc_type() {
        ExcType::TimeoutError if message.starts_with("time limit exceeded") => Some(LimitHit::Time),
        ExcType::MemoryError if message.starts_with("memory limit exceeded") => Some(LimitHit::Memory),
        _ => None,
    };
    if let Some(hit) = hit {
        let (limit_kind, limit_message) = host.limit_message(hit);
        limit_kind.clone_into(&mut kind);
        message = limit_message;
    } else if let Some(hint) = unsupported_hint(&message) {
        message = format!("{message}; {hint}");
    }
    let frames: Vec<StackFrame> = exc.traceback().to_vec();
    let line = frames.last().map(|f| f.start.line);
    let shown = MontyException::with_traceback(exc.exc_type(), Some(message.clone()), frames).to_string();
    let shown =
        if exc.exc_type().to_string() == kind { shown } else { shown.replacen(&exc.exc_type().to_string(), &kind, 1) };
    let traceback = crate::sandbox::capture::keep_tail(&shown, MAX_TRACEBACK);
    ProgramError { kind, message, line, traceback }
}

fn internal_error(message: &str) -> ProgramError {
    ProgramError {
        kind: "RuntimeError".into(),
        message: message.into(),
        line: None,
        traceback: format!("RuntimeError: {message}"),
    }
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

/// The Python `repr` of a result. Values Monty cannot send across whole arrive as `Repr(text)`,
/// which Monty's own repr would print as `Repr('range(0, 3)')`; they are swapped for `Cycle`
/// placeholders, which Monty prints verbatim, so the text reads as Python wrote it.
fn python_repr(value: &MontyObject) -> String {
    fn verbatim(object: &MontyObject) -> MontyObject {
        let all = |items: &[MontyObject]| items.iter().map(verbatim).collect();
        match object {
            MontyObject::Repr(text) => MontyObject::Cycle(usize::MAX, text.clone()),
            MontyObject::List(items) => MontyObject::List(all(items)),
            MontyObject::Tuple(items) => MontyObject::Tuple(all(items)),
            MontyObject::Set(items) => MontyObject::Set(all(items)),
            MontyObject::FrozenSet(items) => MontyObject::FrozenSet(all(items)),
            MontyObject::NamedTuple { type_name, field_names, values } => MontyObject::NamedTuple {
                type_name: type_name.clone(),
                field_names: field_names.clone(),
                values: all(values),
            },
            MontyObject::Dict(pairs) => {
                MontyObject::dict(pairs.iter().map(|(k, v)| (verbatim(k), verbatim(v))).collect::<Vec<_>>())
            }
            other => other.clone(),
        }
    }
    verbatim(value).py_repr()
}

fn key_name(key: MontyObject) -> String {
    match key {
        MontyObject::String(s) => s,
        other => other.py_repr(),
    }
}

/// A Monty object as a host value.
fn to_value(object: MontyObject) -> Value {
    match object {
        MontyObject::None => Value::None,
        MontyObject::Bool(b) => Value::Bool(b),
        MontyObject::Int(i) => Value::Int(i),
        MontyObject::BigInt(i) => Value::BigInt(i.to_string()),
        MontyObject::Float(f) => Value::Float(f),
        MontyObject::String(s) | MontyObject::Path(s) => Value::Str(s),
        MontyObject::Bytes(b) => Value::Bytes(b),
        MontyObject::List(items) => Value::List(items.into_iter().map(to_value).collect()),
        MontyObject::Tuple(items) | MontyObject::NamedTuple { values: items, .. } => {
            Value::Tuple(items.into_iter().map(to_value).collect())
        }
        MontyObject::Set(items) | MontyObject::FrozenSet(items) => {
            Value::Set(items.into_iter().map(to_value).collect())
        }
        MontyObject::Dict(pairs) => Value::Dict(pairs.into_iter().map(|(k, v)| (to_value(k), to_value(v))).collect()),
        other @ (MontyObject::Ellipsis
        | MontyObject::NotImplemented
        | MontyObject::Date(_)
        | MontyObject::DateTime(_)
        | MontyObject::Time(_)
        | MontyObject::TimeDelta(_)
        | MontyObject::TimeZone(_)
        | MontyObject::Exception { .. }
        | MontyObject::Type(_)
        | MontyObject::BuiltinFunction(_)
        | MontyObject::FileHandle(_)
        | MontyObject::ClassInstance(_)
        | MontyObject::Function { .. }
        | MontyObject::Cycle(..)) => Value::Opaque(other.py_repr()),
        MontyObject::Repr(text) => Value::Opaque(text),
    }
}

/// A host value as a Monty object.
fn from_value(value: Value) -> MontyObject {
    match value {
        Value::None => MontyObject::None,
        Value::Bool(b) => MontyObject::Bool(b),
        Value::Int(i) => MontyObject::Int(i),
        Value::Float(f) => MontyObject::Float(f),
        Value::Str(s) | Value::BigInt(s) | Value::Opaque(s) => MontyObject::String(s),
        Value::Bytes(b) => MontyObject::Bytes(b),
        Value::List(items) => MontyObject::List(items.into_iter().map(from_value).collect()),
        Value::Tuple(items) => MontyObject::Tuple(items.into_iter().map(from_value).collect()),
        Value::Set(items) => MontyObject::Set(items.into_iter().map(from_value).collect()),
        Value::Dict(pairs) => {
            MontyObject::dict(pairs.into_iter().map(|(k, v)| (from_value(k), from_value(v))).collect::<Vec<_>>())
        }
    }
}
