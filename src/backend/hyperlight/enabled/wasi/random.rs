//! `wasi:random`: random bytes from the kernel, for the secure and the insecure interfaces
//! alike.

use super::super::bindings::r#wasi::r#random;
use super::super::state::Guest;
use super::io::MAX_READ;

type Negative = hyperlight_common::component::Negative;

/// Random bytes from the kernel; where it has none to give, from the standard library's
/// per-process random keys (which the kernel seeded).
fn random_bytes(len: u64) -> Vec<u8> {
    use std::hash::{BuildHasher as _, Hasher as _, RandomState};
    let mut bytes = vec![0; usize::try_from(len.min(MAX_READ)).unwrap_or(0)];
    let filled = if getrandom::fill(&mut bytes).is_ok() { bytes.len() } else { 0 };
    for chunk in bytes[filled..].chunks_mut(8) {
        let word = RandomState::new().build_hasher().finish().to_le_bytes();
        chunk.copy_from_slice(&word[..chunk.len()]);
    }
    bytes
}

fn random_u64() -> u64 {
    random_bytes(8).iter().fold(0, |acc, &b| (acc << 8) | u64::from(b))
}

impl random::Random<Negative> for Guest {
    fn get_random_bytes(&mut self, len: u64) -> Vec<u8> {
        random_bytes(len)
    }

    fn get_random_u64(&mut self) -> u64 {
        random_u64()
    }
}

impl random::Insecure<Negative> for Guest {
    fn get_insecure_random_bytes(&mut self, len: u64) -> Vec<u8> {
        random_bytes(len)
    }

    fn get_insecure_random_u64(&mut self) -> u64 {
        random_u64()
    }
}

impl random::InsecureSeed<Negative> for Guest {
    fn insecure_seed(&mut self) -> (u64, u64) {
        (random_u64(), random_u64())
    }
}
