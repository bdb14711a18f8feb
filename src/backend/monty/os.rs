//! Monty's OS calls: `open()`, `pathlib` and `os` pause the interpreter, and only read-only
//! file access inside the workspace is served, through the same confinement as the tools.
//! `open()` for reading answers with a handle that holds no host file: each read of it comes
//! back here as a `Path.read_text` or `Path.read_bytes` of the same path. The other calls that
//! come here: a sleep, waited on here against the run's deadline; `os.urandom`, served from the
//! machine's randomness; and an import of a module Monty does not have, a `ModuleNotFoundError`.

use std::borrow::Cow;
use std::time::{Duration, Instant};

use monty_types::{
    ExtFunctionResult, FileMode, MontyFileHandle, MontyObject, OpenCallArgs, OsFunctionCall, PrintWriter,
};

use super::error::{exception, limit_exception};
use super::pause::Os;
use super::printer::Printer;
use crate::sandbox::{Host, LimitHit};
use crate::tools::workspace::Entry;
use crate::tools::{ErrorKind, ToolError, files};

/// What to use instead of file operations that are not served.
const READ_INSTEAD: &str = "read files with view(path=…) and list them with glob(pattern=…)";
const WRITE_INSTEAD: &str = "write files with create(path=…, file_text=…) or edit(path=…, old_str=…, new_str=…)";

/// `open()`, `pathlib` and `os` calls: read-only file access inside the workspace is served
/// through the same confinement as the tools; everything else is refused with what to use instead.
pub(super) fn os_call<C: Os>(call: C, host: &mut Host, printer: &mut Printer<'_>) -> C::Next {
    if host.past_deadline() {
        return call.abort(limit_exception(host, LimitHit::Time), PrintWriter::Callback(printer));
    }
    match call.request() {
        OsFunctionCall::Sleep(delay)
        | OsFunctionCall::SystemSleep(delay)
        | OsFunctionCall::AsyncSleep(delay)
        | OsFunctionCall::AsyncSystemSleep(delay) => {
            let delay = *delay;
            return sleep(call, delay, host, printer);
        }
        OsFunctionCall::Urandom(args) => {
            let result = match random_bytes(args.size) {
                Ok(bytes) => ExtFunctionResult::Return(MontyObject::bytes(bytes)),
                Err(err) => ExtFunctionResult::Error(exception(&err)),
            };
            return call.resume(result, PrintWriter::Callback(printer));
        }
        // A module Monty does not have; the clock, which the policy lets Monty read itself.
        OsFunctionCall::Import(_)
        | OsFunctionCall::ImportStubs(_)
        | OsFunctionCall::Time(_)
        | OsFunctionCall::DateToday
        | OsFunctionCall::DateTimeNow(_) => {
            let exc = call.request().on_no_handler();
            return call.resume(ExtFunctionResult::Error(exc), PrintWriter::Callback(printer));
        }
        _ => {}
    }
    // File access counts as tool calls.
    if let Err(hit) = host.count_call() {
        return call.abort(limit_exception(host, hit), PrintWriter::Callback(printer));
    }
    if reads_files(call.request()) && host.catalog().get(files::VIEW.spec.name).is_none() {
        let err = ToolError::permission(format!(
            "{} reads files as view does, and view is disabled by configuration",
            name_of(&call)
        ));
        return call.resume(ExtFunctionResult::Error(exception(&err)), PrintWriter::Callback(printer));
    }
    let answer = serve(&call, host);
    let result = match answer {
        Ok(object) => ExtFunctionResult::Return(object),
        Err(err) => ExtFunctionResult::Error(exception(&err)),
    };
    call.resume(result, PrintWriter::Callback(printer))
}

