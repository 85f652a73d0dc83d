//! The gateway's one comparison of secrets (issue 28): the MCP door's bearer token
//! ([`crate::http`]) and the panel's one-time sign-in code ([`crate::panel`]).
//!
//! Deliberately absent: a second copy anywhere else in the gateway.

/// Whether `a` and `b` are equal, in time that depends only on their lengths, so a
/// caller guessing a secret learns nothing from how long a wrong guess takes.
pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
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
