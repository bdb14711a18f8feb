//! How the server hands a program to a `codeact run --mcp-result` process, and how that run
//! ends with the server.
//!
//! The program goes on the run's stdin as its length in bytes, a newline, then its text; the
//! server keeps the pipe open for as long as the run lasts. The run reads exactly the program,
//! then waits on the pipe: when it closes (the server ended, however it ended: the kernel closes
//! a dead process's pipes), the run ends itself as it would on SIGTERM, with the commands and
//! servers it started. This needs nothing of the system but a pipe, so it holds on every one;
//! on Linux the parent-death signal ends the run too.
//!
//! A session's worker (`codeact run --mcp-worker`) is handed program after program on the same
//! pipe: each framed as above, after a line of [`Settings`].

use std::io::{self, BufRead, Read};

/// The most bytes a handed-over program may take (a model's program is far smaller).
const MAX_PROGRAM: usize = 64 << 20;

/// What the server writes to a run's stdin for `code`.
pub(super) fn frame(code: &str) -> Vec<u8> {
    let mut framed = format!("{}\n", code.len()).into_bytes();
    framed.extend_from_slice(code.as_bytes());
    framed
}

/// What a session's worker is told of each program besides its text.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Settings {
    /// The run's `--timeout`, in seconds.
    pub(crate) timeout: f64,
    /// The run's `--read-only`, besides the server's own.
    pub(crate) read_only: bool,
    /// The line the worker writes on stderr once it has reported the run: what it wrote on
    /// stderr before is that run's. Random, so that no text codeact writes can imitate it.
    pub(crate) end: String,
}

/// The longest [`Settings`] line.
const MAX_SETTINGS: u64 = 1024;

/// What the server writes to a session's worker for `code`.
pub(super) fn frame_for_worker(settings: &Settings, code: &str) -> Vec<u8> {
    let mut framed = serde_json::to_vec(settings).unwrap_or_default();
    framed.push(b'\n');
    framed.extend_from_slice(&frame(code));
    framed
}

/// Reads what [`frame_for_worker`] wrote from `input`; `None` once it has closed.
pub(crate) fn read_for_worker(input: &mut impl BufRead) -> io::Result<Option<(Settings, Vec<u8>)>> {
    let mut line = Vec::new();
    if input.by_ref().take(MAX_SETTINGS).read_until(b'\n', &mut line)? == 0 {
        return Ok(None);
    }
    let settings = serde_json::from_slice(&line).map_err(|err| io::Error::new(io::ErrorKind::InvalidData, err))?;
    Ok(Some((settings, read_program(input)?)))
}

/// Reads one framed program from `input`.
pub(crate) fn read_program(input: &mut impl BufRead) -> io::Result<Vec<u8>> {
    let invalid = |message: &str| io::Error::new(io::ErrorKind::InvalidData, message.to_owned());
    let mut header = Vec::new();
    input.by_ref().take(24).read_until(b'\n', &mut header)?;
    let len = header
        .strip_suffix(b"\n")
        .and_then(|digits| std::str::from_utf8(digits).ok())
        .and_then(|digits| digits.parse::<usize>().ok())
        .ok_or_else(|| invalid("the program's length is missing"))?;
    if len > MAX_PROGRAM {
        return Err(invalid("the program is too large"));
    }
    // Read as it comes, not allocated up front from what the header claims.
    let mut program = Vec::new();
    input.take(len as u64).read_to_end(&mut program)?;
    if program.len() < len {
        return Err(invalid("the program ended before its length"));
    }
    Ok(program)
}

/// Ends this process as SIGTERM would once `input` closes: the server that holds its other end
/// has ended.
pub(crate) fn end_with_the_server(mut input: impl Read + Send + 'static) {
    std::thread::spawn(move || {
        let mut sink = [0_u8; 256];
        loop {
            match input.read(&mut sink) {
                Ok(0) => break,
                Err(err) if err.kind() != io::ErrorKind::Interrupted => break,
                _ => {}
            }
        }
        crate::reap::end_as_if_stopped();
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_framed_program_reads_back_exactly_whatever_follows_it() {
        for code in ["", "print(1)", "x = '\\n12\\n'\nprint(x)", "é ü 中"] {
            let mut input = frame(code);
            input.extend_from_slice(b"after");
            let mut reader = io::Cursor::new(input);
            assert_eq!(read_program(&mut reader).unwrap(), code.as_bytes());
            let mut rest = String::new();
            reader.read_to_string(&mut rest).unwrap();
            assert_eq!(rest, "after");
        }
    }

    #[test]
    fn programs_for_a_worker_read_back_one_after_another() {
        let settings = |end: &str| Settings { timeout: 1.5, read_only: true, end: end.into() };
        let mut input = frame_for_worker(&settings("a"), "print(1)\n");
        input.extend(frame_for_worker(&settings("b\n{}"), ""));
        let mut reader = io::Cursor::new(input);
        assert_eq!(read_for_worker(&mut reader).unwrap(), Some((settings("a"), b"print(1)\n".to_vec())));
        assert_eq!(read_for_worker(&mut reader).unwrap(), Some((settings("b\n{}"), Vec::new())));
        assert_eq!(read_for_worker(&mut reader).unwrap(), None);
        for bad in
            [&b"{}\n0\n"[..], b"{\"timeout\":1,\"read_only\":false,\"end\":\"x\",\"more\":1}\n0\n", b"print(1)\n"]
        {
            assert!(read_for_worker(&mut io::Cursor::new(bad)).is_err(), "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn a_malformed_frame_is_refused() {
        for input in [&b""[..], b"print(1)", b"12", b"-1\n", b"x\n", b"5\nabc", b"99999999999999999999999999\n"] {
            assert!(read_program(&mut io::Cursor::new(input)).is_err(), "{:?}", String::from_utf8_lossy(input));
        }
        let too_large = format!("{}\n", MAX_PROGRAM + 1);
        assert!(read_program(&mut io::Cursor::new(too_large)).is_err());
    }
}