/// The answer to a file call: read-only access inside the workspace, through the same
/// confinement as the tools; anything else refused with what to use instead.
fn serve(call: &impl Os, host: &Host) -> Result<MontyObject, ToolError> {
    let ws = &host.context().workspace;
    let windows = cfg!(windows);
    let probe = |path: &str, want: Option<Entry>| -> Result<MontyObject, ToolError> {
        let rel = ws.confine(host_path(path, windows))?;
        match ws.entry(&rel) {
            Ok(entry) => Ok(MontyObject::bool(want.is_none_or(|w| w == entry))),
            Err(err) if matches!(err.kind, ErrorKind::FileNotFound | ErrorKind::NotADirectory) => {
                Ok(MontyObject::bool(false))
            }
            Err(err) => Err(err),
        }
    };
    match call.request() {
        OsFunctionCall::Exists(path) => probe(path.as_str(), None),
        OsFunctionCall::IsFile(path) => probe(path.as_str(), Some(Entry::File)),
        OsFunctionCall::IsDir(path) => probe(path.as_str(), Some(Entry::Dir)),
        OsFunctionCall::ReadText(path) => files::read_text(ws, host_path(path, windows)).map(MontyObject::string),
        OsFunctionCall::ReadBytes(path) => ws
            .confine(host_path(path, windows))
            .and_then(|rel| ws.read(&rel, files::MAX_VIEW_BYTES))
            .map(MontyObject::bytes),
        // Monty places each name under the path the program wrote.
        OsFunctionCall::Iterdir(path) => {
            ws.confine(host_path(path, windows)).and_then(|rel| ws.list(&rel)).map(|names| {
                MontyObject::list(names.into_iter().map(|name| MontyObject::path(name.trim_end_matches('/'))))
            })
        }
        OsFunctionCall::Getenv(_) | OsFunctionCall::GetEnviron => Err(ToolError::permission(
            "environment variables are not readable inside codeact; pass values in the program text",
        )),
        OsFunctionCall::Open(OpenCallArgs { path, mode: mode @ FileMode::Read(_) }) => {
            // Opened once here so a missing file or a directory fails at `open()`, as in CPython.
            ws.confine(host_path(path, windows))
                .and_then(|rel| ws.open_regular(&rel))
                .map(|_| MontyObject::file_handle(MontyFileHandle { path: path.to_string(), mode: *mode, position: 0 }))
        }
        OsFunctionCall::IsSymlink(_)
        | OsFunctionCall::Scan(_)
        | OsFunctionCall::Stat(_)
        | OsFunctionCall::Resolve(_)
        | OsFunctionCall::Absolute(_) => Err(refused(call, ErrorKind::Permission, READ_INSTEAD)),
        OsFunctionCall::Open(OpenCallArgs {
            mode:
                FileMode::ReadUpdate(_)
                | FileMode::Write(_)
                | FileMode::WriteUpdate(_)
                | FileMode::Append(_)
                | FileMode::AppendUpdate(_),
            ..
        })
        | OsFunctionCall::WriteText(_)
        | OsFunctionCall::AppendText(_)
        | OsFunctionCall::WriteBytes(_)
        | OsFunctionCall::AppendBytes(_)
        | OsFunctionCall::Mkdir(_)
        | OsFunctionCall::Unlink(_)
        | OsFunctionCall::Rmdir(_)
        | OsFunctionCall::Rename(_) => Err(refused(call, ErrorKind::Permission, WRITE_INSTEAD)),
        OsFunctionCall::Sleep(_)
        | OsFunctionCall::SystemSleep(_)
        | OsFunctionCall::AsyncSleep(_)
        | OsFunctionCall::AsyncSystemSleep(_)
        | OsFunctionCall::Urandom(_)
        | OsFunctionCall::Import(_)
        | OsFunctionCall::ImportStubs(_)
        | OsFunctionCall::Time(_)
        | OsFunctionCall::DateToday
        | OsFunctionCall::DateTimeNow(_) => Err(refused(call, ErrorKind::Runtime, "it is answered before files are")),
    }
}

/// The working directory Monty is given for the workspace at `root`. Monty's paths are POSIX
/// paths: on Windows the root is written with `/` after one of its own (`/C:/work/repo`), and
/// [`host_path`] takes that `/` off again.
pub(super) fn virtual_cwd(root: &str, windows: bool) -> String {
    if windows { format!("/{}", root.replace('\\', "/")) } else { root.to_owned() }
}

