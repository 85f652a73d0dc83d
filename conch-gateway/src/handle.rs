//! Conversation handles for new-era HTTP (MCP 2026-07-28 has no sessions): a handle is
//! `cv_<id>_<mac>`, where `<id>` is 128 random bits and `<mac>` the first 128 bits of
//! HMAC-SHA256 over the id, keyed with the gateway's token. A handle is unguessable, and
//! one minted under another token (another gateway, or this one before its token
//! changed) or altered in any character is refused before any lookup.
//!
//! Deliberately absent: any meaning in the handle; the conversation it names lives only
//! in the gateway's memory.

use sha2::{Digest, Sha256};

use crate::secret::{constant_time_eq, random_hex};

/// A new handle under `token`, and its id (the key its conversation is kept under).
pub(crate) fn mint(token: &str) -> (String, String) {
    let id = random_hex(16);
    (of(token, &id), id)
}

/// The handle of conversation `id` under `token`, as [`mint`] gave it.
pub(crate) fn of(token: &str, id: &str) -> String {
    format!("cv_{id}_{}", mac(token, id))
}

/// The id of `handle` if it was minted under `token`.
pub(crate) fn verify(token: &str, handle: &str) -> Option<String> {
    let (id, mac_given) = handle.strip_prefix("cv_")?.split_once('_')?;
    let well_formed = id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit());
    (well_formed && constant_time_eq(mac(token, id).as_bytes(), mac_given.as_bytes()))
        .then(|| id.to_owned())
}

/// The first 16 bytes of HMAC-SHA256(token, id), as hex.
fn mac(token: &str, id: &str) -> String {
    hmac_sha256(token.as_bytes(), id.as_bytes())[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// HMAC-SHA256 (RFC 2104).
fn hmac_sha256(key: &[u8], message: &[u8]) -> Vec<u8> {
    const BLOCK: usize = 64;
    let mut block = [0u8; BLOCK];
    if key.len() > BLOCK {
        let digest = Sha256::digest(key);
        block[..digest.len()].copy_from_slice(&digest);
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let inner_pad: Vec<u8> = block.iter().map(|b| b ^ 0x36).collect();
    let outer_pad: Vec<u8> = block.iter().map(|b| b ^ 0x5c).collect();
    let mut inner = Sha256::new();
    inner.update(&inner_pad);
    inner.update(message);
    let inner = inner.finalize();
    let mut outer = Sha256::new();
    outer.update(&outer_pad);
    outer.update(inner);
    outer.finalize().to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 4231's test case 2: the HMAC is the standard one.
    #[test]
    fn hmac_sha256_matches_rfc_4231() {
        let mac: String = hmac_sha256(b"Jefe", b"what do ya want for nothing?")
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(
            mac,
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    /// Issue 31: a handle is accepted only as minted, under the token it was minted with.
    #[test]
    fn issue_31_a_handle_is_bound_to_the_gateway_token() {
        let (handle, id) = mint("token-a");
        assert_eq!(verify("token-a", &handle).as_deref(), Some(id.as_str()));
        assert_eq!(verify("token-b", &handle), None, "another gateway's token");
        let mut forged = handle.clone();
        let last = forged.pop().unwrap();
        forged.push(if last == '0' { '1' } else { '0' });
        assert_eq!(verify("token-a", &forged), None, "one character changed");
        let other_id = format!("cv_{}_{}", "0".repeat(32), &handle[36..]);
        assert_eq!(verify("token-a", &other_id), None, "another id, same mac");
        assert_ne!(mint("token-a").0, handle, "each handle is new");
    }
}
