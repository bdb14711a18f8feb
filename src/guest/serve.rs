//! How a guest's thread talks to the thread that owns the [`Host`]: the guest sends
//! [`FromGuest`] messages on a [`ToHost`] (that it has loaded, and each tool call), and the
//! host's thread answers them with [`serve`] until the guest hangs up. Each answer goes back on
//! a oneshot channel, which a guest awaits under an async executor or blocks on without one.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use super::bridge::{self, Reply};
use crate::sandbox::Host;

/// What the guest's thread tells the thread that owns the [`Host`].
pub(crate) enum FromGuest {
    /// The guest is ready, after `waited` loading or preparing it; the host answers with the
    /// run's deadline, moved on by that much (the host owns the deadline).
    Loaded { waited: Duration, deadline: oneshot::Sender<Instant> },
    /// A tool call.
    Call(Call),
}

/// A tool call handed to the thread that owns the host.
pub(crate) struct Call {
    pub(crate) name: String,
    pub(crate) args_json: String,
    pub(crate) reply: oneshot::Sender<Reply>,
}

/// The guest's end of the channel to the host; the host serves it until every clone is dropped.
#[derive(Clone)]
pub(crate) struct ToHost(mpsc::Sender<FromGuest>);

impl ToHost {
    /// Tells the host the guest is ready, after `waited`; the receiver gets the run's deadline
    /// as the host moved it. `None` when the host no longer serves this guest.
    pub(crate) fn loaded(&self, waited: Duration) -> Option<oneshot::Receiver<Instant>> {
        let (deadline, answer) = oneshot::channel();
        self.0.send(FromGuest::Loaded { waited, deadline }).ok()?;
        Some(answer)
    }

    /// Hands the tool call `name(args_json)` to the host; the receiver gets its reply. `None`
    /// when the host no longer serves this guest.
    pub(crate) fn call(&self, name: String, args_json: String) -> Option<oneshot::Receiver<Reply>> {
        let (reply, answer) = oneshot::channel();
        self.0.send(FromGuest::Call(Call { name, args_json, reply })).ok()?;
        Some(answer)
    }
}

/// A channel from a guest's thread to the host's: the guest's end and the host's.
#[must_use]
pub(crate) fn channel() -> (ToHost, mpsc::Receiver<FromGuest>) {
    let (to_host, messages) = mpsc::channel();
    (ToHost(to_host), messages)
}

/// Serves `messages` on the thread that owns `host` until the guest hangs up (drops its
/// [`ToHost`]). A tool call's result may take at most `room()` bytes in the guest.
pub(crate) fn serve(host: &mut Host, messages: &mpsc::Receiver<FromGuest>, room: impl Fn() -> usize) {
    for message in messages {
        match message {
            // Waiting for the guest to load (and, after an upgrade or a changed cache, to
            // compile or prepare it) is not the program's time.
            FromGuest::Loaded { waited, deadline } => {
                host.extend_deadline(waited);
                let _ = deadline.send(host.deadline());
            }
            FromGuest::Call(call) => {
                let reply = bridge::dispatch(host, &call.name, &call.args_json, room());
                let _ = call.reply.send(reply);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_guest_end_says_when_the_host_has_stopped_serving() {
        let (to_host, messages) = channel();
        drop(messages);
        assert!(to_host.loaded(Duration::ZERO).is_none());
        assert!(to_host.call("view".into(), "{}".into()).is_none());
    }

    #[test]
    fn an_unanswered_call_is_seen_as_dropped() {
        let (to_host, messages) = channel();
        let answer = to_host.call("view".into(), "{\"args\": []}".into());
        let Ok(FromGuest::Call(call)) = messages.recv() else { panic!("no call arrived") };
        assert_eq!((call.name.as_str(), call.args_json.as_str()), ("view", "{\"args\": []}"));
        drop(call);
        assert!(answer.unwrap().blocking_recv().is_err());
    }
}
