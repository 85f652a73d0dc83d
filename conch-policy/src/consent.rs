//! The words of a cookie banner's reject control (LAUNCH-11, AMB-25).
//!
//! Inside a detected consent banner, Conch presses only a control whose whole words are
//! one of the reject phrases below, compared as lowercase words; never anything else, and
//! never an accept control. Declining shares less, so it is Conch's own act: no question,
//! in every mode.

use crate::words::words;

/// Whole control texts that decline optional cookies.
const REJECT_PHRASES: &[&str] = &[
    "reject",
    "reject all",
    "reject all cookies",
    "reject cookies",
    "reject optional cookies",
    "reject additional cookies",
    "reject non essential",
    "reject non essential cookies",
    "decline",
    "decline all",
    "decline cookies",
    "decline optional cookies",
    "deny",
    "deny all",
    "refuse",
    "refuse all",
    "necessary only",
    "only necessary",
    "necessary cookies only",
    "only necessary cookies",
    "strictly necessary only",
    "use necessary cookies only",
    "allow necessary cookies only",
    "accept necessary cookies only",
    "accept only necessary cookies",
    "essential only",
    "only essential",
    "essential cookies only",
    "only essential cookies",
    "accept only essential cookies",
    "continue without accepting",
    "do not accept",
    "i do not accept",
];

/// Whether a control's words are exactly a reject phrase ("Reject all", "Necessary
/// only"). "Accept all", "OK" and "Reject all and subscribe" are not.
pub fn is_reject_control(control_words: &str) -> bool {
    let joined = words(control_words).join(" ");
    REJECT_PHRASES.contains(&joined.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launch_11_only_exact_reject_phrases() {
        assert!(is_reject_control("Reject All"));
        assert!(is_reject_control("  Necessary only "));
        assert!(is_reject_control("Reject non-essential"));
        assert!(!is_reject_control("Accept all"));
        assert!(!is_reject_control("OK"));
        assert!(!is_reject_control("Reject all and subscribe"));
    }
}
