//! The output budget: a program's stdout is kept as a head plus a rolling tail, so memory stays
//! bounded however much it prints, and the model sees the start and the end with one marker
//! line between them.

use std::fmt::Write as _;
use std::sync::{Arc, Mutex, PoisonError};

/// Where a guest kept from one run to the next writes its output: into the capture of the run
/// it was last [pointed at](Self::point_at).
#[derive(Debug, Clone)]
#[cfg_attr(not(guest_backend), expect(dead_code, reason = "only the wasm and hyperlight backends keep a guest"))]
pub(crate) struct Outlet(Arc<Mutex<Arc<Mutex<Capture>>>>);

#[cfg_attr(not(guest_backend), expect(dead_code, reason = "only the wasm and hyperlight backends keep a guest"))]
impl Outlet {
    #[must_use]
    pub(crate) fn new(capture: &Arc<Mutex<Capture>>) -> Self {
        Self(Arc::new(Mutex::new(Arc::clone(capture))))
    }

    /// Writes into `capture` from now on.
    pub(crate) fn point_at(&self, capture: &Arc<Mutex<Capture>>) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Arc::clone(capture);
    }

    /// Adds `text` to the capture it points at.
    pub(crate) fn push(&self, text: &str) {
        let capture = Arc::clone(&self.0.lock().unwrap_or_else(PoisonError::into_inner));
        capture.lock().unwrap_or_else(PoisonError::into_inner).push(text);
    }
}

/// Captured stdout within a byte budget.
#[derive(Debug, Clone)]
pub(crate) struct Capture {
    limit: usize,
    /// The first `limit` bytes.
    head: String,
    /// The most recent bytes, at least `limit / 2` of them once that many were printed.
    tail: String,
    total: usize,
    /// What was pushed since it was last taken ([`Self::take_streamed`]), within the same
    /// budget, where the output is streamed as it is printed.
    streamed: Option<Box<Capture>>,
}

impl Capture {
    #[must_use]
    pub(crate) fn new(limit: usize) -> Self {
        Self { limit, head: String::new(), tail: String::new(), total: 0, streamed: None }
    }

    /// Forgets everything pushed so far. What was streamed was shown already: `note`, streamed
    /// next, says why it comes again.
    pub(crate) fn clear(&mut self, note: &str) {
        let mut streamed = self.streamed.take();
        if let Some(streamed) = &mut streamed
            && self.total > 0
        {
            streamed.push(note);
        }
        *self = Self::new(self.limit);
        self.streamed = streamed;
    }

    /// Keeps, from now on, what is pushed apart too, for [`Self::take_streamed`].
    pub(crate) fn stream(&mut self) {
        self.streamed.get_or_insert_with(|| Box::new(Self::new(self.limit)));
    }

    /// What was pushed since the last call, within the budget (its head and tail, with one
    /// marker line between them, when more was pushed); `None` when nothing was, or nothing
    /// is streamed.
    pub(crate) fn take_streamed(&mut self) -> Option<String> {
        let streamed = self.streamed.as_mut()?;
        if streamed.total == 0 {
            return None;
        }
        let taken = std::mem::replace(streamed.as_mut(), Self::new(self.limit));
        Some(taken.finish().0)
    }

    /// Appends printed text.
    pub(crate) fn push(&mut self, text: &str) {
        if let Some(streamed) = &mut self.streamed {
            streamed.push(text);
        }
        self.total += text.len();
        if self.head.len() < self.limit {
            let room = self.limit - self.head.len();
            self.head.push_str(&text[..floor_boundary(text, room)]);
        }
        if self.total > self.limit {
            let keep = self.limit / 2;
            // Only the last `keep` bytes of `text` can survive in the tail.
            let start = ceil_boundary(text, text.len().saturating_sub(keep));
            self.tail.push_str(&text[start..]);
            if self.tail.len() > keep.max(1) * 2 {
                let cut = ceil_boundary(&self.tail, self.tail.len() - keep);
                self.tail.drain(..cut);
            }
        }
    }

