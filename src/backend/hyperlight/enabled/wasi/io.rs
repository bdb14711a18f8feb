//! `wasi:io`: errors, waits and streams. A wait ends when its pollable is ready, or at the
//! run's deadline, which ends the run ([`Guest::wait_until`]); the standard streams write into
//! the run's captured output, and files of the standard library are read at an offset.

use std::time::Instant;

use hyperlight_common::resource::BorrowedResourceGuard;

use super::super::bindings::r#wasi::r#io::{self as io, r#error, r#poll, r#streams};
use super::super::resources::{InputStream, IoError, OutputStream, Pollable};
use super::super::state::Guest;
use crate::platform;
use crate::sandbox::live::lock;

type Borrowed<'a, T> = BorrowedResourceGuard<'a, T>;
type Negative = hyperlight_common::component::Negative;
type StreamError = streams::StreamError<IoError>;

/// The most one read hands the guest.
pub(super) const MAX_READ: u64 = 1 << 20;

impl error::Error<Negative> for Guest {
    type T = IoError;

    fn to_debug_string(&mut self, error: Borrowed<'_, IoError>) -> String {
        error.0.clone()
    }
}

impl io::Error<Negative> for Guest {}

impl poll::Pollable<Negative> for Guest {
    type T = Pollable;

    fn ready(&mut self, pollable: Borrowed<'_, Pollable>) -> bool {
        pollable.when().is_none_or(|when| when <= Instant::now())
    }

    fn block(&mut self, pollable: Borrowed<'_, Pollable>) {
        self.wait_until(pollable.when());
    }
}

impl io::Poll<Negative> for Guest {
    fn poll(&mut self, pollables: Vec<Borrowed<'_, Pollable>>) -> Vec<u32> {
        let ready = |pollables: &[Borrowed<'_, Pollable>]| -> Vec<u32> {
            let now = Instant::now();
            (0..).zip(pollables).filter(|(_, p)| p.when().is_none_or(|when| when <= now)).map(|(i, _)| i).collect()
        };
        let found = ready(&pollables);
        if !found.is_empty() {
            return found;
        }
        self.wait_until(pollables.iter().filter_map(|p| p.when()).min());
        ready(&pollables)
    }
}

impl streams::InputStream<Negative, IoError, Pollable> for Guest {
    type T = InputStream;

    fn read(&mut self, stream: Borrowed<'_, InputStream>, len: u64) -> Result<Vec<u8>, StreamError> {
        match &*stream {
            InputStream::Empty => Err(StreamError::Closed),
            InputStream::File { file, offset } => {
                let mut offset = lock(offset);
                let mut bytes = vec![0; usize::try_from(len.min(MAX_READ)).unwrap_or(0)];
                let read = platform::read_at(file, &mut bytes, *offset)
                    .map_err(|err| StreamError::LastOperationFailed(IoError(err.to_string())))?;
                if read == 0 && !bytes.is_empty() {
                    return Err(StreamError::Closed);
                }
                bytes.truncate(read);
                *offset += read as u64;
                Ok(bytes)
            }
        }
    }

    fn blocking_read(&mut self, stream: Borrowed<'_, InputStream>, len: u64) -> Result<Vec<u8>, StreamError> {
        streams::InputStream::read(self, stream, len)
    }

    fn skip(&mut self, stream: Borrowed<'_, InputStream>, len: u64) -> Result<u64, StreamError> {
        streams::InputStream::read(self, stream, len).map(|bytes| bytes.len() as u64)
    }

    fn blocking_skip(&mut self, stream: Borrowed<'_, InputStream>, len: u64) -> Result<u64, StreamError> {
        streams::InputStream::skip(self, stream, len)
    }

    fn subscribe(&mut self, _: Borrowed<'_, InputStream>) -> Pollable {
        Pollable::ready()
    }
}

/// How much the guest may write in one call: what the capture keeps is bounded anyway.
const WRITE_ROOM: u64 = 1 << 20;

fn write_to(stream: &OutputStream, bytes: &[u8]) {
    match stream {
        OutputStream::Capture(outlet) => outlet.push(&String::from_utf8_lossy(bytes)),
    }
}

impl streams::OutputStream<Negative, IoError, InputStream, Pollable> for Guest {
    type T = OutputStream;

    fn check_write(&mut self, _: Borrowed<'_, OutputStream>) -> Result<u64, StreamError> {
        Ok(WRITE_ROOM)
    }

    fn write(&mut self, stream: Borrowed<'_, OutputStream>, contents: Vec<u8>) -> Result<(), StreamError> {
        write_to(&stream, &contents);
        Ok(())
    }

    fn blocking_write_and_flush(
        &mut self,
        stream: Borrowed<'_, OutputStream>,
        contents: Vec<u8>,
    ) -> Result<(), StreamError> {
        write_to(&stream, &contents);
        Ok(())
    }

    fn flush(&mut self, _: Borrowed<'_, OutputStream>) -> Result<(), StreamError> {
        Ok(())
    }

    fn blocking_flush(&mut self, _: Borrowed<'_, OutputStream>) -> Result<(), StreamError> {
        Ok(())
    }

    fn subscribe(&mut self, _: Borrowed<'_, OutputStream>) -> Pollable {
        Pollable::ready()
    }

    fn write_zeroes(&mut self, stream: Borrowed<'_, OutputStream>, len: u64) -> Result<(), StreamError> {
        write_to(&stream, &vec![0; usize::try_from(len.min(WRITE_ROOM)).unwrap_or(0)]);
        Ok(())
    }

    fn blocking_write_zeroes_and_flush(
        &mut self,
        stream: Borrowed<'_, OutputStream>,
        len: u64,
    ) -> Result<(), StreamError> {
        streams::OutputStream::write_zeroes(self, stream, len)
    }

    fn splice(
        &mut self,
        _: Borrowed<'_, OutputStream>,
        _: Borrowed<'_, InputStream>,
        _: u64,
    ) -> Result<u64, StreamError> {
        Err(StreamError::LastOperationFailed(IoError("splicing streams is not supported".into())))
    }

    fn blocking_splice(
        &mut self,
        stream: Borrowed<'_, OutputStream>,
        source: Borrowed<'_, InputStream>,
        len: u64,
    ) -> Result<u64, StreamError> {
        streams::OutputStream::splice(self, stream, source, len)
    }
}

impl io::Streams<Negative, IoError, Pollable> for Guest {}
