//! `wasi:clocks`: the host's monotonic and wall clocks. A monotonic subscription is a
//! [`Pollable`] ready at an instant, which `wasi:io/poll` waits for ([`super::io`]).

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::super::bindings::r#wasi::r#clocks::{self, r#wall_clock::Datetime};
use super::super::resources::Pollable;
use super::super::state::Guest;

type Negative = hyperlight_common::component::Negative;

impl clocks::MonotonicClock<Negative, Pollable> for Guest {
    fn now(&mut self) -> u64 {
        monotonic_now()
    }

    fn resolution(&mut self) -> u64 {
        1_000
    }

    fn subscribe_instant(&mut self, when: u64) -> Pollable {
        Pollable::at(Instant::now() + Duration::from_nanos(when.saturating_sub(monotonic_now())))
    }

    fn subscribe_duration(&mut self, when: u64) -> Pollable {
        Pollable::at(Instant::now() + Duration::from_nanos(when))
    }
}

impl clocks::WallClock<Negative> for Guest {
    fn now(&mut self) -> Datetime {
        let since = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
        Datetime { seconds: since.as_secs(), nanoseconds: since.subsec_nanos() }
    }

    fn resolution(&mut self) -> Datetime {
        Datetime { seconds: 0, nanoseconds: 1_000 }
    }
}

/// The monotonic clock since boot: a guest restored from a snapshot that another process made
/// sees it go on, not start again.
fn monotonic_now() -> u64 {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    u64::try_from(now.tv_sec).unwrap_or(0) * 1_000_000_000 + u64::try_from(now.tv_nsec).unwrap_or(0)
}