/// A path Monty hands over, as the workspace reads it: on Windows, a drive path under Monty's
/// `/` (`/C:/work/repo/a.txt`, [`virtual_cwd`]) without that `/`. Anything else is as written.
fn host_path(path: &str, windows: bool) -> &str {
    let bytes = path.as_bytes();
    let drive = windows
        && bytes.len() >= 3
        && bytes[0] == b'/'
        && bytes[1].is_ascii_alphabetic()
        && bytes[2] == b':'
        && matches!(bytes.get(3), None | Some(b'/' | b'\\'));
    if drive { &path[1..] } else { path }
}

/// `time.sleep` and `asyncio.sleep`: waits, at most until the run's deadline, which ends the
/// run when the sleep would pass it.
fn sleep<C: Os>(call: C, delay: Duration, host: &Host, printer: &mut Printer<'_>) -> C::Next {
    let left = host.deadline().saturating_duration_since(Instant::now());
    std::thread::sleep(delay.min(left));
    if delay > left {
        return call.abort(limit_exception(host, LimitHit::Time), PrintWriter::Callback(printer));
    }
    if call.eager() {
        call.resume_eager(Ok(MontyObject::none()), PrintWriter::Callback(printer))
    } else {
        call.resume(ExtFunctionResult::Return(MontyObject::none()), PrintWriter::Callback(printer))
    }
}

/// The most bytes one `os.urandom` call gets.
const MAX_RANDOM_BYTES: u64 = 16 * 1024 * 1024;

/// `os.urandom(size)`: the machine's randomness.
fn random_bytes(size: u64) -> Result<Vec<u8>, ToolError> {
    if size > MAX_RANDOM_BYTES {
        return Err(ToolError::value(format!(
            "os.urandom() gives at most {MAX_RANDOM_BYTES} bytes a call, not {size}"
        )));
    }
    let mut bytes = vec![0; usize::try_from(size).unwrap_or_default()];
    getrandom::fill(&mut bytes).map_err(|err| ToolError::new(ErrorKind::Os, format!("os.urandom(): {err}")))?;
    Ok(bytes)
}

/// Whether `call` is one of the reads served only while `view` is offered: a program that may
/// not read files through `view` reads none through `open()`, `pathlib` or `os` either.
fn reads_files(call: &OsFunctionCall) -> bool {
    matches!(
        call,
        OsFunctionCall::Exists(_)
            | OsFunctionCall::IsFile(_)
            | OsFunctionCall::IsDir(_)
            | OsFunctionCall::ReadText(_)
            | OsFunctionCall::ReadBytes(_)
            | OsFunctionCall::Iterdir(_)
            | OsFunctionCall::Open(OpenCallArgs { mode: FileMode::Read(_), .. })
    )
}

/// The name of an OS call as messages show it.
fn name_of(call: &impl Os) -> Cow<'static, str> {
    match call.request() {
        OsFunctionCall::Open(args) => Cow::Owned(format!("open() with mode '{}'", args.mode.as_str())),
        other => Cow::Borrowed(other.name()),
    }
}

/// The error for an OS call that is not served, saying what to do `instead`.
fn refused(call: &impl Os, kind: ErrorKind, instead: &str) -> ToolError {
    ToolError::new(kind, format!("{} is not available inside codeact; {instead}", name_of(call)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn on_windows_monty_works_in_a_posix_spelling_of_the_root_that_the_host_reads_back() {
        assert_eq!(virtual_cwd("/home/me/repo", false), "/home/me/repo");
        assert_eq!(virtual_cwd(r"C:\work\repo", true), "/C:/work/repo");
        for (given, read) in [
            ("/C:/work/repo/a.txt", "C:/work/repo/a.txt"),
            ("/c:/work", "c:/work"),
            ("/Z:", "Z:"),
            (r"/C:\x", r"C:\x"),
            // Anything else stays as the program wrote it, for the workspace to judge.
            ("/CC:/x", "/CC:/x"),
            ("/C:x", "/C:x"),
            ("/1:/x", "/1:/x"),
            ("//?/C:/x", "//?/C:/x"),
            ("a.txt", "a.txt"),
            ("", ""),
        ] {
            assert_eq!(host_path(given, true), read, "{given}");
            assert_eq!(host_path(given, false), given, "{given}");
        }
    }
}