    /// The kept output and whether anything was elided.
    #[must_use]
    pub(crate) fn finish(self) -> (String, bool) {
        if self.total <= self.limit {
            return (self.head, false);
        }
        let half = self.limit / 2;
        let head = &self.head[..floor_boundary(&self.head, half)];
        let tail_start = ceil_boundary(&self.tail, self.tail.len().saturating_sub(half));
        let tail = &self.tail[tail_start..];
        let elided = self.total - head.len() - tail.len();
        let mut out = String::with_capacity(self.limit + 200);
        out.push_str(head);
        if !head.is_empty() && !head.ends_with('\n') {
            out.push('\n');
        }
        let _ = writeln!(
            out,
            "[… {elided} bytes of output elided ({} printed, budget {}); print less: summarise, count or slice …]",
            self.total, self.limit
        );
        out.push_str(tail);
        (out, true)
    }
}

/// The largest char boundary of `text` at or below `index`.
fn floor_boundary(text: &str, index: usize) -> usize {
    if index >= text.len() {
        return text.len();
    }
    (0..=index).rev().find(|i| text.is_char_boundary(*i)).unwrap_or(0)
}

/// The smallest char boundary of `text` at or above `index`.
fn ceil_boundary(text: &str, index: usize) -> usize {
    (index..=text.len()).find(|i| text.is_char_boundary(*i)).unwrap_or(text.len())
}

/// Keeps the end of a long text (a traceback's end matters most), marking what was cut.
#[must_use]
pub(crate) fn keep_tail(text: &str, limit: usize) -> String {
    if text.len() <= limit {
        return text.to_owned();
    }
    let start = ceil_boundary(text, text.len() - limit);
    format!("[… {start} bytes elided …]\n{}", &text[start..])
}

/// Keeps the start and the end of a long text (an exception's message), marking what was cut.
#[must_use]
pub(crate) fn shorten(text: &str, limit: usize) -> String {
    if text.len() <= limit {
        return text.to_owned();
    }
    let head = &text[..floor_boundary(text, limit / 2)];
    let tail = &text[ceil_boundary(text, text.len() - limit / 2)..];
    format!("{head}[… {} bytes elided …]{tail}", text.len() - head.len() - tail.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_output_is_kept_whole() {
        let mut capture = Capture::new(100);
        capture.push("hello\n");
        capture.push("world\n");
        assert_eq!(capture.finish(), ("hello\nworld\n".to_owned(), false));
    }

    #[test]
    fn long_output_keeps_head_and_tail_with_one_marker() {
        let mut capture = Capture::new(40);
        for i in 0..1000 {
            capture.push(&format!("line {i}\n"));
        }
        let (text, truncated) = capture.finish();
        assert!(truncated);
        assert!(text.starts_with("line 0\nline 1\n"), "{text}");
        assert!(text.ends_with("line 998\nline 999\n"), "{text}");
        assert_eq!(text.matches("elided").count(), 1);
    }

    #[test]
    fn one_huge_write_is_bounded_and_splits_on_char_boundaries() {
        let mut capture = Capture::new(11);
        capture.push(&"é".repeat(1_000_000));
        assert!(capture.tail.len() <= 22);
        let (text, truncated) = capture.finish();
        assert!(truncated);
        assert!(text.len() < 200);
    }

    #[test]
    fn what_is_streamed_is_taken_once_within_the_budget() {
        let mut capture = Capture::new(40);
        capture.push("before\n");
        assert_eq!(capture.take_streamed(), None, "nothing is streamed until asked");
        capture.stream();
        capture.push("one\n");
        capture.push("two\n");
        assert_eq!(capture.take_streamed().as_deref(), Some("one\ntwo\n"));
        assert_eq!(capture.take_streamed(), None);
        for i in 0..100 {
            capture.push(&format!("line {i}\n"));
        }
        let taken = capture.take_streamed().unwrap();
        assert!(taken.starts_with("line 0\n") && taken.ends_with("line 99\n"), "{taken}");
        assert_eq!(taken.matches("elided").count(), 1);
        // The whole output is kept as before.
        let (text, truncated) = capture.finish();
        assert!(truncated && text.starts_with("before\none\n"), "{text}");
    }

    #[test]
    fn long_messages_keep_both_ends() {
        assert_eq!(shorten("abcdef", 10), "abcdef");
        assert_eq!(shorten("abcdefghij", 4), "ab[… 6 bytes elided …]ij");
        assert_eq!(shorten(&"é".repeat(10), 5), "é[… 16 bytes elided …]é");
    }

    #[test]
    fn tracebacks_keep_their_end() {
        assert_eq!(keep_tail("abcdef", 10), "abcdef");
        assert_eq!(keep_tail("abcdef", 2), "[… 4 bytes elided …]\nef");
    }
}
