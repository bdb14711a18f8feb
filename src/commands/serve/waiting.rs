//! The HTTP connections that wait for a request: those whose client has not finished sending
//! its headers, and those idle between requests. Holding many of them costs a client nothing
//! (no token is checked before the headers), so they are bounded, in total and per address:
//! past a bound, the connection that has waited longest is closed. A client that sends its
//! request at once is not held up by thousands that do not.
//!
//! A connection counts from when it is accepted until a request's headers arrive, and again
//! from when its last answer is sent. It never counts while it carries a request or streams an
//! answer, so a long call or an event stream is never closed for waiting.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};

use tokio_util::sync::CancellationToken;

/// The waiting connections, oldest first.
#[derive(Debug)]
pub(super) struct Waiting {
    total: usize,
    per_source: usize,
    queue: Mutex<Queue>,
}

#[derive(Debug, Default)]
struct Queue {
    next: u64,
    /// By when each began to wait: its address, and how to close it.
    waiting: BTreeMap<u64, (IpAddr, CancellationToken)>,
}

impl Waiting {
    /// At most `total` connections wait at once, a quarter of them from one address; loopback
    /// clients all share one address, so there only the total applies.
    pub(super) fn new(total: usize) -> Self {
        Self { total: total.max(1), per_source: (total / 4).max(1), queue: Mutex::new(Queue::default()) }
    }

    /// Counts a connection from `source` as waiting from now, closing `close` when it is
    /// pushed out; closes the connection waiting longest past a bound. Returns its place.
    fn wait(&self, source: IpAddr, close: &CancellationToken) -> u64 {
        let mut queue = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
        let key = queue.next;
        queue.next += 1;
        queue.waiting.insert(key, (source, close.clone()));
        let per_source = if source.is_loopback() { self.total } else { self.per_source };
        let from_source = queue.waiting.values().filter(|(from, _)| *from == source).count();
        let oldest = if from_source > per_source {
            queue.waiting.iter().find(|(_, (from, _))| *from == source).map(|(key, _)| *key)
        } else if queue.waiting.len() > self.total {
            queue.waiting.keys().next().copied()
        } else {
            None
        };
        if let Some((_, close)) = oldest.and_then(|oldest| queue.waiting.remove(&oldest)) {
            close.cancel();
        }
        key
    }

    /// Stops counting the connection at `key`.
    fn stop(&self, key: u64) {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner).waiting.remove(&key);
    }
}

/// One connection's part in [`Waiting`].
#[derive(Debug)]
pub(super) struct Connection {
    waiting: Arc<Waiting>,
    source: IpAddr,
    /// Cancelled when the connection is pushed out: its task then drops it.
    pub(super) close: CancellationToken,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// Requests being handled or answered.
    busy: usize,
    /// Its place among the waiting, while it waits.
    place: Option<u64>,
}

impl Connection {
    /// A connection just accepted from `source`: it waits for its first request.
    pub(super) fn accepted(waiting: Arc<Waiting>, source: IpAddr) -> Arc<Self> {
        let close = CancellationToken::new();
        let place = waiting.wait(source, &close);
        Arc::new(Self { waiting, source, close, state: Mutex::new(State { busy: 0, place: Some(place) }) })
    }

    /// A request's headers arrived: the connection no longer waits until the guard, moved into
    /// the answer, is dropped with it.
    pub(super) fn request(self: &Arc<Self>) -> InRequest {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.busy += 1;
        if let Some(place) = state.place.take() {
            self.waiting.stop(place);
        }
        InRequest(Arc::clone(self))
    }

    /// The connection ended: it no longer waits.
    pub(super) fn closed(&self) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(place) = state.place.take() {
            self.waiting.stop(place);
        }
    }
}

/// A request in progress on a [`Connection`]; when the last one is dropped (its answer sent or
/// abandoned), the connection waits again.
#[derive(Debug)]
pub(super) struct InRequest(Arc<Connection>);

impl Drop for InRequest {
    fn drop(&mut self) {
        let connection = &self.0;
        let mut state = connection.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.busy = state.busy.saturating_sub(1);
        if state.busy == 0 && state.place.is_none() && !connection.close.is_cancelled() {
            state.place = Some(connection.waiting.wait(connection.source, &connection.close));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn past_the_total_the_connection_waiting_longest_is_closed() {
        let waiting = Arc::new(Waiting::new(3));
        let first = Connection::accepted(Arc::clone(&waiting), ip("127.0.0.1"));
        let others: Vec<_> = (0..3).map(|_| Connection::accepted(Arc::clone(&waiting), ip("127.0.0.1"))).collect();
        assert!(first.close.is_cancelled());
        assert!(others.iter().all(|other| !other.close.is_cancelled()));
    }

    #[test]
    fn one_address_holds_at_most_a_quarter_and_pushes_out_only_its_own() {
        let waiting = Arc::new(Waiting::new(8));
        let bystander = Connection::accepted(Arc::clone(&waiting), ip("192.0.2.1"));
        let flood: Vec<_> = (0..5).map(|_| Connection::accepted(Arc::clone(&waiting), ip("198.51.100.7"))).collect();
        assert!(!bystander.close.is_cancelled());
        let closed = flood.iter().filter(|connection| connection.close.is_cancelled()).count();
        assert_eq!(closed, 3, "a quarter of 8 may wait from one address");
        assert!(!flood[4].close.is_cancelled() && !flood[3].close.is_cancelled());
    }

    #[test]
    fn a_connection_with_a_request_is_never_pushed_out_and_waits_again_after_it() {
        let waiting = Arc::new(Waiting::new(2));
        let busy = Connection::accepted(Arc::clone(&waiting), ip("127.0.0.1"));
        let request = busy.request();
        let idle: Vec<_> = (0..4).map(|_| Connection::accepted(Arc::clone(&waiting), ip("127.0.0.1"))).collect();
        assert!(!busy.close.is_cancelled());
        drop(request);
        // Now idle, and the newest to wait: the next one pushes out an older one first.
        let _next = Connection::accepted(Arc::clone(&waiting), ip("127.0.0.1"));
        assert!(!busy.close.is_cancelled());
        assert!(idle.iter().all(|connection| connection.close.is_cancelled()));
        let _last = Connection::accepted(Arc::clone(&waiting), ip("127.0.0.1"));
        assert!(busy.close.is_cancelled());
    }
}
