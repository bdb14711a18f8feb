//! Hex digests, for cache keys, pinned downloads and file names that must not be guessed.

use std::fmt::Write as _;
use std::hash::{BuildHasher, Hasher, RandomState};

use sha2::Digest as _;

/// Lowercase hex of `bytes`.
#[must_use]
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut out, byte| {
        let _ = write!(out, "{byte:02x}");
        out
    })
}

/// A new secret: 128 bits, as hex, from the standard library's per-process random keys (taken
/// from the operating system). A guest run's report nonce; a served client's session name.
#[must_use]
pub(crate) fn nonce() -> String {
    let mut nonce = String::with_capacity(32);
    for part in 0_u8..2 {
        let mut hasher = RandomState::new().build_hasher();
        hasher.write_u8(part);
        let _ = write!(nonce, "{:016x}", hasher.finish());
    }
    nonce
}

/// Lowercase hex SHA-256 of `bytes`.
#[must_use]
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex(&sha2::Sha256::digest(bytes))
}

/// Lowercase hex SHA-256 of the file at `path`, read in pieces (caches hold files of
/// hundreds of MB).
#[cfg_attr(
    all(not(test), not(guest_backend)),
    expect(dead_code, reason = "only the guest backends' caches are checked this way")
)]
pub(crate) fn sha256_file_hex(path: &std::path::Path) -> std::io::Result<String> {
    let mut hasher = sha2::Sha256::new();
    std::io::copy(&mut std::fs::File::open(path)?, &mut hasher)?;
    Ok(hex(&hasher.finalize()))
}

/// The SHA-256 of `bytes`.
#[must_use]
pub(crate) fn sha256(bytes: &[u8]) -> [u8; 32] {
    sha2::Sha256::digest(bytes).into()
}

#[cfg(test)]
mod tests {
    #[test]
    fn nonces_differ_and_are_128_bits_of_hex() {
        let (a, b) = (super::nonce(), super::nonce());
        assert_ne!(a, b);
        assert_eq!(a.len(), 32);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()), "{a}");
    }

    #[test]
    fn digests_are_lowercase_hex() {
        assert_eq!(super::hex(&[0, 15, 255]), "000fff");
        assert_eq!(super::sha256_hex(b"abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("f");
        std::fs::write(&path, vec![7_u8; 200_000]).unwrap();
        assert_eq!(super::sha256_file_hex(&path).unwrap(), super::sha256_hex(&vec![7_u8; 200_000]));
    }
}
