//! The guest's stdout and stderr: written straight into a head-and-tail [`Capture`], so output
//! stays bounded however much the guest prints and is kept up to the moment a run is stopped.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamResult};

use crate::sandbox::Capture;
use crate::sandbox::capture::Outlet;

/// Bytes kept of the guest's stderr (and of its output while it loads the prelude): the size
/// a run's stderr has everywhere.
pub(super) use crate::sandbox::live::MAX_STDERR;

/// What a shared capture holds, leaving it empty.
pub(super) fn take(capture: &Arc<Mutex<Capture>>) -> Capture {
    let mut guard = capture.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    std::mem::replace(&mut *guard, Capture::new(0))
}

/// The guest's stdout or stderr, kept within a budget as it is written: into the capture it
/// was last pointed at, so that a guest kept for the next program writes into that program's.
#[derive(Clone)]
pub(super) struct CaptureStream(Outlet);

impl CaptureStream {
    pub(super) fn new(capture: &Arc<Mutex<Capture>>) -> Self {
        Self(Outlet::new(capture))
    }

    /// Writes into `capture` from now on.
    pub(super) fn point_at(&self, capture: &Arc<Mutex<Capture>>) {
        self.0.point_at(capture);
    }

    fn writer(&self) -> CaptureWriter {
        CaptureWriter { outlet: self.0.clone(), pending: Vec::new() }
    }
}

impl IsTerminal for CaptureStream {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for CaptureStream {
    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        Box::new(self.writer())
    }

    /// Writes straight into the capture: always ready, nothing to flush, and no task between
    /// the guest and the capture for every `print`.
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.writer())
    }
}

/// Feeds bytes to a [`Capture`], holding back an incomplete UTF-8 sequence at the end.
struct CaptureWriter {
    outlet: Outlet,
    pending: Vec<u8>,
}

impl CaptureWriter {
    /// The most one write may carry (what `check-write` grants).
    const PERMIT: usize = 64 * 1024;

    fn push(&mut self, buf: &[u8]) {
        self.pending.extend_from_slice(buf);
        let valid = match std::str::from_utf8(&self.pending) {
            Ok(text) => text.len(),
            Err(err) if err.error_len().is_none() => err.valid_up_to(),
            Err(_) => self.pending.len(),
        };
        let chunk: Vec<u8> = self.pending.drain(..valid).collect();
        self.outlet.push(&String::from_utf8_lossy(&chunk));
    }
}

impl tokio::io::AsyncWrite for CaptureWriter {
    fn poll_write(mut self: Pin<&mut Self>, _: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        self.push(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

impl OutputStream for CaptureWriter {
    fn write(&mut self, bytes: bytes::Bytes) -> StreamResult<()> {
        self.push(&bytes);
        Ok(())
    }

    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        Ok(Self::PERMIT)
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for CaptureWriter {
    async fn ready(&mut self) {}
}
