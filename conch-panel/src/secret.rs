//! The one comparison of secrets (issue 28): the MCP door's bearer token (conch-gateway's
//! `http`) and the panel's one-time sign-in code (`door`); and the random codes
//! both make.
//!
//! Deliberately absent: a second copy anywhere else in the gateway.

use std::io::Read as _;

/// Whether `a` and `b` are equal, in time that depends only on their lengths, so a
/// caller guessing a secret learns nothing from how long a wrong guess takes.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// `n` random bytes as hex, from the system's random source.
pub fn random_hex(n: usize) -> String {
    let mut bytes = vec![0u8; n];
    let read = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes));
    if read.is_err() {
        // No /dev/urandom: fall back to the standard library's per-process random keys.
        use std::hash::{BuildHasher, Hasher};
        for chunk in bytes.chunks_mut(8) {
            let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
            hasher.write_usize(chunk.as_ptr() as usize);
            let word = hasher.finish().to_le_bytes();
            chunk.copy_from_slice(&word[..chunk.len()]);
        }
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::constant_time_eq;

    #[test]
    fn issue_28_secrets_compare_equal_only_when_every_byte_matches() {
        assert!(constant_time_eq(b"s3cret", b"s3cret"));
        assert!(constant_time_eq(b"", b""));
        assert!(!constant_time_eq(b"s3cret", b"s3creT"));
        assert!(!constant_time_eq(b"s3cret", b"s3cre"));
        assert!(!constant_time_eq(b"", b"x"));
    }
}
