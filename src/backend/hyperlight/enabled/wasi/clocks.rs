//! `wasi:clocks`: the wall clock, and the monotonic clock on the guest runtime's own scale. A
//! monotonic subscription is a [`Pollable`] ready at an instant on the host's clock, which
//! `wasi:io/poll` waits for ([`super::io`]).

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::super::bindings::r#wasi::r#clocks::{self, r#wall_clock::Datetime};
use super::super::resources::Pollable;
use super::super::state::Guest;

type Negative = hyperlight_common::component::Negative;

impl clocks::MonotonicClock<Negative, Pollable> for Guest {
    fn now(&mut self) -> u64 {
        guest_monotonic_now()
    }

    fn resolution(&mut self) -> u64 {
        1_000
    }

    /// `when` is on the guest's monotonic clock: CPython's `time.sleep` asks for its end as
    /// an instant there. The wait is its distance from that clock's now.
    fn subscribe_instant(&mut self, when: u64) -> Pollable {
        Pollable::at(Instant::now() + Duration::from_nanos(when.saturating_sub(guest_monotonic_now())))
    }

    fn subscribe_duration(&mut self, when: u64) -> Pollable {
        Pollable::at(Instant::now() + Duration::from_nanos(when))
    }
}

impl clocks::WallClock<Negative> for Guest {
    fn now(&mut self) -> Datetime {
        let since = since_epoch();
        Datetime { seconds: since.as_secs(), nanoseconds: since.subsec_nanos() }
    }

    fn resolution(&mut self) -> Datetime {
        Datetime { seconds: 0, nanoseconds: 1_000 }
    }
}

fn since_epoch() -> Duration {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default()
}

/// The monotonic clock as the guest runtime keeps it. The runtime answers `now` inside the
/// micro-VM without asking the host, with the wall clock's whole seconds since the epoch
/// counted as nanoseconds: at 1796319140.355 on the wall clock `time.monotonic()` reads
/// 1.796319140. Instants the guest asks to wait for are on that clock, and the host's answer
/// to `now` is the same, so both agree whichever side answers.
fn guest_monotonic_now() -> u64 {
    since_epoch().as_secs()
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::sandbox::Capture;
    use crate::sandbox::capture::Outlet;

    fn guest() -> Guest {
        let dir = cap_std::fs::Dir::open_ambient_dir(std::env::temp_dir(), cap_std::ambient_authority()).unwrap();
        let output = Arc::new(Mutex::new(Capture::new(0)));
        let output = Outlet::new(&output);
        Guest { stdout: output.clone(), stderr: output, stdlib: Arc::new(dir), shared: Arc::default() }
    }

    #[test]
    fn a_sleep_the_guest_asks_for_waits_as_long_as_it_asked() {
        let mut guest = guest();
        let asked = Instant::now();
        // `time.sleep(60)` asks for the instant 60 seconds after the guest's own now: the wall
        // clock's whole seconds, counted as nanoseconds.
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs();
        let pollable = clocks::MonotonicClock::subscribe_instant(&mut guest, now + 60_000_000_000);
        let wait = pollable.when().unwrap().duration_since(asked);
        assert!(wait >= Duration::from_secs(59) && wait <= Duration::from_secs(61), "{wait:?}");
        let past = clocks::MonotonicClock::subscribe_instant(&mut guest, now.saturating_sub(1));
        assert!(past.when().unwrap() <= Instant::now());
    }
}
